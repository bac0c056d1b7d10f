import ReceiptModel

/// Decodes verifyReceipt responses (and the `unified_receipt` of V1 notifications).
enum VerifyReceiptDecoder {
    static let responseKeys: Set<String> = [
        "status", "environment", "receipt", "latest_receipt_info", "pending_renewal_info", "latest_receipt",
        "is-retryable",
    ]

    static func decode(_ object: JSONObject, provenance: Provenance, notes: DecodeNotes) throws(RecordError) -> DecodedRecord {
        let fields = Fields(object, at: "", notes: notes)
        guard let status = try fields.int64("status") else {
            throw RecordError(code: "missingField", message: "status is required in a verifyReceipt response")
        }
        if status != 0 && status != 21006 {
            throw RecordError(code: "appleStatus", message: "verifyReceipt status \(status): \(AppleStatus.meaning(status))")
        }
        var record = DecodedRecord(provenance: provenance, kind: .verifyReceipt)
        let environment = try fields.string("environment").map(Environment.init(legacy:))
        var bundleId: String?
        var transactions = TransactionSet()
        if let receiptValue = object["receipt"] {
            guard case .object(let receiptObject) = receiptValue else {
                throw RecordError(code: "wrongType", message: "receipt is \(receiptValue.typeName), expected an object")
            }
            let receiptFields = Fields(receiptObject, at: "receipt", notes: notes)
            if receiptObject.has("transaction_id") {
                // iOS 6 style: the receipt is itself the transaction.
                var receipt = AppReceipt()
                receipt.bundleId = try receiptFields.string("bid")
                receipt.applicationVersion = try receiptFields.string("bvrs")
                receipt.inAppCount = 1
                record.receipt = receipt
                bundleId = receipt.bundleId
                let t = try TransactionMapping.legacyTransaction(receiptFields, environment: environment, bundleId: bundleId)
                transactions.add(t, source: provenance.at("receipt"))
            } else {
                let receipt = try receiptFieldsToReceipt(receiptFields)
                record.receipt = receipt
                bundleId = receipt.bundleId
                let inApp = try objects(receiptObject["in_app"], name: "in_app")
                record.receipt?.inAppCount = inApp.count
                for (index, entry) in inApp.enumerated() {
                    let location = "in_app[\(index)]"
                    let t = try TransactionMapping.legacyTransaction(
                        Fields(entry, at: location, notes: notes), environment: environment, bundleId: bundleId)
                    transactions.add(t, source: provenance.at(location))
                }
            }
        }
        try addUnified(
            object, into: &transactions, renewals: &record.renewalInfos, environment: environment, bundleId: bundleId,
            provenance: provenance, prefix: "", notes: notes)
        record.transactions = transactions.ordered
        if var receipt = record.receipt {
            receipt.extra.members.append(contentsOf: fields.unknownMembers(responseKeys).members)
            if let latest = object["latest_receipt"] { receipt.extra.append("latest_receipt", latest) }
            record.receipt = receipt
        }
        return record
    }

    /// Adds `latest_receipt_info` and `pending_renewal_info` from a response or a `unified_receipt`.
    static func addUnified(
        _ object: JSONObject, into transactions: inout TransactionSet, renewals: inout [RenewalInfo],
        environment: Environment?, bundleId: String?, provenance: Provenance, prefix: String, notes: DecodeNotes
    ) throws(RecordError) {
        for key in ["latest_receipt_info", "latest_expired_receipt_info"] {
            let latest = try objects(object[key], name: prefix + key)
            for (index, entry) in latest.enumerated() {
                let location = object[key]?.arrayValue == nil ? prefix + key : "\(prefix)\(key)[\(index)]"
                let t = try TransactionMapping.legacyTransaction(
                    Fields(entry, at: location, notes: notes), environment: environment, bundleId: bundleId)
                transactions.add(t, source: provenance.at(location))
            }
        }
        let pending = try objects(object["pending_renewal_info"], name: prefix + "pending_renewal_info")
        for (index, entry) in pending.enumerated() {
            let location = "\(prefix)pending_renewal_info[\(index)]"
            var renewal = try TransactionMapping.legacyRenewal(Fields(entry, at: location, notes: notes), environment: environment)
            renewal.sources = [provenance.at(location)]
            renewals.append(renewal)
        }
    }

