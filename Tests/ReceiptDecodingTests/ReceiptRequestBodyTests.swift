import Foundation
import ReceiptDecoding
import ReceiptModel
import Testing

/// The verifyReceipt request body an app posts to its server: `{"receipt-data": "<base64>", "password": ...,
/// "exclude-old-transactions": ...}` (Apple's documented request keys).
@Suite("verifyReceipt request bodies: the receipt is decoded, the shared secret is never shown")
struct ReceiptRequestBodyTests {
    /// A real sandbox receipt; `verifyReceiptSample1.txt` is Apple's answer to it (SOURCES.md: a matched pair).
    static let receiptFile = "RevenueCat__purchases-ios/base64encodedreceiptsample1.txt"
    static let responseFile = "RevenueCat__purchases-ios/verifyReceiptSample1.txt"
    /// The app's shared secret, as a server would post it.
    static let secret = "7f3c9a1e5b2d4c8e9f0a1b2c3d4e5f60"

    static func receiptBase64() throws -> String {
        String(decoding: try Corpus.bytes(receiptFile).filter { $0 > 0x20 }, as: UTF8.self)
    }

    /// How clients write the base64 inside the JSON string.
    enum Spelling: String, CaseIterable, Sendable {
        case plain
        /// `JSONSerialization` on Apple platforms writes `/` as `\/`.
        case escapedSlashes
        /// `base64EncodedString(options: .lineLength76Characters)` with `.endLineWithCarriageReturn`/`LineFeed`.
        case lineBreaks

