import Foundation
import Ledger
import LedgerPostgres
import Testing

/// What a PostgreSQL ledger does when its server goes away, stops answering or comes back: every wait is
/// bounded, the error says the ledger cannot be reached, and the same `PostgresDatabase` works again on
/// a new connection once the server is back.
@Suite("PostgreSQL: a lost server", .ownThreads)
struct PostgresFailureTests {
    static let line =
        #"{"transactionId":"8001","originalTransactionId":"8001","bundleId":"com.example.app","productId":"gems.100","purchaseDate":1741000000000,"quantity":1,"type":"Consumable","inAppOwnershipType":"PURCHASED","signedDate":1741000000000,"environment":"Production","storefront":"USA","price":990,"currency":"USD"}"#

    static func seconds(since start: ContinuousClock.Instant) -> Double {
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    /// The error `body` throws, as a `LedgerError` (recorded as an issue when it throws none or another kind).
    static func ledgerError(_ body: () async throws -> Void) async -> LedgerError? {
        do {
            try await body()
            Issue.record("expected a LedgerError, got success")
        } catch let error as LedgerError {
            return error
        } catch {
            Issue.record("expected a LedgerError, got \(error)")
        }
        return nil
    }

    @Test("a cluster a test run left when it crashed, its server frozen, is stopped and removed by the next run's first cluster")
    func abandonedClusterSwept() throws {
        guard PostgresTestServer.enabled else { return }
        let server = try PostgresTestServer.makePrivate()
        defer { server.stop() }
        let processes = try server.processes()
        try #require(processes.count > 1, "the server's processes: \(processes)")
        for pid in processes { kill(pid, SIGSTOP) }
        defer { for pid in processes { kill(pid, SIGCONT) } }
        // This run's clusters are all alive: the sweep is told that this one's run ended.
        let name = URL(fileURLWithPath: server.socketDirectory).lastPathComponent
        PostgresTestServer.sweepAbandoned { _, other in other != name }
        #expect(!FileManager.default.fileExists(atPath: server.socketDirectory))
        // (The postmaster's children end after it, each at its next look at it.)
        let deadline = ContinuousClock.now + .seconds(30)
        var left = processes
        while !left.isEmpty, ContinuousClock.now < deadline {
            // (Gone, or ended and waiting for its parent to collect it.)
            left = left.filter { pid in PostgresTestServer.statFields(pid).map { $0.first != "Z" } ?? false }
            if !left.isEmpty { usleep(50_000) }
        }
        #expect(left.isEmpty, "still running: \(left)")
    }

    @Test("a stopped server: reads and writes fail at once as unavailable; once it is back both work again")
    func stopAndStart() async throws {
        guard PostgresTestServer.enabled else { return }
        let server = try PostgresTestServer.makePrivate()
        defer { server.stop() }
        let url = try server.createDatabase()
        let ledger = try await SQLLedger.open(PostgresDatabase.connect(url: url), now: testNow)
        try await importText(Self.line, path: "one.ndjson", into: ledger)
        let token = try await ledger.changeToken()

        try server.stopServer()
        let started = ContinuousClock.now
        let readError = await Self.ledgerError { _ = try await ledger.changeToken() }
        #expect(readError?.code == .unavailable)
        #expect(
            readError?.message.hasPrefix("cannot reach the PostgreSQL ledger at postgres://postgres@") == true,
            "\(readError?.message ?? "")")
        #expect(readError?.message.contains("no server is listening there") == true, "\(readError?.message ?? "")")
        let writeError = await Self.ledgerError {
            try await importText(Self.line.replacing("8001", with: "8002"), path: "two.ndjson", into: ledger)
        }
        #expect(writeError?.code == .unavailable)
        #expect(
            Self.seconds(since: started) < 5, "failing against a stopped server took \(Self.seconds(since: started)) s")
        // Still down: still failing, still quickly (no connection kept half-open).
        #expect(await Self.ledgerError { _ = try await ledger.overview() }?.code == .unavailable)

