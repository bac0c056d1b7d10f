import ReceiptModel

/// Turns one input record's bytes into a ``DecodedRecord``: sniffs the kind, decodes, verifies.
///
/// Never throws: whatever is wrong with a record becomes a rejection with a stable code, a sentence
/// a person can act on, and the record's raw bytes.
public struct RecordDecoder: Sendable {
    public let verifier: JWSVerifier
    /// The current instant, used when a policy judges validity now.
    public let now: Timestamp
    /// Trust anchors for PKCS#7 app receipts (Apple Inc. Root by default).
    public let receiptRoots: [[UInt8]]
    /// The receipt roots parsed, with the envelope chains validated against them (shared by copies of the decoder).
    private let receiptTrust: ReceiptTrust

    /// Creates a decoder.
    public init(verifier: JWSVerifier, receiptRoots: [[UInt8]] = [], now: Timestamp) {
        self.verifier = verifier
        self.now = now
        self.receiptRoots = receiptRoots
        self.receiptTrust = ReceiptTrust(rootDERs: receiptRoots)
    }

    /// Number of app receipt certificate chains validated in full (cache misses), for measurements and tests.
    public var receiptChainValidations: Int { receiptTrust.chains.validations }

    /// Decodes one record.
    public func decode(_ bytes: [UInt8], provenance: Provenance) async -> DecodedRecord {
        let notes = DecodeNotes()
        var kind = RecordKind.unknown
        do {
            var record = try await decodeThrowing(bytes, provenance: provenance, notes: notes, kind: &kind)
            record.warnings.append(contentsOf: notes.warnings)
            return record
        } catch let failure as Rejection {
            var record = DecodedRecord.rejected(
                provenance, kind: failure.kind, verification: failure.verification, error: failure.error,
                raw: failure.raw ?? Self.withoutSecrets(bytes))
            record.warnings = notes.warnings
            return record
        } catch let error as RecordError {
            // (Every rejected record keeps its bytes without a shared secret: a V1 notification's `password` was shown
            // on the Imports screen.)
            var record = DecodedRecord.rejected(provenance, kind: kind, error: error, raw: Self.withoutSecrets(bytes))
            record.warnings = notes.warnings
            return record
        } catch {
            return .rejected(
                provenance, kind: kind, error: RecordError(code: "internal", message: "\(error)"), raw: Self.withoutSecrets(bytes))
        }
    }

