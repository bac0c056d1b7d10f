/// One App Store transaction, named and shaped as Apple's `JWSTransactionDecodedPayload`.
///
/// Legacy verifyReceipt and V1 data is mapped onto these names (DESIGN section 3); the legacy
/// flags are also kept as they came in ``legacy``, and fields this version does not know in ``extra``.
public struct Transaction: Hashable, Sendable {
    /// The fields, shared by copies until one of them changes (copy on write, as `Array` does): a transaction
    /// is copied into batches, dictionaries and merges many times while an import runs, and a copy of the
    /// fields themselves retained each of their thirty-odd strings and objects.
    @usableFromInline var storage: Storage

    /// Every stored field but ``sources`` (`Mirror(reflecting:)` of a transaction lists them all: ``customMirror``).
    /// A field added to the transaction goes here, where ``==``, hashing and the mirror see it.
    @usableFromInline struct Fields: Hashable, Sendable {
        @usableFromInline var transactionId: String
        @usableFromInline var originalTransactionId: String?
        @usableFromInline var webOrderLineItemId: String?
        @usableFromInline var bundleId: String?
        @usableFromInline var productId: String?
        @usableFromInline var subscriptionGroupIdentifier: String?
        @usableFromInline var purchaseDate: Timestamp?
        @usableFromInline var originalPurchaseDate: Timestamp?
        @usableFromInline var expiresDate: Timestamp?
        @usableFromInline var quantity: Int?
        @usableFromInline var type: ProductType?
        @usableFromInline var appAccountToken: String?
        @usableFromInline var inAppOwnershipType: InAppOwnershipType?
        @usableFromInline var signedDate: Timestamp?
        @usableFromInline var revocationReason: RevocationReason?
        @usableFromInline var revocationDate: Timestamp?
        @usableFromInline var isUpgraded: Bool?
        @usableFromInline var offerType: OfferType?
        @usableFromInline var offerIdentifier: String?
        @usableFromInline var environment: Environment?
        @usableFromInline var storefront: String?
        @usableFromInline var storefrontId: String?
        @usableFromInline var transactionReason: TransactionReason?
        @usableFromInline var price: Int64?
        @usableFromInline var currency: String?
        @usableFromInline var offerDiscountType: OfferDiscountType?
        @usableFromInline var appTransactionId: String?
        @usableFromInline var offerPeriod: String?
        @usableFromInline var revocationType: RevocationType?
        @usableFromInline var revocationPercentage: Int64?
        @usableFromInline var advancedCommerceInfo: JSONValue?
        @usableFromInline var legacy: JSONObject
        @usableFromInline var extra: JSONObject
        @usableFromInline var verification: Verification
    }

    /// Holds the fields. Changed only through ``stored``, which copies them first unless this transaction holds
    /// them alone, so sharing one between threads is as safe as sharing an array's buffer. (Never write
    /// `storage.fields` directly: that would change every copy.)
    @usableFromInline final class Storage: @unchecked Sendable {
        @usableFromInline var fields: Fields

        @usableFromInline init(_ fields: Fields) {
            self.fields = fields
        }
    }

    /// The fields, for reading, or for changing in place once this transaction holds them alone. (Named apart
    /// from the static ``fields``, the list of Apple's fields.)
    @inlinable var stored: Fields {
        _read { yield storage.fields }
        _modify {
            if !isKnownUniquelyReferenced(&storage) { storage = Storage(storage.fields) }
            yield &storage.fields
        }
    }

    @inlinable public var transactionId: String {
        get { storage.fields.transactionId }
        _modify { yield &stored.transactionId }
    }

    @inlinable public var originalTransactionId: String? {
        get { storage.fields.originalTransactionId }
        _modify { yield &stored.originalTransactionId }
    }

    @inlinable public var webOrderLineItemId: String? {
        get { storage.fields.webOrderLineItemId }
        _modify { yield &stored.webOrderLineItemId }
    }

    @inlinable public var bundleId: String? {
        get { storage.fields.bundleId }
        _modify { yield &stored.bundleId }
    }

    @inlinable public var productId: String? {
        get { storage.fields.productId }
        _modify { yield &stored.productId }
    }

    @inlinable public var subscriptionGroupIdentifier: String? {
        get { storage.fields.subscriptionGroupIdentifier }
        _modify { yield &stored.subscriptionGroupIdentifier }
    }

    @inlinable public var purchaseDate: Timestamp? {
        get { storage.fields.purchaseDate }
        _modify { yield &stored.purchaseDate }
    }

    @inlinable public var originalPurchaseDate: Timestamp? {
        get { storage.fields.originalPurchaseDate }
        _modify { yield &stored.originalPurchaseDate }
    }

    @inlinable public var expiresDate: Timestamp? {
        get { storage.fields.expiresDate }
        _modify { yield &stored.expiresDate }
    }

    @inlinable public var quantity: Int? {
        get { storage.fields.quantity }
        _modify { yield &stored.quantity }
    }

    @inlinable public var type: ProductType? {
        get { storage.fields.type }
        _modify { yield &stored.type }
    }

