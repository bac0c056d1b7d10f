import ReceiptModel

/// Decodes App Store Server Notifications V1.
enum NotificationV1Decoder {
    /// The members mapped onto the notification (`bid` and `bvrs` among them) or read for its transactions.
    static let knownKeys: KeySet = [
        "bid", "bvrs", "notification_type", "environment", "unified_receipt", "auto_renew_status", "auto_renew_product_id",
        "auto_renew_status_change_date", "auto_renew_status_change_date_ms", "auto_renew_status_change_date_pst",
        "original_transaction_id", "password", "latest_receipt_info", "latest_expired_receipt_info",
        "pending_renewal_info",
    ]

    static func decode(_ object: JSONObject, provenance: Provenance, notes: DecodeNotes) throws(RecordError) -> DecodedRecord {
        let fields = Fields(object, at: "", notes: notes)
        var notification = Notification(
            version: "1", notificationType: NotificationType(rawValue: try fields.requiredString("notification_type")))
        let unified = object["unified_receipt"]?.objectValue
        let unifiedFields = unified.map { Fields($0, at: "unified_receipt", notes: notes) }
        // unified_receipt.environment says Production where the top level says PROD.
        let unifiedEnvironment = try unifiedFields?.string("environment")
        var environmentText = unifiedEnvironment
        if environmentText == nil { environmentText = try fields.string("environment") }
        let environment = environmentText.map(Environment.init(legacy:))
        notification.environment = environment
        notification.bundleId = try fields.string("bid")
        notification.bundleVersion = try fields.string("bvrs")
        notification.autoRenewStatus = try fields.bool("auto_renew_status")
        notification.autoRenewProductId = try fields.string("auto_renew_product_id")
        notification.autoRenewStatusChangeDate = try fields.legacyDate(.autoRenewStatusChangeDate)
        notification.originalTransactionId = try fields.string("original_transaction_id")
        notification.signedDate = notification.autoRenewStatusChangeDate
        var extra = fields.unknownMembers(knownKeys)
        if object.has("password") { extra.append("password", .string("<redacted>")) }
        notification.extra = extra

        var record = DecodedRecord(provenance: provenance, kind: .notificationV1)
        var transactions = TransactionSet()
        if let unified {
            if let status = try unifiedFields?.int64("status"), status != 0, status != 21006 {
                throw RecordError(
                    code: "appleStatus", message: "unified_receipt status \(status): \(AppleStatus.meaning(status))")
            }
            try VerifyReceiptDecoder.addUnified(
                unified, into: &transactions, renewals: &record.renewalInfos, environment: environment,
                bundleId: notification.bundleId, provenance: provenance, prefix: "unified_receipt.", notes: notes)
            if let latest = unified["latest_receipt"] { notification.extra.append("unified_receipt.latest_receipt", latest) }
        }
        // Pre-2021 notifications carry the receipt info at the top level.
        try VerifyReceiptDecoder.addUnified(
            object, into: &transactions, renewals: &record.renewalInfos, environment: environment,
            bundleId: notification.bundleId, provenance: provenance, prefix: "", notes: notes)
        record.transactions = transactions.ordered
        record.notification = notification
        return record
    }
}
