import ReceiptDecoding
import ReceiptModel
import Samples
import Testing

@Suite("Bad input: a clear rejection, and the other records still decode")
struct BadInputTests {
    static let good = #"{"status":0,"environment":"Production","receipt":{"bundle_id":"b","in_app":[{"transaction_id":"7","product_id":"p","quantity":"1","purchase_date_ms":"1000"}]}}"#

    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        let record: String
        let code: String
        let messageContains: String
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "truncated JSON", record: #"{"status":0,"receipt":{"in_app":["#, code: "truncatedJSON", messageContains: "truncated"),
        Case(name: "not a number", record: #"{"status":0,"receipt":{"in_app":[{"transaction_id":"1"},{"transaction_id":"2"},{"transaction_id":"3","purchase_date_ms":"abc"}]}}"#,
             code: "notANumber", messageContains: #"purchase_date_ms "abc" is not a number in in_app[2]"#),
        Case(name: "number overflows 64 bits", record: #"{"status":0,"receipt":{"in_app":[{"transaction_id":"1","purchase_date_ms":"99999999999999999999999"}]}}"#,
             code: "numberOverflow", messageContains: "does not fit in 64 bits"),
        Case(name: "negative quantity", record: #"{"status":0,"receipt":{"in_app":[{"transaction_id":"1","quantity":"-2"}]}}"#,
             code: "negativeQuantity", messageContains: "quantity -2 is negative in in_app[0]"),
        Case(name: "missing transaction id", record: #"{"status":0,"latest_receipt_info":[{"product_id":"p"}]}"#,
             code: "missingField", messageContains: "transaction_id is required in latest_receipt_info[0]"),
        Case(name: "unrecognised document", record: #"{"hello":"world"}"#, code: "unrecognisedDocument", messageContains: "hello"),
        Case(name: "invalid JSON", record: #"{"status":0,}"#, code: "invalidJSON", messageContains: "byte"),
        Case(name: "wrong type", record: #"{"status":0,"receipt":"nope"}"#, code: "wrongType", messageContains: "receipt is a string"),
        Case(name: "unknown Apple status", record: #"{"status":21199}"#, code: "appleStatus", messageContains: "21199"),
        Case(name: "not App Store data at all", record: "hello there", code: "unrecognisedDocument", messageContains: "hello th"),
        // A JWS cut short: before its signature, or inside its header (the first kilobytes of one with its x5c chain).
        Case(name: "JWS cut before its signature", record: "eyJhbGciOiJFUzI1NiJ9.eyJ0cmFuc2FjdGlvbklkIjoiMSJ9", code: "unrecognisedDocument",
             messageContains: "looks like a JWS with 2 of 3 parts (truncated?)"),
        Case(name: "JWS cut inside its header", record: String(jwsHeader.prefix(2000)), code: "unrecognisedDocument",
             messageContains: "looks like a JWS with 1 of 3 parts (truncated?)"),
        Case(name: "a JSON array", record: "[1,2,3]", code: "unrecognisedDocument", messageContains: "the JSON is an array, not an App Store document"),
        Case(name: "two base64url parts that are no JWS", record: "eyJoZWxsbyI6IndvcmxkIn0.eyJ4IjoxfQ", code: "unrecognisedDocument",
             messageContains: "not JSON, a JWS or a PKCS#7 app receipt"),
        Case(name: "JWS with a broken payload", record: "eyJhbGciOiJFUzI1NiJ9.eyJub3QganNvbg.c2ln", code: "malformed", messageContains: "payload"),
    ]

    /// A JWS header as Apple's are: `alg`, then an `x5c` chain of kilobytes (here filler), base64url.
    static let jwsHeader: String = {
        let json = #"{"alg":"ES256","x5c":[""# + String(repeating: "MIIEMDCCA7agAwIBAgIQaPoPldvpSoEH0lBrjDPv9jAKBggqhkjOPQQDAzB1", count: 60) + #""]}"#
        return base64URL(Array(json.utf8))
    }()

    @Test("each bad record is rejected with its code and place; its neighbours decode", arguments: cases)
    func rejection(_ testCase: Case) async throws {
        let input = [Self.good, testCase.record, Self.good].joined(separator: "\n") + "\n"
        let records = try await decodeText(input)
        #expect(records.count == 3)
        #expect(records[0].isOK && records[2].isOK)
        #expect(records[0].transactions.first?.transactionId == "7")
        let bad = records[1]
        #expect(bad.error?.code == testCase.code)
        #expect(bad.error?.message.contains(testCase.messageContains) == true, "\(bad.error?.message ?? "no error")")
        #expect(bad.provenance.recordName == "input#1")
        #expect(bad.raw == Array(testCase.record.utf8))
    }

    // An empty file holds zero records (TextEncodingTests); a record that is empty, handed to the decoder, is
    // still rejected, never read as a document.
    @Test("an empty record handed to the decoder is rejected as emptyInput; blank lines after a record add none")
    func emptyInput() async throws {
        let decoder = try makeDecoder()
        for text in ["", "\n\n  \n"] {
            let record = await decoder.decode(Array(text.utf8), provenance: Provenance(path: "input", index: 0, byteOffset: 0))
            #expect(record.error?.code == "emptyInput")
        }
        #expect(try await decodeText("{\"status\":21006}\n\n").count == 1)
    }

    @Test("bytes that are no document are named two hex digits each, and a gzip file is said to be one")
    func binaryPrefix() async throws {
        let decoder = try makeDecoder()
        let gzip: [UInt8] = [0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0x4b]
        let record = await decoder.decode(gzip, provenance: Provenance(path: "export.json.gz", index: 0, byteOffset: 0))
        #expect(record.error?.code == "unrecognisedDocument")
        #expect(record.error?.message.contains("(starts with 1f 8b 08 00 00 00 00 00); it is gzip-compressed: gunzip it") == true, "\(record.error?.message ?? "")")
        let other = await decoder.decode([0x00, 0x01, 0xfe, 0x0a, 0x7f], provenance: Provenance(path: "x.bin", index: 0, byteOffset: 0))
        #expect(other.error?.message.hasSuffix("(starts with 00 01 fe 0a 7f)") == true, "\(other.error?.message ?? "")")
    }

    @Test("an array's stray number, string or literal is JSON that is no document, and said so; a quoted JWS decodes")
    func scalarElements() async throws {
        let jws = try String(decoding: Corpus.bytes("awa__go-iap/EXTRACTED_validator_test.go_L326_sandbox-renewal-info.jws"), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let records = try await decodeText("[\"\(jws)\", 1, -2.5e3, \"x\", null, true]")
        #expect(records.first?.kind == .signedRenewalInfo && records.first?.isOK == true)
        let said = records.dropFirst().map { $0.error?.message ?? "" }
        #expect(
            said == ["a number", "a number", "a string", "null", "a boolean"].map { "the JSON is \($0), not an App Store document (which is a JSON object)" },
            "\(said)")
        #expect(records.dropFirst().allSatisfy { $0.error?.code == "unrecognisedDocument" })
        // Text that is no JSON at all is still named by its first bytes.
        #expect(try await decodeText("hello").first?.error?.message.contains("(starts with") == true)
    }

    @Test("nesting deeper than the bound is refused, not recursed into")
    func deepNesting() async throws {
        let deep = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        let input = "{\"status\":0,\"x\":" + deep + "}"
        let record = try #require(try await decodeText(input).first)
        #expect(record.error?.code == "nestingTooDeep")
    }

    @Test("invalid UTF-8 in a string is rejected")
    func invalidUTF8() async throws {
        var bytes = Array(#"{"status":0,"environment":""#.utf8)
        bytes += [0xC3, 0x28]
        bytes += Array(#""}"#.utf8)
        let record = try #require(try await decodeAll(bytes).first)
        #expect(record.error?.code == "invalidUTF8")
    }

    @Test("a receipt cut short is said to be cut short in words, not as the ASN.1 library's error and source line")
    func truncatedReceiptInWords() async throws {
        let bytes = Array(try Corpus.bytes("IdeasOnCanvas__AppReceiptValidator/mindnode_mac_sha256_receipt").prefix(600))
        let record = try #require(try await decodeAll(bytes).first)
        #expect(record.error?.code == "malformed")
        #expect(record.error?.message == "the app receipt is not BER/DER PKCS#7: the bytes end inside a field (the file is cut short)", "\(String(describing: record.error))")
    }

    @Test("a truncated last document in a file is reported, earlier ones decode")
    func truncatedPrettyDocument() async throws {
        let input = "{\n  \"status\": 21006,\n  \"receipt\": {\"in_app\": []}\n}\n{\n  \"status\": 0,\n  \"receipt\": {\n"
        let records = try await decodeText(input)
        #expect(records.count == 2)
        #expect(records[0].isOK)
        #expect(records[1].error?.code == "truncatedJSON")
    }

    @Test("a masked value is a warning, not a rejection")
    func maskedValue() async throws {
        let record = try #require(try await decodeText(#"{"status":0,"latest_receipt_info":{"transaction_id":"9","expires_date":"*****"}}"#).first)
        #expect(record.isOK)
        #expect(record.transactions.first?.expiresDate == nil)
        #expect(record.warnings.contains { $0.contains("masked") })
        // A masked identifier the customer is linked by is left out, said: two masked ones would link two customers.
        let text = #"{"transactionId":"1001","originalTransactionId":"******","webOrderLineItemId":"***","appAccountToken":"****","productId":"p"}"#
        let linked = try #require(try await decodeText(text).first)
        #expect(linked.isOK)
        let t = try #require(linked.transactions.first)
        #expect(t.originalTransactionId == nil && t.webOrderLineItemId == nil && t.appAccountToken == nil)
        #expect(linked.warnings.contains("originalTransactionId is masked; treated as absent"), "\(linked.warnings)")
        let renewal = try #require(
            try await decodeText(#"{"status":0,"pending_renewal_info":[{"original_transaction_id":"*****","auto_renew_status":"1","product_id":"p"}]}"#).first)
        #expect(renewal.renewalInfos.first.map { $0.originalTransactionId == nil } != false, "\(renewal.renewalInfos)")
        // A masked transaction id is not: two would be one purchase.
        for text in [#"{"status":0,"latest_receipt_info":{"transaction_id":"****"}}"#, #"{"transactionId":"***","productId":"p"}"#] {
            let masked = try #require(try await decodeText(text).first)
            #expect(masked.error?.code == "maskedId", "\(text)")
        }
    }
}
