import Foundation
import Ledger
import LedgerPostgres
import LedgerQueries
import Synchronization
import Testing

@testable import DeskUI
@testable import ReceiptDeskCLI

/// The dashboard's runtime over a PostgreSQL ledger on a throwaway cluster of the test's own (the server
/// starter is Tests/LedgerTests/PostgresTestServer.swift, compiled here through a symbolic link).
///
/// The frozen-server tests have a time limit against a hang, 6 minutes: alone each takes about 10 s, but they start
/// with the whole run's first tests on two cores, and took 72-78 s in CI and under load here (a slower machine, twice
/// that).
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

    /// Stops the cluster ``makeLedger()`` started and removes the fixture's directory.
    static func remove(_ server: PostgresTestServer, _ directory: URL) {
        server.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// The real binary's dashboard over `url` in tmux, 120 columns wide, once it has taken the screen.
    static func dashboard(_ url: String) throws -> TmuxSession {
        let tmux = try TmuxSession(arguments: ["--ledger", url], width: 120)
        tmux.waitFor(format: "#{alternate_on}", toBe: "1")
        return tmux
    }

    /// A private cluster holding the fixture (``makeLedger()``) and a scripted dashboard over it (``scripted(_:readOnly:)``);
    /// ``ScriptedLedger/end()`` closes and removes them.
    static func scriptedLedger(readOnly: Bool = true) async throws -> ScriptedLedger {
        let (server, url, directory) = try makeLedger()
        do {
            let (terminal, runtime, ledger) = try await scripted(url, readOnly: readOnly)
            return ScriptedLedger(server: server, url: url, directory: directory, terminal: terminal, runtime: runtime, ledger: ledger)
        } catch {
            remove(server, directory)
            throw error
        }
    }

    struct ScriptedLedger {
        let server: PostgresTestServer
        let url: String
        let directory: URL
        let terminal: ScriptedTerminal
        let runtime: Runtime
        let ledger: SQLLedger

        /// Closes the dashboard's ledger and stops and removes the cluster.
        func end() {
            Task { [ledger] in try? await ledger.close() }
            PostgresRuntimeTests.remove(server, directory)
        }
    }

    /// A dashboard over `url` whose keys the test types, and whose reads say they are slow after 100 ms.
    static func scripted(_ url: String, readOnly: Bool = true) async throws -> (ScriptedTerminal, Runtime, SQLLedger) {
        let terminal = ScriptedTerminal(width: 120, height: 40)
        let (runtime, ledger) = try await RuntimeTests.runtime(url, readOnly: readOnly, backend: terminal)
        runtime.readGrace = .milliseconds(100)
        return (terminal, runtime, ledger)
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
        defer { Self.remove(server, directory) }
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
        defer { Self.remove(server, directory) }
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

    @Test(
        "a server that stops answering: a slow read says so, keys typed meanwhile are handled after it, and Q quits at once",
        .timeLimit(.minutes(6)))
    func serverHangs() async throws {
        guard PostgresTestServer.enabled else { return }
        let fixture = try await Self.scriptedLedger()
        defer { fixture.end() }
        let (        server, terminal, runtime) = (fixture.server, fixture.terminal, fixture.runtime)
        await runtime.handle(.key(.char("2")))
        #expect(runtime.state.customerPage.total == 2)
        let first = try #require(runtime.state.customerPage.rows.first?.id)

        // Every process of the server freezes (as behind a dead network): nothing answers, nothing closes, and a
        // read waits for its 15 s read timeout.
        let frozen = FrozenProcesses(try server.processes())
        try #require(frozen.pids.count > 1, "the server's processes: \(frozen.pids)")
        frozen.freeze()
        defer { frozen.thaw() }

        // Enter opens the customer: its read waits. A key typed meanwhile (q, back) is kept for after it.
        terminal.type(.key(.char("q")))
        DispatchQueue.global().asyncAfter(deadline: .now() + 1.5) { frozen.thaw() }
        let framesBefore = terminal.frames.count
        await runtime.handle(.key(.enter))
        #expect(terminal.frames.dropFirst(framesBefore).contains { $0.contains("reading the ledger… (Q quits; other keys wait for it)") }, "\(terminal.frames.last ?? "")")
        #expect(runtime.state.screen == .customer && runtime.state.customer?.records.id == first)
        #expect(runtime.state.message?.text.contains("reading the ledger") != true, "the reading line outlived the read")
        #expect(terminal.pending == 0, "the key typed during the read was read")
        await runtime.run(maxEvents: 1)
        #expect(runtime.state.screen == .customers, "q, typed during the read, was handled after it")

        // Frozen again, Q quits at once, without waiting for the read timeout.
        frozen.freeze()
        terminal.type(.key(.char("Q")))
        let started = ContinuousClock.now
        await runtime.handle(.key(.enter))
        #expect(runtime.state.quitting)
        #expect(Self.seconds(since: started) < 8, "Q waited \(Self.seconds(since: started)) s for a frozen server (its read timeout is 15 s)")
    }

    @Test(
        "a slow read: an unread screen says it is being read, typed keys keep their order, Q typed into a filter is text, and Q after an ack waits for it",
        .timeLimit(.minutes(6)))
    func typedAhead() async throws {
        guard PostgresTestServer.enabled else { return }
        let fixture = try await Self.scriptedLedger(readOnly: false)
        defer { fixture.end() }
        let (server, terminal, runtime, ledger) = (fixture.server, fixture.terminal, fixture.runtime, fixture.ledger)
        let frozen = FrozenProcesses(try server.processes())
        try #require(frozen.pids.count > 1, "the server's processes: \(frozen.pids)")
        defer { frozen.thaw() }
        let reading = "reading the ledger… (Q quits; other keys wait for it)"

        // Imports, never read: while its read waits, it says it is reading, not that nothing was imported; the
        // terminal resized meanwhile is drawn at its new size at once.
        Self.thawWhenReading(runtime, frozen)
        frozen.freeze()
        terminal.type(.resize(width: 100, height: 30))
        // (Only this read's frames: the first screen's read, slower than its grace on a loaded machine, said it too.)
        let framesBefore = terminal.frames.count
        await runtime.handle(.key(.char("6")))
        let whileReading = terminal.frames.dropFirst(framesBefore).filter { $0.contains(reading) }
        #expect(!whileReading.isEmpty, "\(terminal.frames.last ?? "")")
        #expect(whileReading.contains { $0.split(separator: "\n", omittingEmptySubsequences: false).count == 30 }, "the resize waited for the read")
        // (The rest of the resize, the lists' positions, after the read, as a key typed then.)
        await runtime.run(maxEvents: 1)
        #expect(runtime.state.height == 30 && runtime.state.width == 100)
        // (Said on the status line, and in each pane where its rows are to come.)
        #expect(
            whileReading.allSatisfy { !$0.contains("nothing imported yet") && $0.components(separatedBy: "reading the ledger…").count - 1 >= 3 },
            "\(whileReading.last ?? "")")
        #expect(!(terminal.frames.last ?? "").contains("reading the ledger"), "\(terminal.frames.last ?? "")")
        #expect(runtime.state.sources.count == 1)
        runtime.onFrame = nil

        // Customers, frozen: `/` then Q typed during the read is a filter holding "Q", not a quit; the keys are
        // handled in the order typed.
        Self.thawWhenReading(runtime, frozen)
        frozen.freeze()
        terminal.type(.key(.char("/")))
        terminal.type(.key(.char("Q")))
        await runtime.handle(.key(.char("2")))
        #expect(!runtime.state.quitting && !runtime.abandonedRead, "Q typed into the filter quit")
        #expect(terminal.pending == 0)
        await runtime.run(maxEvents: 2)
        #expect(!runtime.state.quitting)
        #expect(runtime.state.screen == .customers && runtime.state.prompt?.text == "Q", "\(String(describing: runtime.state.prompt))")
        runtime.onFrame = nil
        await runtime.handle(.key(.escape))
        await runtime.handle(.key(.escape))
        #expect(runtime.state.prompt == nil)

        // The queue, loaded; frozen, a poll's read waits while `a` and Q are typed: Q waits for the read and the
        // acknowledgement, which is saved.
        runtime.onFrame = nil
        await runtime.handle(.key(.char("5")))
        let flag = try #require(visibleFlags(runtime.state)[safe: runtime.state.flagList.selected], "no flag in the fixture's queue")
        #expect(flag.status == .open)
        Self.thawWhenReading(runtime, frozen)
        frozen.freeze()
        terminal.type(.key(.char("a")))
        terminal.type(.key(.char("Q")))
        await runtime.pollChanges()
        #expect(!runtime.state.quitting && !runtime.abandonedRead, "Q after an ack quit at once, dropping the ack")
        #expect(terminal.frames.contains { $0.contains(Self.heldLine) })
        await runtime.run(maxEvents: 2)
        #expect(runtime.state.quitting)
        await runtime.settle()
        let stored = try await ledger.flags(FlagQuery(limit: 100))
        #expect(stored.first { $0.id == flag.id }?.status == .acknowledged, "the ack typed before Q was dropped")
    }

    @Test(
        "a slow read: Q after keys that go to the queue and acknowledge waits for them (the queue not read yet), and Q again quits without them, saying so",
        .timeLimit(.minutes(6)))
    func secondQuit() async throws {
        guard PostgresTestServer.enabled else { return }
        let fixture = try await Self.scriptedLedger(readOnly: false)
        defer { fixture.end() }
        let (        server, url, terminal, runtime) = (fixture.server, fixture.url, fixture.terminal, fixture.runtime)
        // Keys bound to writes that write nothing here (u with nothing to undo, Space, which marks only on the queue)
        // hold no quit: another dashboard's Q after them quits at once.
        let (otherTerminal, other, otherLedger) = try await Self.scripted(url, readOnly: false)
        defer { Task { try? await otherLedger.close() } }
        // (Every process of the server, the backends of both dashboards' connections among them.)
        let frozen = FrozenProcesses(try server.processes())
        try #require(frozen.pids.count > 1, "the server's processes: \(frozen.pids)")
        defer { frozen.thaw() }
        frozen.freeze()
        for key in "u Q" { otherTerminal.type(.key(.char(key))) }
        await other.handle(.key(.char("2")))
        #expect(other.state.quitting && other.abandonedRead && other.unsaved == nil)
        #expect(!otherTerminal.frames.contains { $0.contains("Q waits for") })

        // The customers' read waits; meanwhile 5 (the queue, never read), a and Q: the copy the keys are judged on
        // has no flag for `a` to take, and a would have one after the reads, so Q waits.
        for key in "5aQ" { terminal.type(.key(.char(key))) }
        // Q again once the line says the first waits: it quits at once, the server still frozen, and the command will
        // say what was not done.
        let held = Self.heldLine
        var heldSeen = false
        runtime.onFrame = { state in
            guard !heldSeen, state.message?.text == held else { return }
            heldSeen = true
            #expect(!state.quitting, "Q after 5 and a quit at once")
            terminal.type(.key(.char("Q")))
        }
        await runtime.handle(.key(.char("2")))
        #expect(heldSeen, "\(terminal.frames.last ?? "")")
        #expect(runtime.state.quitting && runtime.abandonedRead)
        #expect(runtime.unsaved == "the triage was not done: Q again quit before the ledger answered")
        let error = try #require(Dashboard.unsavedError(runtime))
        #expect(ExitStatus.of(error).code == ExitStatus.ledgerUnavailable, "\(error)")
    }

    @Test(
        "a slow read: Q held back for an r typed before it (the queue not read yet) is not typed into the note r opens once the queue is read; a note and Enter resolve, then Q quits",
        .timeLimit(.minutes(6)))
    func heldQuitMeetsNote() async throws {
        guard PostgresTestServer.enabled else { return }
        let fixture = try await Self.scriptedLedger(readOnly: false)
        defer { fixture.end() }
        let (terminal, runtime, ledger) = (fixture.terminal, fixture.runtime, fixture.ledger)
        let frozen = FrozenProcesses(try fixture.server.processes())
        defer { frozen.thaw() }

        // On the copy the keys are judged on, r has no flag to resolve, so Q waits for it.
        await Self.quitHeldBack(after: "r", fixture, frozen)

        // Read, the queue has a flag for r, which asks for its note: Q is not the note's text, and the line says so.
        runtime.onFrame = nil
        await runtime.run(maxEvents: 3)
        #expect(runtime.state.screen == .refunds && !runtime.state.quitting)
        let prompt = try #require(runtime.state.prompt, "r opened no prompt: \(terminal.frames.last ?? "")")
        guard case .note(let ids) = prompt.kind else {
            Issue.record("r opened \(prompt.kind), not a note")
            return
        }
        #expect(prompt.text == "", "Q was typed into the note")
        let said = "resolving the flag asks for a note: Q was not typed into it (type why, Enter resolves, Esc cancels; then Q quits)"
        #expect(runtime.state.message?.text == said)
        #expect(terminal.frames.last?.contains(said) == true, "\(terminal.frames.last ?? "")")

        // The note typed, Enter resolves; Q then quits, after the write.
        for c in "dup" { terminal.type(.key(.char(c))) }
        terminal.type(.key(.enter))
        terminal.type(.key(.char("Q")))
        await runtime.run(maxEvents: 5)
        #expect(runtime.state.quitting)
        await runtime.settle()
        #expect(runtime.unsaved == nil)
        let stored = try await ledger.flags(FlagQuery(limit: 100))
        #expect(ids.count == 1 && stored.first { $0.id == ids.first }?.status == .resolved, "the resolve was not saved")
    }

    @Test(
        "a quit held back during one slow read is judged again when the next is slow, and waits for the ack typed before it, which is saved",
        .timeLimit(.minutes(6)))
    func heldAcrossReads() async throws {
        guard PostgresTestServer.enabled else { return }
        let fixture = try await Self.scriptedLedger(readOnly: false)
        defer { fixture.end() }
        let (terminal, runtime, ledger) = (fixture.terminal, fixture.runtime, fixture.ledger)
        let frozen = FrozenProcesses(try fixture.server.processes())
        defer { frozen.thaw() }
        let held = Self.heldLine

        await Self.quitHeldBack(after: "a", fixture, frozen)

        // The queue's read (the 5, handled after it) is slow too: the Q still waiting is judged again as it starts.
        let before = terminal.frames.count
        Self.thawWhenReading(runtime, frozen)
        frozen.freeze()
        await runtime.run(maxEvents: 1)
        #expect(runtime.state.screen == .refunds && !runtime.state.quitting)
        #expect(terminal.frames.dropFirst(before).contains { $0.contains(held) }, "\(terminal.frames.last ?? "")")
        let flag = try #require(visibleFlags(runtime.state)[safe: runtime.state.flagList.selected], "no flag in the fixture's queue")

        // Then a, then Q: the acknowledgement is written, and Q quits after it.
        runtime.onFrame = nil
        await runtime.run(maxEvents: 2)
        #expect(runtime.state.quitting && runtime.unsaved == nil)
        await runtime.settle()
        let stored = try await ledger.flags(FlagQuery(limit: 100))
        #expect(stored.first { $0.id == flag.id }?.status == .acknowledged, "the ack typed before Q was dropped")
    }

    @Test("a slow read of the queue's pages for :export: Q typed meanwhile waits for the export, which is written", .timeLimit(.minutes(6)))
    func quitWaitsForExport() async throws {
        guard PostgresTestServer.enabled else { return }
        let fixture = try await Self.scriptedLedger()
        defer { fixture.end() }
        let (        server, directory, terminal, runtime) = (fixture.server, fixture.directory, fixture.terminal, fixture.runtime)
        await runtime.handle(.key(.char("5")))
        let path = directory.appendingPathComponent("queue.csv").path
        await runtime.handle(.key(.char(":")))
        for character in "export csv \(path)" { await runtime.handle(.key(.char(character))) }
        let frozen = FrozenProcesses(try server.processes())
        defer { frozen.thaw() }
        Self.thawWhenReading(runtime, frozen)
        frozen.freeze()
        terminal.type(.key(.char("Q")))
        await runtime.handle(.key(.enter))
        #expect(terminal.frames.contains { $0.contains("reading the ledger… Q waits for the export to queue.csv typed before it (Q again quits without it)") })
        #expect(!runtime.state.quitting, "Q during the export's read quit without it")
        #expect(FileManager.default.fileExists(atPath: path), "\(String(describing: runtime.state.message))")
        await runtime.run(maxEvents: 1)
        #expect(runtime.state.quitting && runtime.unsaved == nil)
    }

    @Test(
        "a slow reload after another process's import leaves an empty list that was read as it is (\"none\"), not \"reading\"",
        .timeLimit(.minutes(6)))
    func slowReloadKeepsEmptyLists() async throws {
        guard PostgresTestServer.enabled else { return }
        let fixture = try await Self.scriptedLedger()
        defer { fixture.end() }
        let (server, url, directory, terminal, runtime, ledger) = (fixture.server, fixture.url, fixture.directory, fixture.terminal, fixture.runtime, fixture.ledger)
        let none = "none: every record was imported or a duplicate"
        await runtime.handle(.key(.char("6")))
        #expect((terminal.frames.last ?? "").contains(none))
        // Another process imports (the change counter moves), then another session holds the imports' table for 3 s:
        // the poll's reload of the screen waits for it, and its line says so.
        let more = directory.appendingPathComponent("more.ndjson")
        let line =
            #"{"transactionId":"7001","originalTransactionId":"7001","bundleId":"com.example.app","productId":"gems.100","purchaseDate":1741000000000,"quantity":1,"type":"Consumable","inAppOwnershipType":"PURCHASED","signedDate":1741000000000,"environment":"Production","storefront":"USA","price":990,"currency":"USD"}"#
        try Data((line + "\n").utf8).write(to: more)
        let imported = try Binary.run(["import", "--no-verify", "--ledger", url, more.path])
        #expect(imported.status == 0, "\(imported.stderr)")
        let pid = try server.background(
            "BEGIN; LOCK TABLE sources IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(3); COMMIT",
            database: try PostgresDatabase.databaseName(url: url))
        defer { PostgresTestServer.end(pid) }
        let held = try await PostgresTestServer.waitForLock("relation = 'sources'::regclass AND mode = 'AccessExclusiveLock'", seenBy: ledger)
        try #require(held, "psql did not take the lock")
        let before = terminal.frames.count
        await runtime.pollChanges()
        let whileReading = terminal.frames.dropFirst(before).filter { $0.contains("reading the ledger… (Q quits") }
        #expect(!whileReading.isEmpty, "the reload was not slow")
        #expect(whileReading.allSatisfy { $0.contains(none) }, "\(whileReading.first ?? "")")
        #expect(runtime.state.sources.count == 2)
    }

    @Test(
        "a slow poll that found nothing new: its reading line is taken off the screen when it answers", .timeLimit(.minutes(6)))
    func slowPollLineGoes() async throws {
        guard PostgresTestServer.enabled else { return }
        let fixture = try await Self.scriptedLedger()
        defer { fixture.end() }
        let (        server, terminal, runtime) = (fixture.server, fixture.terminal, fixture.runtime)
        let frozen = FrozenProcesses(try server.processes())
        defer { frozen.thaw() }
        frozen.freeze()
        // The loop polls (frozen: slowly) and says it is reading; a second later the server thaws. A key ends the
        // loop: typed at the first frame drawn after the read answered, or after 20 s if none is (the line stayed).
        // (The screen as the key was typed: the last frame then.)
        let beforeKey = Mutex<String?>(nil)
        let typeKey: @Sendable () -> Void = {
            guard beforeKey.withLock({ before in
                guard before == nil else { return false }
                before = terminal.frames.last ?? ""
                return true
            }) else { return }
            terminal.type(.key(.char("j")))
        }
        var sawReading = false
        runtime.onFrame = { state in
            // (A poll's read leaves the screen's lists as they are: only the status line says it is reading.)
            #expect(!state.reading, "a poll's read said the screen is being read")
            let reading = state.message?.text.hasPrefix("reading the ledger") == true
            if reading, !sawReading {
                sawReading = true
                DispatchQueue.global().asyncAfter(deadline: .now() + 1) { frozen.thaw() }
            } else if sawReading, !reading {
                typeKey()
            }
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + 20) { typeKey() }
        await runtime.run(maxEvents: 1)
        #expect(sawReading, "the poll was not slow")
        let last = try #require(beforeKey.withLock { $0 })
        #expect(!last.contains("reading the ledger"), "the reading line outlived the poll's read: \(last)")
    }

    @Test("keys typed during a slow read are all handled before the loop polls again (a poll that could be slow in turn)", .timeLimit(.minutes(6)))
    func noPollAheadOfKeys() async throws {
        guard PostgresTestServer.enabled else { return }
        let fixture = try await Self.scriptedLedger()
        defer { fixture.end() }
        let (        server, url, directory, terminal, runtime) = (fixture.server, fixture.url, fixture.directory, fixture.terminal, fixture.runtime)
        #expect(runtime.pollMilliseconds == 0)
        let frozen = FrozenProcesses(try server.processes())
        defer { frozen.thaw() }
        await runtime.handle(.key(.char("2")))
        #expect(runtime.state.customerPage.total == 2)

        // The sort changed with the server frozen: its read is slow, and two keys are typed meanwhile.
        Self.thawWhenReading(runtime, frozen)
        frozen.freeze()
        terminal.type(.key(.char("j")))
        terminal.type(.key(.char("j")))
        await runtime.handle(.key(.char("s")))
        #expect(runtime.state.customerQuery.sort == .lastActivity && terminal.pending == 0)
        runtime.onFrame = nil

        // Another process imports a customer: the next poll would show it (the loop polls at every turn here).
        let more = directory.appendingPathComponent("more.ndjson")
        let line =
            #"{"transactionId":"7001","originalTransactionId":"7001","bundleId":"com.example.app","productId":"gems.100","purchaseDate":1741000000000,"quantity":1,"type":"Consumable","inAppOwnershipType":"PURCHASED","signedDate":1741000000000,"environment":"Production","storefront":"USA","price":990,"currency":"USD"}"#
        try Data((line + "\n").utf8).write(to: more)
        let imported = try Binary.run(["import", "--no-verify", "--ledger", url, more.path])
        #expect(imported.status == 0, "\(imported.stderr)")

        // The first typed key: the second still waits, so no poll runs after it.
        await runtime.run(maxEvents: 1)
        #expect(runtime.state.customerList.selected == 1)
        #expect(runtime.state.customerPage.total == 2, "a poll ran ahead of a typed key")
        // The second: now the loop polls, and shows the import.
        await runtime.run(maxEvents: 1)
        #expect(runtime.state.customerPage.total == 3, "no poll after the typed keys")
    }

    /// Thaws `frozen` a second after the runtime first draws a slow read's line (the keys typed before it are read by
    /// then), whatever the machine's load: a thaw timed from the freeze could come before the read was slow.
    /// What the status line says of a quit held back for a triage key typed before it during a slow read.
    static let heldLine = "reading the ledger… Q waits for the triage typed before it (Q again quits without it)"

    /// The customers' read made slow (the server frozen, thawed a second after the line says it reads), with 5, `key`
    /// (a triage key) and Q typed meanwhile: they wait for the read, and Q is held back for the key.
    static func quitHeldBack(after key: Character, _ fixture: ScriptedLedger, _ frozen: FrozenProcesses) async {
        thawWhenReading(fixture.runtime, frozen)
        frozen.freeze()
        for typed in "5\(key)Q" { fixture.terminal.type(.key(.char(typed))) }
        await fixture.runtime.handle(.key(.char("2")))
        #expect(fixture.terminal.frames.contains { $0.contains(heldLine) })
        #expect(!fixture.runtime.state.quitting && fixture.terminal.pending == 0)
    }

    static func thawWhenReading(_ runtime: Runtime, _ frozen: FrozenProcesses) {
        var scheduled = false
        runtime.onFrame = { state in
            guard state.message?.text.hasPrefix("reading the ledger") == true, !scheduled else { return }
            scheduled = true
            DispatchQueue.global().asyncAfter(deadline: .now() + 1) { frozen.thaw() }
        }
    }

    @Test("the dashboard over a frozen server: Q during a read that does not answer ends the process at once (tmux)")
    func quitOverFrozenServer() throws {
        guard PostgresTestServer.enabled, TmuxSession.available() else { return }
        let (server, url, directory) = try Self.makeLedger()
        defer { Self.remove(server, directory) }
        let tmux = try Self.dashboard(url)
        defer { tmux.kill() }
        try tmux.keys("2")
        tmux.waitFor(text: "C2")
        let frozen = FrozenProcesses(try server.processes())
        frozen.freeze()
        defer { frozen.thaw() }
        try tmux.keys("Enter")
        tmux.waitFor(text: "reading the ledger… (Q quits; other keys wait for it)")
        let started = ContinuousClock.now
        try tmux.keys("Q")
        // (Closing the connection waited for the read: 15 s, the read timeout.)
        #expect(tmux.exitStatus(seconds: 30) == 0)
        #expect(Self.seconds(since: started) < 8, "the process took \(Self.seconds(since: started)) s to end")
    }

    @Test(
        "what a signal would have the process say: a write while it is on its way, nothing once it answered, a failed write once it failed",
        .timeLimit(.minutes(6)))
    func interruptNote() async throws {
        guard PostgresTestServer.enabled else { return }
        let fixture = try await Self.scriptedLedger(readOnly: false)
        defer { fixture.end() }
        let (server, terminal, runtime) = (fixture.server, fixture.terminal, fixture.runtime)
        await runtime.handle(.key(.char("5")))
        let flag = try #require(visibleFlags(runtime.state)[safe: runtime.state.flagList.selected], "no flag in the fixture's queue")
        #expect(terminal.interruptNote == nil)

        // An acknowledgement the frozen server holds past the write's grace: the note names it.
        let frozen = FrozenProcesses(try server.processes())
        defer { frozen.thaw() }
        runtime.writeGrace = .milliseconds(100)
        frozen.freeze()
        await runtime.handle(.key(.char("a")))
        #expect(runtime.state.saving == "acknowledge of \(flag.id)")
        #expect(
            terminal.interruptNote
                == "receiptdesk: ended while saving (acknowledge of \(flag.id)): not known to be saved; receiptdesk refunds shows each flag's status")
        frozen.thaw()
        await runtime.settle()
        #expect(runtime.state.saving == nil)
        #expect(terminal.interruptNote == nil, "the note outlived the write")

        // The server stopped: the undo fails, and the note says it was not saved.
        try server.stopServer()
        runtime.writeGrace = .seconds(60)
        await runtime.handle(.key(.char("u")))
        await runtime.settle()
        let unsaved = try #require(runtime.unsaved)
        #expect(terminal.interruptNote == "receiptdesk: not saved: \(unsaved)")
    }

    @Test(
        "Ctrl-C while Q waits for an acknowledgement another session's lock holds: the terminal is given back and says the write may not be saved (tmux)",
        .timeLimit(.minutes(6)))
    func interruptWhileSaving() async throws {
        guard PostgresTestServer.enabled, TmuxSession.available() else { return }
        let (server, url, directory) = try Self.makeLedger()
        defer { Self.remove(server, directory) }
        let tmux = try Self.dashboard(url)
        defer { tmux.kill() }
        try tmux.keys("5")
        tmux.waitFor(text: "quick-refund")
        // Another session holds the writers' lock: the acknowledgement waits for it, the dashboard's reads do not (a
        // frozen server held the polls too, and a poll begun before the key took it past its grace on a loaded machine).
        let pid = try server.background(
            "BEGIN; SELECT pg_advisory_xact_lock(\(PostgresDatabase.writersLock)); SELECT pg_sleep(300); COMMIT",
            database: try PostgresDatabase.databaseName(url: url))
        defer { PostgresTestServer.end(pid) }
        let ledger = try await LedgerOptions.open(url: url, now: currentTimestamp(), readOnly: true, mustExist: true)
        defer { Task { try? await ledger.close() } }
        let held = try await PostgresTestServer.waitForLock("locktype = 'advisory' AND objid = \(PostgresDatabase.writersLock)", seenBy: ledger)
        try #require(held, "psql did not take the writers' lock")
        try tmux.keys("a")
        tmux.waitFor(text: "saving: acknowledge of")
        try tmux.keys("Q")
        tmux.waitFor(text: "Ctrl-C abandons it")
        try tmux.keys("C-c")
        #expect(tmux.exitStatus(seconds: 30) == 130, "the process did not end of the Ctrl-C")
        let screen = tmux.waitFor(text: "receiptdesk: ended while saving (acknowledge of")
        // (The line wraps at the pane's width.)
        #expect(screen.replacing("\n", with: "").contains("not known to be saved; receiptdesk refunds shows each flag's status"), "\(screen)")
        #expect(tmux.display("#{alternate_on}") == "0", "the terminal was not given back")
    }

    @Test("another process's import into PostgreSQL shows at the next poll, and the selection stays on its customer")
    func liveRefresh() async throws {
        guard PostgresTestServer.enabled else { return }
        let (server, url, directory) = try Self.makeLedger()
        defer { Self.remove(server, directory) }
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

/// A terminal for tests: events typed into it are read in order; the frames drawn are kept as text.
final class ScriptedTerminal: TerminalBackend, @unchecked Sendable {
    let size: (width: Int, height: Int)
    let colorDepth = ColorDepth.trueColor
    let unicode = true
    private let events = Mutex<[InputEvent]>([])
    private let drawn = Mutex<[String]>([])

    init(width: Int, height: Int) { size = (width, height) }

    func type(_ event: InputEvent) { events.withLock { $0.append(event) } }
    var pending: Int { events.withLock { $0.count } }
    var frames: [String] { drawn.withLock { $0 } }

    func draw(_ buffer: ScreenBuffer) { drawn.withLock { $0.append(buffer.text) } }

    func nextEvent(timeoutMilliseconds: Int) -> InputEvent? {
        if let event = events.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) { return event }
        usleep(useconds_t(min(timeoutMilliseconds, 20) * 1000))
        return nil
    }

    func setMouse(_ enabled: Bool) {}
    func copyToClipboard(_ text: String) -> Bool { false }

    private let note = Mutex<String?>(nil)
    /// What the process would say if a signal ended it now.
    var interruptNote: String? { note.withLock { $0 } }
    func setInterruptNote(_ text: String?) { note.withLock { $0 = text } }
}

/// A server's processes stopped (SIGSTOP) and let go on (SIGCONT), each once.
final class FrozenProcesses: Sendable {
    let pids: [pid_t]
    private let frozen = Mutex(false)

    init(_ pids: [pid_t]) { self.pids = pids }

    func freeze() {
        frozen.withLock { frozen in
            guard !frozen else { return }
            for pid in pids { kill(pid, SIGSTOP) }
            frozen = true
        }
    }

    func thaw() {
        frozen.withLock { frozen in
            guard frozen else { return }
            for pid in pids { kill(pid, SIGCONT) }
            frozen = false
        }
    }
}
