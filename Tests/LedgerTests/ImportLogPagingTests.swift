import Foundation
import Ledger
import Testing

/// The import log's two lists page by keyset (the last id seen), on every backend: sources newest first,
/// rejected records in the order they were stored. Paged in small pages, each list is the whole list, once.
extension LedgerConformanceTests {
    @Test("sources and rejected records page by their last id: every row once, in order, none after the last", arguments: Backend.available)
    func importLogPaging(_ backend: Backend) async throws {
        let ledger = try await backend.ledger()
        // Seven sources; source s holds s + 1 good records and s rejected ones, interleaved.
        var expectedRejected: [(path: String, index: Int)] = []
        for s in 0..<7 {
            var lines: [String] = []
            for r in 0...s {
                lines.append(#"{"transactionId":"p\#(s)-\#(r)","originalTransactionId":"p\#(s)","productId":"pro","purchaseDate":\#(1000 + r)}"#)
                if r < s {
                    expectedRejected.append(("source-\(s).ndjson", lines.count))
                    lines.append(#"{"transactionId":"bad\#(s)-\#(r)","purchaseDate":"not a date"}"#)
                }
            }
            let counts = try await importText(lines.joined(separator: "\n"), path: "source-\(s).ndjson", into: ledger)
            #expect(counts == ImportCounts(read: 2 * s + 1, imported: s + 1, duplicate: 0, rejected: s))
        }
        #expect(expectedRejected.count == 21)

        let allSources = try await ledger.sources(after: nil, limit: 100)
        #expect(allSources.map(\.path) == (0..<7).reversed().map { "source-\($0).ndjson" })
        #expect(allSources.map(\.id) == allSources.map(\.id).sorted(by: >))
        for limit in [1, 2, 3, 7] {
            var paged: [Int64] = []
            var after: Int64? = nil
            for _ in 0..<20 {
                let page = try await ledger.sources(after: after, limit: limit)
                #expect(page.count <= limit)
                paged += page.map(\.id)
                guard let last = page.last else { break }
                after = last.id
            }
            #expect(paged == allSources.map(\.id), "sources, pages of \(limit)")
        }
        let oldest = try #require(allSources.last)
        #expect(try await ledger.sources(after: oldest.id, limit: 10).isEmpty)

        let allRejected = try await ledger.rejectedRecords(after: nil, limit: 100)
        #expect(allRejected.map(\.sourcePath) == expectedRejected.map(\.path))
        #expect(allRejected.map(\.index) == expectedRejected.map(\.index))
        #expect(allRejected.allSatisfy { $0.code == "notANumber" && $0.message == #"purchaseDate "not a date" is not a number"# })
        for limit in [1, 4, 20, 21] {
            var paged: [Int64] = []
            var after: Int64? = nil
            for _ in 0..<40 {
                let page = try await ledger.rejectedRecords(after: after, limit: limit)
                #expect(page.count <= limit)
                paged += page.map(\.id)
                guard let last = page.last else { break }
                after = last.id
            }
            #expect(paged == allRejected.map(\.id), "rejected records, pages of \(limit)")
        }
        let newest = try #require(allRejected.last)
        #expect(try await ledger.rejectedRecords(after: newest.id, limit: 10).isEmpty)
        try await ledger.close()
    }
}
