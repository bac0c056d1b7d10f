import ReceiptModel

/// The machine-readable form of decoded records (DESIGN section 12): Apple's field names, raw values.
extension JSONWriter {
    /// Writes one record as an object (without the trailing newline).
    public mutating func record(_ record: DecodedRecord) {
        beginObject()
        string("source", record.provenance.recordName)
        string("kind", record.kind.rawValue)
        string("status", record.isOK ? "ok" : "rejected")
        string("verification", record.verification.rawValue)
        if let error = record.error {
            beginObject("error")
            string("code", error.code)
            string("message", error.message)
            endObject()
            int("offset", record.provenance.byteOffset)
        } else {
            beginArray("transactions")
            for transaction in record.transactions { self.transaction(nil, transaction) }
            endArray()
            beginArray("renewalInfos")
            for renewal in record.renewalInfos { self.renewalInfo(nil, renewal) }
            endArray()
            if let notification = record.notification { self.notification("notification", notification) } else { null("notification") }
            if let receipt = record.receipt { self.receipt("receipt", receipt) }
        }
        if !record.warnings.isEmpty {
            beginArray("warnings")
            for warning in record.warnings { string(nil, warning) }
            endArray()
        }
        endObject()
    }

    /// `"name":` for each of ``Transaction/fields``, in its order (the names need no escaping; written as
    /// they are, every transaction of an import skips checking them).
    static let transactionFieldKeys: [[UInt8]] = Transaction.fields.map { Array("\"\($0.name)\":".utf8) }

    /// Writes a transaction with Apple's `JWSTransactionDecodedPayload` names.
    public mutating func transaction(_ key: String?, _ t: Transaction) {
        beginObject(key)
        for (field, quotedKey) in zip(Transaction.fields, Self.transactionFieldKeys) {
            switch field.value(t) {
            case .text(let text)?:
                member(quotedKey: quotedKey)
                writeString(text)
            case .integer(let number)?:
                member(quotedKey: quotedKey)
                writeInteger(number)
            case .date(let date)?:
                member(quotedKey: quotedKey)
                writeInteger(date.millisecondsSince1970)
            case .flag(let flag)?:
                member(quotedKey: quotedKey)
                appendLiteral(flag ? "true" : "false")
            case .json(let json)?: value(field.name, json)
            case nil where field.kind == .json: break  // kept JSON is written only when present
            case nil: null(field.name)
            }
        }
        if !t.legacy.isEmpty { value("legacy", .object(t.legacy)) }
        if !t.extra.isEmpty { value("extra", .object(t.extra)) }
        string("verification", t.verification.rawValue)
        sources(t.sources)
        endObject()
    }

    /// Writes a renewal info with Apple's `JWSRenewalInfoDecodedPayload` names.
    public mutating func renewalInfo(_ key: String?, _ r: RenewalInfo) {
        beginObject(key)
        string("originalTransactionId", r.originalTransactionId)
        string("autoRenewProductId", r.autoRenewProductId)
        string("productId", r.productId)
        int("autoRenewStatus", r.autoRenewStatus?.rawValue)
        int("expirationIntent", r.expirationIntent?.rawValue)
        bool("isInBillingRetryPeriod", r.isInBillingRetryPeriod)
        int("priceIncreaseStatus", r.priceIncreaseStatus?.rawValue)
        int("gracePeriodExpiresDate", r.gracePeriodExpiresDate?.millisecondsSince1970)
        int("offerType", r.offerType?.rawValue)
        string("offerIdentifier", r.offerIdentifier)
        int("signedDate", r.signedDate?.millisecondsSince1970)
        string("environment", r.environment?.rawValue)
        int("recentSubscriptionStartDate", r.recentSubscriptionStartDate?.millisecondsSince1970)
        int("renewalDate", r.renewalDate?.millisecondsSince1970)
        string("currency", r.currency)
        int("renewalPrice", r.renewalPrice)
        string("offerDiscountType", r.offerDiscountType?.rawValue)
        if let ids = r.eligibleWinBackOfferIds {
            beginArray("eligibleWinBackOfferIds")
            for id in ids { string(nil, id) }
            endArray()
        } else {
            null("eligibleWinBackOfferIds")
        }
        string("appAccountToken", r.appAccountToken)
        string("appTransactionId", r.appTransactionId)
        string("offerPeriod", r.offerPeriod)
        if let info = r.advancedCommerceInfo { value("advancedCommerceInfo", info) }
        if !r.legacy.isEmpty { value("legacy", .object(r.legacy)) }
        if !r.extra.isEmpty { value("extra", .object(r.extra)) }
        string("verification", r.verification.rawValue)
        sources(r.sources)
        endObject()
    }

