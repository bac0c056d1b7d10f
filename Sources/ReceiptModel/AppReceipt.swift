/// The receipt fields of an app receipt, from a verifyReceipt `receipt` object, a PKCS#7 receipt or an AppTransaction.
public struct AppReceipt: Hashable, Sendable {
    public var receiptType: String?
    public var adamId: Int64?
    public var appItemId: Int64?
    public var bundleId: String?
    public var applicationVersion: String?
    public var originalApplicationVersion: String?
    public var downloadId: Int64?
    public var versionExternalIdentifier: Int64?
    public var receiptCreationDate: Timestamp?
    public var requestDate: Timestamp?
    public var originalPurchaseDate: Timestamp?
    public var expirationDate: Timestamp?
    public var preorderDate: Timestamp?
    /// PKCS#7 only: the opaque value and SHA-1 hash used for device checks, base64.
    public var opaqueValue: String?
    public var sha1Hash: String?
    /// Number of in-app entries the receipt carried (duplicates included).
    public var inAppCount: Int
    /// Fields this version does not know, kept raw (PKCS#7 attribute types as `attribute.N`).
    public var extra: JSONObject

    /// Creates an empty receipt.
    public init() {
        self.inAppCount = 0
        self.extra = JSONObject()
    }
}
