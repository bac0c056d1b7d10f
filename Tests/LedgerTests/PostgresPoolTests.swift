import Foundation
import Ledger
import LedgerPostgres
import Testing

/// A PostgreSQL ledger's connections: reads do not wait for a write in progress, and the server's own
/// time limits (lock_timeout, statement_timeout) end in a message that says what happened and what to do.
@Suite("PostgreSQL: the pool and the server's limits", .ownThreads)
struct PostgresPoolTests {
    /// Whether a flag was set, from any thread.
    final class Flag: @unchecked Sendable {
        private let lock = NSLock()
        private var value = false
        var isSet: Bool { lock.withLock { value } }
        func set() { lock.withLock { value = true } }
    }

    /// A write transaction on `database`, held open until `release` is signalled; returns once the transaction
    /// holds the writers' lock, with the backend serving it.
    static func holdWrite(
        _ database: PostgresDatabase, until release: DispatchSemaphore
    ) async throws -> (backend: Int64, write: Task<Void, Error>) {
        let (entered, continuation) = AsyncStream<Int64>.makeStream()
        let write = Task {
            try await database.write { connection in
                continuation.yield(try connection.scalar("SELECT pg_backend_pid()")?.int ?? 0)
                release.wait()
            }
        }
        var iterator = entered.makeAsyncIterator()
        let backend = try #require(await iterator.next())
        return (backend, write)
    }

    /// A database's name from its URL, to set a limit on it alone (the shared cluster serves other tests).
    static func alter(_ url: String, _ setting: String, on database: PostgresDatabase) async throws {
        let name = try PostgresDatabase.databaseName(url: url)
        try await database.write { try $0.execute("ALTER DATABASE \(name) SET \(setting)", []) }
    }

    @Test("a read answers on a connection of its own while a write transaction holds the writer's")
    func readDuringWrite() async throws {
        guard PostgresTestServer.enabled else { return }
        let url = try PostgresTestServer.get().createDatabase()
        let database = try await PostgresDatabase.connect(url: url)
        let ledger = try await SQLLedger.open(database, now: testNow)
        try await importText(PostgresFailureTests.line, path: "one.ndjson", into: ledger)
        #expect(database.readers == 2)

        let release = DispatchSemaphore(value: 0)
        let (writer, write) = try await Self.holdWrite(database, until: release)
        // Should the read queue behind the write, the write is let go after 10 s and the test fails below
        // instead of hanging.
        let gaveUp = Flag()
        let timer = Task {
            guard (try? await Task.sleep(for: .seconds(10))) != nil else { return }
            gaveUp.set()
            release.signal()
        }
        let overview = try await ledger.overview()
        let reader = try await database.read { try $0.scalar("SELECT pg_backend_pid()")?.int }
        let answeredWhileHeld = !gaveUp.isSet
        timer.cancel()
        if answeredWhileHeld { release.signal() }
        try await write.value

        #expect(answeredWhileHeld, "a read waited for the write transaction to end")
        #expect(overview.transactions == 1)
        #expect(reader != writer)
        try await ledger.close()
    }

    @Test("a write refused by lock_timeout says another session holds the lock, wrote nothing, and works after")
    func lockTimeout() async throws {
        guard PostgresTestServer.enabled else { return }
        let url = try PostgresTestServer.get().createDatabase()
        let holder = try await PostgresDatabase.connect(url: url)
        _ = try await SQLLedger.open(holder, now: testNow)
        try await Self.alter(url, "lock_timeout = '300ms'", on: holder)
        // Opened after the setting: its sessions wait 300 ms for a lock, then give up.
        let ledger = try await SQLLedger.open(PostgresDatabase.connect(url: url), now: testNow)

        let release = DispatchSemaphore(value: 0)
        let (_, write) = try await Self.holdWrite(holder, until: release)
        let error = await PostgresFailureTests.ledgerError {
            try await importText(PostgresFailureTests.line, path: "one.ndjson", into: ledger)
        }
        release.signal()
        try await write.value

        #expect(error?.code == .busy)
        let message = error?.message ?? ""
        #expect(message.contains("is being written by another session"), "\(message)")
        #expect(message.contains("not granted within lock_timeout"), "\(message)")
        #expect(message.contains("ALTER ROLE \"postgres\" SET lock_timeout"), "\(message)")
        #expect(try await ledger.overview().transactions == 0)
        #expect(try await ledger.sources(after: nil, limit: 10).isEmpty)
        // Nothing was left half-done: the same import now runs whole.
        let counts = try await importText(PostgresFailureTests.line, path: "one.ndjson", into: ledger)
        #expect(counts.imported == 1)
        try await ledger.close()
        try await holder.close()
    }

    @Test("a statement cancelled by statement_timeout names the setting, the role and what to change")
    func statementTimeout() async throws {
        guard PostgresTestServer.enabled else { return }
        let url = try PostgresTestServer.get().createDatabase()
        let admin = try await PostgresDatabase.connect(url: url)
        try await Self.alter(url, "statement_timeout = '200ms'", on: admin)
        try await admin.close()
        let database = try await PostgresDatabase.connect(url: url)

        let error = await PostgresFailureTests.ledgerError {
            try await database.write { try $0.execute("SELECT pg_sleep(5)", []) }
        }
        #expect(error?.code == .postgres)
        let message = error?.message ?? ""
        #expect(message.contains("canceling statement due to statement timeout"), "\(message)")
        #expect(message.contains("ran longer than statement_timeout"), "\(message)")
        #expect(message.contains("ALTER ROLE \"postgres\" SET statement_timeout"), "\(message)")
        #expect(message.contains("--batch-size"), "\(message)")
        // The connection is still good for statements within the limit.
        #expect(try await database.read { try $0.scalar("SELECT 1")?.int } == 1)
        try await database.close()
    }
}
