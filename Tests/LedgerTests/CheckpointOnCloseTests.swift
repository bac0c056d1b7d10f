import Foundation
import Ledger
import LedgerSQLite
import ReceiptModel
import Testing

/// A SQLite ledger closed after writing is whole in its `.sqlite` file: a copy of that file alone (a backup
/// made with `cp`) holds every transaction.
@Suite("SQLite: a closed ledger is whole in its file")
struct CheckpointOnCloseTests {
    @Test("after an import and close, a copy of the .sqlite file alone holds every transaction")
    func fileAloneIsTheLedger() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("checkpoint-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/ledger.sqlite"
        let ledger = try await SQLLedger.open(SQLiteDatabase.open(path: path), now: testNow)
        let counts = try await importText(PostgresFailureTests.line, path: "one.ndjson", into: ledger)
        #expect(counts.imported == 1)
        let before = try await ledger.overview(environment: .all).transactions
        #expect(before > 0)
        try await ledger.close()
        // The log is emptied but for one page (16 KiB) and its headers, not left at its largest size.
        let log = try #require(try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int)
        #expect(log > 0 && log <= 32 + 24 + 16_384, "\(log) bytes left in the -wal file")

        let copy = directory + "/copy.sqlite"
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        let reopened = try await SQLLedger.open(SQLiteDatabase.open(path: copy, readOnly: true), now: testNow, readOnly: true)
        #expect(try await reopened.overview(environment: .all).transactions == before)
        try await reopened.close()
        // The ledger itself opens read-only with its emptied log.
        let readOnly = try await SQLLedger.open(SQLiteDatabase.open(path: path, readOnly: true), now: testNow, readOnly: true)
        #expect(try await readOnly.overview(environment: .all).transactions == before)
        try await readOnly.close()
    }
}
