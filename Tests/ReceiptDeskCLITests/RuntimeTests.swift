import Entitlements
import Foundation
import Ledger
import LedgerSQLite
import ReceiptModel
import Synchronization
import Testing

@testable import DeskUI
@testable import ReceiptDeskCLI

/// The dashboard's runtime over a real SQLite ledger, driven by scripted keys on a headless terminal,
/// waiting on state (never on fixed sleeps).
@Suite("Runtime: scripted keys over a real ledger", .ownThreads)
struct RuntimeTests {
    /// A runtime as `receiptdesk` builds it, over `url`, read-only.
    /// (`clock`: the wall clock the runtime follows; none by default, so that "now" stays where the test put it.)
    static func runtime(
        _ url: String, width: Int = 120, height: Int = 40, readOnly: Bool = true, operatorName: String = "test",
        now: Timestamp = currentTimestamp(), clock: (@Sendable () -> Timestamp)? = nil, backend: (any TerminalBackend)? = nil,
        catalog: Catalog = Catalog()
    ) async throws -> (Runtime, SQLLedger) {
        let ledger = try await LedgerOptions.open(url: url, now: now, readOnly: readOnly, mustExist: true)
        let opened = Dashboard.Opened(ledger: ledger, name: url, now: now, isDemo: false)
        let dashboard = Dashboard(
            data: try DataOptions.parse([]), themeName: nil, readOnly: readOnly, operatorName: operatorName, mouse: false)
        let themes = ThemeLoader(environment: [:])
        let state = AppState(
            width: width, height: height, now: now, isDemo: false, ledgerName: url, operatorName: operatorName, readOnly: readOnly,
            mouse: false, themeName: "default", themeNames: themes.names, catalog: catalog)
        var handlers = dashboard.handlers(opened, themes: themes)
        #expect(handlers.clock != nil, "a dashboard over a ledger follows the wall clock")
        handlers.clock = clock
        let runtime = Runtime(
            state: state, theme: themes.loadOrDefault("default").theme, backend: backend ?? HeadlessTerminal(width: width, height: height),
            handlers: handlers)
        // The dashboard polls the change signal twice a second, so a change shows within a second; the tests
        // poll by hand.
        #expect(runtime.pollMilliseconds <= 500)
        runtime.pollMilliseconds = 0
        // A key waits for its triage write as long as it takes (however loaded the machine), unless a test says
        // otherwise: the outcome is on the state when `handle` returns.
        #expect(runtime.writeGrace <= .milliseconds(100))
        runtime.writeGrace = .seconds(60)
        // The writes on threads of their own, as the test's jobs are (.ownThreads): on two cores the shared pool's two
        // threads may be held by other suites' blocking tests for tens of seconds.
        runtime.writeExecutor = ThreadPerJobExecutor.shared
        runtime.pause = { pause(for: $0) }
        await runtime.start()
        return (runtime, ledger)
    }

