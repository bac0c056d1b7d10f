import Foundation
import Testing

@testable import DeskUI
@testable import ReceiptDeskCLI

/// The dashboard's runtime over a PostgreSQL ledger on a throwaway cluster of the test's own (the server
/// starter is Tests/LedgerTests/PostgresTestServer.swift, compiled here through a symbolic link).
@Suite("Runtime: a PostgreSQL ledger", .ownThreads)
struct PostgresRuntimeTests {
    /// A private cluster holding the end-to-end fixture's three transactions, imported by the real binary.
    static func makeLedger() throws -> (server: PostgresTestServer, url: String, directory: URL) {
        let fixture = try DashboardEndToEndTests.makeLedger()
        let server = try PostgresTestServer.makePrivate()
        let url = try server.createDatabase()
        let imported = try Binary.run(
            ["import", "--no-verify", "--ledger", url, fixture.directory.appendingPathComponent("e2e.ndjson").path])
        #expect(imported.status == 0, "\(imported.stderr)")
        return (server, url, fixture.directory)
    }

    /// The screen as the runtime last drew it.
    static func screen(_ runtime: Runtime) -> String {
        var buffer = ScreenBuffer(width: runtime.state.width, height: runtime.state.height)
        render(runtime.state, theme: runtime.theme, into: &buffer)
        return buffer.text
    }

    static func seconds(since start: ContinuousClock.Instant) -> Double {
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    @Test("triage and note without $USER are stamped with the PostgreSQL role, as the dashboard's are (they said \"unknown\")")
    func operatorIsTheRole() throws {
        guard PostgresTestServer.enabled else { return }
        let (server, url, directory) = try Self.makeLedger()
        defer {
            server.stop()
            try? FileManager.default.removeItem(at: directory)
        }
        let triaged = try Binary.run(["triage", "quick-refund:5002", "--ack", "--ledger", url], environment: ["USER": ""])
        #expect(triaged.status == 0 && triaged.stdout.contains("acknowledged by postgres"), "\(triaged.stdout)\(triaged.stderr)")
        let noted = try Binary.run(["note", "5002", "called back", "--ledger", url], environment: ["USER": ""])
        #expect(noted.stdout.contains("by postgres"), "\(noted.stdout)\(noted.stderr)")
        // --operator and $USER still come first.
        let named = try Binary.run(["note", "5002", "again", "--ledger", url, "--operator", "ana"], environment: ["USER": "bo"])
        #expect(named.stdout.contains("by ana"), "\(named.stdout)")
        let user = try Binary.run(["note", "5002", "and again", "--ledger", url], environment: ["USER": "bo"])
        #expect(user.stdout.contains("by bo"), "\(user.stdout)")
    }

    @Test("the server stopped: the next poll says unavailable over the last screen, keys answer, and it recovers")
    func serverStopsAndStarts() async throws {
        guard PostgresTestServer.enabled else { return }
        let (server, url, directory) = try Self.makeLedger()
        defer {
            server.stop()
            try? FileManager.default.removeItem(at: directory)
        }
        let (runtime, ledger) = try await RuntimeTests.runtime(url)
        defer { Task { try? await ledger.close() } }
        await runtime.handle(.key(.char("2")))
        #expect(runtime.state.customerPage.total == 2)
        let rows = runtime.state.customerPage.rows.map(\.id)
        let before = Self.screen(runtime)
        #expect(before.contains("C1") && before.contains("C2"))

        try server.stopServer()
        await runtime.pollChanges()
        let unavailable = try #require(runtime.state.unavailable, "the first poll after the stop did not notice it")
        #expect(unavailable.contains("cannot reach the PostgreSQL ledger"), "\(unavailable)")
        #expect(!runtime.state.quitting)
        // The last screen stays, under the badge and the retrying line.
        #expect(runtime.state.screen == .customers)
        #expect(runtime.state.customerPage.rows.map(\.id) == rows)
        let during = Self.screen(runtime)
        #expect(during.contains("ledger unavailable, retrying"), "\(during)")
        // Why, not the URL the header's ledger already is: "cannot reach the PostgreSQL ledger: no server is listening".
        #expect(during.contains("retrying: cannot reach the PostgreSQL ledger: "), "\(during)")
        #expect(during.contains("C1") && during.contains("C2"))

        // Keys still answer, and quickly: the socket is gone, so each read fails at once.
        let started = ContinuousClock.now
        await runtime.handle(.key(.char("j")))
        #expect(runtime.state.customerList.selected == 1)
        await runtime.handle(.key(.char("1")))
        #expect(runtime.state.screen == .overview)
        #expect(runtime.state.message?.kind == .error)
        #expect(
            Self.seconds(since: started) < 5, "two keys against a stopped server took \(Self.seconds(since: started)) s"
        )
        // A second poll while still down changes nothing.
        await runtime.pollChanges()
        #expect(runtime.state.unavailable == unavailable)
        // A screen not read before the stop says so, not that the ledger holds nothing.
        await runtime.handle(.key(.char("6")))
        #expect(runtime.state.screen == .imports)
        let unread = Self.screen(runtime)
        #expect(unread.contains("the ledger is unavailable: this screen is read again") && !unread.contains("nothing imported yet"), "\(unread)")

        try server.startServer()
        await runtime.pollChanges()
        #expect(runtime.state.unavailable == nil, "the first poll after the restart did not recover")
        // The failures while it was away are over, and the screen says so.
        #expect(runtime.state.message == StatusMessage("the ledger answers again: reloaded"))
        #expect(runtime.state.sources.count == 1)
        #expect(!Self.screen(runtime).contains("is read again when it answers"))
        #expect(runtime.state.overview?.counts.transactions == 3)
        await runtime.handle(.key(.char("2")))
        #expect(runtime.state.customerPage.total == 2)
        #expect(!Self.screen(runtime).contains("ledger unavailable"))
    }