    private func decodeThrowing(
        _ bytes: [UInt8], provenance: Provenance, notes: DecodeNotes, kind: inout RecordKind
    ) async throws -> DecodedRecord {
        if let byteOrder = RecordSplitter.utf16ByteOrder(bytes) {
            throw RecordError(
                code: "utf16",
                message: "this file is UTF-16 (\(byteOrder)); convert it to UTF-8 (for example iconv -f UTF-16 -t UTF-8)")
        }
        guard let first = bytes.first(where: { !isWhitespace($0) }) else {
            throw RecordError(code: "emptyInput", message: bytes.isEmpty ? "the input is empty: it holds no record" : "the record holds only white space")
        }
        if first == UInt8(ascii: "{") || first == UInt8(ascii: "[") {
            let value = try JSONParser.parse(bytes)
            guard case .object(let object) = value else {
                throw RecordError(
                    code: "unrecognisedDocument", message: "the JSON is \(value.typeName), not an App Store document (which is a JSON object)")
            }
            return try await decodeJSON(object, provenance: provenance, notes: notes, kind: &kind)
        }
        if first == 0x30 {
            kind = .appReceipt
            return try await decodeAppReceipt(der: bytes, provenance: provenance, notes: notes)
        }
        if CompactJWS.looksLikeJWS(bytes) {
            return try await decodeBareJWS(bytes, provenance: provenance, notes: notes, kind: &kind)
        }
        let text = bytes.filter { !isWhitespace($0) }
        let decoded = Base64.decode(text)
        if text.starts(with: Array("MI".utf8)) || decoded?.first == 0x30 {
            // Base64 of a DER/BER SEQUENCE: `MII...` (long form), `MIA...` (indefinite length), `MIM...`.
            kind = .appReceipt
            guard let der = decoded else {
                throw RecordError(code: "malformed", message: "the app receipt is not valid base64")
            }
            return try await decodeAppReceipt(der: der, provenance: provenance, notes: notes)
        }
        if let decoded, isLegacyTransactionReceipt(decoded) {
            throw RecordError(
                code: "legacyTransactionReceipt",
                message:
                    "this is an iOS 6 transaction receipt (a base64 plist with purchase-info), which Apple retired; send the app receipt or the transaction's JWS instead"
            )
        }
        // A JWS cut short (a copy that stopped before its signature, a paste of its first kilobytes): said as one.
        if let parts = CompactJWS.truncatedParts(bytes) {
            throw RecordError(
                code: "unrecognisedDocument",
                message: "this looks like a JWS with \(parts) of 3 parts (truncated?): a JWS is header.payload.signature, and this has "
                    + "\(parts == 1 ? "no payload or signature" : "no signature") (\(bytes.count) bytes)")
        }
        // A number, a string or a literal (an array's stray element): JSON, but no document; a string cut short (an array's
        // last element, where the input ends) is truncated JSON.
        if let first = bytes.first, Array("-0123456789\"tfn".utf8).contains(first) {
            let value: JSONValue?
            do {
                value = try JSONParser.parse(bytes)
            } catch where error.code == "truncatedJSON" {
                throw error
            } catch {
                value = nil
            }
            if let value {
                throw RecordError(
                    code: "unrecognisedDocument", message: "the JSON is \(value.typeName), not an App Store document (which is a JSON object)")
            }
        }
        // A compressed export (`.json.gz`) is the usual mistake, and a person can act on its name.
        let compressed = bytes.starts(with: [0x1f, 0x8b]) ? "; it is gzip-compressed: gunzip it and import the result" : ""
        throw RecordError(
            code: "unrecognisedDocument",
            message: "not JSON, a JWS or a PKCS#7 app receipt (starts with \(describePrefix(bytes)))\(compressed)")
    }

    // MARK: JSON documents

    private func decodeJSON(
        _ object: JSONObject, provenance: Provenance, notes: DecodeNotes, kind: inout RecordKind
    ) async throws -> DecodedRecord {
        if let payload = object["signedPayload"] {
            kind = .notificationV2
            guard case .string(let jws) = payload else {
                throw RecordError(code: "wrongType", message: "signedPayload is \(payload.typeName), expected a JWS string")
            }
            return try await decodeSignedNotification(Array(jws.utf8), provenance: provenance, notes: notes)
        }
        if object.has("notification_type") {
            kind = .notificationV1
            return try NotificationV1Decoder.decode(object, provenance: provenance, notes: notes)
        }
        if object.has("notificationType") {
            kind = .notificationV2
            var record = DecodedRecord(provenance: provenance, kind: .notificationV2)
            try await fillNotificationV2(&record, payload: object, verification: .notApplicable, notes: notes)
            return record
        }
        if object.has("status") && !object.has("transactionId") && !object.has("data") {
            kind = .verifyReceipt
            return try VerifyReceiptDecoder.decode(object, provenance: provenance, notes: notes)
        }
        if object.has("signedTransactions") || object["data"]?.arrayValue != nil {
            kind = .serverAPIResponse
            return try await decodeServerAPIResponse(object, provenance: provenance, notes: notes)
        }
        if object.has("transactionReceipt") || object.has("receipt-data") {
            kind = .appReceipt
            return try await decodeWrappedReceipt(object, provenance: provenance, notes: notes)
        }
        if object.has("transactionId") {
            kind = .signedTransaction
            var record = DecodedRecord(provenance: provenance, kind: .signedTransaction)
            var transaction = try TransactionMapping.jwsTransaction(Fields(object, at: "", notes: notes))
            transaction.sources = [provenance]
            record.transactions = [transaction]
            return record
        }
        if object.has("autoRenewStatus") || object.has("autoRenewProductId") {
            kind = .signedRenewalInfo
            var record = DecodedRecord(provenance: provenance, kind: .signedRenewalInfo)
            var renewal = try TransactionMapping.jwsRenewal(Fields(object, at: "", notes: notes))
            renewal.sources = [provenance]
            record.renewalInfos = [renewal]
            return record
        }
        if object.has("receiptType") || object.has("originalApplicationVersion") {
            kind = .appReceipt
            var record = DecodedRecord(provenance: provenance, kind: .appReceipt)
            record.receipt = try AppTransactionMapping.receipt(Fields(object, at: "", notes: notes))
            return record
        }
        let keys = object.members.prefix(6).map(\.key).joined(separator: ", ")
        throw RecordError(
            code: "unrecognisedDocument",
            message: "a JSON object with keys \(keys.isEmpty ? "(none)" : keys) is not an App Store document")
    }

