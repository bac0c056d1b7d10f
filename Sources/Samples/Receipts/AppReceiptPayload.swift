import Crypto

/// The payload of an app receipt: what the PKCS#7 envelope signs.
///
/// ```
/// AppReceiptPayload ::= SET OF ReceiptAttribute
///     -- 0   receipt type                  UTF8String (Production, ProductionSandbox)
///     -- 1   app item id (adam id)         INTEGER, 0 in the sandbox
///     -- 2   bundle identifier             UTF8String
///     -- 3   app version                   UTF8String
///     -- 4   opaque value                  bytes
///     -- 5   SHA-1 hash                    20 bytes: SHA-1(device identifier ‖ opaque value ‖ attribute 2's value)
///     -- 12  receipt creation date         IA5String (RFC 3339)
///     -- 17  in-app purchase receipt       SET OF ReceiptAttribute, one attribute per purchase
///     -- 18  original purchase date        IA5String
///     -- 19  original application version  UTF8String
/// ```
/// Types 2, 3, 4, 5, 17 and 19 are in Apple's "Receipt Fields"; 0, 1, 12 and 18 are in every receipt
/// Apple issues (the corpus's production and sandbox receipts) and are what the decoder reads the
/// environment and the dates from.
struct AppReceiptPayload {
    var receiptType: String
    var appItemId: Int64
    var bundleId: String
    var applicationVersion: String
    /// The device identifier the hash covers (identifierForVendor's 16 bytes on iOS).
    var deviceIdentifier: [UInt8]
    var opaqueValue: [UInt8]
    var creationDate: Int64
    var originalPurchaseDate: Int64
    var originalApplicationVersion: String
    var inApp: [InAppPurchaseReceipt]

    /// The DER of the payload.
    var der: [UInt8] {
        let bundle = ReceiptAttribute.utf8(2, bundleId)
        var hash = Insecure.SHA1()
        hash.update(data: deviceIdentifier)
        hash.update(data: opaqueValue)
        hash.update(data: bundle.value)
        var attributes: [ReceiptAttribute] = [
            .utf8(0, receiptType),
            .integer(1, appItemId),
            bundle,
            .utf8(3, applicationVersion),
            .octets(4, opaqueValue, version: 2),
            .octets(5, Array(hash.finalize())),
            .date(12, creationDate),
            .date(18, originalPurchaseDate),
            .utf8(19, originalApplicationVersion),
        ]
        attributes.append(contentsOf: inApp.map(\.attribute))
        return ReceiptAttribute.derSet(attributes)
    }
}
