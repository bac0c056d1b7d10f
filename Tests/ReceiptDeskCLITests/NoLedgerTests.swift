import Foundation
import Ledger
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