        try server.startServer()
        #expect(try await ledger.changeToken() == token)
        #expect(try await ledger.overview().transactions == 1)
        let counts = try await importText(Self.line.replacing("8001", with: "8002"), path: "two.ndjson", into: ledger)
        #expect(counts.imported == 1)
        #expect(try await ledger.changeToken() > token)
        #expect(try await ledger.overview().transactions == 2)
        try await ledger.close()
    }

    @Test("a server that stops answering: a read gives up after the read timeout, the next read opens a new connection")
    func readTimeout() async throws {
        guard PostgresTestServer.enabled else { return }
        let url = try PostgresTestServer.get().createDatabase()
        let database = try await PostgresDatabase.connect(
            url: url, timeouts: .init(connect: .seconds(2), read: .milliseconds(500)))
        let ledger = try await SQLLedger.open(database, now: testNow)
        let token = try await ledger.changeToken()
        let backend = try #require(try await database.read { try $0.scalar("SELECT pg_backend_pid()")?.int })
        // The backend serving this connection freezes (as behind a dead network): nothing answers, nothing closes.
        #expect(kill(pid_t(backend), SIGSTOP) == 0)
        var resumed = false
        defer { if !resumed { kill(pid_t(backend), SIGCONT) } }

        let started = ContinuousClock.now
        let error = await Self.ledgerError { _ = try await ledger.changeToken() }
        #expect(error?.code == .unavailable)
        #expect(
            error?.message.contains("did not answer within 500 ms (read timeout)") == true, "\(error?.message ?? "")")
        #expect(Self.seconds(since: started) < 5, "a 500 ms read timeout took \(Self.seconds(since: started)) s")
        kill(pid_t(backend), SIGCONT)
        resumed = true

        #expect(try await ledger.changeToken() == token)
        let second = try #require(try await database.read { try $0.scalar("SELECT pg_backend_pid()")?.int })
        #expect(second != backend)
        try await ledger.close()
    }

    @Test("a read given up on behind a lock does not stay on the server: it ends a second after the client's read timeout")
    func timedOutReadEndsOnServer() async throws {
        guard PostgresTestServer.enabled else { return }
        let url = try PostgresTestServer.get().createDatabase()
        let database = try await PostgresDatabase.connect(url: url, timeouts: .init(connect: .seconds(2), read: .milliseconds(500)))
        let ledger = try await SQLLedger.open(database, now: testNow)
        let holder = try await PostgresDatabase.connect(url: url)
        // Another session holds the counters' table (as an administrator's ALTER TABLE or VACUUM FULL would) until
        // the test lets it go (a minute at most).
        let release = DispatchSemaphore(value: 0)
        let (locked, continuation) = AsyncStream<Void>.makeStream()
        let held = Task {
            try await holder.write { c in
                try c.execute("LOCK TABLE ledger_counters IN ACCESS EXCLUSIVE MODE")
                continuation.yield()
                _ = release.wait(timeout: .now() + 60)
            }
        }
        var iterator = locked.makeAsyncIterator()
        _ = await iterator.next()
        let waiting = "SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
        let started = ContinuousClock.now
        let error = await Self.ledgerError { _ = try await ledger.changeToken() }
        #expect(error?.message.contains("did not answer within 500 ms (read timeout)") == true, "\(error?.message ?? "")")
        // The client gave up at 0.5 s; the server ends the statement at 1.5 s, while the lock is still held (before,
        // the statement waited on the server until the lock went).
        var left = -1
        while Self.seconds(since: started) < 20 {
            left = Int(try await holder.read { try $0.scalar(waiting)?.int } ?? -1)
            if left == 0 { break }
            usleep(100_000)
        }
        #expect(left == 0, "\(left) backends still waiting on the lock \(Self.seconds(since: started)) s after the read began")
        release.signal()
        // The reading connections' limit, set once connected: the read timeout and a second, unless the database's
        // (or the role's) is lower; the writer's is the server's.
        #expect(try await database.read { try $0.scalar("SHOW statement_timeout")?.text } == "1500ms")
        #expect(try await database.write { try $0.scalar("SHOW statement_timeout")?.text } == "0")
        try await PostgresPoolTests.alter(url, "statement_timeout = '200ms'", on: holder)
        let lower = try await PostgresDatabase.connect(url: url, timeouts: .init(connect: .seconds(2), read: .milliseconds(500)))
        #expect(try await lower.read { try $0.scalar("SHOW statement_timeout")?.text } == "200ms")
        try await lower.close()
        try await held.value
        try await ledger.close()
        try await holder.close()
    }

    @Test("a server that accepts but never answers: connecting gives up after the connect timeout")
    func connectTimeout() async throws {
        guard PostgresTestServer.enabled else { return }
        let server = try PostgresTestServer.makePrivate()
        defer { server.stop() }
        let url = try server.createDatabase()
        let postmaster = try #require(server.postmasterPID)
        #expect(kill(postmaster, SIGSTOP) == 0)
        defer { kill(postmaster, SIGCONT) }

        let started = ContinuousClock.now
        let error = await Self.ledgerError {
            _ = try await PostgresDatabase.connect(url: url, timeouts: .init(connect: .seconds(1), read: .seconds(1)))
        }
        #expect(error?.code == .cannotOpen)
        #expect(error?.message.contains("no answer within 1 s (connect timeout)") == true, "\(error?.message ?? "")")
        // The message names the 1 s limit, so this timeout fired; the bound is loose for a busy machine (postgres-nio's
        // default is 10 s).
        #expect(Self.seconds(since: started) < 8, "a 1 s connect timeout took \(Self.seconds(since: started)) s")
    }
}
