import Foundation
import Ledger
import LedgerPostgres
import Testing

/// A ledger created with `?portable=on` (``PortableSQL``): none of the features docs/SCALING.md finds
/// missing in engines past one PostgreSQL server (advisory locks, triggers, temporary tables, COPY), and writers
/// still take turns. The conformance suite runs every ledger test on it too (`Backend.postgresPortable`).
@Suite("PostgreSQL: a ledger in portable SQL", .ownThreads)
struct PostgresPortableTests {
    /// Advisory locks held in this test's database (other tests share the cluster).
    static let advisoryLocksHere =
        "SELECT COUNT(*) FROM pg_locks WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"

    static func portableURL() throws -> String {
        withParameter(try PostgresTestServer.get().createDatabase(), "portable=on")
    }

    @Test("a portable ledger stores the setting and has no trigger, function or writers' advisory lock")
    func noTriggers() async throws {
        guard PostgresTestServer.enabled else { return }
        let url = try Self.portableURL()
        let database = try await PostgresDatabase.connect(url: url)
        #expect(database.isPortable)
        let ledger = try await SQLLedger.open(database, now: testNow)
        try await importText(PostgresFailureTests.line, path: "one.ndjson", into: ledger)
        let (triggers, functions, meta, writers) = try await database.read { c in
            (
                try c.scalar("SELECT COUNT(*) FROM pg_trigger t JOIN pg_class r ON r.oid = t.tgrelid WHERE NOT t.tgisinternal")?.int,
                try c.scalar(
                    "SELECT COUNT(*) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = current_schema()")?.int,
                try c.scalar("SELECT value FROM ledger_meta WHERE key = ?", [.text(PortableSQL.metaKey)])?.text,
                try c.scalar("SELECT COUNT(*) FROM \(PortableSQL.writersTable)")?.int
            )
        }
        #expect(triggers == 0)
        #expect(functions == 0)
        #expect(meta == "1")
        #expect(writers == 1)

        // While a write holds the writers' turn, the server holds no advisory lock at all.
        let release = DispatchSemaphore(value: 0)
        let (_, write) = try await PostgresPoolTests.holdWrite(database, until: release)
        let advisory = try await database.read { c in try c.scalar(Self.advisoryLocksHere)?.int }
        release.signal()
        try await write.value
        #expect(advisory == 0)
        try await ledger.close()

        // The standard ledger takes the advisory lock (so the check above can see one).
        let standard = try await PostgresDatabase.connect(url: PostgresTestServer.get().createDatabase())
        #expect(!standard.isPortable)
        _ = try await SQLLedger.open(standard, now: testNow)
        let held = DispatchSemaphore(value: 0)
        let (_, standardWrite) = try await PostgresPoolTests.holdWrite(standard, until: held)
        let standardAdvisory = try await standard.read { c in
            try c.scalar(Self.advisoryLocksHere)?.int
        }
        held.signal()
        try await standardWrite.value
        #expect(standardAdvisory ?? 0 >= 1)
        try await standard.close()
    }

    @Test("writers of a portable ledger take turns on the writers' row: a second waits, and lock_timeout ends its wait")
    func writersTakeTurns() async throws {
        guard PostgresTestServer.enabled else { return }
        let url = try Self.portableURL()
        let holder = try await PostgresDatabase.connect(url: url)
        _ = try await SQLLedger.open(holder, now: testNow)
        try await PostgresPoolTests.alter(url, "lock_timeout = '300ms'", on: holder)
        // Opened without the parameter: the ledger itself says it is portable.
        let plainURL = url.replacing("&portable=on", with: "").replacing("?portable=on", with: "")
        #expect(!plainURL.contains("portable"))
        let second = try await PostgresDatabase.connect(url: plainURL)
        #expect(second.isPortable)
        let ledger = try await SQLLedger.open(second, now: testNow)

        let release = DispatchSemaphore(value: 0)
        let (_, write) = try await PostgresPoolTests.holdWrite(holder, until: release)
        let error = await PostgresFailureTests.ledgerError {
            try await importText(PostgresFailureTests.line, path: "one.ndjson", into: ledger)
        }
        release.signal()
        try await write.value
        #expect(error?.code == .busy, "\(String(describing: error))")
        #expect(try await ledger.overview().transactions == 0)
        // Its turn come, the same import runs whole.
        #expect(try await importText(PostgresFailureTests.line, path: "one.ndjson", into: ledger).imported == 1)
        try await ledger.close()
        try await holder.close()
    }

    @Test("portable=on on a ledger created for one server is refused at connect; a bad value is named")
    func refusedOnStandardLedger() async throws {
        guard PostgresTestServer.enabled else { return }
        let url = try PostgresTestServer.get().createDatabase()
        let standard = try await PostgresDatabase.connect(url: url)
        _ = try await SQLLedger.open(standard, now: testNow)
        try await standard.close()
        do {
            _ = try await PostgresDatabase.connect(url: withParameter(url, "portable=on"))
            Issue.record("portable=on was taken on a standard ledger")
        } catch let error as LedgerError {
            #expect(error.code == .cannotOpen)
            #expect(error.message.contains("applies only when a ledger is created"), "\(error.message)")
        }
        do {
            _ = try await PostgresDatabase.connect(url: withParameter(url, "portable=maybe"))
            Issue.record("portable=maybe was taken")
        } catch let error as LedgerError {
            #expect(error.message.contains("portable parameter"), "\(error.message)")
        }
        #expect(PostgresDatabase.requestsPortable(url: "postgres://a@b/c?portable=on"))
        #expect(!PostgresDatabase.requestsPortable(url: "postgres://a@b/c"))
    }
}
