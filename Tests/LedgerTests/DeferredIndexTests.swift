import Foundation
import Ledger
import LedgerSQLite
import ReceiptModel
import Testing

/// A first import into an empty SQLite ledger loads without the indexes only reading uses and builds them after
/// (`SQLLedger.deferIndexesForFirstLoad`); a load cut short leaves them to the next open for writing.
@Suite("SQLite: indexes built after a first load")
struct DeferredIndexTests {
    static func newLedger() async throws -> (SQLLedger, String) {
        let path = testScratchDirectory.appendingPathComponent("deferred-\(UUID().uuidString).sqlite").path
        return (try await SQLLedger.open(SQLiteDatabase.open(path: path), now: testNow), path)
    }

    /// Removes a ledger `newLedger` made, with its write-ahead log.
    static func remove(_ path: String) {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }

    /// Every index of the ledger with its SQL.
    static func indexes(_ ledger: SQLLedger) async throws -> [String: String] {
        try await ledger.database.read { c in
            var out: [String: String] = [:]
            for row in try c.query("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL", []) {
                if let name = row[0].text { out[name] = row[1].text ?? "" }
            }
            return out
        }
    }

    @Test("an empty ledger drops them, imports, and builds them back exactly; a ledger with transactions keeps them")
    func deferAndBuild() async throws {
        let (ledger, path) = try await Self.newLedger()
        defer { Self.remove(path) }
        let before = try await Self.indexes(ledger)
        #expect(before["customer_stats_activity"] != nil && before["transactions_refund_day"] != nil)

        #expect(try await ledger.deferIndexesForFirstLoad())
        let during = try await Self.indexes(ledger)
        #expect(during["customer_stats_activity"] == nil && during["transactions_token"] == nil)
        // What the import itself reads stays.
        #expect(during["raw_records_content"] != nil && during["customer_ids_customer"] != nil && during["notifications_reversals"] != nil)
        let counts = try await importText(PostgresFailureTests.line, path: "one.ndjson", into: ledger)
        #expect(counts.imported == 1)
        // Deferring twice does nothing more.
        #expect(try await !ledger.deferIndexesForFirstLoad())

        try await ledger.buildDeferredIndexes()
        #expect(try await Self.indexes(ledger) == before)
        #expect(try await ledger.database.read { c in try c.scalar("SELECT COUNT(*) FROM ledger_meta WHERE key = 'deferred_indexes'")?.int } == 0)
        // Now it holds a transaction: nothing is deferred.
        #expect(try await !ledger.deferIndexesForFirstLoad())
        #expect(try await Self.indexes(ledger) == before)
        try await ledger.close()
    }

    @Test("a load cut short: the next open for writing builds what it left unbuilt; a read-only open leaves them")
    func reopenBuilds() async throws {
        let (ledger, path) = try await Self.newLedger()
        defer { Self.remove(path) }
        let before = try await Self.indexes(ledger)
        #expect(try await ledger.deferIndexesForFirstLoad())
        try await importText(PostgresFailureTests.line, path: "one.ndjson", into: ledger)
        try await ledger.close()

        let reader = try await SQLLedger.open(SQLiteDatabase.open(path: path), now: testNow, readOnly: true)
        #expect(try await Self.indexes(reader)["customer_stats_activity"] == nil)
        #expect(try await reader.overview().transactions == 1)
        try await reader.close()

        let reopened = try await SQLLedger.open(SQLiteDatabase.open(path: path), now: testNow)
        #expect(try await Self.indexes(reopened) == before)
        try await reopened.close()
    }

    @Test("a ledger set read-only, or on PostgreSQL, defers nothing", arguments: Backend.available)
    func notDeferred(_ backend: Backend) async throws {
        let ledger = try await backend.ledger()
        if backend == .sqlite { try await ledger.setReadOnly(true) }
        #expect(try await !ledger.deferIndexesForFirstLoad())
        try await ledger.close()
    }
}
