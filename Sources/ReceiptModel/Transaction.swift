/// One App Store transaction, named and shaped as Apple's `JWSTransactionDecodedPayload`.
///
/// Legacy verifyReceipt and V1 data is mapped onto these names (DESIGN section 3); the legacy
/// flags are also kept as they came in ``legacy``, and fields this version does not know in ``extra``.
public struct Transaction: Hashable, Sendable {
    public var transactionId: String
    public var originalTransactionId: String?
    public var webOrderLineItemId: String?
    public var bundleId: String?
    public var productId: String?
    public var subscriptionGroupIdentifier: String?
    public var purchaseDate: Timestamp?
    public var originalPurchaseDate: Timestamp?
    public var expiresDate: Timestamp?
    public var quantity: Int?
    public var type: ProductType?
    public var appAccountToken: String?
    public var inAppOwnershipType: InAppOwnershipType?
    public var signedDate: Timestamp?
    public var revocationReason: RevocationReason?
    public var revocationDate: Timestamp?
    public var isUpgraded: Bool?
    public var offerType: OfferType?
    public var offerIdentifier: String?
    public var environment: Environment?
    public var storefront: String?
    public var storefrontId: String?
    public var transactionReason: TransactionReason?
    /// Price in milliunits of ``currency``.
    public var price: Int64?
    public var currency: String?
    public var offerDiscountType: OfferDiscountType?
    public var appTransactionId: String?
    public var offerPeriod: String?
    public var revocationType: RevocationType?
    /// Refunded share in thousandths of a percent (100000 is a full refund).
    public var revocationPercentage: Int64?
    public var advancedCommerceInfo: JSONValue?

    /// The legacy flags as they came (`is_trial_period`, `is_in_intro_offer_period`, ...).
    public var legacy: JSONObject
    /// Fields this version does not know, kept as raw JSON under their original names.
    public var extra: JSONObject
    /// How the record this transaction came from was verified.
    public var verification: Verification
    /// Every record this transaction was seen in.
    public var sources: [Provenance]

    /// Creates a transaction with only its id; set the other fields as they are known.
    public init(transactionId: String) {
        self.transactionId = transactionId
        self.legacy = JSONObject()
        self.extra = JSONObject()
        self.verification = .notApplicable
        self.sources = []
    }

    /// Whether the transaction is for an auto-renewable subscription (by `type`, or an expiry date when absent).
    public var isAutoRenewable: Bool {
        if let type { return type == .autoRenewableSubscription }
        return expiresDate != nil
    }
}

/// A subscription's renewal state, named and shaped as Apple's `JWSRenewalInfoDecodedPayload`.
public struct RenewalInfo: Hashable, Sendable {
    public var originalTransactionId: String?
    public var autoRenewProductId: String?
    public var productId: String?
    public var autoRenewStatus: AutoRenewStatus?
    public var expirationIntent: ExpirationIntent?
    public var isInBillingRetryPeriod: Bool?
    public var priceIncreaseStatus: PriceIncreaseStatus?
    public var gracePeriodExpiresDate: Timestamp?
    public var offerType: OfferType?
    public var offerIdentifier: String?
    public var signedDate: Timestamp?
    public var environment: Environment?
    public var recentSubscriptionStartDate: Timestamp?
    public var renewalDate: Timestamp?
    public var currency: String?
    /// Renewal price in milliunits of ``currency``.
    public var renewalPrice: Int64?
    public var offerDiscountType: OfferDiscountType?
    public var eligibleWinBackOfferIds: [String]?
    public var appAccountToken: String?
    public var appTransactionId: String?
    public var offerPeriod: String?
    public var advancedCommerceInfo: JSONValue?

    /// Legacy fields as they came (`price_consent_status`, `offer_code_ref_name`, ...).
    public var legacy: JSONObject
    /// Fields this version does not know, kept as raw JSON.
    public var extra: JSONObject
    public var verification: Verification
    public var sources: [Provenance]

    /// Creates an empty renewal info.
    public init() {
        self.legacy = JSONObject()
        self.extra = JSONObject()
        self.verification = .notApplicable
        self.sources = []
    }
}
