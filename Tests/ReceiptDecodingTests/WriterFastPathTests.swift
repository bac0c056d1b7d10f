import Foundation
import ReceiptModel
import Testing

@testable import ReceiptDecoding

/// The import's fast paths give the same answers as the plain code they replace.
@Suite("fast paths agree with the plain answers")
struct FastPathTests {
    @Test("an integer is written as its decimal text", arguments: [
        Int64.min, Int64.min + 1, -1_000_000_000_000_000_000, -10, -9, -1, 0, 1, 9, 10, 99, 100, 1_738_251_369_598,
        999_999_999_999_999_999, Int64.max - 1, Int64.max,
    ])
    func integers(value: Int64) {
        var writer = JSONWriter()
        writer.beginArray()
        writer.int(nil, value)
        writer.int(nil, Int(exactly: value))
        writer.endArray()
        #expect(String(decoding: writer.bytes, as: UTF8.self) == "[\(value),\(value)]")
    }

    @Test("a source is written as its description, escaped", arguments: [
        Provenance(path: "data/v1.ndjson", index: 0),
        Provenance(path: "data/v1.ndjson", index: 123_456, location: "unified_receipt.latest_receipt_info[3]"),
        Provenance(path: "quote\"and\\slash\tand\u{1}", index: 9, location: "line\nbreak"),
        Provenance(path: "", index: Int.max, location: "é ✓"),
    ])
    func sources(source: Provenance) throws {
        var transaction = Transaction(transactionId: "1")
        transaction.sources = [source, source]
        var fast = JSONWriter()
        fast.transaction(nil, transaction)
        var plain = JSONWriter()
        plain.beginArray()
        plain.string(nil, source.description)
        plain.string(nil, source.description)
        plain.endArray()
        let written = String(decoding: fast.bytes, as: UTF8.self)
        let expected = #""sources":"# + String(decoding: plain.bytes, as: UTF8.self)
        #expect(written.contains(expected), "\(written)")
        // And it reads back.
        let canonical = CanonicalJSON.encode(transaction)
        #expect(try CanonicalJSON.transaction(canonical).sources == [source, source])
    }

    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/json")

    static func fixture(_ name: String) throws -> String {
        try String(contentsOf: fixtures.appendingPathComponent(name), encoding: .utf8)
    }

    @Test("decode --json writes the bytes it wrote before the fast paths (Fixtures/json, output of 6858218)")
    func recordsAsBefore() async throws {
        let records = try await decodeAll(Array(try Self.fixture("records.ndjson").utf8), path: "records.ndjson")
        var writer = JSONWriter()
        var out = ""
        for record in records {
            writer.reset()
            writer.record(record)
            writer.newline()
            out += String(decoding: writer.bytes, as: UTF8.self)
        }
        #expect(out == (try Self.fixture("records.json")))
    }

    @Test("a transaction's canonical JSON is what the ledger stored before the fast paths (output of 6858218)")
    func canonicalAsBefore() async throws {
        let records = try await decodeAll(Array(try Self.fixture("records.ndjson").utf8), path: "records.ndjson")
        let transactions = records.flatMap(\.transactions).sorted { $0.transactionId < $1.transactionId }
        var reused = JSONWriter()
        let lines = transactions.map { CanonicalJSON.encode($0, with: &reused) + "\n" }.joined()
        #expect(lines == (try Self.fixture("records.canonical")))
        #expect(transactions.map { CanonicalJSON.encode($0) + "\n" }.joined() == lines)
    }

    @Test("a writer lent to the canonical encoding keeps its own setting for absent members")
    func lentWriterKeepsItsSetting() {
        var writer = JSONWriter()
        _ = CanonicalJSON.encode(Transaction(transactionId: "1"), with: &writer)
        writer.reset()
        writer.beginObject()
        writer.string("absent", nil)
        writer.endObject()
        #expect(String(decoding: writer.bytes, as: UTF8.self) == #"{"absent":null}"#)
    }

    @Test("one writer reused for many transactions writes each as a new writer would")
    func reusedWriter() {
        var reused = JSONWriter()
        for (index, field) in Transaction.fields.enumerated() {
            var t = Transaction(transactionId: "\(index)")
            field.assign(&t, .text("v\(index)"))
            field.assign(&t, .integer(Int64(index)))
            t.legacy.append("is_trial_period", .string("false"))
            t.sources = [Provenance(path: "p", index: index)]
            #expect(CanonicalJSON.encode(t, with: &reused) == CanonicalJSON.encode(t))
        }
    }