    // MARK: Signed data

    private func decodeBareJWS(
        _ bytes: [UInt8], provenance: Provenance, notes: DecodeNotes, kind: inout RecordKind
    ) async throws -> DecodedRecord {
        let jws = try CompactJWS(bytes, headers: verifier.headers)
        let payload = jws.payload
        if payload.has("notificationType") {
            kind = .notificationV2
            return try await decodeSignedNotification(bytes, provenance: provenance, notes: notes, parsed: jws)
        }
        if payload.has("transactionId") {
            kind = .signedTransaction
            let (transaction, verification) = try await signedTransaction(
                jws, provenance: provenance, location: "", notes: notes)
            var record = DecodedRecord(provenance: provenance, kind: .signedTransaction, verification: verification)
            record.transactions = [transaction]
            return record
        }
        if payload.has("autoRenewStatus") || payload.has("autoRenewProductId") {
            kind = .signedRenewalInfo
            let (renewal, verification) = try await signedRenewal(jws, provenance: provenance, location: "", notes: notes)
            var record = DecodedRecord(provenance: provenance, kind: .signedRenewalInfo, verification: verification)
            record.renewalInfos = [renewal]
            return record
        }
        if payload.has("receiptType") || payload.has("originalApplicationVersion") {
            kind = .appReceipt
            let verification = try await check(jws, kind: .appReceipt, bundleId: payload["bundleId"]?.stringValue)
            var record = DecodedRecord(provenance: provenance, kind: .appReceipt, verification: verification)
            record.receipt = try AppTransactionMapping.receipt(Fields(payload, at: "", notes: notes))
            return record
        }
        // Minimal payloads (Apple's own test data carries only environment, bundleId and signedDate):
        // classify by which payload type every key belongs to.
        if payload.members.allSatisfy({ TransactionMapping.jwsRenewalKeys.contains($0.key) }) {
            kind = .signedRenewalInfo
            let (renewal, verification) = try await signedRenewal(jws, provenance: provenance, location: "", notes: notes)
            var record = DecodedRecord(provenance: provenance, kind: .signedRenewalInfo, verification: verification)
            record.renewalInfos = [renewal]
            return record
        }
        if payload.members.allSatisfy({ TransactionMapping.jwsTransactionKeys.contains($0.key) }) {
            kind = .signedTransaction
            let verification = try await check(jws, kind: .signedTransaction, bundleId: payload["bundleId"]?.stringValue)
            notes.warnings.append("the signed transaction carries no transactionId; there is nothing to import")
            return DecodedRecord(provenance: provenance, kind: .signedTransaction, verification: verification)
        }
        throw RecordError(code: "unrecognisedDocument", message: "the JWS payload is not a transaction, renewal info or notification")
    }

