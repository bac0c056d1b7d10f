/// A notification type: Apple adds types over time, so this is an open set of raw strings.
///
/// A struct rather than an enum because V1 and V2 together have dozens of values that callers
/// compare by name; unknown ones are kept and printed back unchanged.
public struct NotificationType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    public static let subscribed = Self(rawValue: "SUBSCRIBED")
    public static let didRenew = Self(rawValue: "DID_RENEW")
    public static let didChangeRenewalStatus = Self(rawValue: "DID_CHANGE_RENEWAL_STATUS")
    public static let didChangeRenewalPref = Self(rawValue: "DID_CHANGE_RENEWAL_PREF")
    public static let didFailToRenew = Self(rawValue: "DID_FAIL_TO_RENEW")
    public static let expired = Self(rawValue: "EXPIRED")
    public static let gracePeriodExpired = Self(rawValue: "GRACE_PERIOD_EXPIRED")
    public static let offerRedeemed = Self(rawValue: "OFFER_REDEEMED")
    public static let priceIncrease = Self(rawValue: "PRICE_INCREASE")
    public static let refund = Self(rawValue: "REFUND")
    public static let refundDeclined = Self(rawValue: "REFUND_DECLINED")
    public static let refundReversed = Self(rawValue: "REFUND_REVERSED")
    public static let renewalExtended = Self(rawValue: "RENEWAL_EXTENDED")
    public static let revoke = Self(rawValue: "REVOKE")
    public static let consumptionRequest = Self(rawValue: "CONSUMPTION_REQUEST")
    public static let oneTimeCharge = Self(rawValue: "ONE_TIME_CHARGE")
    public static let test = Self(rawValue: "TEST")
    // V1 only.
    public static let initialBuy = Self(rawValue: "INITIAL_BUY")
    public static let cancel = Self(rawValue: "CANCEL")
    public static let didRecover = Self(rawValue: "DID_RECOVER")
    public static let interactiveRenewal = Self(rawValue: "INTERACTIVE_RENEWAL")
    public static let priceIncreaseConsent = Self(rawValue: "PRICE_INCREASE_CONSENT")
}

/// A notification subtype (V2), an open set of raw strings like ``NotificationType``.
public struct NotificationSubtype: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    public static let initialBuy = Self(rawValue: "INITIAL_BUY")
    public static let resubscribe = Self(rawValue: "RESUBSCRIBE")
    public static let downgrade = Self(rawValue: "DOWNGRADE")
    public static let upgrade = Self(rawValue: "UPGRADE")
    public static let autoRenewEnabled = Self(rawValue: "AUTO_RENEW_ENABLED")
    public static let autoRenewDisabled = Self(rawValue: "AUTO_RENEW_DISABLED")
    public static let voluntary = Self(rawValue: "VOLUNTARY")
    public static let billingRetry = Self(rawValue: "BILLING_RETRY")
    public static let priceIncrease = Self(rawValue: "PRICE_INCREASE")
    public static let gracePeriod = Self(rawValue: "GRACE_PERIOD")
    public static let billingRecovery = Self(rawValue: "BILLING_RECOVERY")
    public static let pending = Self(rawValue: "PENDING")
    public static let accepted = Self(rawValue: "ACCEPTED")
    public static let summary = Self(rawValue: "SUMMARY")
    public static let failure = Self(rawValue: "FAILURE")
}

/// An App Store Server Notification, V1 or V2, without the transactions it carries.
public struct Notification: Hashable, Sendable {
    /// `1` for V1; V2's `version` field (`2.0`) otherwise.
    public var version: String
    public var notificationType: NotificationType
    public var subtype: NotificationSubtype?
    public var notificationUUID: String?
    /// When Apple signed it (V2); for V1, the latest date the notification itself carries, if any.
    public var signedDate: Timestamp?
    public var environment: Environment?
    public var bundleId: String?
    public var bundleVersion: String?
    public var appAppleId: Int64?
    /// V2 `data.status`: the subscription status (1 active, 2 expired, 3 billing retry, 4 grace, 5 revoked).
    public var status: Int?
    /// V2 `summary`, `externalPurchaseToken` and similar bodies, kept raw.
    public var summary: JSONValue?
    /// V1 `auto_renew_status` (normalised from `"true"`, `"1"`, `1`).
    public var autoRenewStatus: Bool?
    public var autoRenewProductId: String?
    public var autoRenewStatusChangeDate: Timestamp?
    /// V1 top-level `original_transaction_id`.
    public var originalTransactionId: String?
    /// Fields this version does not know (the V1 shared secret is redacted, never kept).
    public var extra: JSONObject
    public var verification: Verification

    /// Creates a notification of a type.
    public init(version: String, notificationType: NotificationType) {
        self.version = version
        self.notificationType = notificationType
        self.extra = JSONObject()
        self.verification = .notApplicable
    }
}