    @Test("another process's import into PostgreSQL shows at the next poll, and the selection stays on its customer")
    func liveRefresh() async throws {
        guard PostgresTestServer.enabled else { return }
        let (server, url, directory) = try Self.makeLedger()
        defer {
            server.stop()
            try? FileManager.default.removeItem(at: directory)
        }
        let (runtime, ledger) = try await RuntimeTests.runtime(url)
        defer { Task { try? await ledger.close() } }
        await runtime.handle(.key(.char("2")))
        await runtime.handle(.key(.char("s")))
        #expect(runtime.state.customerQuery.sort == .lastActivity)
        await runtime.handle(.key(.char("G")))
        #expect(runtime.state.customerList.selected == 1)
        let selected = runtime.state.customerPage.rows[runtime.state.customerList.selected].id
        let token = try await ledger.changeToken()
        // Nothing changed: a poll reads the token and leaves the page alone.
        await runtime.pollChanges()
        #expect(runtime.state.customerPage.total == 2)

        // Another process, on its own connection, imports a customer who sorts between the two.
        let more = directory.appendingPathComponent("more.ndjson")
        let line =
            #"{"transactionId":"7001","originalTransactionId":"7001","bundleId":"com.example.app","productId":"gems.100","purchaseDate":1741000000000,"quantity":1,"type":"Consumable","inAppOwnershipType":"PURCHASED","signedDate":1741000000000,"environment":"Production","storefront":"USA","price":990,"currency":"USD"}"#
        try Data((line + "\n").utf8).write(to: more)
        let imported = try Binary.run(["import", "--no-verify", "--ledger", url, more.path])
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(try await ledger.changeToken() > token)

        await runtime.pollChanges()
        #expect(runtime.state.customerPage.total == 3, "the first poll after the import did not show it")
        #expect(runtime.state.customerList.selected == 2)
        #expect(runtime.state.customerPage.rows[runtime.state.customerList.selected].id == selected)
        await runtime.handle(.key(.char("1")))
        #expect(runtime.state.overview?.counts.transactions == 4)
    }
}