    @Test("over the demo, the Customers list says what each customer's screen says of their access once the idle runtime judged them")
    func listedAccessOverTheDemo() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("rd-access-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let sample = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("SampleData").path
        let manifest = try DemoLedger.readManifest(sample)
        let path = directory.appendingPathComponent("ledger.sqlite").path
        try await DemoLedger.build(sampleDataDirectory: sample, manifest: manifest, into: path)
        let catalog = try DataOptions.parse(["--catalog", sample + "/" + (try #require(manifest.catalog))]).loadCatalog()
        let (runtime, ledger) = try await Self.runtime("sqlite:" + path, width: 120, height: 60, now: manifest.now, catalog: catalog)
        defer { Task { try? await ledger.close() } }
        await runtime.handle(.key(.char("2")))
        func row(_ id: String) throws -> String {
            var buffer = ScreenBuffer(width: 0, height: 0)
            render(runtime.state, theme: .builtin, into: &buffer)
            return try #require((0..<buffer.height).map(buffer.line).first { $0.hasPrefix(id + " ") }, "\(id) is not on screen")
        }
        // Before: the list's figures. The grace-period story's customer read as expired.
        let before = try row("C7")
        #expect(before.hasSuffix("expired 2025-06-28       -     -"), "\(before)")
        var turns = 0
        while !runtime.state.customersNeedingAccess(limit: 100).isEmpty, turns < 100 {
            await runtime.fillCustomerAccess()
            turns += 1
        }
        // A few customers a turn: at most a batch, fewer when their time is spent.
        #expect(turns >= (runtime.state.listRows + Runtime.accessBatch - 1) / Runtime.accessBatch && turns <= runtime.state.listRows, "\(turns)")
        // A turn whose time is spent after its first customer judges that one only.
        await runtime.handle(.key(.char("G")))
        runtime.accessBudget = .zero
        let waiting = runtime.state.customersNeedingAccess(limit: 100).count
        #expect(waiting > 2)
        await runtime.fillCustomerAccess()
        #expect(runtime.state.customersNeedingAccess(limit: 100).count == waiting - 1)
        await runtime.handle(.key(.char("g")))
        // The stories, in the words of their own screens.
        for (id, said) in [("C7", "grace 2025-07-14"), ("C1", "billing retry"), ("C3", "revoked 2025-06-21"), ("C21", "owned")] {
            let line = try row(id)
            #expect(line.contains(said), "\(line)")
        }
        // Every customer on screen against the generator's ground truth at the data's now: the state giving the most.
        var checked = 0
        let truth = String(decoding: try Data(contentsOf: URL(fileURLWithPath: sample + "/ground-truth.ndjson")), as: UTF8.self)
        for line in truth.split(separator: "\n") {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            // (A customer whose story has no instants, a consumables' buyer, says nothing of entitlements.)
            guard let last = (object["instants"] as? [[String: Any]])?.last, last["at"] as? Int64 == manifest.now.millisecondsSince1970,
                let states = last["entitlements"] as? [String: String], let original = object["originalTransactionId"] as? String,
                let id = try await ledger.customerId(matching: original), let listed = runtime.state.customerAccess[id]
            else { continue }
            let expected = ListedAccess.precedence.first { state in states.values.contains(state.rawValue) } ?? EntitlementState.none
            #expect(listed.state == expected, "C\(id): \(states)")
            checked += 1
        }
        #expect(checked >= 40, "\(checked) customers checked")
        // C18 owns filters while its subscription is in billing retry: owned, which grants access, is what is said.
        let owner = try row("C18")
        #expect(owner.contains("owned"), "\(owner)")

        // Exported, every customer loaded is judged first (the list judges those on screen only): the file says what
        // each one's screen says, beyond the screen too.
        let export = directory.appendingPathComponent("customers.csv").path
        await runtime.handle(.key(.char(":")))
        for c in "export csv \(export)" { await runtime.handle(.key(.char(c))) }
        await runtime.handle(.key(.enter))
        let csv = try String(contentsOfFile: export, encoding: .utf8).split(separator: "\n")
        let loaded = runtime.state.customerPage.rows
        #expect(loaded.count > runtime.state.listRows, "more rows loaded than shown")
        #expect(loaded.allSatisfy { runtime.state.customerAccess[$0.id]?.state != nil })
        for (id, said) in [("C7", "grace 2025-07-14"), ("C3", "revoked 2025-06-21"), ("C18", "owned")] {
            let line = try #require(csv.first { $0.hasPrefix(id + ",") })
            #expect(line.hasSuffix("," + said), "\(line)")
        }
        // The last one loaded, far below the screen: the engine's judgement (its state's word), not the list's figures.
        let last = try #require(loaded.last)
        let lastLine = try #require(csv.first { $0.hasPrefix(last.displayId + ",") })
        let judged = try #require(runtime.state.customerAccess[last.id]?.state)
        let word = switch judged {
        case .active: "20"
        case .gracePeriod: "grace "
        case .owned: "owned"
        case .billingRetry: "billing retry"
        case .revoked: "revoked "
        case .expired: "expired "
        case .none: "-"
        }
        #expect(lastLine.split(separator: ",").last?.hasPrefix(word) == true, "\(lastLine) \(judged)")
        // A customer an idle turn could not read is asked again by the export (not written with the list's figures).
        await runtime.dispatch(
            .customersLoaded(CustomerPage(rows: [CustomerSummary(id: 999_998, transactionCount: 1)], next: nil, total: 1), append: true))
        await runtime.dispatch(.customerAccessLoaded([999_998: ListedAccess(unreadAt: runtime.state.instant, generation: runtime.state.customerAccessGeneration)]))
        let retried = directory.appendingPathComponent("retried.csv").path
        await runtime.handle(.key(.char(":")))
        for c in "export csv \(retried)" { await runtime.handle(.key(.char(c))) }
        await runtime.handle(.key(.enter))
        #expect(runtime.state.customerAccess[999_998]?.state != nil, "judged again")
        #expect(FileManager.default.fileExists(atPath: retried))
        // A customer loaded that cannot be read (the ledger gone before the poll says so): no file, rather than one
        // mixing the list's figures with the engine's judgements.
        await runtime.dispatch(
            .customersLoaded(CustomerPage(rows: [CustomerSummary(id: 999_999, transactionCount: 1)], next: nil, total: 1), append: true))
        try await ledger.close()
        let again = directory.appendingPathComponent("again.csv").path
        await runtime.handle(.key(.char(":")))
        for c in "export csv \(again)" { await runtime.handle(.key(.char(c))) }
        await runtime.handle(.key(.enter))
        #expect(runtime.state.message?.text == "not exported: C999999 could not be read (the ledger may have changed: try again)")
        #expect(!FileManager.default.fileExists(atPath: again))
    }

    @Test(":customer with a display id of a customer merged since says so, with the id it was found by")
    func mergedDisplayId() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("rd-merged-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = "sqlite:" + directory.appendingPathComponent("ledger.sqlite").path
        // C1 (o1, tok-A) and C2 (o2, tok-B), then a renewal of o2 under tok-A: C2 merged into C1.
        for (n, line) in [
            #"{"transactionId":"t1","originalTransactionId":"o1","appAccountToken":"tok-A","productId":"pro","purchaseDate":1000}"#,
            #"{"transactionId":"t2","originalTransactionId":"o2","appAccountToken":"tok-B","productId":"pro","purchaseDate":2000}"#,
            #"{"transactionId":"t3","originalTransactionId":"o2","appAccountToken":"tok-A","productId":"pro","purchaseDate":3000}"#,
        ].enumerated() {
            let file = directory.appendingPathComponent("\(n).json").path
            writeTestFile(file, Data(line.utf8))
            let imported = try Binary.run(["import", "--no-verify", "--ledger", url, file])
            #expect(imported.status == 0, "\(imported.stderr)")
        }
        let (runtime, ledger) = try await Self.runtime(url)
        defer { Task { try? await ledger.close() } }
        for (pasted, said) in [
            ("C2", "C2 was merged into C1 (a record named ids of both)"),
            ("(C2).", "found by C2 (pasted as (C2).); C2 was merged into C1 (a record named ids of both)"),
        ] {
            await runtime.handle(.key(.char(":")))
            for c in "customer \(pasted)" { await runtime.handle(.key(.char(c))) }
            await runtime.handle(.key(.enter))
            #expect(runtime.state.customer?.records.id == 1, "\(pasted)")
            #expect(runtime.state.message?.text == said, "\(pasted): \(String(describing: runtime.state.message))")
        }
    }

    @Test("a triage write waiting for another process's lock leaves the keys free, refuses a second triage meanwhile, and lands")
    func triageWhileLedgerBusy() async throws {
        let fixture = try DashboardEndToEndTests.makeLedger()
        defer { try? FileManager.default.removeItem(at: fixture.directory) }
        let (runtime, ledger) = try await Self.runtime(fixture.url, readOnly: false, operatorName: "ana")
        defer { Task { try? await ledger.close() } }
        runtime.writeGrace = .milliseconds(20)
        await runtime.handle(.key(.char("5")))
        let flags = runtime.state.flags.map(\.id)
        try #require(flags.count >= 2)
        // Another process writes to the ledger and holds its write lock (an import's batch, a long flag refresh).
        let path = String(fixture.url.dropFirst("sqlite:".count))
        let other = try SQLiteDatabase.open(path: path)
        let locked = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        struct RolledBack: Error {}
        let holder = Task(executorPreference: ThreadPerJobExecutor.shared) {
            try? await other.write { connection in
                try connection.execute("INSERT INTO ledger_meta (key, value) VALUES ('test-lock', 'held')", [])
                locked.signal()
                release.wait()
                throw RolledBack()
            }
        }
        locked.wait()
        let started = ContinuousClock.now
        await runtime.handle(.key(.char("a")))
        #expect(PostgresRuntimeTests.seconds(since: started) < 5, "the key waited for the lock")
        #expect(runtime.state.saving == "acknowledge of \(flags[0])")
        #expect(runtime.state.message?.text == "saving: acknowledge of \(flags[0])… (the ledger is busy; keys go on)")
        // The keys go on: the selection moves, a mark is made, another screen opens and comes back.
        await runtime.handle(.key(.char("j")))
        #expect(runtime.state.flagList.selected == 1)
        await runtime.handle(.key(.char(" ")))
        #expect(runtime.state.marked == [flags[1]])
        await runtime.handle(.key(.char("2")))
        #expect(runtime.state.screen == .customers)
        await runtime.handle(.key(.char("5")))
        // A second triage waits for the first: refused, saying why; nothing is sent.
        await runtime.handle(.key(.char("a")))
        #expect(runtime.state.message?.text == "still saving: acknowledge of \(flags[0]); triage keys wait for it (the others work)")
        await runtime.handle(.key(.char("u")))
        #expect(runtime.state.message?.kind == .error && runtime.state.message?.text.hasPrefix("still saving") == true)
        // Q while it is on its way: the dashboard waits for the write before it ends. The other process finishes;
        // the write lands and says so, and the mark made meanwhile stays.
        await runtime.handle(.key(.char("Q")))
        #expect(runtime.state.quitting)
        let releaser = Task(executorPreference: ThreadPerJobExecutor.shared) {
            pause(for: .milliseconds(200))
            release.signal()
        }
        await runtime.run()
        await releaser.value
        await holder.value
        try await other.close()
        #expect(runtime.unsaved == nil)
        #expect(runtime.state.saving == nil)
        #expect(runtime.state.message?.text == "1 flag acknowledged (u undoes)", "\(String(describing: runtime.state.message))")
        #expect(runtime.state.marked == [flags[1]])
        #expect(runtime.state.undoStack.count == 1)
        let log = try await ledger.triageLog(flagId: flags[0], customerId: nil)
        #expect(log.map(\.action) == [.ack] && log.map(\.operatorName) == ["ana"])
        #expect(try await ledger.triageLog(flagId: flags[1], customerId: nil).isEmpty)
    }

    @Test("the demo stamps triage at its own now, which stands still: never later than the now its header shows")
    func demoTriageAtItsNow() async throws {
        let fixture = try DashboardEndToEndTests.makeLedger()
        defer { try? FileManager.default.removeItem(at: fixture.directory) }
        let now = Timestamp(millisecondsSince1970: 1_751_328_000_000)  // 2025-07-01T00:00:00Z
        let ledger = try await LedgerOptions.open(url: fixture.url, now: now, readOnly: false, mustExist: true)
        defer { Task { try? await ledger.close() } }
        let dashboard = Dashboard(
            data: try DataOptions.parse([]), themeName: nil, readOnly: false, operatorName: "ana", mouse: false)
        let handlers = dashboard.handlers(
            Dashboard.Opened(ledger: ledger, name: fixture.url, now: now, isDemo: true), themes: ThemeLoader(environment: [:]))
        #expect(handlers.clock == nil)
        let flag = try #require(try await ledger.flags(FlagQuery(status: .open, limit: 1)).first)
        _ = try await handlers.triage([flag.id], .ack, nil, nil)
        _ = try await handlers.triage([flag.id], .resolve, "refund stands", nil)
        let log = try await ledger.triageLog(flagId: flag.id, customerId: nil)
        #expect(log.map(\.at) == [now, now] && log.map(\.action) == [.ack, .resolve])
    }

    @Test("keys move between screens and open what is selected")
    func keysOpenScreens() async throws {
        let fixture = try DashboardEndToEndTests.makeLedger()
        defer { try? FileManager.default.removeItem(at: fixture.directory) }
        let (runtime, ledger) = try await Self.runtime(fixture.url)
        defer { Task { try? await ledger.close() } }
        #expect(runtime.state.screen == .overview)
        #expect(runtime.state.overview?.counts.transactions == 3)
        await runtime.handle(.key(.char("2")))
        #expect(runtime.state.screen == .customers)
        #expect(runtime.state.customerPage.total == 2)
        await runtime.handle(.key(.enter))
        #expect(runtime.state.screen == .customer)
        #expect(runtime.state.customer?.records.id == runtime.state.customerPage.rows.first?.id)
        await runtime.handle(.key(.char("5")))
        #expect(runtime.state.screen == .refunds)
        await runtime.handle(.key(.char("Q")))
        #expect(runtime.state.quitting)
        #expect(runtime.keyMilliseconds.count == 4)
    }

    @Test("the overview as of an instant holds the refunds and spike alarms by then only: SampleData's spike on 2025-05-17 is not there at midnight; live, it is")
    func overviewAsOfBeforeSpike() async throws {
        let path = try LookupCommandTests.sampleDataLedger()
        let (runtime, ledger) = try await Self.runtime("sqlite:\(path)")
        defer { Task { try? await ledger.close() } }
        let midnight = Timestamp.utc(year: 2025, month: 5, day: 17)
        let before = try await runtime.handlers.overview(asOf: midnight, pinned: true)
        #expect(before.spikes.isEmpty, "\(before.spikes.map(\.id))")
        #expect(before.refunds90.counts.last == 0, "the day's refunds after midnight were counted: \(before.refunds90.counts.suffix(3))")
        // The day's end: the alarm (raised at the refund that made it one) and the day's refunds are there.
        let after = try await runtime.handlers.overview(asOf: midnight.adding(milliseconds: 86_400_000 - 1), pinned: true)
        #expect(after.spikes.map(\.id) == ["refund-spike:filters.pack:2025-05-17"])
        #expect((after.refunds90.counts.last ?? 0) >= 10, "\(after.refunds90.counts.suffix(3))")
        let spike = try #require(after.spikes.first)
        let halfway = try await runtime.handlers.overview(asOf: spike.at.adding(milliseconds: -1), pinned: true)
        #expect(halfway.spikes.isEmpty && (halfway.refunds90.counts.last ?? 0) < 10, "\(halfway.refunds90.counts.suffix(3))")
        // Live (no time travel), the header's now moves by the minute: every alarm, and all of today's refunds, show
        // whatever minute it is (one imported within the minute did not).
        let live = try await runtime.handlers.overview(asOf: midnight)
        #expect(live.spikes.map(\.id) == ["refund-spike:filters.pack:2025-05-17"])
        #expect(live.refunds90.counts.last == after.refunds90.counts.last)
    }

    @Test("the overview counts every unanswered (open or acknowledged) consumption request past its 12 hours, not only those among the newest 20")
    func pastDeadlineCount() async throws {
        let fixture = try DashboardEndToEndTests.makeLedger()
        defer { try? FileManager.default.removeItem(at: fixture.directory) }
        let now = currentTimestamp()
        let (runtime, ledger) = try await Self.runtime(fixture.url, readOnly: false, now: now)
        defer { Task { try? await ledger.close() } }
        let before = try #require(try await runtime.handlers.overview(asOf: now).consumptionPastDeadline)
        func request(_ n: Int, hoursAgo: Int64) -> RefundFlag {
            RefundFlag(
                id: "consumption-request:n\(n)", rule: "consumption-request", severity: .high, customerId: nil, transactionId: "n\(n)",
                productId: "gems", amount: 990, currency: "USD", at: now.adding(milliseconds: -hoursAgo * 3_600_000), detail: "d")
        }
        // 30 past their deadline (one exactly at it), 5 still running: more than the overview's list of 20 holds.
        var flags: [RefundFlag] = (0..<30).map { n in request(n, hoursAgo: n == 0 ? 12 : 13 + Int64(n)) }
        flags += (30..<35).map { n in request(n, hoursAgo: 1) }
        try await ledger.saveFlags(flags, now: now)
        let overview = try await runtime.handlers.overview(asOf: now)
        #expect(overview.consumptionPastDeadline == before + 30)
        #expect(overview.consumptionRequests.count == 20)
        // Acknowledged, a request is still unanswered: counted past its deadline, listed with its time left; resolved, not.
        _ = try await ledger.triage(flagId: "consumption-request:n5", action: .ack, operatorName: "ana", note: nil, now: now)
        _ = try await ledger.triage(flagId: "consumption-request:n31", action: .ack, operatorName: "ana", note: nil, now: now)
        _ = try await ledger.triage(flagId: "consumption-request:n6", action: .resolve, operatorName: "ana", note: "answered", now: now)
        let after = try await runtime.handlers.overview(asOf: now)
        #expect(after.consumptionPastDeadline == before + 29)
        #expect(after.consumptionRequests.contains { $0.id == "consumption-request:n31" && $0.status == .acknowledged })
    }

    @Test("a queue longer than its loaded pages says of how many, and :export writes every flag of it, not the 200 loaded; a file replaced is said, a failure says why")
    func wholeQueueExported() async throws {
        let fixture = try DashboardEndToEndTests.makeLedger()
        defer { try? FileManager.default.removeItem(at: fixture.directory) }
        let now = currentTimestamp()
        let (runtime, ledger) = try await Self.runtime(fixture.url, readOnly: false, now: now)
        defer { Task { try? await ledger.close() } }
        let flags = (0..<450).map { n in
            RefundFlag(
                id: "quick-refund:q\(n)", rule: "quick-refund", severity: .high, customerId: nil, transactionId: "q\(n)",
                productId: "gems", amount: 990, currency: "USD", at: now.adding(milliseconds: -Int64(n) * 60_000), detail: "d")
        }
        try await ledger.saveFlags(flags, now: now)
        let open = try await ledger.flagCount(FlagQuery(status: .open))
        #expect(open >= 450)
        await runtime.handle(.key(.char("5")))
        #expect(runtime.state.flags.count == 200 && runtime.state.flagTotal == open)
        #expect(PostgresRuntimeTests.screen(runtime).contains("200 shown of \(Format.count(open))"))
        let path = fixture.directory.appendingPathComponent("queue.csv").path
        await runtime.handle(.key(.char(":")))
        for c in "export csv \(path)" { await runtime.handle(.key(.char(c))) }
        await runtime.handle(.key(.enter))
        #expect(runtime.state.message?.text == "exported \(open) rows (every page of the queue: environment=all status=open) to \(path)")
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == open + 2)
        #expect(Set(flags.map(\.id)).isSubset(of: Set(lines.map { String($0.split(separator: ",").first ?? "") })))
        // The loaded pages are as they were.
        #expect(runtime.state.flags.count == 200)
        // Again to the same file: replaced, and said; where it cannot be written, why.
        func export(to target: String) async -> String? {
            await runtime.handle(.key(.char(":")))
            for c in "export csv \(target)" { await runtime.handle(.key(.char(c))) }
            await runtime.handle(.key(.enter))
            return runtime.state.message?.text
        }
        #expect(await export(to: path) == "exported \(open) rows (every page of the queue: environment=all status=open) to \(path) (replacing the file there)")
        // A filter finds every flag of the queue, not only those of the pages loaded (q440-q449 are past the 200
        // loaded): as it is typed it shows what it keeps of the loaded ones and says so, Enter has the ledger read it.
        await runtime.handle(.key(.char("/")))
        for c in "q44" { await runtime.handle(.key(.char(c))) }
        #expect(visibleFlags(runtime.state).map(\.id) == ["quick-refund:q44"])
        #expect(PostgresRuntimeTests.screen(runtime).contains("1 shown of 200 loaded (Enter searches the queue)  filter \"q44\""))
        await runtime.handle(.key(.enter))
        let found = ["quick-refund:q44"] + (440...449).map { "quick-refund:q\($0)" }
        #expect(visibleFlags(runtime.state).map(\.id) == found && runtime.state.flagTotal == 11)
        #expect(PostgresRuntimeTests.screen(runtime).contains("11 shown  filter \"q44\""))
        // Its export says it holds what the filter keeps, not the whole queue.
        #expect(
            await export(to: path)
                == "exported 11 rows (every page of the queue: environment=all status=open filter=q44) to \(path) (replacing the file there)")
        // None matching is said as the ledger's answer, not as the loaded flags'; Esc clears the filter.
        await runtime.handle(.key(.char("/")))
        await runtime.handle(.key(.ctrl("u")))
        for c in "no such flag" { await runtime.handle(.key(.char(c))) }
        await runtime.handle(.key(.enter))
        #expect(runtime.state.flags.isEmpty && PostgresRuntimeTests.screen(runtime).contains("no flags of the queue match \"no such flag\" (Esc clears the filter)"))
        await runtime.handle(.key(.escape))
        #expect(runtime.state.flags.count == 200 && runtime.state.flagFilter == nil)
        let missing = fixture.directory.appendingPathComponent("no/such/dir/q.csv").path
        #expect(await export(to: missing) == "cannot write \(missing): No such file or directory")
        #expect(await export(to: fixture.directory.path) == "cannot write \(fixture.directory.path): Is a directory")
        // (Written beside its place and renamed into it: nothing of the writing is left behind.)
        #expect(try FileManager.default.contentsOfDirectory(atPath: fixture.directory.path).allSatisfy { !$0.contains(".receiptdesk-") })
    }

    @Test("a triage write that fails after Q is kept to be printed (and the quit waits for it); one that lands is not")
    func triageFailsAtQuit() async throws {
        let harness = try await TriageHarness()
        defer { harness.close() }
        // A write that answers when told to, with a failure.
        let release = DispatchSemaphore(value: 0)
        var handlers = harness.handlers
        handlers.triage = { _, _, _, _ in
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                DispatchQueue.global().async {
                    release.wait()
                    done.resume()
                }
            }
            throw ServerWentAway()
        }
        let runtime = harness.runtime(handlers)
        runtime.writeGrace = .milliseconds(20)
        await runtime.start()
        await runtime.handle(.key(.char("5")))
        let flags = runtime.state.flags.map(\.id)
        try #require(flags.count >= 2)
        // Two marked: the write takes the marks, and gives them back failing.
        await runtime.handle(.key(.char(" ")))
        await runtime.handle(.key(.char(" ")))
        await runtime.handle(.key(.char("a")))
        #expect(runtime.state.saving != nil && runtime.state.marked.isEmpty)
        await runtime.handle(.key(.char("Q")))
        let releaser = Task(executorPreference: ThreadPerJobExecutor.shared) {
            pause(for: .milliseconds(100))
            release.signal()
        }
        // The wait is said over an outage's "retrying" line too (urgent): Q seemed not taken for as long as it waited.
        final class Seen { var waiting: StatusMessage? }
        let seen = Seen()
        runtime.onFrame = { state in
            if state.message?.text.contains("quits when the ledger answers") == true { seen.waiting = state.message }
        }
        await runtime.run()
        await releaser.value
        #expect(seen.waiting?.urgent == true, "\(String(describing: seen.waiting))")
        let unsaved = try #require(runtime.unsaved, "the failure after Q was not kept")
        #expect(unsaved.hasPrefix("not saved: the server went away") && unsaved.hasSuffix("(acknowledge of 2 flags; still marked)"), "\(unsaved)")
        #expect(runtime.state.marked == Set(flags.prefix(2)))
        #expect(runtime.state.saving == nil && runtime.state.triageMarks.isEmpty)
    }