    /// Verifies a JWS and applies the bundle check; throws a rejection that keeps the kind.
    /// `location`: where a JWS nested in the record is (`signedTransactions[3]`), said in front of why it was refused (a
    /// response of six transactions said "the signature does not match" and not which).
    private func check(_ jws: CompactJWS, kind: RecordKind, bundleId: String?, location: String = "") async throws -> Verification {
        let result = await verifier.verify(jws, now: now)
        let at = location.isEmpty ? "" : location + ": "
        if case .rejected(let error) = result {
            throw Rejection(kind: kind, verification: .failed, error: RecordError(code: error.code, message: at + error.message))
        }
        if result == .verified, let wanted = verifier.policy.bundleId, bundleId != wanted {
            throw Rejection(
                kind: kind, verification: .failed,
                error: RecordError(code: "wrongBundle", message: at + "signed for bundle \(bundleId ?? "(none)"), expected \(wanted)"))
        }
        return result.verification
    }

    private func signedTransaction(
        _ jws: CompactJWS, provenance: Provenance, location: String, notes: DecodeNotes, kind: RecordKind = .signedTransaction
    ) async throws -> (Transaction, Verification) {
        var transaction = try TransactionMapping.jwsTransaction(Fields(jws.payload, at: location, notes: notes))
        let verification = try await check(jws, kind: kind, bundleId: transaction.bundleId, location: location)
        transaction.verification = verification
        transaction.sources = [location.isEmpty ? provenance : provenance.at(location)]
        return (transaction, verification)
    }

    private func signedRenewal(
        _ jws: CompactJWS, provenance: Provenance, location: String, notes: DecodeNotes, kind: RecordKind = .signedRenewalInfo
    ) async throws -> (RenewalInfo, Verification) {
        var renewal = try TransactionMapping.jwsRenewal(Fields(jws.payload, at: location, notes: notes))
        // Renewal infos carry no bundle id; the environment check is the verifier's.
        let verification = try await check(jws, kind: kind, bundleId: verifier.policy.bundleId, location: location)
        renewal.verification = verification
        renewal.sources = [location.isEmpty ? provenance : provenance.at(location)]
        return (renewal, verification)
    }

    private func decodeSignedNotification(
        _ bytes: [UInt8], provenance: Provenance, notes: DecodeNotes, parsed: CompactJWS? = nil
    ) async throws -> DecodedRecord {
        var jws: CompactJWS
        do throws(RecordError) {
            if let parsed { jws = parsed } else { jws = try CompactJWS(bytes, headers: verifier.headers) }
        } catch {
            throw Rejection(kind: .notificationV2, verification: .failed, error: error)
        }
        let data = jws.payload["data"]?.objectValue
        let bundle = data?["bundleId"]?.stringValue ?? jws.payload["summary"]?["bundleId"]?.stringValue
        let verification = try await check(jws, kind: .notificationV2, bundleId: bundle)
        var record = DecodedRecord(provenance: provenance, kind: .notificationV2, verification: verification)
        try await fillNotificationV2(&record, payload: jws.payload, verification: verification, notes: notes)
        return record
    }

    static let notificationV2Keys: KeySet = [
        "notificationType", "subtype", "notificationUUID", "version", "signedDate", "data", "summary",
        "externalPurchaseToken", "appData",
    ]
    static let notificationDataKeys: KeySet = [
        "environment", "appAppleId", "bundleId", "bundleVersion", "signedTransactionInfo", "signedRenewalInfo", "status",
    ]

