import Foundation
import Ledger
import LedgerQueries
import Testing

@Suite("a rejected record's kept bytes", .serialized, .ownThreads)
struct RejectedRawTests {
    @Test("a rejected verifyReceipt request body is kept without its shared secret", arguments: Backend.available)
    func noSecret(_ backend: Backend) async throws {
        let ledger = try await backend.ledger()
        let body = #"{"receipt-data":"%%% not base64 %%%","password":"s3cr3t-shared","exclude-old-transactions":true}"#
        let counts = try await importText(body + "\n", path: "requests.ndjson", into: ledger)
        #expect(counts.rejected == 1)
        let rejected = try #require(try await ledger.rejectedRecords(after: nil, limit: 10).first)
        let raw = String(decoding: try await ledger.rejectedRaw(rejected.id), as: UTF8.self)
        #expect(!raw.contains("s3cr3t-shared"), "\(raw)")
        #expect(raw.contains("receipt-data"))
        try await ledger.close()
    }
}