    @Test("a triage failure that answered before Q was read is still printed at the end; one saved since is not")
    func triageFailedBeforeQuit() async throws {
        let harness = try await TriageHarness()
        defer { harness.close() }
        // Each run's first write fails; the ones after it are the real ledger's.
        func dashboardRun() async -> Runtime { harness.runtime(harness.failingOnce()) }
        // The failure answers and is applied (on screen) before the Q typed after it is read (a resize read first, or
        // a loop busy with a slow read): the end still says it, where it stays.
        let runtime = await dashboardRun()
        await runtime.start()
        await runtime.handle(.key(.char("5")))
        let flag = try #require(runtime.state.flags.first?.id)
        await runtime.handle(.key(.char("a")))
        await runtime.settle()
        #expect(runtime.state.message?.text.hasPrefix("not saved: the server went away") == true, "\(String(describing: runtime.state.message))")
        #expect(!runtime.state.quitting)
        await runtime.handle(.resize(width: 100, height: 40))
        await runtime.handle(.key(.char("Q")))
        await runtime.run()
        let unsaved = try #require(runtime.unsaved, "a failure seen for a moment only was not kept")
        #expect(unsaved.hasPrefix("not saved: the server went away") && unsaved.contains(flag), "\(unsaved)")
        // A write the ledger failed to take ends the dashboard as a failed ledger does.
        #expect(!runtime.unsavedWereRefused)
        #expect(Dashboard.unsavedError(runtime).map { ExitStatus.of($0).code } == ExitStatus.ledgerUnavailable)
        // Failed, tried again and saved: nothing is left unsaved.
        let again = await dashboardRun()
        await again.start()
        await again.handle(.key(.char("5")))
        #expect(again.state.flags.first?.id == flag)
        await again.handle(.key(.char("a")))
        await again.settle()
        #expect(again.state.message?.text.hasPrefix("not saved") == true)
        await again.handle(.key(.char("a")))
        await again.settle()
        #expect(again.state.message?.text == "1 flag acknowledged (u undoes)", "\(String(describing: again.state.message))")
        await again.handle(.key(.char("Q")))
        await again.run()
        #expect(again.unsaved == nil, "\(again.unsaved ?? "")")
        // A resolve (with its note) that failed is not saved by an ack of the flag since: still said at the end, and
        // the note still offered.
        let third = await dashboardRun()
        await third.start()
        await third.handle(.key(.char("5")))
        let open = try #require(third.state.flags.first { $0.status == .open }?.id)
        let row = try #require(third.state.flags.firstIndex { $0.id == open })
        for _ in 0..<row { await third.handle(.key(.char("j"))) }
        await third.handle(.key(.char("r")))
        for c in "refund approved" { await third.handle(.key(.char(c))) }
        await third.handle(.key(.enter))
        await third.settle()
        #expect(third.state.message?.text.hasPrefix("not saved") == true)
        await third.handle(.key(.char("a")))
        await third.settle()
        #expect(third.state.message?.text == "1 flag acknowledged (u undoes)", "\(String(describing: third.state.message))")
        #expect(third.state.unsavedNote?.text == "refund approved")
        await third.handle(.key(.char("Q")))
        await third.run()
        let left = try #require(third.unsaved, "a failed resolve was taken for saved by the ack after it")
        // (Printed after the dashboard ended, where r offers nothing: the note itself.)
        #expect(left.contains("resolve of \(open)") && left.contains("your note: refund approved") && !left.contains("r offers"), "\(left)")
    }

