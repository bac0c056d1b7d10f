import Foundation
import Ledger
import LedgerPostgres
import LedgerSQLite
import Testing

@testable import ReceiptDeskCLI

/// A command that reads, pointed at a database that holds no ledger, says so and leaves the database as it was:
/// the ledger's tables are made by `import` (and `ledger grant`), never by a lookup or the dashboard.
@Suite("Reading commands never create a ledger", .ownThreads)
struct NoLedgerTests {
    static func refusals(_ url: String) throws {
        for arguments in [["lookup", "C5"], ["refunds", "--json"], ["refunds", "--read-only"]] {
            let run = try Binary.run(arguments + ["--ledger", url], limit: .seconds(60))
            #expect(run.status == 3, "\(arguments): \(run.stderr)")
            #expect(run.stderr.contains("holds no ReceiptDesk ledger"), "\(arguments): \(run.stderr)")
        }
    }

    /// Opened for its settings alone, a database with no ledger is refused: nothing was created in it.
    static func holdsNoLedger(_ url: String) async {
        await #expect(throws: CLIError.self) { _ = try await LedgerOptions.open(url: url, now: currentTimestamp(), settingsOnly: true) }
    }

    @Test("an empty SQLite file is refused by lookup and refunds, and stays without the ledger's tables")
    func emptySQLiteFile() async throws {
        let path = cliScratchDirectory.appendingPathComponent("not-a-ledger-\(UUID().uuidString).sqlite").path
        #expect(FileManager.default.createFile(atPath: path, contents: Data()))
        try Self.refusals("sqlite:" + path)
        await Self.holdsNoLedger("sqlite:" + path)
    }

    /// `import` and a reading command into a database holding another application's tables of the ledger's names:
    /// both say so (the import said it would create a ledger, then failed on PostgreSQL's "already exists"), and the
    /// tables stay as they were.
    static func foreignTables(_ url: String, named: String = "flags, sources", tables: () async throws -> [String]) async throws {
        let input = Data(PostgresImportTests.purchases(2).utf8)
        for arguments in [["import", "--no-verify", "-"], ["lookup", "C1"]] {
            let run = try Binary.run(arguments + ["--ledger", url], stdin: input, limit: .seconds(60))
            #expect(run.status == 3, "\(arguments): \(run.stderr)")
            #expect(
                run.stderr.contains("tables of the names a ledger uses (\(named)) that are not one") && !run.stderr.contains("creates one"),
                "\(arguments): \(run.stderr)")
        }
        #expect(try await tables() == named.components(separatedBy: ", "))
    }

    @Test("a SQLite file holding another application's flags and sources tables is said to, and left as it was")
    func foreignSQLiteTables() async throws {
        let path = cliScratchDirectory.appendingPathComponent("foreign-\(UUID().uuidString).sqlite").path
        let database = try SQLiteDatabase.open(path: path)
        try await database.write { c in
            // (In another case: SQLite's names are the same in any case.)
            try c.execute("CREATE TABLE Flags (id INTEGER)")
            try c.execute("CREATE TABLE sources (x TEXT)")
        }
        try await database.close()
        try await Self.foreignTables("sqlite:" + path, named: "Flags, sources") {
            let database = try SQLiteDatabase.open(path: path, readOnly: true)
            let names = try await database.read { c in
                try c.query("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY lower(name)", []).compactMap { $0[0].text }
            }
            try await database.close()
            return names
        }
    }

    @Test("a PostgreSQL database holding another application's flags and sources tables is said to, and left as it was")
    func foreignPostgresTables() async throws {
        guard PostgresTestServer.enabled else { return }
        let url = try PostgresTestServer.get().createDatabase()
        try await PostgresGrantTests.asSuperuser(url, "CREATE TABLE flags (id INT)", "CREATE TABLE sources (x TEXT)")
        try await Self.foreignTables(url) {
            let database = try await PostgresDatabase.connect(url: url)
            let names = try await database.read { c in
                try c.query("SELECT tablename::text FROM pg_tables WHERE schemaname = 'public' ORDER BY 1", []).compactMap { $0[0].text }
            }
            try await database.close()
            return names
        }
    }

    @Test("an empty PostgreSQL database is refused by lookup and refunds, and stays without the ledger's tables")
    func emptyPostgresDatabase() async throws {
        guard PostgresTestServer.enabled else { return }
        let url = try PostgresTestServer.get().createDatabase()
        try Self.refusals(url)
        await Self.holdsNoLedger(url)
        // import makes it a ledger; then the same commands read it.
        let run = try Binary.run(["import", "--no-verify", "--ledger", url, "-"], stdin: Data(PostgresImportTests.purchases(2).utf8), limit: .seconds(60))
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try Binary.run(["refunds", "--json", "--ledger", url]).status == 0)
    }
}
