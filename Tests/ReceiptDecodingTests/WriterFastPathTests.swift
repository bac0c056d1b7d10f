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
}