    @Test("a triage the ledger refused, set read-only since the dashboard read it, is said at the end with a refused write's exit (2), not a failed ledger's (3)")
    func triageRefusedByReadOnlySetting() async throws {
        let harness = try await TriageHarness()
        defer { harness.close() }
        // Three dashboards open on the queue; then another process sets the ledger read-only, and none has polled since.
        var runtimes: [Runtime] = []
        for handlers in [harness.handlers, harness.failingOnce(), harness.failingOnce()] {
            let runtime = harness.runtime(handlers)
            await runtime.start()
            await runtime.handle(.key(.char("5")))
            #expect(!runtime.state.readOnly)
            runtimes.append(runtime)
        }
        let flag = try #require(runtimes[0].state.flags.first?.id)
        let other = try await LedgerOptions.open(url: harness.fixture.url, now: currentTimestamp(), mustExist: true)
        try await other.setReadOnly(true)
        try await other.close()
        func press(_ runtime: Runtime, _ keys: String) async {
            for key in keys {
                await runtime.handle(.key(.char(key)))
                await runtime.settle()
            }
        }
        func end(_ runtime: Runtime) async -> Int32? {
            await runtime.handle(.key(.char("Q")))
            await runtime.run()
            return Dashboard.unsavedError(runtime).map { ExitStatus.of($0).code }
        }

        // Refused: said at the end with a refused write's exit.
        await press(runtimes[0], "a")
        #expect(runtimes[0].state.message?.text.hasPrefix("not saved: this ledger is set read-only") == true, "\(String(describing: runtimes[0].state.message))")
        #expect(await end(runtimes[0]) == ExitStatus.usage)
        #expect(runtimes[0].unsavedWereRefused)
        #expect(runtimes[0].unsaved?.contains(flag) == true, "\(runtimes[0].unsaved ?? "")")
        // Failed (the server), tried again and refused: the latest try is what is said.
        await press(runtimes[1], "aa")
        #expect(await end(runtimes[1]) == ExitStatus.usage)
        #expect(runtimes[1].unsaved?.contains("the server went away") == false, "\(runtimes[1].unsaved ?? "")")
        // One flag failed, another refused: a failed ledger's exit.
        await press(runtimes[2], "aja")
        #expect(await end(runtimes[2]) == ExitStatus.ledgerUnavailable)
        #expect(!runtimes[2].unsavedWereRefused)
        #expect(try await harness.ledger.triageLog(flagId: flag, customerId: nil).isEmpty)
    }

