import ReceiptModel

/// Decodes verifyReceipt responses (and the `unified_receipt` of V1 notifications).
enum VerifyReceiptDecoder {
    static let responseKeys: KeySet = [
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

    static let receiptKnownKeys: KeySet = [
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
        receipt.receiptCreationDate = try fields.legacyDate(.receiptCreationDate)
        receipt.requestDate = try fields.legacyDate(.requestDate)
        receipt.originalPurchaseDate = try fields.legacyDate(.originalPurchaseDate)
        receipt.originalApplicationVersion = try fields.string("original_application_version")
        receipt.expirationDate = try fields.legacyDate(.expirationDate)
        receipt.preorderDate = try fields.legacyDate(.preorderDate)
        receipt.extra = fields.unknownMembers(receiptKnownKeys)
        return receipt
    }
}