        func write(_ base64: String) -> String {
            switch self {
            case .plain: base64
            case .escapedSlashes: base64.replacingOccurrences(of: "/", with: #"\/"#)
            case .lineBreaks:
                stride(from: 0, to: base64.count, by: 76).map { start in
                    let from = base64.index(base64.startIndex, offsetBy: start)
                    let to = base64.index(from, offsetBy: 76, limitedBy: base64.endIndex) ?? base64.endIndex
                    return String(base64[from..<to])
                }.joined(separator: #"\r\n"#)
            }
        }
    }

    static func body(_ receiptData: String, password: String = #""\#(secret)""#) -> [UInt8] {
        Array(#"{"receipt-data":"\#(receiptData)","password":\#(password),"exclude-old-transactions":true}"#.utf8)
    }

    static func decode(_ bytes: [UInt8]) async throws -> DecodedRecord {
        try await makeDecoder().decode(bytes, provenance: Provenance(path: "request-body.json", index: 0))
    }

    @Test(
        "a real receipt posted as a verifyReceipt request body decodes to the purchases Apple's answer lists",
        arguments: Spelling.allCases)
    func realReceipt(_ spelling: Spelling) async throws {
        let record = try await Self.decode(Self.body(spelling.write(try Self.receiptBase64())))
        #expect(record.isOK, "\(record.error?.description ?? "")")
        #expect(record.kind == .appReceipt)
        #expect(record.verification == .verified)
        #expect(record.receipt?.bundleId == "com.revenuecat.sampleapp")
        #expect(record.receipt?.receiptType == "ProductionSandbox")
        // Apple's verifyReceipt answer to this very receipt lists the same purchases.
        let response = try #require(
            try JSONSerialization.jsonObject(with: Data(try Corpus.bytes(Self.responseFile))) as? [String: Any])
        let inApp = try #require((response["receipt"] as? [String: Any])?["in_app"] as? [[String: Any]])
        let expected = Set(inApp.compactMap { $0["transaction_id"] as? String })
        #expect(expected.count == 9)
        #expect(Set(record.transactions.map(\.transactionId)) == expected)
        #expect(record.transactions.allSatisfy { $0.verification == .verified })
        // The same receipt sent bare (same provenance) decodes to the same transactions.
        let bare = try await Self.decode(Array(try Self.receiptBase64().utf8))
        #expect(bare.transactions == record.transactions)
        #expect(record.warnings.isEmpty, "\(record.warnings)")
    }

    struct SecretCase: CustomTestStringConvertible, Sendable {
        var name: String
        var body: @Sendable () throws -> [UInt8]
        var code: String?
        var testDescription: String { name }
    }

    static let secretCases: [SecretCase] = [
        SecretCase(name: "accepted", body: { body(try receiptBase64()) }, code: nil),
        SecretCase(
            name: "password first, then receipt-data",
            body: { Array(#"{"password":"\#(secret)","receipt-data":"\#(try receiptBase64())"}"#.utf8) }, code: nil),
        SecretCase(
            name: "payload altered: signature fails", body: { body(try tamperedBase64()) }, code: "signatureInvalid"),
        SecretCase(name: "receipt-data is not base64", body: { body("not base64 at all!") }, code: "malformed"),
        SecretCase(
            name: "receipt-data is a number",
            body: { Array(#"{"receipt-data":12,"password":"\#(secret)"}"#.utf8) }, code: "malformed"),
        SecretCase(name: "receipt-data is base64 but not PKCS#7", body: { body("AAECAwQFBgc=") }, code: "malformed"),
        SecretCase(
            name: "receipt-data is an iOS 6 transaction receipt",
            body: {
                let plist = try Corpus.bytes("apple__app-store-server-library-swift/mock_signed_data/legacyTransaction")
                return body(String(decoding: plist.filter { $0 > 0x20 }, as: UTF8.self))
            }, code: "legacyTransactionReceipt"),
        SecretCase(
            name: "both transactionReceipt and receipt-data",
            body: {
                let receipt = try receiptBase64()
                let text = #"{"transactionReceipt":"\#(receipt)","receipt-data":"\#(receipt)","password":"\#(secret)"}"#
                return Array(text.utf8)
            }, code: "ambiguousReceipt"),
        SecretCase(
            name: "password that is not a string, receipt-data not base64",
            body: { body("%%%", password: #"{"value":"\#(secret)","also":["\#(secret)"]}"#) }, code: "malformed"),
    ]

    static func tamperedBase64() throws -> String {
        var der = Array(try #require(Data(base64Encoded: try receiptBase64())))
        let needle = Array("com.revenuecat.sampleapp".utf8)
        let at = try #require((0...(der.count - needle.count)).first { Array(der[$0..<($0 + needle.count)]) == needle })
        der[at] = UInt8(ascii: "C")
        return Data(der).base64EncodedString()
    }

    @Test("the shared secret appears in no output, warning, error or kept raw bytes", arguments: secretCases)
    func secretNeverShown(_ c: SecretCase) async throws {
        let input = try c.body()
        try #require(String(decoding: input, as: UTF8.self).contains(Self.secret))
        let record = try await Self.decode(input)
        #expect(record.kind == .appReceipt)
        #expect(record.error?.code == c.code, "\(record.error?.description ?? "ok")")
        var writer = JSONWriter()
        writer.record(record)
        let shown = [
            String(decoding: writer.bytes, as: UTF8.self), record.error?.description ?? "", record.error?.message ?? "",
            record.warnings.joined(separator: "\n"), String(decoding: record.raw, as: UTF8.self), "\(record)",
            String(reflecting: record),
        ]
        for text in shown { #expect(!text.contains(Self.secret)) }
        guard c.code != nil else {
            #expect(record.raw.isEmpty)
            return
        }
        // A rejected body keeps everything but the secret, so the receipt can still be looked at.
        let kept = try #require(try JSONSerialization.jsonObject(with: Data(record.raw)) as? [String: Any])
        #expect(kept["password"] as? String == "<redacted>")
        let original = try #require(try JSONSerialization.jsonObject(with: Data(input)) as? [String: Any])
        #expect(Set(kept.keys) == Set(original.keys))
        #expect("\(kept["receipt-data"] ?? "none")" == "\(original["receipt-data"] ?? "none")")
    }

    @Test("a V1 notification's password (the shared secret) is not in the raw bytes it keeps when rejected, nor anywhere shown")
    func notificationSecretNeverShown() async throws {
        // A V1 notification Apple would send, but for a date that is not a number: rejected.
        let input = Array(
            (#"{"notification_type":"DID_RENEW","password":"\#(Self.secret)","environment":"PROD","#
                + #""auto_renew_status":"true","original_transaction_id":"1000","auto_renew_status_change_date_ms":"soon"}"#).utf8)
        let record = try await Self.decode(input)
        #expect(record.kind == .notificationV1)
        #expect(record.error != nil, "rejected")
        var writer = JSONWriter()
        writer.record(record)
        for text in [
            String(decoding: writer.bytes, as: UTF8.self), record.error?.description ?? "", String(decoding: record.raw, as: UTF8.self),
            "\(record)", String(reflecting: record),
        ] {
            #expect(!text.contains(Self.secret), "\(text)")
        }
        let kept = try #require(try JSONSerialization.jsonObject(with: Data(record.raw)) as? [String: Any])
        #expect(kept["password"] as? String == "<redacted>")
        #expect(kept["auto_renew_status_change_date_ms"] as? String == "soon" && kept["original_transaction_id"] as? String == "1000")
    }

    @Test("a transactionReceipt wrapper without a password keeps its raw bytes as read when rejected")
    func wrapperRawUnchanged() async throws {
        let input = Array(#"{"transactionReceipt":"not base64 at all!"}"#.utf8)
        let record = try await Self.decode(input)
        #expect(record.error?.code == "malformed")
        #expect(record.error?.message == "transactionReceipt is not a base64 app receipt")
        #expect(record.raw == input)
    }
}
