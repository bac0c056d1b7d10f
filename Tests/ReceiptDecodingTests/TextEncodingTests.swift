import Foundation
import ReceiptDecoding
import ReceiptModel
import Testing

@Suite("Files as other tools save them: a byte order mark, UTF-16")
struct TextEncodingTests {
    static let v1 = #"{"notification_type":"DID_RENEW","unified_receipt":{"status":0,"latest_receipt_info":[{"transaction_id":"1"}]}}"#
    static let bom: [UInt8] = [0xEF, 0xBB, 0xBF]

    /// Chunk sizes that cut the byte order mark, the first record and everything after it in different places.
    static let chunks = [1, 2, 3, 4, 7, 1 << 20]

    @Test("a UTF-8 byte order mark before NDJSON: every line is a record, offsets count the mark", arguments: chunks)
    func bomNDJSON(chunk: Int) async throws {
        let bytes = Self.bom + Array((Self.v1 + "\n" + Self.v1 + "\n" + Self.v1 + "\n").utf8)
        let records = try await decodeAll(bytes, chunk: chunk)
        #expect(records.count == 3)
        #expect(records.allSatisfy { $0.kind == .notificationV1 && $0.isOK })
        let length = Int64(Self.v1.utf8.count)
        // True offsets into the file: the first record starts after the three bytes of the mark.
        #expect(records.map(\.provenance.byteOffset) == [3, 3 + length + 1, 3 + 2 * (length + 1)])
        #expect(Array(bytes[3..<(3 + Int(length))]) == Array(Self.v1.utf8))
    }

    @Test("a UTF-8 byte order mark before one pretty document, an array, a JWS line and a base64 receipt")
    func bomOtherLayouts() async throws {
        let pretty = "{\n \"status\": 0,\n \"latest_receipt_info\": [ {\"transaction_id\": \"9\"} ]\n}\n"
        let document = try await decodeAll(Self.bom + Array(pretty.utf8), chunk: 2)
        #expect(document.count == 1)
        #expect(document.first?.transactions.first?.transactionId == "9")
        #expect(document.first?.provenance.byteOffset == 3)

        let array = try await decodeAll(Self.bom + Array(("[" + Self.v1 + ",\n" + Self.v1 + "]").utf8))
        #expect(array.count == 2)
        #expect(array.allSatisfy { $0.isOK })

        let jws = try String(decoding: Corpus.bytes("awa__go-iap/EXTRACTED_validator_test.go_L326_sandbox-renewal-info.jws"), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let lines = try await decodeAll(Self.bom + Array((jws + "\n" + jws + "\n").utf8))
        #expect(lines.map(\.kind) == [.signedRenewalInfo, .signedRenewalInfo])
        #expect(lines.allSatisfy { $0.verification == .verified })

        let base64 = try Corpus.bytes("RevenueCat__purchases-ios/base64encodedreceiptsample1.txt")
        let receipt = try await decodeAll(Self.bom + base64, chunk: 4096)
        #expect(receipt.count == 1)
        #expect(receipt.first?.receipt?.inAppCount == 9)
    }

    @Test("a file that is only a byte order mark (and white space) holds no record")
    func bomOnly() async throws {
        #expect(try await decodeAll(Self.bom).isEmpty)
        #expect(try await decodeAll(Self.bom + Array(" \n\r\n".utf8), chunk: 1).isEmpty)
    }

    @Test("bytes that only start like a byte order mark stay in the record")
    func almostBOM() async throws {
        let records = try await decodeAll([0xEF, 0xBB] + Array("{}".utf8), chunk: 1)
        #expect(records.count == 1)
        #expect(records.first?.raw == [0xEF, 0xBB] + Array("{}".utf8))
        #expect(records.first?.provenance.byteOffset == 0)
        #expect(records.first?.error?.code == "unrecognisedDocument")
    }

    static func utf16(_ text: String, bigEndian: Bool, mark: Bool) -> [UInt8] {
        var bytes: [UInt8] = mark ? (bigEndian ? [0xFE, 0xFF] : [0xFF, 0xFE]) : []
        for unit in text.utf16 {
            let high = UInt8(unit >> 8)
            let low = UInt8(unit & 0xFF)
            bytes += bigEndian ? [high, low] : [low, high]
        }
        return bytes
    }

    struct UTF16Case: CustomTestStringConvertible, Sendable {
        let name: String
        let bigEndian: Bool
        let mark: Bool
        var testDescription: String { name }
    }

    @Test(
        "a UTF-16 file is one record, rejected with a message that names UTF-16",
        arguments: [
            UTF16Case(name: "little-endian with a byte order mark", bigEndian: false, mark: true),
            UTF16Case(name: "big-endian with a byte order mark", bigEndian: true, mark: true),
            UTF16Case(name: "little-endian without a mark", bigEndian: false, mark: false),
            UTF16Case(name: "big-endian without a mark", bigEndian: true, mark: false),
        ])
    func utf16File(_ testCase: UTF16Case) async throws {
        let bytes = Self.utf16(Self.v1 + "\r\n" + Self.v1 + "\r\n", bigEndian: testCase.bigEndian, mark: testCase.mark)
        for chunk in [1, 3, 1 << 20] {
            let records = try await decodeAll(bytes, chunk: chunk)
            #expect(records.count == 1)
            let record = try #require(records.first)
            #expect(record.error?.code == "utf16")
            #expect(record.error?.message.contains("UTF-16") == true, "\(record.error?.message ?? "no error")")
            #expect(record.error?.message.contains("convert it to UTF-8") == true)
            #expect(record.raw == bytes)
            #expect(record.provenance.byteOffset == 0)
        }
    }

    @Test("a UTF-16 file larger than the record limit is still rejected for its encoding, its first bytes kept")
    func bigUTF16File() async throws {
        let bytes = Self.utf16(String(repeating: Self.v1 + "\n", count: 20), bigEndian: false, mark: true)
        var splitter = RecordSplitter(maxRecordBytes: 1024)
        let pieces = splitter.feed(bytes) + splitter.finish()
        #expect(pieces.count == 1)
        let piece = try #require(pieces.first)
        #expect(piece.length == bytes.count)
        #expect(piece.bytes == Array(bytes.prefix(piece.bytes.count)) && piece.bytes.count <= 1024)
        let record = await (try makeDecoder()).decode(piece, path: "big")
        #expect(record.error?.code == "utf16")
    }
}
