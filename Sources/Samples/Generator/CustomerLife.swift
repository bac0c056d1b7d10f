import ReceiptModel

/// How a customer's data reaches the ledger.
public enum SampleFormat: String, Sendable, CaseIterable {
    /// Server Notifications V2, one signed notification per event.
    case notificationsV2
    /// App Store Server API: subscription statuses when renewal state changes, and a transaction history.
    case serverAPI
    /// verifyReceipt responses when renewal state changes.
    case verifyReceipt
    /// Server Notifications V1 for subscriptions, a verifyReceipt response for one-time purchases.
    case notificationsV1

    /// Whether the format carries price, revocation type and percentage (the JWS fields).
    var modern: Bool { self == .notificationsV2 || self == .serverAPI }
}

/// One transaction of a generated life, in its final state, with when each later fact became known.
struct LifeTransaction {
    var id: String
    var original: String
    var webOrder: String?
    var product: SampleProduct
    var purchase: Int64
    var originalPurchase: Int64
    var expires: Int64?
    var price: Int64
    var reason: String
    var familyShared = false
    var offerType: Int?
    var offerId: String?
    var offerDiscount: String?
    var offerPeriod: String?
    /// When it was superseded by an upgrade.
    var upgradedAt: Int64?
    var revokedAt: Int64?
    var revocationReason: Int?
    var revocationType: String?
    var revocationPercentage: Int64?
    /// When Apple reversed the refund: from then on the transaction is no longer revoked.
    var reversedAt: Int64?

    /// Whether, as of `at`, the data shows it revoked.
    func revokedVisible(at: Int64) -> Bool {
        guard let revokedAt, revokedAt <= at else { return false }
        if let reversedAt, reversedAt <= at { return false }
        return true
    }

    /// Whether, as of `at`, the data shows it upgraded.
    func upgradedVisible(at: Int64) -> Bool { upgradedAt.map { $0 <= at } ?? false }
}

/// A subscription's renewal state as Apple reports it at one moment.
struct RenewalState: Equatable {
    var original: String
    var product: String
    var autoRenewProduct: String
    var autoRenew: Bool
    var retry: Bool
    var grace: Int64?
    var intent: Int?
    var renewalDate: Int64?
    var recentStart: Int64
    var renewalPrice: Int64
}

/// Something that happened, as a V2 notification names it.
struct LifeEvent {
    var at: Int64
    var type: String
    var subtype: String?
    /// Index into the life's transactions.
    var transaction: Int
    /// The renewal state after the event (subscriptions).
    var renewal: RenewalState?
    /// Whether the renewal state changed (formats that poll send a snapshot then).
    var renewalChanged: Bool
    var uuid: String
}

/// A generated customer: identity, every transaction, every event, and what each entitlement should be when.
public struct CustomerLife {
    public var index: Int
    public var environment: String
    var storefront: SampleStorefront
    public var token: String?
    public var externalId: String?
    public var format: SampleFormat
    public var story: String?
    var transactions: [LifeTransaction] = []
    var events: [LifeEvent] = []
    /// Per entitlement: (from, state) steps, in time order.
    var segments: [String: [(Int64, String)]] = [:]

    /// The id to type to find this customer: the token, else the external id (with customers.csv).
    public var lookupId: String { token ?? externalId ?? "" }

    /// The expected state of every entitlement at `instant`.
    public func expectedStates(at instant: Int64) -> [String: String] {
        var out: [String: String] = [:]
        for (name, steps) in segments {
            out[name] = steps.last { $0.0 <= instant }?.1 ?? "none"
        }
        // A one-time entitlement can be bought more than once (the spike product also bought on another day):
        // it is owned while any purchase stands, revoked when every purchase so far is refunded.
        for name in Set(transactions.filter { $0.product.kind != .subscription }.compactMap(\.product.entitlement)) {
            let bought = transactions.filter { $0.product.entitlement == name && $0.purchase <= instant }
            if bought.isEmpty {
                out[name] = "none"
            } else if bought.contains(where: { t in
                guard let revoked = t.revokedAt, revoked <= instant else { return true }
                return t.reversedAt.map { $0 <= instant } ?? false
            }) {
                out[name] = "owned"
            } else {
                out[name] = "revoked"
            }
        }
        return out
    }

    /// Every transactionId of the life, in purchase order.
    public var transactionIds: [String] { transactions.map(\.id) }

    /// Every webOrderLineItemId of the life (subscriptions only).
    public var webOrderLineItemIds: [String] { transactions.compactMap(\.webOrder) }

    /// The first originalTransactionId of the life's main purchase, a handy lookup id.
    public var firstOriginalTransactionId: String? { transactions.first?.original }
}