    /// An array of objects, or a single object (iOS 6 style), or nothing.
    static func objects(_ value: JSONValue?, name: String) throws(RecordError) -> [JSONObject] {
        guard let value else { return [] }
        switch value {
        case .null: return []
        case .object(let object): return [object]
        case .array(let elements):
            var out: [JSONObject] = []
            out.reserveCapacity(elements.count)
            for (index, element) in elements.enumerated() {
                guard case .object(let object) = element else {
                    throw RecordError(code: "wrongType", message: "\(name)[\(index)] is \(element.typeName), expected an object")
                }
                out.append(object)
            }
            return out
        default:
            throw RecordError(code: "wrongType", message: "\(name) is \(value.typeName), expected an array of objects")
        }
    }

    static let receiptKnownKeys: Set<String> = [
        "receipt_type", "adam_id", "app_item_id", "bundle_id", "application_version", "download_id",
        "version_external_identifier", "receipt_creation_date", "receipt_creation_date_ms", "receipt_creation_date_pst",
        "request_date", "request_date_ms", "request_date_pst", "original_purchase_date", "original_purchase_date_ms",
        "original_purchase_date_pst", "original_application_version", "expiration_date", "expiration_date_ms",
        "expiration_date_pst", "preorder_date", "preorder_date_ms", "preorder_date_pst", "in_app",
    ]

    static func receiptFieldsToReceipt(_ fields: Fields) throws(RecordError) -> AppReceipt {
        var receipt = AppReceipt()
        receipt.receiptType = try fields.string("receipt_type")
        receipt.adamId = try fields.int64("adam_id")
        receipt.appItemId = try fields.int64("app_item_id")
        receipt.bundleId = try fields.string("bundle_id")
        receipt.applicationVersion = try fields.string("application_version")
        receipt.downloadId = try fields.int64("download_id")
        receipt.versionExternalIdentifier = try fields.int64("version_external_identifier")
        receipt.receiptCreationDate = try fields.legacyDate("receipt_creation_date")
        receipt.requestDate = try fields.legacyDate("request_date")
        receipt.originalPurchaseDate = try fields.legacyDate("original_purchase_date")
        receipt.originalApplicationVersion = try fields.string("original_application_version")
        receipt.expirationDate = try fields.legacyDate("expiration_date")
        receipt.preorderDate = try fields.legacyDate("preorder_date")
        receipt.extra = fields.unknownMembers(receiptKnownKeys)
        return receipt
    }
}

/// Transactions of one record, merged by `transactionId` in first-seen order.
struct TransactionSet {
    private(set) var ordered: [Transaction] = []
    private var index: [String: Int] = [:]

    /// Adds a sighting; a later sighting of the same id wins field by field (latest_receipt_info over in_app).
    mutating func add(_ transaction: Transaction, source: Provenance) {
        var transaction = transaction
        transaction.sources = [source]
        if let existing = index[transaction.transactionId] {
            ordered[existing].merge(transaction, preferOther: true)
        } else {
            index[transaction.transactionId] = ordered.count
            ordered.append(transaction)
        }
    }
}

/// Decodes App Store Server Notifications V1.
enum NotificationV1Decoder {
    static let knownKeys: Set<String> = [
        "notification_type", "environment", "unified_receipt", "auto_renew_status", "auto_renew_product_id",
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
        notification.autoRenewStatusChangeDate = try fields.legacyDate("auto_renew_status_change_date")
        notification.originalTransactionId = try fields.string("original_transaction_id")
        notification.signedDate = notification.autoRenewStatusChangeDate
        var extra = fields.unknownMembers(knownKeys.union(["bid", "bvrs"]))
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

/// Maps an AppTransaction payload (or its decoded JSON) to the receipt fields.
enum AppTransactionMapping {
    static let knownKeys: Set<String> = [
        "receiptType", "appAppleId", "bundleId", "applicationVersion", "versionExternalIdentifier",
        "receiptCreationDate", "originalPurchaseDate", "originalApplicationVersion", "preorderDate",
    ]

    static func receipt(_ fields: Fields) throws(RecordError) -> AppReceipt {
        var receipt = AppReceipt()
        receipt.receiptType = try fields.string("receiptType")
        receipt.adamId = try fields.int64("appAppleId")
        receipt.bundleId = try fields.string("bundleId")
        receipt.applicationVersion = try fields.string("applicationVersion")
        receipt.versionExternalIdentifier = try fields.int64("versionExternalIdentifier")
        receipt.receiptCreationDate = try fields.timestamp("receiptCreationDate")
        receipt.originalPurchaseDate = try fields.timestamp("originalPurchaseDate")
        receipt.originalApplicationVersion = try fields.string("originalApplicationVersion")
        receipt.preorderDate = try fields.timestamp("preorderDate")
        receipt.extra = fields.unknownMembers(knownKeys)
        return receipt
    }
}