    /// Fills a record from a decoded V2 notification payload, decoding its nested signed data.
    private func fillNotificationV2(
        _ record: inout DecodedRecord, payload: JSONObject, verification: Verification, notes: DecodeNotes
    ) async throws {
        let fields = Fields(payload, at: "", notes: notes)
        var notification = Notification(
            version: try fields.string("version") ?? "2.0",
            notificationType: NotificationType(rawValue: try fields.requiredString("notificationType")))
        notification.subtype = try fields.string("subtype").map(NotificationSubtype.init(rawValue:))
        notification.notificationUUID = try fields.string("notificationUUID")
        notification.signedDate = try fields.timestamp("signedDate")
        notification.summary = payload["summary"] ?? payload["externalPurchaseToken"] ?? payload["appData"]
        notification.extra = fields.unknownMembers(Self.notificationV2Keys)
        notification.verification = verification
        let body = payload["data"]?.objectValue ?? payload["summary"]?.objectValue ?? payload["appData"]?.objectValue
        if let body {
            let data = Fields(body, at: "data", notes: notes)
            notification.environment = try data.string("environment").map(Environment.init(rawValue:))
            notification.appAppleId = try data.int64("appAppleId")
            notification.bundleId = try data.string("bundleId")
            notification.bundleVersion = try data.string("bundleVersion")
            notification.status = try data.int("status")
            for member in data.unknownMembers(Self.notificationDataKeys) where payload["data"] != nil {
                notification.extra.append("data.\(member.key)", member.value)
            }
            if let signed = try data.string("signedTransactionInfo") {
                if let jws = try nestedJWS(signed, name: "data.signedTransactionInfo", notes: notes) {
                    var (transaction, _) = try await signedTransaction(
                        jws, provenance: record.provenance, location: "data.signedTransactionInfo", notes: notes,
                        kind: .notificationV2)
                    if verification != .verified && transaction.verification == .verified {
                        transaction.verification = verification
                    }
                    record.transactions.append(transaction)
                }
            }
            if let signed = try data.string("signedRenewalInfo") {
                if let jws = try nestedJWS(signed, name: "data.signedRenewalInfo", notes: notes) {
                    let (renewal, _) = try await signedRenewal(
                        jws, provenance: record.provenance, location: "data.signedRenewalInfo", notes: notes,
                        kind: .notificationV2)
                    record.renewalInfos.append(renewal)
                }
            }
        }
        record.notification = notification
    }

    /// A nested JWS, or `nil` with a warning when the value is a placeholder that is no JWS at all.
    private func nestedJWS(_ text: String, name: String, notes: DecodeNotes) throws -> CompactJWS? {
        let bytes = Array(text.utf8)
        guard CompactJWS.looksLikeJWS(strict: bytes) else {
            notes.warnings.append("\(name) is not a JWS (\"\(text.prefix(32))\"); kept raw, not decoded")
            return nil
        }
        do {
            return try CompactJWS(bytes, headers: verifier.headers)
        } catch {
            throw RecordError(code: error.code, message: "\(name): \(error.message)")
        }
    }

    private func decodeServerAPIResponse(
        _ object: JSONObject, provenance: Provenance, notes: DecodeNotes
    ) async throws -> DecodedRecord {
        var record = DecodedRecord(provenance: provenance, kind: .serverAPIResponse)
        var verifications: [Verification] = []
        if let signed = object["signedTransactions"] {
            guard case .array(let items) = signed else {
                throw RecordError(code: "wrongType", message: "signedTransactions is \(signed.typeName), expected an array")
            }
            for (index, item) in items.enumerated() {
                let name = "signedTransactions[\(index)]"
                guard case .string(let text) = item else {
                    throw RecordError(code: "wrongType", message: "\(name) is \(item.typeName), expected a JWS string")
                }
                guard let jws = try nestedJWS(text, name: name, notes: notes) else { continue }
                let (transaction, verification) = try await signedTransaction(
                    jws, provenance: provenance, location: name, notes: notes, kind: .serverAPIResponse)
                verifications.append(verification)
                record.transactions.append(transaction)
            }
        }
        if case .array(let groups)? = object["data"] {
            for (g, group) in groups.enumerated() {
                guard case .array(let lasts)? = group["lastTransactions"] else { continue }
                for (i, last) in lasts.enumerated() {
                    let base = "data[\(g)].lastTransactions[\(i)]"
                    guard let entry = last.objectValue else {
                        throw RecordError(code: "wrongType", message: "\(base) is \(last.typeName), expected an object")
                    }
                    if let text = entry["signedTransactionInfo"]?.stringValue,
                        let jws = try nestedJWS(text, name: base + ".signedTransactionInfo", notes: notes)
                    {
                        let (transaction, verification) = try await signedTransaction(
                            jws, provenance: provenance, location: base + ".signedTransactionInfo", notes: notes,
                            kind: .serverAPIResponse)
                        verifications.append(verification)
                        record.transactions.append(transaction)
                    }
                    if let text = entry["signedRenewalInfo"]?.stringValue,
                        let jws = try nestedJWS(text, name: base + ".signedRenewalInfo", notes: notes)
                    {
                        let (renewal, verification) = try await signedRenewal(
                            jws, provenance: provenance, location: base + ".signedRenewalInfo", notes: notes,
                            kind: .serverAPIResponse)
                        verifications.append(verification)
                        record.renewalInfos.append(renewal)
                    }
                }
            }
        }
        record.verification = verifications.min { $0.trustRank < $1.trustRank } ?? .notApplicable
        return record
    }