    @Test("files decoded with --no-verify say UNVERIFIED in the header on every screen; verified files and a ledger do not; files say IN MEMORY")
    func unverifiedBadge() async throws {
        let fixture = try DashboardEndToEndTests.makeLedger()
        defer { try? FileManager.default.removeItem(at: fixture.directory) }
        let ledger = try await LedgerOptions.open(url: fixture.url, now: currentTimestamp(), mustExist: true)
        defer { Task { try? await ledger.close() } }
        let opened = Dashboard.Opened(ledger: ledger, name: "files: x", now: currentTimestamp(), isDemo: false)
        let themes = ThemeLoader(environment: [:])
        func header(_ arguments: [String]) throws -> String {
            let dashboard = Dashboard(
                data: try DataOptions.parse(arguments), themeName: nil, readOnly: false, operatorName: "ana", mouse: false, environment: [:])
            var state = dashboard.initialState(opened, width: 100, height: 30, themes: themes, catalog: .init())
            _ = reduce(&state, .key(.char("2")))
            var buffer = ScreenBuffer(width: 100, height: 30)
            render(state, theme: themes.loadOrDefault("default").theme, into: &buffer)
            return String(buffer.text.split(separator: "\n")[0])
        }
        let unverified = try header(["--files", fixture.directory.path, "--no-verify"])
        #expect(unverified.contains("UNVERIFIED"), "\(unverified)")
        #expect(!(try header(["--files", fixture.directory.path])).contains("UNVERIFIED"))
        #expect(!(try header(["--no-verify"])).contains("UNVERIFIED"), "a stored ledger's records carry their own verification")
        // Files live in memory (their triage gone at quit); a ledger does not.
        #expect(try header(["--files", fixture.directory.path]).contains("IN MEMORY"))
        #expect(!(try header([])).contains("IN MEMORY"))
    }

