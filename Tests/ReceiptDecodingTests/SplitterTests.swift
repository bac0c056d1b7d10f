import Foundation
import ReceiptDecoding
import ReceiptModel
import Testing

@Suite("Inputs split into records however they are laid out")
struct SplitterTests {
    static let v1 = #"{"notification_type":"DID_RENEW","unified_receipt":{"status":0,"latest_receipt_info":[{"transaction_id":"1"}]}}"#

    @Test("NDJSON: one record per line, with byte offsets")
    func ndjson() async throws {
        let text = Self.v1 + "\n" + Self.v1 + "\n\n" + Self.v1
        let records = try await decodeText(text)
        #expect(records.map(\.provenance.index) == [0, 1, 2])
        #expect(records.map(\.provenance.byteOffset) == [0, Int64(Self.v1.utf8.count + 1), Int64(2 * Self.v1.utf8.count + 3)])
        #expect(records.allSatisfy { $0.kind == .notificationV1 && $0.isOK })
    }

    @Test("a JSON array of documents: one record per element")
    func array() async throws {
        let records = try await decodeText("[" + Self.v1 + " ,\n" + Self.v1 + "]")
        #expect(records.count == 2)
        #expect(records.allSatisfy { $0.isOK })
    }

    @Test("pretty-printed documents one after another")
    func concatenatedPretty() async throws {
        let pretty = "{\n \"status\": 0,\n \"latest_receipt_info\": [ {\"transaction_id\": \"}{\"} ]\n}\n"
        let records = try await decodeText(pretty + pretty)
        #expect(records.count == 2)
        #expect(records.allSatisfy { $0.transactions.first?.transactionId == "}{" })
    }