    // MARK: App receipts

    /// An app receipt inside JSON: a client plugin's `{"transactionReceipt": "<base64>", ...}`, or the verifyReceipt
    /// request body an app posts to its server, `{"receipt-data": "<base64>", "password": ...,
    /// "exclude-old-transactions": ...}`.
    ///
    /// `password` is the app's shared secret: it is never read, and a rejected record keeps the body with the
    /// password replaced, so it reaches no output, warning, error or stored raw bytes. `exclude-old-transactions`
    /// tells Apple what to answer; the receipt itself holds every purchase either way.
    private func decodeWrappedReceipt(
        _ object: JSONObject, provenance: Provenance, notes: DecodeNotes
    ) async throws -> DecodedRecord {
        do {
            let keys = ["transactionReceipt", "receipt-data"].filter(object.has)
            guard keys.count == 1, let key = keys.first, let wrapped = object[key] else {
                throw RecordError(
                    code: "ambiguousReceipt",
                    message: "the object holds both transactionReceipt and receipt-data; send one receipt per record")
            }
            guard case .string(let base64) = wrapped, let der = Base64.decode(base64, skipWhitespace: true) else {
                throw RecordError(code: "malformed", message: "\(key) is not a base64 app receipt")
            }
            if isLegacyTransactionReceipt(der) {
                throw RecordError(
                    code: "legacyTransactionReceipt",
                    message:
                        "\(key) holds an iOS 6 transaction receipt (a base64 plist with purchase-info), which Apple retired; send the app receipt or the transaction's JWS instead"
                )
            }
            return try await decodeAppReceipt(der: der, provenance: provenance, notes: notes)
        } catch where object.has("password") {
            let failure =
                error as? Rejection
                ?? Rejection(
                    kind: .appReceipt, verification: .notApplicable,
                    error: error as? RecordError ?? RecordError(code: "internal", message: "\(error)"))
            throw Rejection(
                kind: failure.kind, verification: failure.verification, error: failure.error,
                raw: Self.redactingPassword(object))
        }
    }

    /// A record's bytes as a rejected record keeps them: a JSON object's `password` (the app's shared secret, in a
    /// request body or a V1 notification) replaced; any other input as it is. Every record the decoder rejects keeps
    /// these, and so does one the ledger refuses after it decoded (a reused test id).
    public static func withoutSecrets(_ bytes: [UInt8]) -> [UInt8] {
        guard let first = bytes.first(where: { !isWhitespace($0) }), first == UInt8(ascii: "{"),
            case .object(let object)? = try? JSONParser.parse(bytes), object.has("password")
        else { return bytes }
        return redactingPassword(object)
    }