    @Test("a role that may not triage opens the dashboard read-only, saying why; the operator defaults to the role")
    func viewerRole() async throws {
        let fixture = try DashboardEndToEndTests.makeLedger()
        defer { try? FileManager.default.removeItem(at: fixture.directory) }
        let ledger = try await LedgerOptions.open(url: fixture.url, now: currentTimestamp(), mustExist: true)
        defer { Task { try? await ledger.close() } }
        #expect(try await ledger.role() == nil, "SQLite has no roles")
        let dashboard = Dashboard(
            data: try DataOptions.parse([]), themeName: nil, readOnly: false, operatorName: nil, mouse: false, environment: [:])
        let themes = ThemeLoader(environment: [:])
        var opened = Dashboard.Opened(ledger: ledger, name: "postgres://boss@db/desk", now: currentTimestamp(), isDemo: false)
        opened.role = ("boss", false)
        var state = dashboard.initialState(opened, themes: themes, catalog: .init())
        #expect(state.readOnly && state.operatorName == "boss")
        _ = reduce(&state, .key(.char("5")))
        _ = reduce(&state, .flagsLoaded(try await ledger.flags(FlagQuery(status: .open)), next: nil, append: false))
        _ = reduce(&state, .key(.char("a")))
        #expect(state.message?.text == "read-only: the PostgreSQL role boss may read this ledger, not triage it; triage is refused")
        // An agent's role keeps the keys, and what it writes is stamped with the role's name, as the screen says.
        opened.role = ("ana", true)
        #expect(!dashboard.initialState(opened, themes: themes, catalog: .init()).readOnly)
        let flag = try #require(state.flags.first?.id)
        _ = try await dashboard.handlers(opened, themes: themes).triage([flag], .ack, nil, .open)
        #expect(try await ledger.triageLog(flagId: flag, customerId: nil).map(\.operatorName) == ["ana"])
    }

    @Test("a dashboard left open follows the wall clock: a new minute moves now and the overview's days; :at pins them")
    func clockAdvances() async throws {
        let fixture = try DashboardEndToEndTests.makeLedger()
        defer { try? FileManager.default.removeItem(at: fixture.directory) }
        // One minute before midnight, then the clock passes it.
        let start = Timestamp(millisecondsSince1970: 1_744_329_570_000)  // 2025-04-10T23:59:30Z
        let wall = Mutex(start)
        let (runtime, ledger) = try await Self.runtime(fixture.url, now: start, clock: { wall.withLock { $0 } })
        defer { Task { try? await ledger.close() } }
        let firstDay = try #require(runtime.state.overview?.refunds90.firstDay)
        await runtime.pollChanges()
        #expect(runtime.state.now == start, "the same minute moved now")
        wall.withLock { $0 = start.adding(milliseconds: 60_000) }
        await runtime.pollChanges()
        #expect(runtime.state.now == start.adding(milliseconds: 60_000))
        #expect(runtime.state.overview?.refunds90.firstDay == firstDay.adding(milliseconds: 86_400_000))
        #expect(PostgresRuntimeTests.screen(runtime).contains("now 2025-04-11 00:00"))
        // Another process's import and a new minute in the same poll: the one read shows both.
        func importOne(_ id: Int) throws {
            let file = fixture.directory.appendingPathComponent("more-\(id).ndjson")
            let line = #"{"transactionId":"\#(id)","originalTransactionId":"\#(id)","productId":"gems.100","purchaseDate":1741000000000,"type":"Consumable","environment":"Production"}"#
            try Data((line + "\n").utf8).write(to: file)
            let imported = try Binary.run(["import", "--no-verify", "--ledger", fixture.url, file.path])
            #expect(imported.status == 0, "\(imported.stderr)")
        }
        try importOne(7101)
        wall.withLock { $0 = start.adding(milliseconds: 120_000) }
        await runtime.pollChanges()
        #expect(runtime.state.overview?.counts.transactions == 4)
        // Time travel pins the instant shown: the header's clock moves, what is shown does not; a commit in the same
        // poll is still read.
        await runtime.handle(.key(.char("t")))
        for c in "2025-03-01" { await runtime.handle(.key(.char(c))) }
        await runtime.handle(.key(.enter))
        let pinned = try #require(runtime.state.overview?.refunds90)
        try importOne(7102)
        wall.withLock { $0 = start.adding(milliseconds: 86_400_000) }
        await runtime.pollChanges()
        #expect(runtime.state.now == start.adding(milliseconds: 86_400_000))
        #expect(runtime.state.overview?.refunds90 == pinned)
        #expect(runtime.state.overview?.counts.transactions == 5)
        // An instant the dashboard cannot show says why; one it cannot read shows the forms it takes. Either way the
        // prompt opens again holding what was typed, to mend; Esc closes it and stays on the screen.
        for (typed, said) in [
            ("1900-01-01", "1900-01-01 is outside the years 1970 to 9999, which the dashboard shows"),
            ("yesterday", "not an instant: yesterday (2025-03-01, 2025-03-01 12:00 UTC, 2025-03-01T12:00+01:00, or now)"),
        ] {
            await runtime.handle(.key(.char("t")))
            for c in typed { await runtime.handle(.key(.char(c))) }
            await runtime.handle(.key(.enter))
            #expect(runtime.state.message?.text == said)
            #expect(runtime.state.prompt?.kind == .instant && runtime.state.prompt?.text == typed && runtime.state.prompt?.offered == false)
            #expect(PostgresRuntimeTests.screen(runtime).contains(String(said.prefix(40))), "the reason shows above the prompt")
            await runtime.handle(.key(.escape))
            #expect(runtime.state.prompt == nil && runtime.state.screen == .overview)
        }
        // Mended in the prompt, it is taken.
        await runtime.handle(.key(.char("t")))
        for c in "2025-13-01" { await runtime.handle(.key(.char(c))) }
        await runtime.handle(.key(.enter))
        #expect(runtime.state.prompt?.text == "2025-13-01")
        for key in [Key.left, .left, .left, .backspace, .backspace] { await runtime.handle(.key(key)) }
        for c in "02" { await runtime.handle(.key(.char(c))) }
        await runtime.handle(.key(.enter))
        #expect(runtime.state.prompt == nil && runtime.state.asOf != nil, "\(String(describing: runtime.state.message))")
    }

