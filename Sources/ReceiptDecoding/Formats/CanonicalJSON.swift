import ReceiptModel

/// Reads back the canonical JSON that ``JSONWriter`` writes for transactions, renewal infos and
/// notifications, so a ledger can store one text column and rebuild the full model from it.
public enum CanonicalJSON {
    /// Encodes a transaction.
    public static func encode(_ transaction: Transaction) -> String {
        var writer = JSONWriter()
        return encode(transaction, with: &writer)
    }

    /// Encodes a transaction in `writer`'s buffer (emptied first), so that encoding many grows one buffer once.
    /// The writer's own setting for absent members is kept for its next use.
    public static func encode(_ transaction: Transaction, with writer: inout JSONWriter) -> String {
        writer.reset()
        let omits = writer.omitsAbsentMembers
        defer { writer.omitsAbsentMembers = omits }
        writer.omitsAbsentMembers = true
        // A transaction's canonical JSON is about 700 bytes; growing from empty copied it five times.
        writer.reserveCapacity(1024)
        writer.transaction(nil, transaction)
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    /// Encodes a renewal info.
    public static func encode(_ renewal: RenewalInfo) -> String {
        var writer = JSONWriter()
        writer.omitsAbsentMembers = true
        writer.renewalInfo(nil, renewal)
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    /// Encodes a notification.
    public static func encode(_ notification: Notification) -> String {
        var writer = JSONWriter()
        writer.omitsAbsentMembers = true
        writer.notification(nil, notification)
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    /// Decodes a transaction written by ``encode(_:)-(Transaction)``.
    public static func transaction(_ text: String) throws(RecordError) -> Transaction {
        let object = try self.object(text)
        var t = try TransactionMapping.jwsTransaction(Fields(object, at: "canonical", notes: DecodeNotes()))
        t.extra = object["extra"]?.objectValue ?? JSONObject()
        t.legacy = object["legacy"]?.objectValue ?? JSONObject()
        t.verification = object["verification"]?.stringValue.flatMap(Verification.init(rawValue:)) ?? .notApplicable
        t.sources = sources(object["sources"])
        return t
    }

    /// Decodes a renewal info.
    public static func renewalInfo(_ text: String) throws(RecordError) -> RenewalInfo {
        let object = try self.object(text)
        var r = try TransactionMapping.jwsRenewal(Fields(object, at: "canonical", notes: DecodeNotes()))
        r.extra = object["extra"]?.objectValue ?? JSONObject()
        r.legacy = object["legacy"]?.objectValue ?? JSONObject()
        r.verification = object["verification"]?.stringValue.flatMap(Verification.init(rawValue:)) ?? .notApplicable
        r.sources = sources(object["sources"])
        return r
    }

    /// Decodes a notification.
    public static func notification(_ text: String) throws(RecordError) -> Notification {
        let object = try self.object(text)
        let fields = Fields(object, at: "canonical", notes: DecodeNotes())
        var n = Notification(
            version: try fields.string("version") ?? "2.0",
            notificationType: NotificationType(rawValue: try fields.requiredString("notificationType")))
        n.subtype = try fields.string("subtype").map(NotificationSubtype.init(rawValue:))
        n.notificationUUID = try fields.string("notificationUUID")
        n.signedDate = try fields.timestamp("signedDate")
        n.environment = try fields.string("environment").map(Environment.init(rawValue:))
        n.bundleId = try fields.string("bundleId")
        n.bundleVersion = try fields.string("bundleVersion")
        n.appAppleId = try fields.int64("appAppleId")
        n.status = try fields.int("status")
        n.summary = object["summary"]
        n.autoRenewStatus = try fields.bool("autoRenewStatus")
        n.autoRenewProductId = try fields.string("autoRenewProductId")
        n.autoRenewStatusChangeDate = try fields.timestamp("autoRenewStatusChangeDate")
        n.originalTransactionId = try fields.string("originalTransactionId")
        n.extra = object["extra"]?.objectValue ?? JSONObject()
        return n
    }

    private static func object(_ text: String) throws(RecordError) -> JSONObject {
        guard case .object(let object) = try JSONParser.parse(Array(text.utf8)) else {
            throw RecordError(code: "malformed", message: "canonical JSON is not an object")
        }
        return object
    }

    private static func sources(_ value: JSONValue?) -> [Provenance] {
        guard case .array(let items)? = value else { return [] }
        return items.compactMap { item in
            guard let text = item.stringValue else { return nil }
            return Provenance(parsing: text)
        }
    }
}
