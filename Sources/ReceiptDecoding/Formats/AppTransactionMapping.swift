import ReceiptModel

/// Maps an AppTransaction payload (or its decoded JSON) to the receipt fields.
enum AppTransactionMapping {
    static let knownKeys: KeySet = [
        "receiptType", "appAppleId", "bundleId", "applicationVersion", "versionExternalIdentifier",
        "receiptCreationDate", "requestDate", "originalPurchaseDate", "originalApplicationVersion", "preorderDate",
    ]

    static func receipt(_ fields: Fields) throws(RecordError) -> AppReceipt {
        var receipt = AppReceipt()
        receipt.receiptType = try fields.string("receiptType")
        receipt.adamId = try fields.int64("appAppleId")
        receipt.bundleId = try fields.string("bundleId")
        receipt.applicationVersion = try fields.string("applicationVersion")
        receipt.versionExternalIdentifier = try fields.int64("versionExternalIdentifier")
        receipt.receiptCreationDate = try fields.timestamp("receiptCreationDate")
        // (Xcode's AppTransactions carry it, as verifyReceipt's receipts do `request_date`.)
        receipt.requestDate = try fields.timestamp("requestDate")
        receipt.originalPurchaseDate = try fields.timestamp("originalPurchaseDate")
        receipt.originalApplicationVersion = try fields.string("originalApplicationVersion")
        receipt.preorderDate = try fields.timestamp("preorderDate")
        receipt.extra = fields.unknownMembers(knownKeys)
        return receipt
    }
}