    @Test("bare JWS, one per line")
    func jwsLines() async throws {
        let jws = try String(decoding: Corpus.bytes("awa__go-iap/EXTRACTED_validator_test.go_L326_sandbox-renewal-info.jws"), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let records = try await decodeText(jws + "\n" + jws + "\n")
        #expect(records.count == 2)
        #expect(records.allSatisfy { $0.kind == .signedRenewalInfo && $0.verification == .verified })
    }

    @Test("a base64 receipt wrapped over many lines is one record")
    func wrappedBase64() async throws {
        let base64 = try String(decoding: Corpus.bytes("RevenueCat__purchases-ios/base64encodedreceiptsample1.txt"), as: UTF8.self)
        var wrapped = ""
        var line = ""
        for character in base64 where !character.isWhitespace {
            line.append(character)
            if line.count == 76 {
                wrapped += line + "\n"
                line = ""
            }
        }
        wrapped += line + "\n"
        let records = try await decodeText(wrapped)
        #expect(records.count == 1)
        #expect(records.first?.kind == .appReceipt)
        #expect(records.first?.receipt?.inAppCount == 9)
    }

    @Test("a first line that starts no record (cut at its start, a header, a log prefix) is a record of its own; the records after it are each theirs")
    func firstLineOfItsOwn() async throws {
        let line = Self.v1
        let jws = try String(decoding: Corpus.bytes("awa__go-iap/EXTRACTED_validator_test.go_L326_sandbox-renewal-info.jws"), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let base64 = try String(decoding: Corpus.bytes("RevenueCat__purchases-ios/base64encodedreceiptsample1.txt"), as: UTF8.self)
            .filter { !$0.isWhitespace }
        for (first, rest, kind) in [
            // A log rotated mid-line: the first line is the end of a record.
            (String(line.suffix(30)), [line, line, line], RecordKind.notificationV1),
            ("# export of 2025-07-01, 3 records", [line, line, line], .notificationV1),
            ("2025-07-01T00:00:00Z INFO received " + line, [line, line], .notificationV1),
            ("\r", [line, line], .notificationV1),
            (String(jws.prefix(40)) + "." + String(jws.suffix(40)), [jws, jws], .signedRenewalInfo),
            ("# receipts", [base64, base64], .appReceipt),
        ] {
            for newline in ["\n", "\r\n"] {
                let text = ([first] + rest).joined(separator: newline) + newline
                let records = try await decodeText(text)
                let label = "\(first.prefix(20)) \(newline == "\n" ? "LF" : "CRLF")"
                // (A first line that is white space alone is no record.)
                let expected = first == "\r" ? rest.count : rest.count + 1
                #expect(records.count == expected, "\(label): \(records.map { $0.error?.description ?? "ok" })")
                if first != "\r" { #expect(records.first?.isOK == false, "\(label)") }
                #expect(records.suffix(rest.count).allSatisfy { $0.isOK && $0.kind == kind }, "\(label): \(records.map { $0.error?.description ?? "ok" })")
                #expect(records.map(\.provenance.index) == Array(0..<expected), "\(label)")
                for chunk in [1, 5] {
                    #expect(try await decodeAll(Array(text.utf8), chunk: chunk).map(\.isOK) == records.map(\.isOK), "\(label), \(chunk)")
                }
            }
        }
        // A first line of base64 characters alone that starts no receipt: a header word, a JWS's tail.
        for first in ["signedPayloads", String(jws.split(separator: ".").last!.filter { $0 != "-" && $0 != "_" }.suffix(40))] {
            let records = try await decodeText(([first] + [jws, jws, jws]).joined(separator: "\n") + "\n")
            #expect(records.map(\.isOK) == [false, true, true, true], "\(first): \(records.map { $0.error?.description ?? "ok" })")
        }
        // A receipt wrapped wider than 76 columns is one record still.
        let wide = stride(from: 0, to: base64.count, by: 100).map { start -> String in
            let from = base64.index(base64.startIndex, offsetBy: start)
            return String(base64[from..<(base64.index(from, offsetBy: 100, limitedBy: base64.endIndex) ?? base64.endIndex)])
        }.joined(separator: "\n")
        let wrapped = try await decodeText(wide + "\n")
        #expect(wrapped.count == 1 && wrapped.first?.kind == .appReceipt && wrapped.first?.isOK == true, "\(wrapped.map { $0.error?.description ?? "ok" })")
        // A first line with a log's colours, or cut inside a character (split -b, tail -c): a line of its own too.
        for first in ["\u{1B}[32mINFO\u{1B}[0m received", String(decoding: Array("é".utf8).suffix(1) + Array("rst line".utf8), as: UTF8.self)] {
            let records = try await decodeText(([first] + [line, line]).joined(separator: "\n") + "\n")
            #expect(records.map(\.isOK) == [false, true, true], "\(records.map { $0.error?.description ?? "ok" })")
        }
        // A receipt wrapped narrower than usual (48 columns) is one record still.
        let narrow = stride(from: 0, to: base64.count, by: 48).map { start -> String in
            let from = base64.index(base64.startIndex, offsetBy: start)
            return String(base64[from..<(base64.index(from, offsetBy: 48, limitedBy: base64.endIndex) ?? base64.endIndex)])
        }.joined(separator: "\n")
        let narrowRecords = try await decodeText(narrow + "\n")
        #expect(narrowRecords.count == 1 && narrowRecords.first?.isOK == true, "\(narrowRecords.map { $0.error?.description ?? "ok" })")
        // Binary with line breaks in it (a gzip file): one record, not one per line break.
        var gzip: [UInt8] = [0x1F, 0x8B, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03]
        for n in 0..<600 { gzip.append(UInt8((n * 37 + 11) % 256)) }
        #expect(gzip.contains(0x0A))
        let binary = try await decodeAll(gzip)
        #expect(binary.count == 1 && binary.first?.error?.message.contains("gzip") == true, "\(binary.map { $0.error?.description ?? "ok" })")
        // Whole base64 receipts one per line (longer than any wrapped line): one record each.
        let receipts = try await decodeText(base64 + "\n" + base64 + "\n" + base64 + "\n")
        #expect(receipts.count == 3 && receipts.allSatisfy { $0.isOK && $0.kind == .appReceipt }, "\(receipts.map { $0.error?.description ?? "ok" })")
    }

    @Test("a document cut short ends where a whole one starts a line: the documents after it are each theirs")
    func cutDocumentEndsAtNextLine() async throws {
        let line = Self.v1
        let pretty = "{\n  \"status\": 0,\n  \"latest_receipt_info\": [\n    {\"transaction_id\": \"7\"}\n  ]\n}"
        for (text, expected) in [
            // NDJSON whose first line was cut, in a string and between values.
            (String(line.prefix(40)) + "\n" + line + "\n" + line + "\n", [false, true, true]),
            (String(line.prefix(19)) + "\n" + line + "\n" + line + "\n", [false, true, true]),
            // Pretty documents one after another, the second cut short: the third is whole.
            (pretty + "\n" + String(pretty.prefix(30)) + "\n" + pretty + "\n", [true, false, true]),
            (pretty + "\r\n" + String(pretty.prefix(30)) + "\r\n" + pretty + "\r\n", [true, false, true]),
            // NDJSON, a line cut in the middle of the file.
            (line + "\n" + String(line.prefix(50)) + "\n" + line + "\n", [true, false, true]),
        ] {
            let records = try await decodeText(text)
            #expect(records.map(\.isOK) == expected, "\(text.prefix(60)): \(records.map { $0.error?.description ?? "ok" })")
            #expect(records.map(\.provenance.index) == Array(0..<expected.count))
            for chunk in [1, 2, 7] {
                #expect(try await decodeAll(Array(text.utf8), chunk: chunk).map(\.isOK) == expected, "\(text.prefix(40)), \(chunk)")
            }
        }
        // A nested object at a line's start is the document's own when it is indented; pretty documents stay whole.
        let nested = try await decodeText(pretty + "\n" + pretty)
        #expect(nested.count == 2 && nested.allSatisfy(\.isOK))
        // Unindented, as Python's `indent=0` and Go's `MarshalIndent(v, "", "")` print it: a `{` after `[`, `,` or `:`
        // starts a line and is the document's own.
        let flat = "{\n\"status\": 0,\n\"latest_receipt_info\": [\n{\n\"transaction_id\": \"7\"\n},\n{\n\"transaction_id\": \"8\"\n}\n],\n\"receipt\":\n{\n\"bundle_id\": \"x\"\n}\n}"
        for newline in ["\n", "\r\n"] {
            let text = (flat + "\n" + flat + "\n").replacingOccurrences(of: "\n", with: newline)
            let records = try await decodeText(text)
            #expect(records.count == 2 && records.allSatisfy(\.isOK), "\(records.map { $0.error?.description ?? "ok" })")
            #expect(records.first?.transactions.map(\.transactionId) == ["7", "8"])
            for chunk in [1, 3] {
                #expect(try await decodeAll(Array(text.utf8), chunk: chunk).map(\.isOK) == [true, true], "\(chunk)")
            }
        }
        // Cut, then a whole one: cut where the whole one starts (after a value, or inside a string). (Cut right after a
        // `[`, `,` or `:`, the whole one reads as the cut one's value: both one rejected record, as before.)
        for cut in [String(flat.prefix(13)), String(flat.prefix(48))] {
            let records = try await decodeText(cut + "\n" + flat + "\n")
            #expect(records.map(\.isOK) == [false, true], "\(cut.suffix(12)): \(records.map { $0.error?.description ?? "ok" })")
        }
    }

    @Test("a record larger than the limit is cut and reported, the next one decodes")
    func oversize() async throws {
        var splitter = RecordSplitter(maxRecordBytes: 150)
        let big = #"{"status":0,"pad":""# + String(repeating: "x", count: 200) + #""}"#
        var pieces = splitter.feed(Array((Self.v1 + "\n" + big + "\n" + Self.v1 + "\n").utf8))
        pieces += splitter.finish()
        #expect(pieces.count == 3)
        #expect(pieces.map(\.oversize) == [false, true, false])
        #expect(pieces[1].bytes.count <= 1024)
        let decoded = try await makeDecoder().decode(pieces[1], path: "big")
        #expect(decoded.error?.code == "recordTooLarge")
    }

    @Test("a JSON array cut short between records (no closing ], or a comma last) ends with a truncated record; cut inside a record, that record is the truncated one")
    func unclosedArray() async throws {
        let element = Self.v1
        let cut = "[" + element + ",\n" + element
        for (text, ok) in [(cut, 2), (cut + ",", 2), (cut + ",\n  ", 2), ("[", 0), ("[ 1", 1)] {
            let records = try await decodeText(text)
            #expect(records.count == ok + 1, "\(text)")
            #expect(records.prefix(ok).allSatisfy { $0.isOK || text.hasPrefix("[ 1") }, "\(text)")
            let last = try #require(records.last)
            #expect(last.error?.code == "truncatedJSON", "\(text)")
            #expect(last.provenance.index == ok && last.provenance.byteOffset == Int64(text.utf8.count), "\(text)")
            let after = ok == 0 ? "with no record in it" : "after its record #\(ok - 1)"
            #expect(last.error?.message.contains("no closing ] (the input ends at byte \(text.utf8.count), \(after))") == true, "\(String(describing: last.error))")
            // The same pieces whatever the chunks the input comes in.
            for chunk in [1, 2, 7] {
                #expect(try await decodeAll(Array(text.utf8), chunk: chunk).map(\.error?.code) == records.map(\.error?.code), "\(text), \(chunk)")
            }
        }
        // Closed, or cut inside its last record: nothing more.
        #expect(try await decodeText("[" + element + "]\n").map(\.isOK) == [true])
        let inside = try await decodeText("[" + element + "," + element.dropLast(5))
        #expect(inside.map(\.error?.code) == [nil, "truncatedJSON"])
        #expect(inside.last?.error?.message.contains("no closing ]") == false)
        // A string element cut short is the truncated record, said once; one whole, the array's end is missing still.
        let cutString = try await decodeText(#"["eyJhbGciOiJFUzI1NiJ9.eyJ"#)
        #expect(cutString.count == 1 && cutString[0].error?.message.contains("truncated") == true, "\(cutString.map { $0.error?.message ?? "" })")
        let wholeString = try await decodeText(#"["x""#)
        #expect(wholeString.map(\.error?.code) == ["unrecognisedDocument", "truncatedJSON"], "\(wholeString.map { $0.error?.message ?? "" })")
        #expect(try await decodeText(#"["x\\""#).map(\.error?.code) == ["unrecognisedDocument", "truncatedJSON"])
        // (A quote after a backslash is in the string; after two, it closes it.)
        #expect(try await decodeText(#"["x\""#).map(\.error?.code) == ["truncatedJSON"])
        // A document that is not an array is not held to one.
        #expect(try await decodeText(element + "\n" + element).count == 2)
    }
}