    /// Writes a notification without the transactions it carried.
    public mutating func notification(_ key: String?, _ n: Notification) {
        beginObject(key)
        string("notificationType", n.notificationType.rawValue)
        string("subtype", n.subtype?.rawValue)
        string("notificationUUID", n.notificationUUID)
        string("version", n.version)
        int("signedDate", n.signedDate?.millisecondsSince1970)
        string("environment", n.environment?.rawValue)
        string("bundleId", n.bundleId)
        string("bundleVersion", n.bundleVersion)
        int("appAppleId", n.appAppleId)
        int("status", n.status)
        if let summary = n.summary { value("summary", summary) }
        if n.version == "1" {
            bool("autoRenewStatus", n.autoRenewStatus)
            string("autoRenewProductId", n.autoRenewProductId)
            int("autoRenewStatusChangeDate", n.autoRenewStatusChangeDate?.millisecondsSince1970)
            string("originalTransactionId", n.originalTransactionId)
        }
        if !n.extra.isEmpty { value("extra", .object(n.extra)) }
        endObject()
    }

    /// Writes receipt fields (`bundle_id` as `bundleId` and so on).
    public mutating func receipt(_ key: String?, _ r: AppReceipt) {
        beginObject(key)
        string("receiptType", r.receiptType)
        int("adamId", r.adamId)
        int("appItemId", r.appItemId)
        string("bundleId", r.bundleId)
        string("applicationVersion", r.applicationVersion)
        string("originalApplicationVersion", r.originalApplicationVersion)
        int("downloadId", r.downloadId)
        int("versionExternalIdentifier", r.versionExternalIdentifier)
        int("receiptCreationDate", r.receiptCreationDate?.millisecondsSince1970)
        int("requestDate", r.requestDate?.millisecondsSince1970)
        int("originalPurchaseDate", r.originalPurchaseDate?.millisecondsSince1970)
        int("expirationDate", r.expirationDate?.millisecondsSince1970)
        int("preorderDate", r.preorderDate?.millisecondsSince1970)
        string("opaqueValue", r.opaqueValue)
        string("sha1Hash", r.sha1Hash)
        int("inAppCount", r.inAppCount)
        if !r.extra.isEmpty { value("extra", .object(r.extra)) }
        endObject()
    }

    private mutating func sources(_ sources: [Provenance]) {
        beginArray("sources")
        for source in sources { provenance(source) }
        endArray()
    }
}

extension RecordDecoder {
    /// Decodes one piece from a ``RecordSplitter`` of the input at `path`.
    public func decode(_ piece: RecordSplitter.Piece, path: String) async -> DecodedRecord {
        let provenance = Provenance(path: path, index: piece.index, byteOffset: piece.offset)
        if piece.oversize {
            return .rejected(
                provenance, kind: .unknown,
                error: RecordError(
                    code: "recordTooLarge",
                    message: "the record is \(piece.length) bytes, over the limit of \(piece.limit) bytes; split the input or raise the limit"),
                raw: piece.bytes)
        }
        if piece.unclosedArray {
            let after = piece.index == 0 ? "with no record in it" : "after its record #\(piece.index - 1)"
            return .rejected(
                provenance, kind: .unknown,
                error: RecordError(
                    code: "truncatedJSON",
                    message: "the input's JSON array has no closing ] (the input ends at byte \(piece.offset), \(after)): "
                        + "it is cut short, and the records after those read are missing"),
                raw: [])
        }
        return await decode(piece.bytes, provenance: provenance)
    }
}