    @Test("a key set holds exactly its names, whatever their lengths")
    func keySet() {
        let names = ["a", "bb", "cc", "expires_date_ms", "expires_date", "", "é", "transaction_id", "bb"]
        let set = KeySet(names)
        for name in names { #expect(set.contains(name), "\(name)") }
        let others = ["b", "c", "expires_date_m", "expires_date_ms ", "transaction_iD", "e", "ée", String(repeating: "y", count: 300)]
        for other in others {
            #expect(!set.contains(other), "\(other)")
        }
        let both = KeySet(["x"]).union(set)
        #expect(both.contains("x") && both.contains("transaction_id") && !both.contains("y"))
        // Names are matched as they are spelled, UTF-8 length first (as JSONObject's lookup is): a canonically
        // equivalent spelling of another length is another name. (Every name the decoders keep is ASCII.)
        #expect(!KeySet(["\u{E9}"]).contains("e\u{301}"))
        #expect(Set(["\u{E9}"]).contains("e\u{301}"))
    }

    @Test("a JWS is recognised strictly the same from any collection of bytes", arguments: [
        ("eyJhbGciOiJFUzI1NiJ9.eyJ0IjoxfQ.c2ln", true),
        ("eyJhbGciOiJFUzI1NiJ9.eyJ0IjoxfQ.", true),
        (" eyJhbGciOiJFUzI1NiJ9.eyJ0IjoxfQ.c2ln", false),
        ("eyJhbGciOiJFUzI1NiJ9.eyJ0IjoxfQ.c2ln\n", true),
        ("\"eyJhbGciOiJFUzI1NiJ9.eyJ0IjoxfQ.c2ln\"", false),
        ("eyJhbGciOiJFUzI1NiJ9.eyJ0IjoxfQ", false),
        ("eyJhbGciOiJFUzI1NiJ9.eyJ0I{oxfQ.c2ln", false),
        ("eyJhbGciOiJFUzI1NiJ9.eyJ0IjoxfQ.c2l\u{0}", false),
        ("e", false), ("ey", false), ("ey..", true), ("", false), ("xy..", false),
    ])
    func strictJWS(text: String, expected: Bool) {
        let bytes = Array(text.utf8)
        #expect(CompactJWS.looksLikeJWS(strict: bytes) == expected)
        // A collection without contiguous storage takes the other path.
        #expect(CompactJWS.looksLikeJWS(strict: bytes.lazy.map { $0 }) == expected)
    }

    /// Base64 as decoded before the four-at-a-time path: one character at a time.
    static func plainBase64(_ input: [UInt8], skipWhitespace: Bool) -> [UInt8]? {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        var output: [UInt8] = []
        var accumulator: UInt32 = 0
        var bits = 0
        var padding = 0
        for byte in input {
            if byte == UInt8(ascii: "=") {
                padding += 1
                continue
            }
            if skipWhitespace && [0x20, 0x0A, 0x0D, 0x09].contains(byte) { continue }
            if padding > 0 { return nil }
            let value: Int
            if let index = alphabet.firstIndex(of: byte) {
                value = index
            } else if byte == UInt8(ascii: "-") {
                value = 62
            } else if byte == UInt8(ascii: "_") {
                value = 63
            } else {
                return nil
            }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
            }
        }
        if bits >= 6 || padding > 2 { return nil }
        return output
    }

    @Test("base64 decodes as it did character by character: any length, padding, white space, both alphabets, bad bytes")
    func base64() {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        let letters = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_".utf8)
        let odd: [UInt8] = [UInt8(ascii: "="), 0x20, 0x0A, 0x0D, 0x09, UInt8(ascii: "."), 0x00, 0xFF, UInt8(ascii: "\"")]
        var decoded = 0
        for round in 0..<20_000 {
            let length = next(40)
            // Most inputs all letters (the fast path), some with a character that is not one somewhere.
            let oddOnes = round % 3 == 0 ? 0 : next(3)
            var input = (0..<length).map { _ in letters[next(letters.count)] }
            for _ in 0..<oddOnes where !input.isEmpty { input[next(input.count)] = odd[next(odd.count)] }
            if round % 5 == 0 { input += Array(repeating: UInt8(ascii: "="), count: next(4)) }
            for skip in [false, true] {
                let expected = Self.plainBase64(input, skipWhitespace: skip)
                #expect(Base64.decode(input, skipWhitespace: skip) == expected, "\(String(decoding: input, as: UTF8.self)) skip \(skip)")
                if expected != nil { decoded += 1 }
            }
        }
        #expect(decoded > 10_000, "most inputs should decode: \(decoded)")
        // And as Foundation reads standard, padded base64, for data of every length up to three blocks.
        for length in 0..<200 {
            let data = Data((0..<length).map { _ in UInt8(next(256)) })
            let text = data.base64EncodedString(options: length % 2 == 0 ? [] : [.lineLength64Characters])
            #expect(Base64.decode(text, skipWhitespace: true) == [UInt8](data), "\(length) bytes")
        }
    }

    @Test("a JSON string's eight-byte test finds a quote, a backslash, a control character or a non-ASCII byte wherever it is")
    func stringWords() throws {
        func special(_ byte: UInt8) -> Bool { byte == 0x22 || byte == 0x5C || byte < 0x20 || byte >= 0x80 }
        func word(_ bytes: [UInt8]) -> UInt64 { bytes.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) } }
        // Every byte value at every position among bytes that need no look, both next to it and away from it.
        for filler in [UInt8(ascii: "A"), 0x20, 0x21, 0x23, 0x5B, 0x5D, 0x7F] {
            for position in 0..<8 {
                for value in 0...255 {
                    var bytes = [UInt8](repeating: filler, count: 8)
                    bytes[position] = UInt8(value)
                    #expect(JSONParser.needsLook(word(bytes)) == special(UInt8(value)), "\(bytes)")
                }
            }
        }
        var state: UInt64 = 42
        for _ in 0..<100_000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let bytes = (0..<8).map { UInt8(truncatingIfNeeded: state >> (8 * UInt64($0))) }
            #expect(JSONParser.needsLook(word(bytes)) == bytes.contains(where: special), "\(bytes)")
        }
        // Strings long enough for the words, with what ends or escapes them at every offset.
        for length in 0..<40 {
            for insert in ["\\n", "\\u00e9", "é", "\\\"", "\\\\"] {
                let text = String(repeating: "x", count: length) + insert + String(repeating: "y", count: 17)
                let parsed = try JSONParser.parse(Array("[\"\(text)\"]".utf8))
                let expected = try JSONSerialization.jsonObject(with: Data("[\"\(text)\"]".utf8)) as? [String]
                #expect(parsed == .array([.string(expected?.first ?? "?")]), "\(text)")
            }
        }
        #expect(throws: RecordError.self) { try JSONParser.parse(Array("[\"\(String(repeating: "x", count: 13))\u{01}yyyyyyyy\"]".utf8)) }
    }
}
