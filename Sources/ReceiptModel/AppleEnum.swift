/// An enumeration of Apple's that keeps values it does not know.
///
/// Each conforming enum lists its known cases and has a `case unknown(Raw)`, so a value Apple adds
/// next year decodes, is kept, and prints back unchanged.
public protocol AppleEnum: Hashable, Sendable, CustomStringConvertible {
    /// Apple's raw representation: `String` or `Int`.
    associatedtype Raw: Hashable & Sendable & CustomStringConvertible
    /// Every known case.
    static var knownCases: [Self] { get }
    /// The case for a value this version does not know.
    static func unknown(_ raw: Raw) -> Self
    /// Apple's raw value, unchanged for unknown cases.
    var rawValue: Raw { get }
}

extension AppleEnum {
    /// The case for Apple's raw value; unknown values become `.unknown(raw)`.
    public init(rawValue: Raw) {
        for known in Self.knownCases where known.rawValue == rawValue {
            self = known
            return
        }
        self = .unknown(rawValue)
    }

    /// Whether this version knows the value.
    public var isKnown: Bool { Self.knownCases.contains(self) }

    public var description: String { rawValue.description }
}

/// The App Store environment a record came from.
public enum Environment: AppleEnum {
    case production, sandbox, xcode, localTesting
    case unknown(String)
    public static let knownCases: [Environment] = [.production, .sandbox, .xcode, .localTesting]
    public var rawValue: String {
        switch self {
        case .production: "Production"
        case .sandbox: "Sandbox"
        case .xcode: "Xcode"
        case .localTesting: "LocalTesting"
        case .unknown(let raw): raw
        }
    }

    /// Parses the legacy spellings too: V1's top-level `PROD`, and any case.
    public init(legacy raw: String) {
        switch raw.lowercased() {
        case "prod", "production": self = .production
        case "sandbox": self = .sandbox
        case "xcode": self = .xcode
        case "localtesting": self = .localTesting
        default: self = .unknown(raw)
        }
    }

    /// Data Apple does not sign: Xcode's StoreKit Testing and local testing.
    public var isUnsignedByDesign: Bool { self == .xcode || self == .localTesting }
}

/// The kind of in-app product (`type`).
public enum ProductType: AppleEnum {
    case autoRenewableSubscription, nonConsumable, consumable, nonRenewingSubscription
    case unknown(String)
    public static let knownCases: [ProductType] = [
        .autoRenewableSubscription, .nonConsumable, .consumable, .nonRenewingSubscription,
    ]
    public var rawValue: String {
        switch self {
        case .autoRenewableSubscription: "Auto-Renewable Subscription"
        case .nonConsumable: "Non-Consumable"
        case .consumable: "Consumable"
        case .nonRenewingSubscription: "Non-Renewing Subscription"
        case .unknown(let raw): raw
        }
    }
}

/// Whether the customer bought the product or has it through Family Sharing.
public enum InAppOwnershipType: AppleEnum {
    case purchased, familyShared
    case unknown(String)
    public static let knownCases: [InAppOwnershipType] = [.purchased, .familyShared]
    public var rawValue: String {
        switch self {
        case .purchased: "PURCHASED"
        case .familyShared: "FAMILY_SHARED"
        case .unknown(let raw): raw
        }
    }
}

/// Why a transaction happened: a purchase or an automatic renewal.
public enum TransactionReason: AppleEnum {
    case purchase, renewal
    case unknown(String)
    public static let knownCases: [TransactionReason] = [.purchase, .renewal]
    public var rawValue: String {
        switch self {
        case .purchase: "PURCHASE"
        case .renewal: "RENEWAL"
        case .unknown(let raw): raw
        }
    }
}

/// The kind of offer applied (`offerType`).
public enum OfferType: AppleEnum {
    case introductory, promotional, offerCode, winBack
    case unknown(Int)
    public static let knownCases: [OfferType] = [.introductory, .promotional, .offerCode, .winBack]
    public var rawValue: Int {
        switch self {
        case .introductory: 1
        case .promotional: 2
        case .offerCode: 3
        case .winBack: 4
        case .unknown(let raw): raw
        }
    }
}

/// How an offer discounts the price (`offerDiscountType`).
public enum OfferDiscountType: AppleEnum {
    case freeTrial, payAsYouGo, payUpFront, oneTime
    case unknown(String)
    public static let knownCases: [OfferDiscountType] = [.freeTrial, .payAsYouGo, .payUpFront, .oneTime]
    public var rawValue: String {
        switch self {
        case .freeTrial: "FREE_TRIAL"
        case .payAsYouGo: "PAY_AS_YOU_GO"
        case .payUpFront: "PAY_UP_FRONT"
        case .oneTime: "ONE_TIME"
        case .unknown(let raw): raw
        }
    }
}

/// Why Apple refunded or revoked a transaction (`revocationReason`, legacy `cancellation_reason`).
public enum RevocationReason: AppleEnum {
    /// Refunded for another reason, such as an accidental purchase.
    case other
    /// Refunded because of an actual or perceived issue within the app.
    case appIssue
    case unknown(Int)
    public static let knownCases: [RevocationReason] = [.other, .appIssue]
    public var rawValue: Int {
        switch self {
        case .other: 0
        case .appIssue: 1
        case .unknown(let raw): raw
        }
    }
}

/// How a transaction was revoked (`revocationType`).
public enum RevocationType: AppleEnum {
    case refundFull, refundProrated, familyRevoke
    case unknown(String)
    public static let knownCases: [RevocationType] = [.refundFull, .refundProrated, .familyRevoke]
    public var rawValue: String {
        switch self {
        case .refundFull: "REFUND_FULL"
        case .refundProrated: "REFUND_PRORATED"
        case .familyRevoke: "FAMILY_REVOKE"
        case .unknown(let raw): raw
        }
    }
}

/// Why a subscription expired (`expirationIntent`, legacy `expiration_intent`).
public enum ExpirationIntent: AppleEnum {
    case customerCancelled, billingError, priceIncreaseDeclined, productUnavailable, other
    case unknown(Int)
    public static let knownCases: [ExpirationIntent] = [
        .customerCancelled, .billingError, .priceIncreaseDeclined, .productUnavailable, .other,
    ]
    public var rawValue: Int {
        switch self {
        case .customerCancelled: 1
        case .billingError: 2
        case .priceIncreaseDeclined: 3
        case .productUnavailable: 4
        case .other: 5
        case .unknown(let raw): raw
        }
    }
}

/// Whether the subscription will renew (`autoRenewStatus`).
public enum AutoRenewStatus: AppleEnum {
    case off, on
    case unknown(Int)
    public static let knownCases: [AutoRenewStatus] = [.off, .on]
    public var rawValue: Int {
        switch self {
        case .off: 0
        case .on: 1
        case .unknown(let raw): raw
        }
    }
}

/// Whether the customer consented to a price increase (`priceIncreaseStatus`).
public enum PriceIncreaseStatus: AppleEnum {
    case notResponded, accepted
    case unknown(Int)
    public static let knownCases: [PriceIncreaseStatus] = [.notResponded, .accepted]
    public var rawValue: Int {
        switch self {
        case .notResponded: 0
        case .accepted: 1
        case .unknown(let raw): raw
        }
    }
}