    @Test("a triage the ledger cannot take says 'not saved' over the retrying line, and the next resolve offers its note again")
    func triageNotSaved() async throws {
        let fixture = try DashboardEndToEndTests.makeLedger()
        defer { try? FileManager.default.removeItem(at: fixture.directory) }
        let (runtime, ledger) = try await Self.runtime(fixture.url, readOnly: false, operatorName: "ana")
        await runtime.handle(.key(.char("5")))
        let flag = try #require(runtime.state.flags.first?.id)
        // The ledger goes away under the open queue.
        try await ledger.close()
        await runtime.pollChanges()
        #expect(runtime.state.unavailable != nil)
        await runtime.handle(.key(.char("r")))
        for c in "called the bank" { await runtime.handle(.key(.char(c))) }
        await runtime.handle(.key(.enter))
        let message = try #require(runtime.state.message)
        #expect(message.kind == .error && message.text.hasPrefix("not saved: ") && message.text.hasSuffix(" (resolve of \(flag); r offers your note again)"), "\(message.text)")
        let screen = PostgresRuntimeTests.screen(runtime)
        #expect(screen.contains("not saved: ") && !screen.contains("ledger unavailable, retrying"), "\(screen)")
        #expect(runtime.state.undoStack.isEmpty)
        // The note typed is offered again, whole: Enter would send it as it was.
        await runtime.handle(.key(.char("r")))
        #expect(runtime.state.prompt?.text == "called the bank" && runtime.state.prompt?.offered == true)
        await runtime.handle(.key(.escape))
        // An acknowledge says so too, without a note to offer.
        await runtime.handle(.key(.char("a")))
        #expect(runtime.state.message?.text.hasSuffix(" (acknowledge of \(flag))") == true, "\(String(describing: runtime.state.message))")
        // Nothing was written.
        let reopened = try await LedgerOptions.open(url: fixture.url, now: currentTimestamp(), readOnly: true, mustExist: true)
        #expect(try await reopened.triageLog(flagId: flag, customerId: nil).isEmpty)
        try await reopened.close()
    }