    /// The object written back as JSON with every `password` member's value replaced by `"<redacted>"`.
    static func redactingPassword(_ object: JSONObject) -> [UInt8] {
        var writer = JSONWriter()
        writer.beginObject()
        for member in object {
            if member.key == "password" {
                writer.string(member.key, "<redacted>")
            } else {
                writer.value(member.key, member.value)
            }
        }
        writer.endObject()
        return writer.bytes
    }

    private func decodeAppReceipt(der: [UInt8], provenance: Provenance, notes: DecodeNotes) async throws -> DecodedRecord {
        let parsed = try PKCS7Receipt.parse(der)
        var record = DecodedRecord(provenance: provenance, kind: .appReceipt)
        record.receipt = parsed.receipt
        record.transactions = try parsed.transactions(provenance: provenance, notes: notes)
        // At the receipt's creation date, as a JWS at its signedDate; `--verify-now` (a fixed instant) judges both then.
        var fixed: Timestamp?
        if case .at(let instant) = verifier.policy.validationTime { fixed = instant }
        let outcome = await PKCS7SignatureCheck.verify(
            parsed, trust: receiptTrust, enabled: verifier.policy.verifySignatures, fallback: fixed ?? now, at: fixed)
        notes.warnings.append(contentsOf: outcome.warnings)
        record.verification = outcome.verification
        for index in record.transactions.indices { record.transactions[index].verification = record.verification }
        if record.verification == .failed {
            throw Rejection(
                kind: .appReceipt, verification: .failed,
                error: RecordError(
                    code: "signatureInvalid",
                    message: "the receipt's PKCS#7 signature does not verify against a trusted root: \(outcome.reason ?? "no reason given")"))
        }
        // --bundle-id and --environment hold for a signed receipt as for signed JWS (its bundle id and receipt type
        // are inside what the signature covers).
        if record.verification == .verified {
            let policy = verifier.policy
            if let wanted = policy.bundleId, parsed.receipt.bundleId != wanted {
                throw Rejection(
                    kind: .appReceipt, verification: .failed,
                    error: RecordError(code: "wrongBundle", message: "signed for bundle \(parsed.receipt.bundleId ?? "(none)"), expected \(wanted)"))
            }
            // (A receipt that names no type passes, as a JWS that names no environment does.)
            if let wanted = policy.environment, let type = parsed.receipt.receiptType,
                PKCS7Receipt.environment(receiptType: type) != wanted
            {
                throw Rejection(
                    kind: .appReceipt, verification: .failed,
                    error: RecordError(code: "wrongEnvironment", message: "signed for \(type), expected \(wanted)"))
            }
        }
        return record
    }
}

/// A rejection that knows the record's kind and verification outcome.
struct Rejection: Error {
    let kind: RecordKind
    let verification: Verification
    let error: RecordError
    /// What the rejected record keeps as its raw bytes, when not the input as read (a secret taken out of it).
    var raw: [UInt8]? = nil
}

@inline(__always) func isWhitespace(_ byte: UInt8) -> Bool {
    byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
}

private func describePrefix(_ bytes: [UInt8]) -> String {
    let head = bytes.drop(while: isWhitespace).prefix(8)
    if head.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) { return "\"\(String(decoding: head, as: UTF8.self))\"" }
    // Two digits a byte, as hexdump prints them ("1f 8b 08 00", never "1f 8b 8 0").
    let digits = Array("0123456789abcdef")
    return head.map { String([digits[Int($0 >> 4)], digits[Int($0 & 0x0f)]]) }.joined(separator: " ")
}

/// Whether decoded bytes are an iOS 6 transaction receipt: an old-style plist with `purchase-info`.
private func isLegacyTransactionReceipt(_ bytes: [UInt8]) -> Bool {
    guard bytes.first == UInt8(ascii: "{") else { return false }
    let needle = Array("\"purchase-info\"".utf8)
    guard bytes.count >= needle.count else { return false }
    for start in 0...(bytes.count - needle.count) where bytes[start] == needle[0] {
        if Array(bytes[start..<(start + needle.count)]) == needle { return true }
    }
    return false
}