    @inlinable public var appAccountToken: String? {
        get { storage.fields.appAccountToken }
        _modify { yield &stored.appAccountToken }
    }

    @inlinable public var inAppOwnershipType: InAppOwnershipType? {
        get { storage.fields.inAppOwnershipType }
        _modify { yield &stored.inAppOwnershipType }
    }

    @inlinable public var signedDate: Timestamp? {
        get { storage.fields.signedDate }
        _modify { yield &stored.signedDate }
    }

    @inlinable public var revocationReason: RevocationReason? {
        get { storage.fields.revocationReason }
        _modify { yield &stored.revocationReason }
    }

    @inlinable public var revocationDate: Timestamp? {
        get { storage.fields.revocationDate }
        _modify { yield &stored.revocationDate }
    }

    @inlinable public var isUpgraded: Bool? {
        get { storage.fields.isUpgraded }
        _modify { yield &stored.isUpgraded }
    }

    @inlinable public var offerType: OfferType? {
        get { storage.fields.offerType }
        _modify { yield &stored.offerType }
    }

    @inlinable public var offerIdentifier: String? {
        get { storage.fields.offerIdentifier }
        _modify { yield &stored.offerIdentifier }
    }

    @inlinable public var environment: Environment? {
        get { storage.fields.environment }
        _modify { yield &stored.environment }
    }

    @inlinable public var storefront: String? {
        get { storage.fields.storefront }
        _modify { yield &stored.storefront }
    }

    @inlinable public var storefrontId: String? {
        get { storage.fields.storefrontId }
        _modify { yield &stored.storefrontId }
    }

    @inlinable public var transactionReason: TransactionReason? {
        get { storage.fields.transactionReason }
        _modify { yield &stored.transactionReason }
    }

    /// Price in milliunits of ``currency``.
    @inlinable public var price: Int64? {
        get { storage.fields.price }
        _modify { yield &stored.price }
    }

    @inlinable public var currency: String? {
        get { storage.fields.currency }
        _modify { yield &stored.currency }
    }

    @inlinable public var offerDiscountType: OfferDiscountType? {
        get { storage.fields.offerDiscountType }
        _modify { yield &stored.offerDiscountType }
    }

    @inlinable public var appTransactionId: String? {
        get { storage.fields.appTransactionId }
        _modify { yield &stored.appTransactionId }
    }

    @inlinable public var offerPeriod: String? {
        get { storage.fields.offerPeriod }
        _modify { yield &stored.offerPeriod }
    }

    @inlinable public var revocationType: RevocationType? {
        get { storage.fields.revocationType }
        _modify { yield &stored.revocationType }
    }

    /// Refunded share in thousandths of a percent (100000 is a full refund).
    @inlinable public var revocationPercentage: Int64? {
        get { storage.fields.revocationPercentage }
        _modify { yield &stored.revocationPercentage }
    }

    @inlinable public var advancedCommerceInfo: JSONValue? {
        get { storage.fields.advancedCommerceInfo }
        _modify { yield &stored.advancedCommerceInfo }
    }

    /// The legacy flags as they came (`is_trial_period`, `is_in_intro_offer_period`, ...).
    @inlinable public var legacy: JSONObject {
        get { storage.fields.legacy }
        _modify { yield &stored.legacy }
    }

    /// Fields this version does not know, kept as raw JSON under their original names.
    @inlinable public var extra: JSONObject {
        get { storage.fields.extra }
        _modify { yield &stored.extra }
    }

    /// How the record this transaction came from was verified.
    @inlinable public var verification: Verification {
        get { storage.fields.verification }
        _modify { yield &stored.verification }
    }

    /// Every record this transaction was seen in. (Held beside the shared fields: each sighting sets its own,
    /// and merging two sightings of the same fields compares the fields alone.)
    public var sources: [Provenance]

    /// Creates a transaction with only its id; set the other fields as they are known.
    public init(transactionId: String) {
        storage = Storage(
            Fields(transactionId: transactionId, legacy: JSONObject(), extra: JSONObject(), verification: .notApplicable))
        sources = []
    }

    /// Equal when every field and the sources are (transactions sharing their fields compare at once).
    public static func == (lhs: Transaction, rhs: Transaction) -> Bool {
        lhs.sources == rhs.sources && lhs.hasSameFields(as: rhs)
    }

    /// Whether `other` holds the same values in every field but ``sources``.
    public func hasSameFields(as other: Transaction) -> Bool {
        storage === other.storage || storage.fields == other.storage.fields
    }

    /// Hashes every field and the sources, as ``==`` compares them.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(storage.fields)
        hasher.combine(sources)
    }

    /// Whether the transaction is for an auto-renewable subscription (by `type`, or an expiry date when absent).
    public var isAutoRenewable: Bool {
        if let type { return type == .autoRenewableSubscription }
        return expiresDate != nil
    }
}

extension Transaction: CustomReflectable {
    /// The fields, as a struct of stored properties would show them.
    public var customMirror: Mirror {
        Mirror(
            self, children: Array(Mirror(reflecting: storage.fields).children) + [(label: "sources", value: sources)],
            displayStyle: .struct)
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