    @Test("two agents resolve the same flag: the second is told it was resolved already and that its note was not written")
    func triageRace() async throws {
        let fixture = try DashboardEndToEndTests.makeLedger()
        defer { try? FileManager.default.removeItem(at: fixture.directory) }
        let (ana, anaLedger) = try await Self.runtime(fixture.url, readOnly: false, operatorName: "ana")
        defer { Task { try? await anaLedger.close() } }
        let (bob, bobLedger) = try await Self.runtime(fixture.url, readOnly: false, operatorName: "bob")
        defer { Task { try? await bobLedger.close() } }
        for runtime in [ana, bob] { await runtime.handle(.key(.char("5"))) }
        let flag = try #require(ana.state.flags.first?.id)
        #expect(bob.state.flags.first?.id == flag)
        func resolve(_ runtime: Runtime, note: String) async {
            await runtime.handle(.key(.char("r")))
            for c in note { await runtime.handle(.key(.char(c))) }
            await runtime.handle(.key(.enter))
        }
        await resolve(ana, note: "refunded by Apple, told her")
        #expect(ana.state.message?.text == "1 flag resolved (u undoes)")
        // Bob's queue was read before Ana's change (no poll since).
        #expect(bob.state.flags.first?.id == flag && bob.state.flags.first?.status == .open)
        await resolve(bob, note: "me too")
        // Who did it (the log's last entry), and bob's note shown to copy, offered again should the flag reopen.
        #expect(
            bob.state.message
                == StatusMessage("nothing written: ana had resolved it since you read it; your note, not written: me too (\(flag))", kind: .error))
        #expect(bob.state.unsavedNote?.flagIds == [flag] && bob.state.unsavedNote?.text == "me too")
        #expect(bob.state.undoStack.isEmpty)
        let log = try await bobLedger.triageLog(flagId: flag, customerId: nil)
        #expect(log.map(\.operatorName) == ["ana"])
        #expect(log.map(\.note) == ["refunded by Apple, told her"])
        // The note is on the customer's screen, with who wrote it and the flag it was about.
        await bob.pollChanges()
        await bob.handle(.key(.char("f")))
        await bob.handle(.key(.char("f")))
        #expect(bob.state.flagStatus == .resolved)
        // The queue says who resolved it and why, read with the flags (the runtime is 120 columns: a column too).
        #expect(bob.state.flagTriage[flag]?.operatorName == "ana")
        let queue = PostgresRuntimeTests.screen(bob)
        #expect(queue.contains("(revocationReason 1)  resolved ") && queue.contains(" by ana: refunded by Apple"), "\(queue)")
        // (The column says how long ago first: just now, though written after the screen's now last moved.)
        #expect(queue.contains("last triage") && queue.contains(" 0m ana: refunded by Ap"), "\(queue)")
        await bob.handle(.key(.enter))
        #expect(bob.state.screen == .customer)
        let screen = PostgresRuntimeTests.screen(bob)
        #expect(screen.contains("ana: refunded by Apple, told her  (resolve \(flag))"), "\(screen)")
    }

    @Test("the ledger set read-only by another process hides the triage keys at the next poll; lifted, they are back")
    func readOnlyFollowed() async throws {
        let fixture = try DashboardEndToEndTests.makeLedger()
        defer { try? FileManager.default.removeItem(at: fixture.directory) }
        let (runtime, ledger) = try await Self.runtime(fixture.url, readOnly: false, operatorName: "ana")
        defer { Task { try? await ledger.close() } }
        await runtime.handle(.key(.char("5")))
        let flag = try #require(runtime.state.flags.first)
        #expect(!runtime.state.readOnly && !PostgresRuntimeTests.screen(runtime).contains("READ-ONLY"))
        func setting(_ value: String) throws {
            let set = try Binary.run(["ledger", "read-only", value, "--ledger", fixture.url])
            #expect(set.status == 0, "\(set.stderr)")
        }
        try setting("on")
        await runtime.pollChanges()
        #expect(runtime.state.readOnly)
        #expect(runtime.state.message?.kind == .error && runtime.state.message?.text.contains("set read-only") == true)
        #expect(PostgresRuntimeTests.screen(runtime).contains("READ-ONLY"))
        await runtime.handle(.key(.char("a")))
        #expect(
            runtime.state.message?.text
                == "read-only: this ledger is set read-only (receiptdesk ledger read-only off lifts it); triage is refused")
        #expect(try await ledger.triageLog(flagId: flag.id, customerId: nil).isEmpty)
        // A dashboard that starts while the ledger is set (the runtime reads the setting after the change signal).
        let (late, lateLedger) = try await Self.runtime(fixture.url, readOnly: false, operatorName: "bo")
        defer { Task { try? await lateLedger.close() } }
        #expect(late.state.readOnly && late.state.ledgerReadOnly && !late.state.openedReadOnly)
        try setting("off")
        await runtime.pollChanges()
        #expect(!runtime.state.readOnly && !PostgresRuntimeTests.screen(runtime).contains("READ-ONLY"))
        #expect(runtime.state.message?.text == "the ledger's read-only setting was lifted: triage is back")
        await runtime.handle(.key(.char("a")))
        #expect(try await ledger.triageLog(flagId: flag.id, customerId: nil).map(\.operatorName) == ["ana"])
    }

    @Test("another process's import shows at the next poll and the selected customer stays selected")
    func liveRefresh() async throws {
        let fixture = try DashboardEndToEndTests.makeLedger()
        defer { try? FileManager.default.removeItem(at: fixture.directory) }
        let (runtime, ledger) = try await Self.runtime(fixture.url)
        defer { Task { try? await ledger.close() } }
        // Most recent purchase first: C1 (2025-04-01), then C2 (2025-03-02); select C2.
        await runtime.handle(.key(.char("2")))
        await runtime.handle(.key(.char("s")))
        #expect(runtime.state.customerQuery.sort == .lastActivity)
        await runtime.handle(.key(.char("G")))
        let selected = runtime.state.customerPage.rows[runtime.state.customerList.selected].id
        #expect(runtime.state.customerList.selected == 1)
        #expect(runtime.state.customerPage.total == 2)

        // Another process imports a customer who bought on 2025-03-03: it sorts between the two, so the
        // selected customer moves down a row and the selection must follow it.
        let more = fixture.directory.appendingPathComponent("more.ndjson")
        let line = #"{"transactionId":"7001","originalTransactionId":"7001","bundleId":"com.example.app","productId":"gems.100","purchaseDate":1741000000000,"quantity":1,"type":"Consumable","inAppOwnershipType":"PURCHASED","signedDate":1741000000000,"environment":"Production","storefront":"USA","price":990,"currency":"USD"}"#
        try Data((line + "\n").utf8).write(to: more)
        let imported = try Binary.run(["import", "--no-verify", "--ledger", fixture.url, more.path])
        #expect(imported.status == 0, "\(imported.stderr)")

        // The first poll after the import sees it (so it shows within one poll interval).
        await runtime.pollChanges()
        #expect(runtime.state.customerPage.total == 3, "the first poll after the import did not show it")
        #expect(runtime.state.customerList.selected == 2)
        #expect(runtime.state.customerPage.rows[runtime.state.customerList.selected].id == selected)
        // Screens not on view read the ledger when they are opened.
        await runtime.handle(.key(.char("1")))
        #expect(runtime.state.overview?.counts.transactions == 4)
    }
}

/// A write's failure as a lost server gives it.
private struct ServerWentAway: Error, CustomStringConvertible {
    var description: String { "the server went away" }
}

/// A fixture ledger opened as the dashboard opens it (operator ana), its handlers without a clock, and runtimes over
/// them at 120x40 that poll by hand and write on threads of their own.
private struct TriageHarness {
    let fixture: (directory: URL, url: String)
    let ledger: SQLLedger
    let opened: Dashboard.Opened
    let dashboard: Dashboard
    let themes = ThemeLoader(environment: [:])
    let handlers: EffectHandlers

    init() async throws {
        fixture = try DashboardEndToEndTests.makeLedger()
        let now = currentTimestamp()
        ledger = try await LedgerOptions.open(url: fixture.url, now: now, readOnly: false, mustExist: true)
        opened = Dashboard.Opened(ledger: ledger, name: fixture.url, now: now, isDemo: false)
        dashboard = Dashboard(data: try DataOptions.parse([]), themeName: nil, readOnly: false, operatorName: "ana", mouse: false)
        var handlers = dashboard.handlers(opened, themes: themes)
        handlers.clock = nil
        self.handlers = handlers
    }

    /// The handlers with a first write that fails as a lost server fails it; the ones after it are the real ledger's.
    func failingOnce() -> EffectHandlers {
        var handlers = handlers
        let real = handlers.triage
        let calls = Mutex(0)
        handlers.triage = { ids, action, note, expecting in
            guard calls.withLock({ $0 += 1; return $0 }) > 1 else { throw ServerWentAway() }
            return try await real(ids, action, note, expecting)
        }
        return handlers
    }

    func runtime(_ handlers: EffectHandlers) -> Runtime {
        let runtime = Runtime(
            state: dashboard.initialState(opened, width: 120, height: 40, themes: themes, catalog: .init()),
            theme: themes.loadOrDefault("default").theme, backend: HeadlessTerminal(width: 120, height: 40), handlers: handlers)
        runtime.pollMilliseconds = 0
        runtime.writeExecutor = ThreadPerJobExecutor.shared
        runtime.pause = { pause(for: $0) }
        return runtime
    }

    func close() {
        let (ledger, directory) = (ledger, fixture.directory)
        Task {
            try? await ledger.close()
            try? FileManager.default.removeItem(at: directory)
        }
    }
}
