import Entitlements
import LedgerQueries
import ReceiptModel
import Testing

@testable import DeskUI

@Suite("Reducer and keymap")
struct ReducerTests {
    @Test("keys map to commands per screen", arguments: [
        (Key.char("j"), ScreenID.customers, Command.down),
        (.down, .refunds, .down),
        (.char("k"), .customer, .up),
        (.char("G"), .customers, .bottom),
        (.char("g"), .customers, .top),
        (.escape, .customer, .dismiss),
        (.char("q"), .overview, .back),
        (.char("Q"), .imports, .quit),
        (.ctrl("c"), .customer, .quit),
        (.char(":"), .overview, .commandLine),
        (.char("?"), .refunds, .help),
        (.char("t"), .customer, .timeTravel),
        (.char("t"), .refunds, .timeTravel),
        (.char("a"), .refunds, .acknowledge),
        (.char("r"), .refunds, .resolve),
        (.char("u"), .refunds, .undo),
        (.char("u"), .overview, .undo),
        (.char("u"), .imports, .undo),
        (.char("y"), .customers, .copyId),
        (.char("5"), .overview, .screen(.refunds)),
        (.tab, .customer, .nextPane),
    ])
    func keymap(key: Key, screen: ScreenID, command: Command) {
        #expect(Keymap.standard.command(for: key, on: screen, readOnly: false) == command)
    }

    @Test("read-only hides every key that writes, and marking for them", arguments: [Key.char("a"), .char("r"), .char("o"), .char("u"), .char(" ")])
    func readOnlyKeys(key: Key) {
        #expect(Keymap.standard.command(for: key, on: .refunds, readOnly: true) == nil)
        var state = Fixture.state(screen: .refunds)
        state.openedReadOnly = true
        #expect(reduce(&state, .key(key)).isEmpty)
        #expect(state.message?.kind == .error && state.marked.isEmpty)
        #expect(!Keymap.standard.bindings(on: .refunds, readOnly: true).contains { $0.writes })
    }

    @Test("the ledger's read-only setting followed: said when it changes what may be done; --read-only stays so when it is lifted")
    func ledgerReadOnlyFollowed() {
        var state = Fixture.state(screen: .refunds)
        #expect(reduce(&state, .ledgerReadOnly(true)).isEmpty)
        #expect(state.readOnly && state.message?.kind == .error)
        state.message = nil
        #expect(reduce(&state, .ledgerReadOnly(true)).isEmpty)
        #expect(state.message == nil, "an unchanged setting says nothing")
        _ = reduce(&state, .ledgerReadOnly(false))
        #expect(!state.readOnly && state.message?.kind == .info)

        var opened = Fixture.state(screen: .refunds)
        opened.openedReadOnly = true
        _ = reduce(&opened, .ledgerReadOnly(true))
        _ = reduce(&opened, .ledgerReadOnly(false))
        #expect(opened.readOnly && opened.message == nil, "opened --read-only: the ledger's setting changes nothing")
        _ = reduce(&opened, .key(.char("a")))
        #expect(opened.message?.text == "read-only: this ledger is opened for reading; triage is refused")
    }

    @Test("q goes back through history and quits on the top screen")
    func backAndQuit() {
        var state = Fixture.state(screen: .overview)
        #expect(reduce(&state, .key(.char("2"))) == [.loadCustomers(CustomerQuery(limit: 100), append: false)])
        #expect(state.screen == .customers && state.history == [Visit(screen: .overview)])
        _ = reduce(&state, .key(.char("q")))
        #expect(state.screen == .overview && !state.quitting)
        #expect(reduce(&state, .key(.char("q"))) == [.quit])
        #expect(state.quitting)
    }

    @Test("going back to a customer shows that customer, not the one opened since (from the list or by :customer)")
    func backToThatCustomer() throws {
        var state = Fixture.state(screen: .overview)
        let first = try #require(state.customer)
        var other = first
        other.records.id = first.records.id + 1
        _ = reduce(&state, .key(.char("3")))
        #expect(state.screen == .customer && state.customer?.records.id == first.records.id)
        _ = reduce(&state, .key(.char("2")))
        _ = reduce(&state, .customerLoaded(other))
        #expect(state.screen == .customer && state.customer?.records.id == other.records.id)
        _ = reduce(&state, .key(.char("q")))
        #expect(state.screen == .customers)
        #expect(reduce(&state, .key(.char("q"))) == [.loadCustomer(first.records.id)])
        #expect(state.screen == .customer)
        _ = reduce(&state, .customerLoaded(first))
        #expect(state.history == [Visit(screen: .overview)], "arriving back is not a visit")
        // Another customer opened over the one shown: back shows the one before.
        #expect(runCommandLine(&state, "customer C\(other.records.id)") == [.openCustomer(query: "C\(other.records.id)")])
        _ = reduce(&state, .customerLoaded(other))
        #expect(state.history.last == Visit(screen: .customer, customerId: first.records.id))
        #expect(reduce(&state, .key(.char("q"))) == [.loadCustomer(first.records.id)])
        #expect(state.customer?.records.id == other.records.id, "the one shown stays until that one arrives")
        _ = reduce(&state, .customerLoaded(first))
        #expect(state.screen == .customer && state.customer?.records.id == first.records.id)
        #expect(state.history == [Visit(screen: .overview)])
        // A refresh that follows a merge to another customer is not a visit.
        _ = reduce(&state, .customerLoaded(other))
        #expect(state.history == [Visit(screen: .overview)])
        // A screen's key going back to a customer the trail holds shows that one.
        _ = reduce(&state, .key(.char("2")))
        _ = reduce(&state, .customerLoaded(first))
        #expect(state.history.map(\.screen) == [.overview, .customer, .customers])
        _ = reduce(&state, .key(.char("2")))
        #expect(state.screen == .customers && state.history.map(\.screen) == [.overview, .customer])
        // (It shows the customer open now: the key names the screen, q the visit.)
        #expect(reduce(&state, .key(.char("3"))) == [.loadCustomer(first.records.id)])
        #expect(state.screen == .customer && state.history == [Visit(screen: .overview)])
        // Going back to a customer that cannot be read: the one shown stays, and is what a refresh reads.
        _ = runCommandLine(&state, "customer C\(other.records.id)")
        _ = reduce(&state, .customerLoaded(other))
        #expect(reduce(&state, .key(.char("q"))) == [.loadCustomer(first.records.id)])
        _ = reduce(&state, .failed("database is locked", unavailable: false))
        #expect(reduce(&state, .ledgerChanged) == [.loadCustomer(other.records.id)])
        #expect(reduce(&state, .recovered(now: nil)) == [.loadCustomer(other.records.id)])
    }

    @Test("the customer filter takes the quotes off a pasted id")
    func customerFilterQuotes() {
        var state = Fixture.state(screen: .customers)
        _ = reduce(&state, .key(.char("/")))
        for c in " \u{201C}150000000008003\u{201D} " { _ = reduce(&state, .key(.char(c))) }
        _ = reduce(&state, .key(.enter))
        #expect(state.customerQuery.filter == "150000000008003")
    }

    @Test("a : command cut to a start no other shares runs; one several share says which they are")
    func commandPrefixes() {
        var state = Fixture.state(screen: .overview)
        _ = runCommandLine(&state, "ref")
        #expect(state.screen == .refunds)
        _ = runCommandLine(&state, "imp")
        #expect(state.screen == .imports)
        _ = runCommandLine(&state, "e")
        #expect(state.screen == .imports && state.message?.text == ":e could be :env or :export")
        _ = runCommandLine(&state, "fl")
        #expect(state.screen == .refunds, "the start of another name")
        // Of two that share a start, the one that takes an id when one is given, the other when not.
        #expect(runCommandLine(&state, "cust 5002") == [.openCustomer(query: "5002")])
        _ = runCommandLine(&state, "cu")
        #expect(state.screen == .customers)
        _ = runCommandLine(&state, "nosuch")
        #expect(state.message?.text.hasPrefix("unknown command :nosuch") == true)
        #expect(runCommandLine(&state, "c") == [], ":c alone is :customer without an id")
        #expect(state.message?.text.hasPrefix(":customer takes an id") == true)
    }

    @Test("Enter on a flag opens its customer at what it is about; on a spike, its product's flags; on a source, says why nothing")
    func enterOnFlagsAndSources() throws {
        var state = Fixture.state(screen: .refunds)
        let detail = try #require(state.customer)
        state.customer = nil
        state.customerView = nil
        #expect(reduce(&state, .key(.enter)) == [.loadCustomer(42)])
        _ = reduce(&state, .customerLoaded(detail))
        let timeline = try #require(state.customerView?.timeline)
        let selected = try #require(timeline[safe: state.customerPositions[1].selected])
        #expect(selected.transactionId == "2004" && selected.kind == .refunded, "\(selected)")
        #expect(state.customerPositions[1].selected < timeline.count - 1, "not simply the newest event")

        // With that customer open already, and its timeline moved: Enter still shows what the flag is about.
        _ = reduce(&state, .key(.char("G")))
        _ = reduce(&state, .key(.char("5")))
        #expect(reduce(&state, .key(.enter)) == [.loadCustomer(42)])
        _ = reduce(&state, .customerLoaded(detail))
        #expect(state.customerView?.timeline[safe: state.customerPositions[1].selected]?.kind == .refunded)
        // A failed open forgets what it was to show.
        _ = reduce(&state, .key(.char("5")))
        _ = reduce(&state, .key(.enter))
        _ = reduce(&state, .failed("timeout", unavailable: false))
        #expect(state.focusFlag == nil)

        var queue = Fixture.state(screen: .refunds)
        let spike = try #require(Fixture.overview.spikes.first)
        _ = reduce(&queue, .flagsLoaded([spike], next: nil, append: false))
        let effects = reduce(&queue, .key(.enter))
        #expect(queue.flagProduct == "pro.monthly" && queue.screen == .refunds)
        #expect(effects == [.loadFlags(FlagQuery(status: .open, productId: "pro.monthly", limit: 200), append: false)])

        // The spike again, in its own product's queue: says where the queue is.
        _ = reduce(&queue, .flagsLoaded([spike], next: nil, append: false))
        _ = reduce(&queue, .key(.enter))
        #expect(queue.message?.text == "these are the flags of pro.monthly already; 5 shows the whole queue")
        // A flag that names no customer and is no spike (an unlinked consumption request) opens nothing, and says so.
        var unlinked = Fixture.flags[2]
        unlinked.customerId = nil
        _ = reduce(&queue, .flagsLoaded([unlinked], next: nil, append: false))
        #expect(reduce(&queue, .key(.enter)).isEmpty)
        #expect(queue.message?.text == "consumption-request:77 names no customer: nothing to open")

        // Enter on the overview's pending consumption request opens its customer on that request too.
        var overview = Fixture.state(screen: .overview)
        overview.overviewPane = 2
        #expect(reduce(&overview, .key(.enter)) == [.loadCustomer(7)])
        #expect(overview.focusFlag?.transactionId == "77")

        var imports = Fixture.state(screen: .imports)
        #expect(reduce(&imports, .key(.enter)).isEmpty)
        #expect(imports.message?.text.hasPrefix("a source opens nothing more") == true)
    }

    @Test("a screen's key goes back to it when the trail holds it, so q does not walk through every screen visited")
    func screenKeysTrail() {
        var state = Fixture.state(screen: .overview)
        for key in ["2", "5", "6", "5", "6", "2"] { _ = reduce(&state, .key(.char(Character(key)))) }
        #expect(state.screen == .customers && state.history == [Visit(screen: .overview)])
        _ = reduce(&state, .key(.char("5")))
        _ = reduce(&state, .key(.char("1")))
        #expect(state.screen == .overview && state.history.isEmpty)
        #expect(reduce(&state, .key(.char("q"))) == [.quit])
    }

    @Test("a resolve of an acknowledged flag is undone back to acknowledged; a reopen says 'reopened'; old undo notes still read as undos")
    func undoAfterAcknowledge() {
        var state = Fixture.state(screen: .refunds)
        _ = reduce(&state, .triaged([TriageChange(flagId: "quick-refund:2004", from: .acknowledged, to: .resolved)], undo: false))
        #expect(
            reduce(&state, .key(.char("u"))) == [
                .triage(flagIds: ["quick-refund:2004"], action: .ack, note: "undo of resolve", undo: true, expecting: .resolved)
            ])
        _ = reduce(&state, .triaged([TriageChange(flagId: "app-issue:2004", from: .resolved, to: .open)], undo: false))
        #expect(state.message?.text == "1 flag reopened (u undoes)")
        #expect(isUndoNote("undo of reopen") && isUndoNote("undo of resolved") && !isUndoNote("undo of everything"))
    }

    @Test("a key that works on other screens says where, rather than doing nothing; / finds a customer there; Esc's help says what it does here")
    func keyElsewhere() {
        var state = Fixture.state(screen: .overview)
        // / where there is nothing to filter finds a customer: what is typed after it is text, never keys.
        #expect(reduce(&state, .key(.char("/"))).isEmpty)
        #expect(state.prompt?.kind == .command && state.prompt?.text == "customer ")
        #expect(state.message?.text == "nothing to filter on Overview: / finds a customer here (Esc cancels)")
        for c in "bug" { #expect(reduce(&state, .key(.char(c))).isEmpty) }
        #expect(state.prompt?.text == "customer bug" && state.undoStack.isEmpty)
        // Its line goes with it, whether Esc cancels it or Enter runs it (the customer screen kept it).
        _ = reduce(&state, .key(.escape))
        #expect(state.prompt == nil && state.message == nil)
        _ = reduce(&state, .key(.char("/")))
        for c in "C1" { _ = reduce(&state, .key(.char(c))) }
        #expect(reduce(&state, .key(.enter)) == [.openCustomer(query: "C1")])
        #expect(state.message == nil, "\(String(describing: state.message))")
        // A line said meanwhile, about something else, stays.
        _ = reduce(&state, .key(.char("/")))
        state.message = StatusMessage("saved")
        _ = reduce(&state, .key(.escape))
        #expect(state.message?.text == "saved")
        state.screen = .imports
        _ = reduce(&state, .key(.char("A")))
        #expect(state.message?.text.hasPrefix("A (customers subscribed at the instant) works on Customers; not on Imports") == true)
        // A key bound on several rows names every screen it works on (t works on the Refunds too).
        _ = reduce(&state, .key(.char("t")))
        #expect(state.message?.text == "t (time travel: as of when) works on Overview, Customers, Customer, Refunds; not on Imports")
        // ? lists / where it finds a customer.
        #expect(state.keymap.bindings(on: .imports, readOnly: false).contains { $0.keys.contains(.char("/")) && $0.command == .findCustomer })
        #expect(state.keymap.bindings(on: .imports, readOnly: false).first { $0.keys.contains(.escape) }?.help == "back")
        #expect(state.keymap.bindings(on: .refunds, readOnly: false).first { $0.keys.contains(.escape) }?.help == "clear filter, or back")
    }

    @Test("a triage key on a customer, which moves every flag of theirs it can, says which flags by their rules")
    func customerTriageSaysWhich() {
        var state = Fixture.state(screen: .customer)
        _ = reduce(&state, .key(.char("r")))
        #expect(state.prompt?.label == "resolve 2 flags (quick-refund, app-issue), note: ")
        state.prompt = nil
        let ids = ["quick-refund:2004", "app-issue:2004"]
        #expect(reduce(&state, .key(.char("a"))) == [.triage(flagIds: ids, action: .ack, note: nil, undo: false, expecting: .open)])
        _ = reduce(&state, .triaged(ids.map { TriageChange(flagId: $0, from: .open, to: .acknowledged) }, undo: false))
        #expect(state.message?.text == "2 flags (quick-refund, app-issue) acknowledged (u undoes)")
        // Over files loaded in memory, the message says the triage goes with the dashboard; the header says so too.
        state.inMemory = true
        _ = reduce(&state, .triaged(ids.map { TriageChange(flagId: $0, from: .acknowledged, to: .resolved) }, undo: false))
        #expect(state.message?.text == "2 flags (quick-refund, app-issue) resolved (u undoes; in memory: gone when you quit, a --ledger keeps triage)")
        var buffer = ScreenBuffer(width: 0, height: 0)
        render(state, theme: .builtin, into: &buffer)
        #expect(buffer.line(0).contains("IN MEMORY"), "\(buffer.line(0))")
    }

    @Test("the customer's flags pane: a Tab stop when they have flags; a, r and o act on its selected flag; Enter shows the flag's event")
    func customerFlagsPane() throws {
        var state = Fixture.state(screen: .customer)
        #expect(state.customerPane == 1)
        _ = reduce(&state, .key(.tab))
        _ = reduce(&state, .key(.tab))
        #expect(state.customerPane == 3)
        _ = reduce(&state, .key(.tab))
        #expect(state.customerPane == 0)
        _ = reduce(&state, .key(.backTab))
        #expect(state.customerPane == 3)
        // Listed in the order given (both open, raised at the same instant): the second selected.
        _ = reduce(&state, .key(.char("j")))
        #expect(selectedId(state) == "app-issue:2004")
        #expect(reduce(&state, .key(.char("a"))) == [.triage(flagIds: ["app-issue:2004"], action: .ack, note: nil, undo: false, expecting: .open)])
        _ = reduce(&state, .key(.char("r")))
        #expect(state.prompt?.label == "resolve 1 flag (app-issue), note: ")
        state.prompt = nil

        // Resolved, it goes below the open one; the refresh keeps it selected, and `a` does not take it back into work.
        var flags = try #require(state.customer?.flags)
        flags[1].status = .resolved
        _ = reduce(&state, .triaged([TriageChange(flagId: "app-issue:2004", from: .open, to: .resolved)], undo: false))
        _ = reduce(&state, .customerLoaded(CustomerDetail(records: Fixture.records, flags: flags.reversed(), log: [])))
        #expect(state.customer?.flags.map(\.id) == ["quick-refund:2004", "app-issue:2004"])
        #expect(state.customerPane == 3 && selectedId(state) == "app-issue:2004")
        #expect(reduce(&state, .key(.char("a"))).isEmpty)
        #expect(state.message?.text == "app-issue:2004 is resolved already (o reopens a resolved flag)")
        #expect(reduce(&state, .key(.char("o"))) == [.triage(flagIds: ["app-issue:2004"], action: .reopen, note: nil, undo: false)])
        // Outside the pane the keys act on every flag of the customer they move.
        state.customerPane = 0
        #expect(reduce(&state, .key(.char("a"))) == [.triage(flagIds: ["quick-refund:2004"], action: .ack, note: nil, undo: false, expecting: .open)])

        // Enter: the timeline on the event the flag is about, the one at or before it was raised, not the last of its
        // transaction (a flag raised an hour after 2004's purchase is about the purchase, not the later refund).
        flags[0].at = Fixture.at(-28).adding(milliseconds: 3_600_000)
        _ = reduce(&state, .customerLoaded(CustomerDetail(records: Fixture.records, flags: [flags[0]], log: [])))
        state.customerPane = 3
        state.customerPositions[3] = ListPosition()
        #expect(reduce(&state, .key(.enter)).isEmpty)
        let event = try #require(state.customerView?.timeline[safe: state.customerPositions[1].selected])
        #expect(state.customerPane == 1 && event.transactionId == "2004" && event.kind != .refunded, "\(event)")

        // Under time travel to before the flag was raised, Enter says so instead of finding no event.
        _ = reduce(&state, .instantParsed(Fixture.at(-29)))
        state.customerPane = 3
        #expect(reduce(&state, .key(.enter)).isEmpty)
        #expect(state.message?.text == "quick-refund:2004 was raised 2025-02-01 09:00, after the instant shown: t now shows its event")
        _ = reduce(&state, .instantParsed(nil))

        // A customer without flags: no flags pane to Tab to.
        _ = reduce(&state, .customerLoaded(CustomerDetail(records: Fixture.records, flags: [], log: [])))
        #expect(state.customerPane == 1)
        for _ in 0..<3 { _ = reduce(&state, .key(.tab)) }
        #expect(state.customerPane == 1)
    }

    @Test("an undo of flags moved from two statuses says every flag it brought back, not the last write's")
    func undoSaysAll() {
        var state = Fixture.state(screen: .customer)
        state.undoStack = [[
            TriageChange(flagId: "quick-refund:2004", from: .resolved, to: .open, customerId: 7),
            TriageChange(flagId: "app-issue:2004", from: .acknowledged, to: .open),
        ]]
        let effects = reduce(&state, .key(.char("u")))
        #expect(effects.count == 2, "one write per status the flags go back to")
        _ = reduce(&state, .triaged([TriageChange(flagId: "app-issue:2004", from: .open, to: .acknowledged)], undo: true))
        _ = reduce(&state, .triaged([TriageChange(flagId: "quick-refund:2004", from: .open, to: .resolved)], undo: true))
        // The customer the change knew is named (an undo acts wherever you are); one not known is not guessed.
        #expect(state.message?.text == "undone: app-issue:2004 back to acknowledged; undone: quick-refund:2004 of C7 back to resolved")
        #expect(state.undoStack.isEmpty)
    }

    @Test("Enter on a customer row loads that customer")
    func openCustomer() {
        var state = Fixture.state(screen: .customers)
        _ = reduce(&state, .key(.char("j")))
        #expect(reduce(&state, .key(.enter)) == [.loadCustomer(43)])
    }

    @Test(":customer ID resolves any id kind through the ledger", arguments: ["1000", "C42", "7d3b9a0e-0000-4000-8000-000000000042"])
    func commandCustomer(id: String) {
        var state = Fixture.state()
        _ = reduce(&state, .key(.char(":")))
        for c in "customer \(id)" { _ = reduce(&state, .key(.char(c))) }
        #expect(reduce(&state, .key(.enter)) == [.openCustomer(query: id)])
        #expect(state.prompt == nil)
    }

    @Test("command completion is fuzzy and Tab takes the best")
    func completion() {
        var state = Fixture.state()
        _ = reduce(&state, .key(.char(":")))
        _ = reduce(&state, .key(.char("r")))
        _ = reduce(&state, .key(.char("f")))
        #expect(state.prompt?.completions.first == "refunds")
        _ = reduce(&state, .key(.tab))
        #expect(state.prompt?.text == "refunds")
        _ = reduce(&state, .key(.escape))
        _ = reduce(&state, .key(.char(":")))
        for c in "theme n" { _ = reduce(&state, .key(.char(c))) }
        #expect(state.prompt?.completions == ["theme nord"])
        #expect(fuzzyMatch("cst", "customers") && !fuzzyMatch("xyz", "customers"))

        // A name the typed text starts ranks before one it only matches: n is nord before high-contrast.
        state.themeNames = ["default", "high-contrast", "nord"]
        _ = reduce(&state, .key(.escape))
        _ = reduce(&state, .key(.char(":")))
        for c in "theme n" { _ = reduce(&state, .key(.char(c))) }
        #expect(state.prompt?.completions == ["theme nord", "theme high-contrast"])
        // Tab completes the command, lists its words, then takes them one after the other.
        _ = reduce(&state, .key(.escape))
        _ = reduce(&state, .key(.char(":")))
        for c in "th" { _ = reduce(&state, .key(.char(c))) }
        var typed: [String] = []
        for _ in 0..<5 {
            _ = reduce(&state, .key(.tab))
            typed.append(state.prompt?.text ?? "")
        }
        #expect(typed == ["theme ", "theme default", "theme high-contrast", "theme nord", "theme default"])
        // A space typed after Tab's own is no part of the word; a theme's start no other shares will do.
        _ = reduce(&state, .key(.escape))
        _ = reduce(&state, .key(.char(":")))
        for c in "theme  n" { _ = reduce(&state, .key(.char(c))) }
        #expect(state.prompt?.completions.first == "theme nord")
        #expect(runCommandLine(&state, "theme  d") == [.setTheme("default")])
        #expect(runCommandLine(&state, "theme zz") == [.setTheme("zz")], "no theme starts so: the loader says which exist")
        // A command whose words cannot be listed (an id) keeps the commands: Tab goes on to the next.
        _ = reduce(&state, .key(.escape))
        _ = reduce(&state, .key(.char(":")))
        _ = reduce(&state, .key(.tab))
        _ = reduce(&state, .key(.tab))
        #expect(state.prompt?.text == "customers")
        _ = reduce(&state, .key(.escape))
        _ = reduce(&state, .key(.char(":")))
        for c in "exp" { _ = reduce(&state, .key(.char(c))) }
        _ = reduce(&state, .key(.tab))
        _ = reduce(&state, .key(.tab))
        #expect(state.prompt?.text == "export csv ")
    }

    @Test("t asks for an instant; a parsed instant recomputes the customer's entitlements")
    func timeTravel() {
        var state = Fixture.state(screen: .customer)
        #expect(state.customerView?.entitlements.first { $0.name == "group G1" }?.state == .revoked)
        _ = reduce(&state, .key(.char("t")))
        for c in "2025-01-01" { _ = reduce(&state, .key(.char(c))) }
        #expect(reduce(&state, .key(.enter)) == [.parseInstant("2025-01-01")])
        _ = reduce(&state, .instantParsed(Fixture.at(-45)))
        #expect(state.asOf == Fixture.at(-45))
        #expect(state.customerView?.entitlements.first { $0.name == "group G1" }?.state == .active)
        #expect(state.customerView?.timeline.allSatisfy { $0.at <= Fixture.at(-45) } == true)
        _ = reduce(&state, .instantParsed(nil))
        #expect(state.asOf == nil && state.customerView?.entitlements.first { $0.name == "group G1" }?.state == .revoked)
    }

    @Test("time travel says what is not of the instant: the customer list's figures are now's; an empty queue, raised by then")
    func timeTravelSaysNow() {
        var customers = Fixture.state(width: 120, height: 30, screen: .customers)
        customers.asOf = Fixture.at(-45)
        var buffer = ScreenBuffer(width: 0, height: 0)
        render(customers, theme: .builtin, into: &buffer)
        #expect(buffer.text.contains("access as of then, the rest now"), "\(buffer.text)")
        // Whole at 80 columns too (a longer note was cut to "other figure…" there).
        customers.width = 80
        customers.height = 24
        render(customers, theme: .builtin, into: &buffer)
        #expect(buffer.line(1).contains("access as of then, the rest now"), "\(buffer.line(1))")
        var queue = Fixture.state(width: 120, height: 30, screen: .refunds)
        queue.asOf = Fixture.at(-45)
        queue.flags = []
        queue.flagStatus = .open
        render(queue, theme: .builtin, into: &buffer)
        #expect(buffer.text.contains("no flags raised by 2025-01-15 08:00 are open now (f changes the status; t, then now, shows every flag)"), "\(buffer.text)")
        queue.flagStatus = nil
        render(queue, theme: .builtin, into: &buffer)
        #expect(buffer.text.contains("no flags raised by 2025-01-15 08:00 (t, then now, shows every flag)"), "\(buffer.text)")
    }

    @Test("time travel: the transactions pane lists what was bought by the instant, says how many later, keeps its row")
    func timeTravelTransactions() {
        var state = Fixture.state(width: 100, height: 30, screen: .customer)
        state.customerPane = 2
        // Newest first: 2006, 2005, 2004, 2003, 2002, 2001; the selection on 2003 (bought day -58).
        for _ in 0..<3 { _ = reduce(&state, .key(.down)) }
        #expect(state.customerView?.transactions[state.customerPositions[2].selected].transactionId == "2003")
        _ = reduce(&state, .instantParsed(Fixture.at(-45)))
        #expect(state.customerView?.transactions.map(\.transactionId) == ["2003", "2002", "2001"])
        #expect(state.customerView?.transactionsLater == 3)
        #expect(state.customerView?.transactions[state.customerPositions[2].selected].transactionId == "2003")
        var buffer = ScreenBuffer(width: 0, height: 0)
        render(state, theme: .builtin, into: &buffer)
        #expect(buffer.text.contains("Transactions (newest first)  3 bought later not listed"), "\(buffer.text)")
        #expect(!buffer.text.contains("2004"), "\(buffer.text)")
        // Enter opens the row shown, not the one at its index among them all.
        #expect(reduce(&state, .key(.enter)).contains(.loadTransaction("2003")))
        _ = reduce(&state, .instantParsed(nil))
        #expect(state.customerView?.transactions.count == 6 && state.customerView?.transactionsLater == 0)
        #expect(state.customerView?.transactions[state.customerPositions[2].selected].transactionId == "2003")
    }

    @Test("a Tab typed in a resolve note is the space it stands for, not dropped")
    func tabInNote() {
        var state = Fixture.state(screen: .refunds)
        _ = reduce(&state, .flagsLoaded(Fixture.flags, next: nil, append: false))
        _ = reduce(&state, .key(.char("r")))
        for key in [Key.char("t"), .char("a"), .char("b"), .tab, .char("h")] { _ = reduce(&state, .key(key)) }
        #expect(state.prompt?.text == "tab h")
        #expect(reduce(&state, .key(.enter)).contains { effect in
            if case .triage(_, .resolve, let note, _, _) = effect { return note == "tab h" }
            return false
        })
    }

    @Test("in a terminal too small to draw in, keys do nothing unseen; the quitting keys still quit")
    func tooSmallIgnoresKeys() {
        var state = Fixture.state(width: 40, height: 10, screen: .overview)
        for key in [Key.char("2"), .char("5"), .enter, .char(":"), .char("t"), .char("/")] {
            #expect(reduce(&state, .key(key)).isEmpty, "\(key)")
        }
        #expect(state.screen == .overview && state.prompt == nil)
        // A prompt opened before the terminal shrank keeps its text: Q and q are letters there, only Ctrl-C quits.
        var prompting = Fixture.state(width: 100, height: 30, screen: .overview)
        _ = reduce(&prompting, .key(.char(":")))
        _ = reduce(&prompting, .resize(width: 40, height: 10))
        #expect(reduce(&prompting, .key(.char("Q"))).isEmpty && reduce(&prompting, .key(.char("q"))).isEmpty && prompting.prompt != nil)
        #expect(reduce(&prompting, .key(.ctrl("c"))) == [.quit])
        #expect(reduce(&state, .key(.char("q"))).isEmpty)
        #expect(reduce(&state, .key(.char("Q"))) == [.quit])
    }

    @Test("time travel on the refund queue reads the flags raised by then; back to now, all of them")
    func timeTravelQueue() {
        var state = Fixture.state(screen: .overview)
        _ = reduce(&state, .key(.char("5")))
        let effects = reduce(&state, .instantParsed(Fixture.at(-45)))
        #expect(effects.contains(.loadFlags(FlagQuery(status: .open, limit: 200, until: Fixture.at(-45)), append: false)), "\(effects)")
        #expect(reduce(&state, .instantParsed(nil)).contains(.loadFlags(FlagQuery(status: .open, limit: 200), append: false)))
    }

    @Test("on a customer, a, r and o act on the flags each would move: open ones, unresolved ones, ones not open")
    func customerTriageTargets() {
        var state = Fixture.state(screen: .customer)
        var flags = Array(Fixture.flags.prefix(2))
        flags.append(flags[0])
        flags[0].status = .open
        flags[1].status = .acknowledged
        flags[2].id = "resolved:2004"
        flags[2].status = .resolved
        _ = reduce(&state, .customerLoaded(CustomerDetail(records: state.customer!.records, flags: flags, log: [])))
        #expect(reduce(&state, .key(.char("a"))) == [.triage(flagIds: [flags[0].id], action: .ack, note: nil, undo: false, expecting: .open)])
        #expect(
            reduce(&state, .key(.char("o"))) == [.triage(flagIds: [flags[1].id, "resolved:2004"], action: .reopen, note: nil, undo: false)])
        #expect(reduce(&state, .key(.char("r"))).isEmpty)
        for c in "done" { _ = reduce(&state, .key(.char(c))) }
        #expect(
            reduce(&state, .key(.enter)) == [.triage(flagIds: [flags[0].id, flags[1].id], action: .resolve, note: "done", undo: false)])
    }

    @Test("resolve asks for a note and triages the marked flags; u undoes the last change by appending")
    func triage() {
        var state = Fixture.state(screen: .refunds)
        _ = reduce(&state, .key(.char(" ")))
        _ = reduce(&state, .key(.char(" ")))
        #expect(state.marked == ["quick-refund:2004", "app-issue:2004"])
        #expect(reduce(&state, .key(.char("r"))).isEmpty)
        for c in "customer confirmed" { _ = reduce(&state, .key(.char(c))) }
        #expect(
            reduce(&state, .key(.enter)) == [
                .triage(flagIds: ["quick-refund:2004", "app-issue:2004"], action: .resolve, note: "customer confirmed", undo: false)
            ])
        // The bulk action resolved both: one undo covers both.
        let both = [
            TriageChange(flagId: "quick-refund:2004", from: .open, to: .resolved),
            TriageChange(flagId: "app-issue:2004", from: .open, to: .resolved),
        ]
        let effects = reduce(&state, .triaged(both, undo: false))
        #expect(effects == [.loadFlags(FlagQuery(status: .open, limit: 200), append: false)])
        #expect(state.marked.isEmpty)
        let undo = Effect.triage(
            flagIds: ["quick-refund:2004", "app-issue:2004"], action: .reopen, note: "undo of resolve", undo: true, expecting: .resolved)
        #expect(reduce(&state, .key(.char("u"))) == [undo])
        // Until the compensating entries are written the action stays undoable: a failed write can be retried.
        _ = reduce(&state, .failed("ledger unavailable", unavailable: false))
        #expect(reduce(&state, .key(.char("u"))) == [undo])
        // Someone acknowledged one of them meanwhile: that one is left as they set it, and the message says so.
        _ = reduce(
            &state,
            .triaged(
                [
                    TriageChange(flagId: "quick-refund:2004", from: .resolved, to: .open),
                    TriageChange(flagId: "app-issue:2004", from: .acknowledged, to: .acknowledged),
                ], undo: true))
        #expect(state.undoStack.isEmpty)
        #expect(state.message?.text == "undone: quick-refund:2004 back to open; left as someone else set them since: app-issue:2004 (acknowledged)")
        #expect(state.message?.kind == .error)
        #expect(reduce(&state, .key(.char("u"))).isEmpty)
        #expect(state.message?.kind == .error)
    }

    @Test("a triage of a flag someone else moved there first says nothing was written for it, and undoes only the rest")
    func triageAlreadyThere() {
        var state = Fixture.state(screen: .refunds)
        _ = reduce(
            &state,
            .triaged(
                [
                    TriageChange(flagId: "quick-refund:2004", from: .open, to: .resolved),
                    TriageChange(flagId: "app-issue:2004", from: .resolved, to: .resolved),
                ], undo: false))
        #expect(
            state.message
                == StatusMessage(
                    "1 flag resolved (u undoes); nothing written: someone else had resolved it since you read it (app-issue:2004)",
                    kind: .error))
        #expect(state.undoStack == [[TriageChange(flagId: "quick-refund:2004", from: .open, to: .resolved)]])
        _ = reduce(
            &state,
            .triaged(
                [
                    TriageChange(flagId: "quick-refund:2004", from: .acknowledged, to: .acknowledged, by: "bob"),
                    TriageChange(flagId: "app-issue:2004", from: .acknowledged, to: .acknowledged, by: "bob"),
                ], undo: false))
        #expect(state.message?.text == "nothing written: bob had acknowledged 2 of them since you read it (quick-refund:2004, …)")
        #expect(state.undoStack.count == 1)
    }

    @Test("marked flags a refresh no longer lists are unmarked saying so; a mark below the window the refresh reads is kept")
    func marksAcrossRefresh() {
        var state = Fixture.state(screen: .refunds)
        let flags = (0..<300).map { i in
            RefundFlag(
                id: "quick-refund:\(i)", rule: "quick-refund", severity: .high, customerId: 1, transactionId: "\(i)", productId: "p",
                amount: 100, currency: "USD", at: Timestamp(millisecondsSince1970: 1_000_000 - Int64(i)), detail: "d")
        }
        _ = reduce(&state, .flagsLoaded(flags, next: nil, append: false))
        state.marked = ["quick-refund:1", "quick-refund:2", "quick-refund:250"]
        // The refresh reads as far as the last mark (250), not only the selection's window (its first 200).
        guard case .loadFlags(let query, _)? = reloadEffects(state, keepSelection: true).first else {
            Issue.record("no reload of the queue")
            return
        }
        #expect(query.limit >= 251, "\(query.limit)")
        // Someone else acknowledged quick-refund:2 (the change signal moved): the open queue no longer lists it.
        _ = reduce(&state, .ledgerChanged)
        _ = reduce(&state, .flagsLoaded(flags.filter { $0.id != "quick-refund:2" }, next: nil, append: false))
        #expect(state.marked == ["quick-refund:1", "quick-refund:250"])
        #expect(state.message == StatusMessage("1 marked flag left the list (moved since you marked it): unmarked", kind: .error))
        // A reload the user's own keys asked for (time travel to before a marked flag) is not blamed on anyone.
        state.message = nil
        _ = reduce(&state, .flagsLoaded(flags.filter { $0.id != "quick-refund:1" }, next: nil, append: false))
        #expect(state.marked == ["quick-refund:250"] && state.message == nil, "\(String(describing: state.message))")
    }

    @Test("while a triage write is on its way, triage keys are refused saying so and the others go on; it answers, and they are back")
    func triageWhileSaving() {
        var state = Fixture.state(screen: .refunds)
        _ = reduce(&state, .flagsLoaded(Fixture.flags, next: nil, append: false))
        #expect(reduce(&state, .key(.char("a"))).count == 1)
        _ = reduce(&state, .saving("acknowledge of quick-refund:2004"))
        #expect(state.message == StatusMessage("saving: acknowledge of quick-refund:2004… (the ledger is busy; keys go on)"))
        let refused = StatusMessage(
            "still saving: acknowledge of quick-refund:2004; triage keys wait for it (the others work)", kind: .error)
        for key in ["a", "r", "o", "u"] {
            state.message = nil
            #expect(reduce(&state, .key(.char(Character(key)))).isEmpty, "\(key)")
            #expect(state.message == refused, "\(key)")
            #expect(state.prompt == nil)
        }
        // Moving and marking go on; the mark made meanwhile outlives the write's answer.
        _ = reduce(&state, .key(.char("j")))
        _ = reduce(&state, .key(.char(" ")))
        #expect(state.marked == ["app-issue:2004"])
        _ = reduce(&state, .triaged([TriageChange(flagId: "quick-refund:2004", from: .open, to: .acknowledged)], undo: false))
        _ = reduce(&state, .saving(nil))
        #expect(state.saving == nil && state.marked == ["app-issue:2004"])
        #expect(state.message == StatusMessage("1 flag acknowledged (u undoes)"))
        #expect(reduce(&state, .key(.char("u"))).count == 1)
    }

    @Test("a failed write gives back the marks it took: a single flag's, and a marked flag it skipped; an undo takes none")
    func failedWriteKeepsMarks() {
        var state = Fixture.state(screen: .refunds)
        var flags = Fixture.flags
        flags[1].status = .acknowledged
        _ = reduce(&state, .flagsLoaded(flags, next: nil, append: false))
        state.marked = [flags[0].id, flags[1].id]
        #expect(reduce(&state, .key(.char("a"))) == [.triage(flagIds: [flags[0].id], action: .ack, note: nil, undo: false, expecting: .open)])
        #expect(state.marked.isEmpty)
        // (The reason without the ledger's URL, which the header names: at 80 columns it took the line.)
        state.ledgerName = "postgres://desk@db.internal/ledger"
        _ = reduce(
            &state,
            .triageFailed(
                "cannot reach the PostgreSQL ledger at postgres://desk@db.internal/ledger: no answer within 5 s", action: .ack,
                flagIds: [flags[0].id], note: nil, undo: false))
        #expect(state.message?.text.hasPrefix("not saved: cannot reach the PostgreSQL ledger: no answer within 5 s (") == true, "\(String(describing: state.message))")
        _ = reduce(&state, .saving(nil))
        #expect(state.marked == [flags[0].id, flags[1].id])
        // An undo leaves the marks where they are.
        state.undoStack = [[TriageChange(flagId: flags[2].id, from: .open, to: .acknowledged)]]
        #expect(reduce(&state, .key(.char("u"))).count == 1)
        #expect(state.marked == [flags[0].id, flags[1].id])
    }

    @Test("a bulk resolve cut part-way says how many were saved, keeps the rest marked, and offers its note to those flags only")
    func triageCutPartWay() {
        var state = Fixture.state(screen: .refunds)
        _ = reduce(&state, .flagsLoaded(Fixture.flags, next: nil, append: false))
        // The three marked, resolved with a note: the write takes the marks.
        state.marked = ["quick-refund:2004", "app-issue:2004", "consumption-request:77"]
        _ = reduce(&state, .key(.char("r")))
        for c in "bank confirmed" { _ = reduce(&state, .key(.char(c))) }
        #expect(reduce(&state, .key(.enter)).count == 1)
        #expect(state.marked.isEmpty && state.triageMarks.count == 3)
        _ = reduce(&state, .triaged([TriageChange(flagId: "quick-refund:2004", from: .open, to: .resolved)], undo: false))
        _ = reduce(
            &state,
            .triageFailed(
                "cannot reach the ledger", action: .resolve, flagIds: ["app-issue:2004", "consumption-request:77"], note: "bank confirmed",
                undo: false, saved: 1))
        #expect(
            state.message
                == StatusMessage(
                    "not saved: cannot reach the ledger (resolve of 2 flags; 1 other saved before it failed; still marked; r offers your note again)",
                    kind: .error, urgent: true))
        #expect(state.marked == ["app-issue:2004", "consumption-request:77"])
        #expect(state.undoStack.count == 1, "the flag saved is undoable")
        // r on the flags still marked offers the note again; on another flag it does not.
        _ = reduce(&state, .key(.char("r")))
        #expect(state.prompt?.text == "bank confirmed" && state.prompt?.offered == true)
        _ = reduce(&state, .key(.escape))
        state.marked = []
        state.flagList.selected = 0
        _ = reduce(&state, .key(.char("r")))
        #expect(state.prompt?.text == "")
    }

    @Test("a new minute moves now and reads the screen again, keeping its selection; time travel pins the instant")
    func clockAdvanced() {
        var state = Fixture.state(screen: .customers)
        _ = reduce(&state, .key(.char("j")))
        state.customerQuery.activeAt = state.now
        let later = state.now.adding(milliseconds: 60_000)
        var query = state.customerQuery
        query.activeAt = later
        query.limit = 100
        #expect(reduce(&state, .clockAdvanced(later)) == [.loadCustomers(query, append: false)])
        #expect(state.now == later && state.instant == later)
        #expect(state.customerQuery.activeAt == later, "\"covered now\" moves with now")
        #expect(state.customerList.selected == 1)
        state.asOf = Timestamp(millisecondsSince1970: 0)
        #expect(reduce(&state, .clockAdvanced(later.adding(milliseconds: 60_000))).isEmpty)
        #expect(state.now == later.adding(milliseconds: 60_000))
        #expect(state.instant == Timestamp(millisecondsSince1970: 0))
    }

    @Test("the ledger back after an outage that crossed a minute: now moves in the one read that follows; what failed meanwhile said")
    func recoveredAcrossMinute() throws {
        var state = Fixture.state(screen: .customers)
        state.customerQuery.activeAt = state.now
        _ = reduce(&state, .failed("connection refused", unavailable: true))
        // What is asked for meanwhile (Enter on a row, :customer) and cannot be read says so over the retrying line.
        _ = reduce(&state, .failed("cannot reach the ledger", unavailable: false))
        #expect(state.message == StatusMessage("not done (the ledger is unavailable; retrying): cannot reach the ledger", kind: .error, urgent: true))
        // Without the ledger's URL, which cut the reason off at 100 columns.
        state.ledgerName = "postgres://bo@:5432/desk?host=/run/pg"
        _ = reduce(&state, .failed("cannot reach the PostgreSQL ledger at postgres://bo@:5432/desk?host=/run/pg: no server is listening there", unavailable: false))
        #expect(state.message?.text == "not done (the ledger is unavailable; retrying): cannot reach the PostgreSQL ledger: no server is listening there")
        let later = state.now.adding(milliseconds: 120_000)
        var query = state.customerQuery
        query.activeAt = later
        query.limit = 100
        #expect(reduce(&state, .recovered(now: later)) == [.loadCustomers(query, append: false)])
        #expect(state.now == later && state.unavailable == nil)
        #expect(state.message?.text == "the ledger answers again: reloaded")
        // Within the same minute: the read is the same, now stays.
        #expect(reduce(&state, .recovered(now: nil)) == [.loadCustomers(query, append: false)])
        #expect(state.now == later)
        #expect(state.message?.text == "the ledger answers again: reloaded", "said once")
        // What was said before an outage is not said again when it ends.
        state.message = StatusMessage("sorted by last purchase")
        _ = reduce(&state, .failed("connection refused", unavailable: true))
        _ = reduce(&state, .recovered(now: nil))
        #expect(state.message?.text == "the ledger answers again: reloaded")
        // A triage that reached the server as it came back, before the poll saw it: its line is not replaced.
        _ = reduce(&state, .failed("connection refused", unavailable: true))
        let flag = try #require(state.flags.first)
        _ = reduce(&state, .triaged([TriageChange(flagId: flag.id, from: .open, to: .acknowledged)], undo: false))
        let confirmed = try #require(state.message?.text)
        #expect(confirmed.hasPrefix("1 flag acknowledged"), "\(confirmed)")
        _ = reduce(&state, .recovered(now: nil))
        #expect(state.message?.text == "\(confirmed); the ledger answers again: reloaded")
    }

    @Test("a triage key on the queue skips a flag shown in that status already, and says so when that is every one chosen")
    func triageSkipsShownStatus() {
        var state = Fixture.state(screen: .refunds)
        var flags = Fixture.flags
        flags[0].status = .resolved
        _ = reduce(&state, .flagsLoaded(flags, next: nil, append: false))
        #expect(reduce(&state, .key(.char("r"))).isEmpty)
        #expect(state.prompt == nil)
        #expect(state.message == StatusMessage("quick-refund:2004 is resolved already", kind: .error))
        _ = reduce(&state, .key(.char(" ")))
        _ = reduce(&state, .key(.char(" ")))
        #expect(state.marked == ["quick-refund:2004", "app-issue:2004"])
        _ = reduce(&state, .key(.char("r")))
        #expect(state.prompt?.kind == .note(flagIds: ["app-issue:2004"]))
        // A resolve says why: Enter on no note (or spaces) keeps the prompt and says so, writing nothing.
        for typed in ["", "  "] {
            for c in typed { _ = reduce(&state, .key(.char(c))) }
            #expect(reduce(&state, .key(.enter)).isEmpty)
            #expect(state.prompt?.kind == .note(flagIds: ["app-issue:2004"]) && state.saving == nil)
            #expect(state.message == StatusMessage("a resolve says why: type a note, then Enter (Esc cancels)", kind: .error))
        }
        // Esc takes the prompt's line with it (it stayed under the queue).
        _ = reduce(&state, .key(.escape))
        #expect(state.prompt == nil && state.message == nil)
        _ = reduce(&state, .key(.char("r")))
        for c in "dup" { _ = reduce(&state, .key(.char(c))) }
        // The one marked flag left out is counted when the others are done.
        #expect(reduce(&state, .key(.enter)).contains { effect in
            if case .triage(_, .resolve, let note, _, _) = effect { return note == "dup" }
            return false
        })
        _ = reduce(&state, .triaged([TriageChange(flagId: "app-issue:2004", from: .open, to: .resolved)], undo: false))
        #expect(state.message == StatusMessage("1 flag resolved (u undoes); 1 marked was resolved already"))
        // A resolved flag is reopened (o), not acknowledged back into work; a marked one is counted as left.
        _ = reduce(&state, .flagsLoaded(flags, next: nil, append: false))
        state.flagList = ListPosition()
        #expect(reduce(&state, .key(.char("a"))).isEmpty)
        #expect(state.message == StatusMessage("quick-refund:2004 is resolved already (o reopens a resolved flag)", kind: .error))
        _ = reduce(&state, .key(.char(" ")))
        _ = reduce(&state, .key(.char(" ")))
        #expect(reduce(&state, .key(.char("a"))) == [.triage(flagIds: ["app-issue:2004"], action: .ack, note: nil, undo: false, expecting: .open)])
        _ = reduce(&state, .triaged([TriageChange(flagId: "app-issue:2004", from: .open, to: .acknowledged)], undo: false))
        #expect(state.message == StatusMessage("1 flag acknowledged (u undoes); 1 marked was resolved already"))
    }

    @Test("a live refresh keeps the selected customer selected")
    func liveRefreshKeepsSelection() {
        var state = Fixture.state(screen: .customers)
        _ = reduce(&state, .key(.char("j")))
        _ = reduce(&state, .key(.char("j")))
        #expect(state.customerPage.rows[state.customerList.selected].id == 44)
        let effects = reduce(&state, .ledgerChanged)
        #expect(effects == [.loadCustomers(CustomerQuery(limit: 100), append: false)])
        let newcomer = CustomerSummary(id: 1)
        _ = reduce(&state, .customersLoaded(CustomerPage(rows: [newcomer] + Fixture.customers, next: nil, total: 4), append: false))
        #expect(state.customerPage.rows[state.customerList.selected].id == 44)
    }

    @Test("paging near the end of what is loaded asks for the next page once")
    func paging() {
        var state = Fixture.state(screen: .customers)
        let cursor = CustomerCursor(key: 44, id: 44)
        state.customerPage = CustomerPage(rows: (1...100).map { CustomerSummary(id: Int64($0)) }, next: cursor, total: 1000)
        var effects: [Effect] = []
        for _ in 0..<5 { effects += reduce(&state, .key(.pageDown)) }
        #expect(effects == [.loadCustomers(CustomerQuery(after: cursor, limit: 100), append: true)])
        _ = reduce(&state, .customersLoaded(CustomerPage(rows: (101...200).map { CustomerSummary(id: Int64($0)) }, next: nil, total: 1000), append: true))
        #expect(state.customerPage.rows.count == 200 && state.customerPage.next == nil)
    }

    @Test("G goes to the end of a counted list, read backward; scrolling up loads the rows before; g goes back to the top, its first row selected")
    func bottomOfTheWholeList() {
        var state = Fixture.state(screen: .customers)
        let rows = { (range: ClosedRange<Int>) in range.map { CustomerSummary(id: Int64($0)) } }
        state.customerPage = CustomerPage(rows: rows(1...100), next: CustomerCursor(key: 100, id: 100), total: 1000)
        let effects = reduce(&state, .key(.char("G")))
        #expect(effects == [.loadCustomers(CustomerQuery(direction: .backward, limit: 100), append: false)])
        let end = CustomerPage(rows: rows(901...1000), next: nil, previous: CustomerCursor(key: 901, id: 901), total: 1000)
        _ = reduce(&state, .customersLoaded(end, append: false, direction: .backward))
        #expect(state.customerPage.rows[state.customerList.selected].id == 1000)
        #expect(state.customerOffset == 900)
        // Up to the start of what is loaded: the page before it, once, put in front with the selection kept.
        var up: [Effect] = []
        for _ in 0..<5 { up += reduce(&state, .key(.pageUp)) }
        #expect(up == [.loadCustomers(CustomerQuery(after: CustomerCursor(key: 901, id: 901), direction: .backward, limit: 100), append: true)])
        let selected = state.customerPage.rows[state.customerList.selected].id
        _ = reduce(&state, .customersLoaded(CustomerPage(rows: rows(801...900), next: nil, previous: nil, total: 1000), append: true, direction: .backward))
        #expect(state.customerPage.rows[state.customerList.selected].id == selected)
        #expect(state.customerOffset == 800 && state.customerPage.rows.count == 200)
        // A live refresh reads the end again, keeping the selected customer.
        #expect(reloadEffects(state, keepSelection: true) == [.loadCustomers(CustomerQuery(direction: .backward, limit: 200), append: false)])
        // g: the top, read again from the start.
        #expect(reduce(&state, .key(.char("g"))) == [.loadCustomers(CustomerQuery(limit: 100), append: false)])
        _ = reduce(&state, .customersLoaded(CustomerPage(rows: rows(1...100), next: CustomerCursor(key: 100, id: 100), total: 1000), append: false))
        #expect(state.customerOffset == 0 && state.customerList.selected == 0)
        // A list counted only in part (a lower bound): G follows it forward, a page at a time, to its end.
        state.customerPage.totalIsLowerBound = true
        #expect(reduce(&state, .key(.char("G"))) == [.loadCustomers(CustomerQuery(after: CustomerCursor(key: 100, id: 100), limit: 100), append: true)])
        #expect(state.customerPage.rows[state.customerList.selected].id == 100)
        _ = reduce(&state, .customersLoaded(CustomerPage(rows: rows(101...150), next: nil, total: 150), append: true))
        #expect(state.customerPage.rows[state.customerList.selected].id == 150 && !state.followingToEnd)
    }

    @Test("g after G on a list whose end's window overlaps its first page selects the first row, not the window's first")
    func topAfterBottomOfAShortList() {
        var state = Fixture.state(screen: .customers)
        let rows = { (range: ClosedRange<Int>) in range.map { CustomerSummary(id: Int64($0)) } }
        state.customerPage = CustomerPage(rows: rows(1...100), next: CustomerCursor(key: 100, id: 100), total: 181)
        _ = reduce(&state, .key(.char("G")))
        _ = reduce(&state, .customersLoaded(
            CustomerPage(rows: rows(82...181), next: nil, previous: CustomerCursor(key: 82, id: 82), total: 181), append: false, direction: .backward))
        #expect(state.customerPage.rows[state.customerList.selected].id == 181)
        #expect(reduce(&state, .key(.home)) == [.loadCustomers(CustomerQuery(limit: 100), append: false)])
        _ = reduce(&state, .customersLoaded(CustomerPage(rows: rows(1...100), next: CustomerCursor(key: 100, id: 100), total: 181), append: false))
        #expect(state.customerList.selected == 0 && state.customerList.top == 0, "selected row \(state.customerList.selected + 1)")
        // A reload that is not g keeps the customer selected.
        state.customerList.selected = 40
        _ = reduce(&state, .customersLoaded(CustomerPage(rows: rows(2...101), next: CustomerCursor(key: 101, id: 101), total: 181), append: false))
        #expect(state.customerPage.rows[state.customerList.selected].id == 41)
    }

    @Test("the Imports screen pages its rejected records and sources: no list stops at its first page")
    func importsPaging() {
        var state = Fixture.state(screen: .imports)
        func rejected(_ ids: ClosedRange<Int>) -> [RejectedRecord] {
            ids.map { RejectedRecord(id: Int64($0), sourcePath: "f", index: $0, offset: 0, kind: "unknown", code: "malformed", message: "m", size: 1) }
        }
        _ = reduce(&state, .importsLoaded(sources: state.sources, rejected: rejected(1...500)))
        #expect(state.importsMore == [false, true])
        state.importsPane = 1
        var effects: [Effect] = []
        for _ in 0..<60 { effects += reduce(&state, .key(.pageDown)) }
        #expect(effects == [.loadMoreImports(sourcesAfter: nil, rejectedAfter: 500)])
        _ = reduce(&state, .importsLoaded(sources: [], rejected: rejected(501...650), append: true))
        #expect(state.rejected.count == 650 && state.rejected.last?.id == 650)
        #expect(state.importsMore == [false, false])
        #expect(state.sources.count == 1)
        for _ in 0..<60 { #expect(reduce(&state, .key(.pageDown)).isEmpty) }
        // The header counts what the ledger holds, not what is loaded.
        state.overview?.counts.rejectedRecords = 4_000
        #expect(importsCount(state, pane: 1) == "4,000")
        state.overview = nil
        #expect(importsCount(state, pane: 1) == "650")
        state.importsMore[1] = true
        #expect(importsCount(state, pane: 1) == "650+")
    }

    @Test("a count that is a lower bound says so with a +, and a later page's smaller bound does not lower it")
    func lowerBoundCount() {
        var state = Fixture.state(width: 120, height: 40, screen: .customers)
        let cursor = CustomerCursor(key: 44, id: 44)
        let first = CustomerPage(rows: (1...100).map { CustomerSummary(id: Int64($0)) }, next: cursor, total: 10_000, totalIsLowerBound: true)
        _ = reduce(&state, .customersLoaded(first, append: false))
        var buffer = ScreenBuffer(width: 120, height: 40)
        render(state, theme: .builtin, into: &buffer)
        #expect(buffer.text.contains("10,000+ customers"))
        #expect(buffer.text.contains("/10000+"))
        let second = CustomerPage(rows: (101...200).map { CustomerSummary(id: Int64($0)) }, next: cursor, total: 2_000, totalIsLowerBound: true)
        _ = reduce(&state, .customersLoaded(second, append: true))
        #expect(state.customerPage.total == 10_000 && state.customerPage.totalIsLowerBound)
        // The last page makes the count exact: every match is loaded.
        let last = CustomerPage(rows: (201...250).map { CustomerSummary(id: Int64($0)) }, next: nil, total: 2_000, totalIsLowerBound: true)
        _ = reduce(&state, .customersLoaded(last, append: true))
        #expect(state.customerPage.total == 250 && !state.customerPage.totalIsLowerBound)
        let exact = CustomerPage(rows: [CustomerSummary(id: 1)], next: nil, total: 1)
        _ = reduce(&state, .customersLoaded(exact, append: false))
        render(state, theme: .builtin, into: &buffer)
        #expect(!buffer.text.contains("+ customers") && buffer.text.contains("─ 1 customer  sorted"))
    }

    @Test(":export csv writes the view with a header naming filter, instant and operator, formulas neutralised")
    func export() {
        var state = Fixture.state(screen: .refunds)
        state.flags[0].detail = "=HYPERLINK(\"http://x\")"
        _ = reduce(&state, .key(.char(":")))
        for c in "export csv /tmp/x.csv" { _ = reduce(&state, .key(.char(c))) }
        // On the queue the runtime reads every flag of it first, then writes this same CSV over them.
        #expect(reduce(&state, .key(.enter)) == [.exportQueue(path: "/tmp/x.csv")])
        let contents = exportCSV(state)
        let lines = contents.split(separator: "\n").map(String.init)
        #expect(lines[0].hasPrefix("# receiptdesk export: view=refunds environment=all status=open"))
        #expect(lines[0].contains("operator=ana") && lines[0].contains("as-of=2025-03-01T08:00:00"))
        #expect(lines[1].hasPrefix("id,rule,severity"))
        #expect(lines[2].hasSuffix(",\"'=HYPERLINK(\"\"http://x\"\")\""))
        #expect(lines[4].contains("gems.100\\e[31m"))
        #expect(!contents.unicodeScalars.contains { $0.value == 0x1B })
    }

    @Test(":export csv on the Overview writes the overview's figures, not the customer list it does not show")
    func exportOverview() throws {
        var state = Fixture.state(screen: .overview)
        let data = try #require(state.overview)
        let lines = exportCSV(state).split(separator: "\n").map(String.init)
        #expect(lines[0].hasPrefix("# receiptdesk export: view=overview environment=all as-of="), "\(lines[0])")
        #expect(!lines[0].contains("sort="))
        #expect(lines[1] == "figure,key,value")
        #expect(lines.contains("count,customers,\(data.counts.customers)") && lines.contains("count,open flags,\(data.counts.openFlags)"))
        let days = lines.filter { $0.hasPrefix("refunds per day,") }
        #expect(days.count == data.refunds90.counts.count)
        // The tile's figure, and the last 30 days sum to it.
        let last30 = days.suffix(30).compactMap { Int($0.split(separator: ",").last ?? "") }.reduce(0, +)
        #expect(lines.contains("count,refunds 30d,\(last30)"), "\(lines.filter { $0.hasPrefix("count,") })")
        #expect(days.first == "refunds per day,\(data.refunds90.firstDay.iso8601.prefix(10)),\(data.refunds90.counts[0])")
        #expect(lines.filter { $0.hasPrefix("flags,") }.count == data.flagCounts.count)
        #expect(!lines.contains { $0.hasPrefix("customer,identifiers") })
        state.overview = nil
        #expect(exportCSV(state).split(separator: "\n").count == 2)
    }

    @Test(":export csv names the environment the screen shows: the filter on the lists, all on a customer or transaction")
    func exportEnvironment() {
        var state = Fixture.state(screen: .customers)
        state.environment = .production
        #expect(exportCSV(state).hasPrefix("# receiptdesk export: view=customers environment=production"))
        for screen in [ScreenID.customer, .transaction, .imports] {
            state.screen = screen
            let first = exportCSV(state).split(separator: "\n")[0]
            #expect(first.hasPrefix("# receiptdesk export: view=\(screen.title.lowercased()) environment=all "), "\(first)")
        }
    }

    @Test("Esc cancels a prompt, a second Esc goes back, and on the top screen Esc never quits")
    func escape() {
        var state = Fixture.state(screen: .overview)
        _ = reduce(&state, .key(.char("2")))
        _ = reduce(&state, .key(.char("/")))
        #expect(state.prompt != nil)
        _ = reduce(&state, .key(.escape))
        #expect(state.prompt == nil && state.screen == .customers)
        _ = reduce(&state, .key(.escape))
        #expect(state.screen == .overview)
        #expect(reduce(&state, .key(.escape)).isEmpty)
        #expect(!state.quitting && state.screen == .overview)
        #expect(reduce(&state, .key(.char("q"))) == [.quit])
    }

    @Test("a prompt offers the last value selected: typing replaces it, Backspace clears it, Enter takes it unchanged")
    func promptOffersLastValue() {
        var state = Fixture.state(screen: .customer)
        state.asOf = Fixture.at(-10)
        _ = reduce(&state, .key(.char("t")))
        #expect(state.prompt?.text == "2025-02-19 08:00" && state.prompt?.offered == true)
        for c in "now" { _ = reduce(&state, .key(.char(c))) }
        #expect(state.prompt?.text == "now" && state.prompt?.offered == false)
        _ = reduce(&state, .key(.enter))
        #expect(state.asOf == nil)
        // Offered and taken as it is, the instant stays, seconds and all (the prompt shows it to the minute).
        let exact = Fixture.at(-10).adding(milliseconds: 30_500)
        state.asOf = exact
        _ = reduce(&state, .key(.char("t")))
        #expect(reduce(&state, .key(.enter)).isEmpty && state.asOf == exact)

        state.search = "refund"
        _ = reduce(&state, .key(.char("/")))
        _ = reduce(&state, .key(.backspace))
        #expect(state.prompt?.text == "" && state.prompt != nil, "Backspace clears the offered value, the prompt stays")
        for c in "renewed" { _ = reduce(&state, .key(.char(c))) }
        _ = reduce(&state, .key(.backspace))
        #expect(state.prompt?.text == "renewe", "typed text is edited a character at a time")
        state.prompt = nil

        // On the queue, a filter typed anew replaces the last one, read by the ledger at Enter; Esc then clears it
        // before going back.
        var queue = Fixture.state(screen: .refunds)
        queue.history = [Visit(screen: .overview)]
        queue.flagFilter = "C96"
        _ = reduce(&queue, .key(.char("/")))
        _ = reduce(&queue, .key(.char("a")))
        #expect(shownFlagFilter(queue) == "a" && queue.flagFilter == "C96", "shown as typed, read by the ledger at Enter")
        #expect(reduce(&queue, .key(.enter)) == [.loadFlags(flagQuery(queue), append: false)] && flagQuery(queue).text == "a")
        _ = reduce(&queue, .key(.escape))
        #expect(queue.flagFilter == nil && queue.screen == .refunds && queue.message?.text == "filter cleared")
        _ = reduce(&queue, .key(.escape))
        #expect(queue.screen == .overview)

        // Clearing the filter keeps the flag it showed selected; an offered filter cleared with Backspace is no filter.
        var kept = Fixture.state(screen: .refunds)
        kept.history = [Visit(screen: .overview)]
        _ = reduce(&kept, .key(.char("/")))
        for c in "consumption" { _ = reduce(&kept, .key(.char(c))) }
        _ = reduce(&kept, .key(.enter))
        #expect(visibleFlags(kept).map(\.id) == ["consumption-request:77"])
        _ = reduce(&kept, .key(.escape))
        #expect(selectedId(kept) == "consumption-request:77" && kept.flagFilter == nil)
        kept.flagFilter = "C42"
        _ = reduce(&kept, .key(.char("/")))
        _ = reduce(&kept, .key(.backspace))
        _ = reduce(&kept, .key(.escape))
        #expect(kept.flagFilter == "C42", "Esc at the prompt takes back what was typed")
        _ = reduce(&kept, .key(.char("/")))
        _ = reduce(&kept, .key(.backspace))
        _ = reduce(&kept, .key(.enter))
        #expect(kept.flagFilter == nil)
        _ = reduce(&kept, .key(.escape))
        #expect(kept.screen == .overview, "no filter left for Esc to clear: it goes back")

        var customers = Fixture.state(screen: .customers)
        customers.customerQuery.filter = "acct"
        #expect(reduce(&customers, .key(.escape)) == [.loadCustomers(CustomerQuery(limit: 100), append: false)])
        #expect(customers.customerQuery.filter == nil)
    }

    @Test("a prompt edits at its cursor as readline does: arrows, Home/End, ^A ^E ^B ^F, Delete, ^W, ^K, ^U")
    func promptEditsAtCursor() {
        var state = Fixture.state(screen: .customers)
        func type(_ text: String) { for c in text { _ = reduce(&state, .key(.char(c))) } }
        func press(_ keys: Key...) { for key in keys { _ = reduce(&state, .key(key)) } }
        _ = reduce(&state, .key(.char("/")))
        // A pasted id with a typo in the middle is mended there, not retyped from it.
        type("1000000123x45")
        press(.left, .left, .backspace)
        #expect(state.prompt?.text == "100000012345" && state.prompt?.cursor == 10)
        press(.home)
        type("C")
        #expect(state.prompt?.text == "C100000012345" && state.prompt?.cursor == 1)
        press(.delete)
        #expect(state.prompt?.text == "C00000012345")
        press(.ctrl("e"), .ctrl("b"), .ctrl("b"), .ctrl("d"))
        #expect(state.prompt?.text == "C0000001235" && state.prompt?.cursor == 10)
        press(.ctrl("a"), .ctrl("f"), .ctrl("k"))
        #expect(state.prompt?.text == "C" && state.prompt?.cursor == 1)
        // The cursor stays on the text: past either end it does not go.
        press(.right, .right, .end)
        #expect(state.prompt?.cursor == 1)
        press(.left, .left, .home)
        #expect(state.prompt?.cursor == 0)
        press(.delete, .delete)
        #expect(state.prompt == nil, "Delete in an empty prompt closes it, as Backspace does")

        // ^W takes the word before the cursor (and the spaces after it); the rest stays.
        _ = reduce(&state, .key(.char(":")))
        type("lookup  abc  def")
        press(.ctrl("w"))
        #expect(state.prompt?.text == "lookup  abc  ")
        press(.ctrl("w"))
        #expect(state.prompt?.text == "lookup  ")
        press(.left, .left, .left, .ctrl("w"))
        #expect(state.prompt?.text == "p  " && state.prompt?.cursor == 0)
        press(.ctrl("u"))
        #expect(state.prompt?.text == "" && state.prompt != nil)
        press(.escape)

        // An offered value: a key that moves keeps it to edit; one that deletes clears it.
        state.customerQuery.filter = "renewed"
        _ = reduce(&state, .key(.char("/")))
        #expect(state.prompt?.offered == true)
        press(.left)
        #expect(state.prompt?.offered == false && state.prompt?.text == "renewed" && state.prompt?.cursor == 6)
        type("X")
        #expect(state.prompt?.text == "reneweXd")
        press(.escape)
        _ = reduce(&state, .key(.char("/")))
        press(.ctrl("k"))
        #expect(state.prompt?.text == "" && state.prompt?.offered == false)
        press(.escape)

        // A Tab in a note is a space where the cursor is; the prompt holds at most its length.
        var note = Prompt(kind: .note(flagIds: ["a"]), text: "")
        for c in "tabhere" { _ = note.insert(c) }
        note.move(to: 3)
        state.prompt = note
        press(.tab)
        #expect(state.prompt?.text == "tab here" && state.prompt?.cursor == 4)
        // Code points typed one at a time that join the character before them (an emoji's variation selector, a
        // flag's second half, a combining accent) make no new character: the cursor stays on the text.
        var joined = Prompt(kind: .note(flagIds: ["a"]))
        for scalar in ["\u{2764}", "\u{FE0F}", "x", "\u{1F1E9}", "\u{1F1EA}", "e", "\u{301}"] { _ = joined.insert(Character(scalar)) }
        #expect(joined.text == "\u{2764}\u{FE0F}x\u{1F1E9}\u{1F1EA}e\u{301}" && joined.cursor == joined.text.count)
        joined.move(to: 1)
        _ = joined.insert("\u{301}")
        #expect(joined.cursor <= joined.text.count)
        joined.deleteBackward()
        joined.deleteWordBackward()
        _ = joined.insert("y")
        #expect(joined.cursor <= joined.text.count && joined.text.contains("y"))
        state.prompt = joined
        var buffer = ScreenBuffer(width: 0, height: 0)
        render(state, theme: .builtin, into: &buffer)

        var full = Prompt(kind: .filter)
        for _ in 0..<Prompt.maxLength { _ = full.insert("a") }
        full.move(to: 0)
        #expect(!full.insert("b") && full.text.count == Prompt.maxLength && full.cursor == 0)
    }

    @Test("a paste is text, never keys: into the prompt at its cursor, line breaks as spaces; outside one, its first line opens :customer")
    func pasteIsText() {
        var state = Fixture.state(screen: .refunds)
        // A note's two lines pasted: one line of text, the prompt still open, nothing written or moved.
        _ = reduce(&state, .key(.char("r")))
        let selected = state.flagList.selected
        #expect(reduce(&state, .paste("pasted first line\r\npasted second\tTAB\n")).isEmpty)
        #expect(state.prompt?.text == "pasted first line pasted second TAB" && state.flagList.selected == selected)
        // At the cursor, control characters dropped.
        _ = reduce(&state, .key(.home))
        _ = reduce(&state, .paste("\u{1B}[2J>> "))
        #expect(state.prompt?.text == "[2J>> pasted first line pasted second TAB" && state.prompt?.cursor == 6)
        _ = reduce(&state, .key(.escape))

        // Outside a prompt: the command line, holding the first line as a customer to look up; Enter runs it. What
        // the status line said before (a lookup that found no one) goes, as it does at a key.
        _ = reduce(&state, .customerNotFound("zzz-nothing"))
        #expect(state.message?.text == "no customer matches zzz-nothing")
        // Over a customer's screen, the one still shown is not the answer: said.
        var over = Fixture.state(width: 100, height: 30, screen: .customer)
        _ = reduce(&over, .customerNotFound("MMXYZ123"))
        #expect(over.message?.text == "no customer matches MMXYZ123; C\(Fixture.records.id) is the one shown before")
        _ = reduce(&state, .paste("\n  150000000008001\nRegards, Ana\n"))
        #expect(state.prompt?.kind == .command && state.prompt?.text == "customer 150000000008001" && state.prompt?.offered == false)
        #expect(state.message == nil && state.screen == .refunds)
        #expect(reduce(&state, .key(.enter)) == [.openCustomer(query: "150000000008001")])
        // An offered value is replaced; an empty paste does nothing; a paste over help closes it.
        state.search = nil
        state.showHelp = true
        _ = reduce(&state, .paste(" \n "))
        #expect(state.prompt == nil && state.showHelp)
        _ = reduce(&state, .paste("C42"))
        #expect(!state.showHelp && state.prompt?.text == "customer C42")
        _ = reduce(&state, .key(.escape))
        state.flagFilter = "late"
        _ = reduce(&state, .key(.char("/")))
        _ = reduce(&state, .paste("app-issue"))
        #expect(state.prompt?.text == "app-issue" && shownFlagFilter(state) == "app-issue", "the queue filters as a paste is typed")
        #expect(visibleFlags(state).allSatisfy { $0.rule == "app-issue" } && !visibleFlags(state).isEmpty)
    }

    @Test(":export csv of the customer list says when it holds the pages loaded, not the whole list")
    func exportSaysWhatItHolds() {
        var state = Fixture.state(screen: .customers)
        func export() -> Effect? {
            _ = reduce(&state, .key(.char(":")))
            for c in "export csv c.csv" { _ = reduce(&state, .key(.char(c))) }
            return reduce(&state, .key(.enter)).first
        }
        // (The runtime judges every loaded customer's access, then writes exportCSV's file.)
        guard case .exportCustomers(let path, let saying) = export() else {
            Issue.record("no export")
            return
        }
        #expect(path == "c.csv" && saying.isEmpty, "every row is loaded: nothing more to say")
        state.customerPage.next = CustomerCursor(key: 1, id: 3)
        state.customerPage.total = 11_812
        guard case .exportCustomers(_, let partial) = export() else {
            Issue.record("no export")
            return
        }
        #expect(partial == " of 11,812: those loaded (scrolling loads more)")
        // The file says it too, in its first line: which rows of how many, and what A and F narrowed the list to.
        state.customerQuery.withOpenFlags = true
        state.customerQuery.activeAt = Timestamp(millisecondsSince1970: 1_740_816_000_000)
        let rowsLine = exportCSV(state).split(separator: "\n")[0]
        #expect(
            rowsLine.contains("subscribed-at=2025-03-01T08:00:00Z with-open-flags rows=1-\(state.customerPage.rows.count)-of-11812 as-of="),
            "\(rowsLine)")
        state.customerQuery = CustomerQuery()
        // The first line is a comment a reader can skip: never a quoted cell, whatever the ledger is called.
        state.ledgerName = "DEMO data: 200 generated customers (seed \"demo-1\"), 2025-01-01 to 2025-07-01"
        let first = exportCSV(state).split(separator: "\n", omittingEmptySubsequences: false)[0]
        #expect(first.hasPrefix("# receiptdesk export: view=customers") && !first.contains(",") && !first.contains("\""), "\(first)")
        #expect(first.hasSuffix("ledger=DEMO data: 200 generated customers (seed 'demo-1'); 2025-01-01 to 2025-07-01 DEMO"), "\(first)")
    }

    @Test("/ on the timeline finds an instant as the screen shows it (2025-02-01 08:00, not the core's T…Z)")
    func timelineSearchByShownInstant() throws {
        var state = Fixture.state(screen: .customer)
        let view = try #require(state.customerView)
        let target = try #require(view.timeline.firstIndex { $0.detail.contains("2025-02-01T08:00:00Z") })
        _ = reduce(&state, .key(.char("/")))
        for c in "until 2025-02-01 08:00" { _ = reduce(&state, .key(.char(c))) }
        _ = reduce(&state, .key(.enter))
        #expect(state.message == nil)
        #expect(state.customerPane == 1 && state.customerPositions[1].selected == target)
        // As `lookup` prints it, too.
        _ = reduce(&state, .key(.char("g")))
        _ = reduce(&state, .key(.char("/")))
        _ = reduce(&state, .key(.ctrl("u")))
        for c in "until 2025-02-01T08:00" { _ = reduce(&state, .key(.char(c))) }
        _ = reduce(&state, .key(.enter))
        #expect(state.message == nil)
        #expect(state.customerPositions[1].selected == target)
    }

    @Test("/ on the flag queue finds a detail's instant as shown and as lookup prints it")
    func flagFilterByInstant() {
        var state = Fixture.state(screen: .refunds)
        var flag = Fixture.flags[2]
        flag.detail = "refund requested; send consumption data by 2025-03-01T20:00:00Z"
        state.flags = [Fixture.flags[0], flag]
        for text in ["by 2025-03-01 20:00", "by 2025-03-01T20:00"] {
            state.flagFilter = text
            #expect(visibleFlags(state).map(\.id) == [flag.id], "\(text)")
        }
    }

    @Test("/ on the flag queue has the ledger read it: what it read is shown as read, a typed filter previews the loaded flags and Esc takes it back")
    func flagFilterReadByLedger() {
        var state = Fixture.state(screen: .refunds)
        _ = reduce(&state, .key(.char("/")))
        for c in "2004" { _ = reduce(&state, .key(.char(c))) }
        #expect(visibleFlags(state).map(\.id) == ["quick-refund:2004", "app-issue:2004"], "the loaded flags it keeps, as typed")
        // Esc at the prompt takes the typed filter back: the queue as the ledger read it.
        _ = reduce(&state, .key(.escape))
        #expect(visibleFlags(state).count == Fixture.flags.count && state.flagFilter == nil)
        _ = reduce(&state, .key(.char("/")))
        for c in "2004" { _ = reduce(&state, .key(.char(c))) }
        let effects = reduce(&state, .key(.enter))
        #expect(effects == [.loadFlags(FlagQuery(status: .open, environment: .all, limit: 200, text: "2004"), append: false)])
        // What the ledger read under the filter is the queue, not filtered again here (its match is the ledger's):
        // a flag whose detail the ledger matched and this side would not is shown.
        var far = Fixture.flags[2]
        far.id = "quick-refund:9"
        far.detail = "matched by the ledger"
        _ = reduce(&state, .flagsLoaded([Fixture.flags[0], far], next: FlagCursor(after: far), append: false, filter: "2004"))
        #expect(visibleFlags(state).map(\.id) == ["quick-refund:2004", "quick-refund:9"])
        // A page of the unfiltered queue arriving late is not added to the filtered one.
        _ = reduce(&state, .flagsLoaded([Fixture.flags[2]], next: nil, append: true, filter: nil))
        #expect(state.flags.map(\.id) == ["quick-refund:2004", "quick-refund:9"])
        // Esc clears the filter: the ledger reads the queue without it.
        #expect(reduce(&state, .key(.escape)) == [.loadFlags(FlagQuery(status: .open, environment: .all, limit: 200), append: false)])
        #expect(state.flagFilter == nil && state.message?.text == "filter cleared")

        // Marks outlive a filter read since: a marked flag it leaves out stays marked, is said, and is acknowledged
        // with the rest.
        var marking = Fixture.state(screen: .refunds)
        _ = reduce(&marking, .key(.char(" ")))
        #expect(marking.marked == ["quick-refund:2004"])
        _ = reduce(&marking, .key(.char("/")))
        for c in "consumption" { _ = reduce(&marking, .key(.char(c))) }
        _ = reduce(&marking, .key(.enter))
        _ = reduce(&marking, .flagsLoaded([Fixture.flags[2]], next: nil, append: false, filter: "consumption"))
        #expect(marking.marked == ["quick-refund:2004"] && marking.markedAside.map(\.id) == ["quick-refund:2004"])
        var buffer = ScreenBuffer(width: 0, height: 0)
        render(marking, theme: .builtin, into: &buffer)
        #expect(buffer.line(1).contains("1 marked (1 not shown)"), "\(buffer.line(1))")
        _ = reduce(&marking, .key(.char(" ")))
        let acknowledged = reduce(&marking, .key(.char("a")))
        guard case .triage(let ids, .ack, _, _, _)? = acknowledged.first else {
            Issue.record("\(acknowledged)")
            return
        }
        #expect(Set(ids) == ["quick-refund:2004", "consumption-request:77"])

        // A flag kept aside that a page read since lists again is in the list, not also aside: sent once, not said
        // to be hidden.
        var again = Fixture.state(screen: .refunds)
        _ = reduce(&again, .key(.char(" ")))
        _ = reduce(&again, .flagsLoaded([Fixture.flags[2]], next: nil, append: false, filter: "consumption"))
        #expect(again.markedAside.map(\.id) == ["quick-refund:2004"])
        _ = reduce(&again, .flagsLoaded([Fixture.flags[1]], next: FlagCursor(after: Fixture.flags[1]), append: false, filter: nil))
        _ = reduce(&again, .flagsLoaded([Fixture.flags[0]], next: nil, append: true, filter: nil))
        #expect(again.markedAside.isEmpty && again.flags.map(\.id) == ["app-issue:2004", "quick-refund:2004"])
        let once = reduce(&again, .key(.char("a")))
        guard case .triage(let sent, .ack, _, _, _)? = once.first else {
            Issue.record("\(once)")
            return
        }
        #expect(sent == ["quick-refund:2004"])
    }

    @Test("the environment filter applies to the customer list")
    func environment() {
        var state = Fixture.state(screen: .customers)
        _ = reduce(&state, .key(.char(":")))
        for c in "env sandbox" { _ = reduce(&state, .key(.char(c))) }
        #expect(reduce(&state, .key(.enter)) == [.loadCustomers(CustomerQuery(environment: .sandbox, limit: 100), append: false)])
        #expect(state.environment == .sandbox)
        // `prod`, as --environment takes it.
        _ = reduce(&state, .key(.char(":")))
        for c in "env Prod" { _ = reduce(&state, .key(.char(c))) }
        _ = reduce(&state, .key(.enter))
        #expect(state.environment == .production, "\(String(describing: state.message))")
        #expect(state.message?.text == "environment: production")
        // Where it filters nothing (the header there keeps saying "env all"), the message says where it applies.
        var imports = Fixture.state(screen: .imports)
        _ = reduce(&imports, .key(.char(":")))
        for c in "env sandbox" { _ = reduce(&imports, .key(.char(c))) }
        _ = reduce(&imports, .key(.enter))
        #expect(imports.environment == .sandbox)
        #expect(imports.message?.text == "environment: sandbox on the Overview, Customers and Refunds (the Imports screen shows every environment)")
    }

    @Test("a live refresh keeps the selected source, transaction row, timeline event and transaction scroll by what they are")
    func refreshKeepsSelectionById() {
        // Imports: sources newest first, a new import arrives above the selection.
        var state = Fixture.state(screen: .imports)
        func source(_ id: Int64) -> SourceSummary {
            SourceSummary(id: id, path: "s\(id).ndjson", sha256: "\(id)", size: 1, startedAt: Fixture.at(-id), completedAt: nil, counts: ImportCounts())
        }
        _ = reduce(&state, .importsLoaded(sources: [3, 2, 1].map(source), rejected: [], append: false))
        state.importPositions[0] = ListPosition(selected: 1, top: 0)
        #expect(state.sources[state.importPositions[0].selected].id == 2)
        _ = reduce(&state, .importsLoaded(sources: [4, 3, 2, 1].map(source), rejected: [], append: false))
        #expect(state.sources[state.importPositions[0].selected].id == 2)

        // The customer: a new renewal arrives; the transactions pane (newest first) and the timeline stay put.
        state = Fixture.state(screen: .customer)
        state.customerPane = 2
        _ = reduce(&state, .key(.down))
        _ = reduce(&state, .key(.down))
        let selectedTransaction = state.customer!.records.transactions.reversed()[state.customerPositions[2].selected].transactionId
        let selectedEvent = state.customerView!.timeline[state.customerPositions[1].selected]
        var records = state.customer!.records
        records.transactions.append(Fixture.transaction("2007", product: "pro.monthly", purchased: -1, expires: 29))
        _ = reduce(&state, .customerLoaded(CustomerDetail(records: records, flags: state.customer!.flags, log: [])))
        #expect(state.customer!.records.transactions.reversed()[state.customerPositions[2].selected].transactionId == selectedTransaction)
        let event = state.customerView!.timeline[state.customerPositions[1].selected]
        #expect(event.at == selectedEvent.at && event.kind == selectedEvent.kind && event.transactionId == selectedEvent.transactionId)

        // The transaction screen: the same transaction again keeps its scroll; another starts at the top.
        let t = Fixture.records.transactions[3]
        _ = reduce(&state, .transactionLoaded(t, id: t.transactionId))
        state.transactionScroll = ListPosition(selected: 5, top: 2)
        _ = reduce(&state, .transactionLoaded(t, id: t.transactionId))
        #expect(state.transactionScroll == ListPosition(selected: 5, top: 2))
        _ = reduce(&state, .transactionLoaded(Fixture.records.transactions[2], id: "2003"))
        #expect(state.transactionScroll == ListPosition())
    }

    @Test("back from a transaction opened from the customer's transactions pane: that pane, on that row")
    func backFromTransactionKeepsPane() {
        var state = Fixture.state(screen: .customer)
        state.customerPane = 2
        _ = reduce(&state, .key(.down))
        _ = reduce(&state, .key(.down))
        let row = state.customerPositions[2]
        guard let selected = state.customerView?.transactions[safe: row.selected] else {
            Issue.record("no transaction at row \(row.selected)")
            return
        }
        let opened = reduce(&state, .key(.enter))
        #expect(opened.contains(.loadTransaction(selected.transactionId)), "\(opened)")
        _ = reduce(&state, .transactionLoaded(selected, id: selected.transactionId))
        #expect(state.screen == .transaction)
        let back = reduce(&state, .key(.char("q")))
        // The customer is read again (it may have changed meanwhile) and arrives as the same customer.
        for effect in back {
            if case .loadCustomer = effect { _ = reduce(&state, .customerLoaded(state.customer!)) }
        }
        #expect(state.screen == .customer)
        #expect(state.customerPane == 2, "pane \(state.customerPane)")
        #expect(state.customerPositions[2].selected == row.selected)
    }

    @Test("with the mouse on, a click selects the list row drawn under it; a click off the list's rows selects nothing")
    func clickSelectsOnlyListRows() {
        // With who last moved the selected flag on a line of its own (under 120 columns, a flag triaged) and without.
        for triaged in [false, true] {
            var state = Fixture.state(width: 100, height: 30, screen: .refunds)
            state.mouse = true
            state.flags = (0..<60).map { n in
                var flag = Fixture.flags[0]
                flag.id = "quick-refund:\(n)"
                flag.customerId = Int64(1000 + n)
                return flag
            }
            if triaged {
                let entry = TriageEntry(
                    flagId: "quick-refund:0", customerId: nil, at: Fixture.now, operatorName: "ana", action: .ack, note: nil,
                    fromStatus: .open, toStatus: .acknowledged)
                _ = reduce(&state, .flagTriageLoaded(["quick-refund:0": entry]))
            }
            // At the end of the queue, moved there by the keys (the reducer's window), then each row clicked.
            _ = reduce(&state, .key(.char("G")))
            var buffer = ScreenBuffer(width: 0, height: 0)
            render(state, theme: .builtin, into: &buffer)
            var clicked = 0
            for y in 0..<state.height {
                let drawn = (1000..<1060).first { buffer.line(y).contains(" C\($0) ") }
                let before = state.flagList.selected
                _ = reduce(&state, .key(.click(x: 5, y: y)))
                if let drawn {
                    #expect(visibleFlags(state)[state.flagList.selected].customerId == Int64(drawn), "triaged \(triaged), row \(y)")
                    clicked += 1
                } else {
                    // The header, the column names, the detail, status and footer lines select nothing.
                    #expect(state.flagList.selected == before, "triaged \(triaged), a click on row \(y): \(buffer.line(y))")
                }
                // (Clicks move nothing the screen shows: the window stays where the keys left it.)
                _ = reduce(&state, .key(.char("G")))
            }
            #expect(clicked == flagQueueRows(state), "triaged \(triaged)")
        }
    }

    @Test("a notch of the mouse wheel moves three rows, not a page")
    func wheelScrolls() {
        var state = Fixture.state(width: 100, height: 30, screen: .refunds)
        state.mouse = true
        state.flags = (0..<60).map { n in
            var flag = Fixture.flags[0]
            flag.id = "quick-refund:\(n)"
            return flag
        }
        state.flagList = ListPosition()
        _ = reduce(&state, .key(.wheelDown))
        _ = reduce(&state, .key(.wheelDown))
        #expect(state.flagList.selected == 6)
        _ = reduce(&state, .key(.wheelUp))
        #expect(state.flagList.selected == 3)
        // PgDn still pages.
        _ = reduce(&state, .key(.pageDown))
        #expect(state.flagList.selected == 3 + state.listRows)
        // ? lists the wheel while the mouse is on, and not otherwise.
        #expect(helpLayout(state).bindings.contains { $0.command == .scrollDown })
        state.mouse = false
        #expect(!helpLayout(state).bindings.contains { $0.command == .scrollDown })
    }

    @Test("y on the transaction screen copies the selected identifier, else the transaction's id")
    func copyOnTransaction() throws {
        var state = Fixture.state(screen: .customer)
        let t = Fixture.records.transactions[3]
        _ = reduce(&state, .transactionLoaded(t, id: t.transactionId))
        state.screen = .transaction
        let fields = transactionFields(t)
        let original = try #require(fields.firstIndex { $0.key == "originalTransactionId" })
        let purchase = try #require(fields.firstIndex { $0.key == "purchaseDate" })
        #expect(t.originalTransactionId != t.transactionId)
        state.transactionScroll = ListPosition(selected: original, top: 0)
        #expect(reduce(&state, .key(.char("y"))) == [.copy(try #require(t.originalTransactionId))])
        #expect(state.message?.text == "copied \(t.originalTransactionId ?? "")")
        state.transactionScroll = ListPosition(selected: purchase, top: 0)
        #expect(reduce(&state, .key(.char("y"))) == [.copy(t.transactionId)])
        // An id holding control characters (shown escaped) is not put on the clipboard, raw or escaped.
        for hostile in ["2004\r\nrm -rf ~", "evil\u{1B}[31m", "abc\u{202E}fdp"] {
            var odd = t
            odd.originalTransactionId = hostile
            _ = reduce(&state, .transactionLoaded(odd, id: odd.transactionId))
            state.transactionScroll = ListPosition(selected: original, top: 0)
            #expect(reduce(&state, .key(.char("y"))).isEmpty, "\(hostile)")
            #expect(state.message?.text.hasPrefix("not copied:") == true, "\(String(describing: state.message))")
        }
    }

    @Test("the customer screen shows the latest note and how many there are; its transactions and the flag queue name the environment")
    func notesAndEnvironment() {
        var state = Fixture.state(screen: .customer)
        var detail = state.customer!
        detail.log = [
            TriageEntry(flagId: nil, customerId: 42, at: Fixture.at(-3), operatorName: "ana", action: .note, note: "called, wants a refund", fromStatus: nil, toStatus: nil),
            // One note resolving two flags is in the log twice: one note.
            TriageEntry(flagId: "quick-refund:2004", customerId: nil, at: Fixture.at(-2), operatorName: "bo", action: .resolve, note: "both done", fromStatus: .open, toStatus: .resolved),
            TriageEntry(flagId: "app-issue:2004", customerId: nil, at: Fixture.at(-2), operatorName: "bo", action: .resolve, note: "both done", fromStatus: .open, toStatus: .resolved),
            TriageEntry(flagId: nil, customerId: 42, at: Fixture.at(-1), operatorName: "bo", action: .note, note: "refund granted", fromStatus: nil, toStatus: nil),
            // An undo's own note is no one's note: not the latest, not counted.
            TriageEntry(
                flagId: "app-issue:2004", customerId: nil, at: Fixture.at(0), operatorName: "bo", action: .reopen,
                note: undoNote(of: .acknowledged), fromStatus: .acknowledged, toStatus: .open),
        ]
        _ = reduce(&state, .customerLoaded(detail))
        var buffer = ScreenBuffer(width: 0, height: 0)
        render(state, theme: .builtin, into: &buffer)
        let lines = (0..<buffer.height).map { buffer.line($0) }
        #expect(lines.contains { $0.contains("bo: refund granted") && $0.contains("(3 notes)") }, "\(lines.joined(separator: "\n"))")
        state.customerPane = 2
        render(state, theme: .builtin, into: &buffer)
        #expect((0..<buffer.height).map { buffer.line($0) }.contains { $0.contains(" env ") })

        // The latest note a resolve wrote, undone since: said, beside the open flags (it read as resolved).
        state.customerPane = 0
        let flagId = state.customer!.flags[0].id
        let resolve = TriageEntry(
            flagId: flagId, customerId: nil, at: Fixture.at(1), operatorName: "bo", action: .resolve, note: "batch reviewed",
            fromStatus: .open, toStatus: .resolved)
        let undo = TriageEntry(
            flagId: flagId, customerId: nil, at: Fixture.at(2), operatorName: "bo", action: .reopen, note: undoNote(of: .resolved),
            fromStatus: .resolved, toStatus: .open)
        func noteLine() -> String? {
            _ = reduce(&state, .customerLoaded(detail))
            render(state, theme: .builtin, into: &buffer)
            return (0..<buffer.height).map { buffer.line($0) }.first { $0.contains("batch reviewed") }
        }
        detail.log.append(contentsOf: [resolve, undo])
        #expect(noteLine()?.contains("(undone: resolve ") == true, "\(noteLine() ?? "")")
        // A flag whose status is no longer what the note's resolve set (moved on in a log not read here): its status now.
        detail.log.removeLast()
        #expect(noteLine()?.contains("(now \(state.customer!.flags[0].status.rawValue): resolve ") == true, "\(noteLine() ?? "")")
    }

    @Test("a live refresh reads the list as far as the selection and a window past it, not every row paged through")
    func refreshReadsAWindow() {
        var state = Fixture.state(screen: .customers)
        state.customerPage = CustomerPage(rows: (1...3000).map { CustomerSummary(id: Int64($0)) }, next: CustomerCursor(key: 3000, id: 3000), total: 9000)
        state.customerList = ListPosition(selected: 150, top: 140)
        let window = 150 + 2 * state.listRows
        #expect(reloadEffects(state, keepSelection: true) == [.loadCustomers(CustomerQuery(limit: window), append: false)])
        let reloaded = CustomerPage(rows: (1...window).map { CustomerSummary(id: Int64($0)) }, next: CustomerCursor(key: Int64(window), id: Int64(window)), total: 9000)
        _ = reduce(&state, .customersLoaded(reloaded, append: false))
        #expect(state.customerPage.rows[state.customerList.selected].id == 151)
        // A switch of screen or filter starts from the first page.
        #expect(reloadEffects(state, keepSelection: false) == [.loadCustomers(CustomerQuery(limit: 100), append: false)])
    }

    @Test("a timeline window sized by the reducer's estimate is drawn with every event that fits: no empty rows under a hidden first one")
    func timelineWindow() {
        var state = Fixture.state(width: 120, height: 40, screen: .customers)
        var detail = state.customer!
        state.customer = nil
        state.customerView = nil
        let base = CustomerView(detail: detail, at: state.instant, catalog: state.catalog).timeline.count
        for n in 0..<max(0, 20 - base) {
            detail.records.transactions.append(Fixture.transaction("95\(n)", product: "coins.\(n)", purchased: -60 + Int64(n), expires: nil, original: "95\(n)"))
        }
        _ = reduce(&state, .customerLoaded(detail))
        let events = state.customerView!.timeline
        #expect(events.count == 20)
        #expect(state.customerPositions[1].selected == events.count - 1)
        // The reducer cannot know the pane's room (identifiers, notes, entitlements and strips above it): as when it
        // guessed a smaller window than the layout gives, the window starts past the first event.
        state.customerPositions[1].top = 5
        var buffer = ScreenBuffer(width: 0, height: 0)
        render(state, theme: .builtin, into: &buffer)
        let lines = (0..<buffer.height).map { buffer.line($0) }
        let header = lines.firstIndex { $0.hasPrefix("at ") }!
        // (The event rows: the transactions' pane may be under them.)
        let shown = lines[(header + 1)...].prefix { $0.prefix(17).wholeMatch(of: #/\d{4}-\d{2}-\d{2} \d{2}:\d{2} /#) != nil }
        #expect(shown.count == events.count, "\(lines.joined(separator: "\n"))")
        #expect(shown.first?.contains(events[0].detail.prefix(20)) == true)
        #expect(buffer.cursor.map { $0.y } == header + events.count)

        // A list that shrinks under its window leaves no empty rows at the bottom while rows above are hidden.
        var position = ListPosition(selected: 90, top: 80)
        position.move(by: 0, count: 30, visible: 20)
        #expect(position.selected == 29 && position.top == 10)
    }

    @Test("more than four entitlements scroll with the selection, and the title says which of how many are shown")
    func manyEntitlements() {
        var state = Fixture.state(screen: .customer)
        var detail = state.customer!
        for n in 1...6 {
            var t = Fixture.transaction("90\(n)", product: "lifetime.\(n)", purchased: -5, expires: nil, original: "90\(n)")
            t.type = .nonConsumable
            detail.records.transactions.append(t)
        }
        _ = reduce(&state, .customerLoaded(detail))
        state.customerPane = 0
        let count = state.customerView!.entitlements.count
        #expect(count > 4)
        for _ in 0..<count { _ = reduce(&state, .key(.down)) }
        let last = state.customerView!.entitlements[state.customerPositions[0].selected].name
        var buffer = ScreenBuffer(width: 0, height: 0)
        render(state, theme: .builtin, into: &buffer)
        let lines = (0..<buffer.height).map { buffer.line($0) }
        #expect(lines.contains { $0.contains("\(count - 3)-\(count) of \(count)") }, "\(lines.joined(separator: "\n"))")
        #expect(buffer.cursor.map { buffer.line($0.y).contains(last) } == true, "the selected entitlement is not on screen")
    }

    @Test("G on the flag queue reads its end backward; scrolling up loads the flags before; g reads the start again")
    func bottomOfTheFlagQueue() {
        var state = Fixture.state(screen: .refunds)
        state.flagStatus = nil
        func flags(_ range: ClosedRange<Int>) -> [RefundFlag] {
            range.map { n in
                RefundFlag(id: "quick-refund:\(n)", rule: "quick-refund", severity: .high, customerId: 1, transactionId: "\(n)", productId: "p",
                           amount: nil, currency: nil, at: Fixture.at(-Int64(n)), detail: "d")
            }
        }
        _ = reduce(&state, .flagsLoaded(flags(1...200), next: FlagCursor(at: Fixture.at(-200), id: "quick-refund:200"), append: false))
        #expect(reduce(&state, .key(.char("G"))) == [.loadFlags(FlagQuery(direction: .backward, limit: 200), append: false)])
        let end = flags(801...1000)
        _ = reduce(&state, .flagsBeforeLoaded(end, previous: FlagCursor(after: end[0]), append: false))
        #expect(state.flags[state.flagList.selected].id == "quick-refund:1000" && state.flagsFromEnd)
        // Up to the start of what is loaded: the flags before it, once, in front, the selection kept.
        var up: [Effect] = []
        for _ in 0..<12 { up += reduce(&state, .key(.pageUp)) }
        #expect(up == [.loadFlags(FlagQuery(after: FlagCursor(after: end[0]), direction: .backward, limit: 200), append: true)])
        let selected = state.flags[state.flagList.selected].id
        _ = reduce(&state, .flagsBeforeLoaded(flags(601...800), previous: nil, append: true))
        #expect(state.flags[state.flagList.selected].id == selected && state.flags.count == 400)
        // A live refresh reads the end again; g reads the start.
        #expect(reloadEffects(state, keepSelection: true) == [.loadFlags(FlagQuery(direction: .backward, limit: 400), append: false)])
        #expect(reduce(&state, .key(.char("g"))) == [.loadFlags(FlagQuery(limit: 200), append: false)])
        // (The flags read from the start hold the first of the end's window, 601: the selection is the top, not it.)
        _ = reduce(&state, .flagsLoaded(flags(1...700), next: FlagCursor(at: Fixture.at(-700), id: "quick-refund:700"), append: false))
        #expect(!state.flagsFromEnd && state.flagsPrevious == nil)
        #expect(state.flagList.selected == 0 && state.flagList.top == 0)
    }

    @Test("a / filter typed that keeps none of the flags loaded says Enter searches the queue; one the ledger found none for says so, not that there are none")
    func filterMatchingNothingRead() {
        var state = Fixture.state(screen: .refunds)
        _ = reduce(&state, .flagsLoaded(Fixture.flags, next: FlagCursor(at: Fixture.at(-9), id: "x"), append: false))
        func body() -> String {
            var buffer = ScreenBuffer(width: 0, height: 0)
            render(state, theme: .builtin, into: &buffer)
            return buffer.line(3)
        }
        _ = reduce(&state, .key(.char("/")))
        for c in "no such text" { _ = reduce(&state, .key(.char(c))) }
        #expect(body().contains("none of the \(Fixture.flags.count) flags loaded matches; Enter searches the whole queue"), "\(body())")
        #expect(reduce(&state, .key(.enter)) == [.loadFlags(FlagQuery(status: .open, limit: 200, text: "no such text"), append: false)])
        _ = reduce(&state, .flagsLoaded([], next: nil, append: false, filter: "no such text"))
        #expect(body().contains("no flags of the queue match \"no such text\" (Esc clears the filter)"), "\(body())")
        state.flagFilter = nil
        state.flagsReadFilter = nil
        #expect(body().contains("no flags open here"))
        state.flagProduct = "coins.500"
        #expect(body().contains("no open flags of coins.500 here (5 shows every product's)"), "\(body())")
    }

    @Test("a refresh under a / filter keeps the selected flag")
    func filterKeepsSelection() {
        func flag(_ n: Int, _ product: String) -> RefundFlag {
            RefundFlag(id: "quick-refund:\(n)", rule: "quick-refund", severity: .high, customerId: 1, transactionId: "\(n)",
                       productId: product, amount: nil, currency: nil, at: Fixture.at(-Int64(n)), detail: "d")
        }
        // A new match arrives above the selected flag, and the unfiltered list has another flag at the selection's
        // index.
        var kept = Fixture.state(screen: .refunds)
        kept.flagFilter = "rare"
        let c = flag(3, "rare.product"), d = flag(4, "rare.product")
        _ = reduce(&kept, .flagsLoaded([c, d], next: nil, append: false, filter: "rare"))
        _ = reduce(&kept, .key(.down))
        #expect(visibleFlags(kept)[kept.flagList.selected].id == d.id)
        _ = reduce(&kept, .flagsLoaded([flag(5, "rare.product"), c, d], next: nil, append: false, filter: "rare"))
        #expect(visibleFlags(kept)[kept.flagList.selected].id == d.id && kept.flagList.selected == 2)
        // While a filter is typed over the loaded flags, a refresh reads as far as the selected flag is among them
        // (not as far as its row in what the typing shows).
        var typing = Fixture.state(screen: .refunds)
        let many = (1...300).map { flag($0, $0 == 250 ? "rare.product" : "p") }
        _ = reduce(&typing, .flagsLoaded(many, next: FlagCursor(after: many[299]), append: false))
        _ = reduce(&typing, .key(.char("/")))
        for c in "rare" { _ = reduce(&typing, .key(.char(c))) }
        #expect(visibleFlags(typing).map(\.id) == ["quick-refund:250"] && typing.flagList.selected == 0)
        let refresh = reloadEffects(typing, keepSelection: true)
        guard case .loadFlags(let query, append: false)? = refresh.first else {
            Issue.record("\(refresh)")
            return
        }
        #expect(query.limit >= 250 && query.text == nil, "\(query)")
    }

    @Test("the overview's severity stays selected by what it is when the figures are read again")
    func severityKeptOnRefresh() {
        var state = Fixture.state(screen: .overview)
        _ = reduce(&state, .key(.tab))
        _ = reduce(&state, .key(.char("j")))
        #expect(overviewSeverities(state.overview!)[state.severityList.selected].severity == .medium)
        // A critical flag raised since: a line above it.
        var data = Fixture.overview
        data.flagCounts.append(FlagCount(severity: .critical, status: .open, count: 1))
        _ = reduce(&state, .overviewLoaded(data))
        #expect(overviewSeverities(state.overview!)[state.severityList.selected].severity == .medium)
        // The selected line gone, the selection stays on the list.
        state.severityList.selected = 3
        data.flagCounts = [FlagCount(severity: .high, status: .open, count: 1)]
        _ = reduce(&state, .overviewLoaded(data))
        #expect(state.severityList.selected < overviewSeverities(data).count)
    }

    @Test("the overview's pending consumption requests take a selection (Tab, j/k), soonest deadline first; Enter opens the customer")
    func consumptionRequestOpensItsCustomer() throws {
        var state = Fixture.state(screen: .overview)
        func request(_ customer: Int64, sentHoursAgo hours: Int64) -> RefundFlag {
            RefundFlag(
                id: "consumption-request:\(customer)", rule: "consumption-request", severity: .high, customerId: customer,
                transactionId: "\(customer)", productId: "coins.\(customer)", amount: nil, currency: nil,
                at: Fixture.now.adding(milliseconds: -hours * 3_600_000), detail: "refund requested")
        }
        var data = try #require(state.overview)
        // Sent 2 h, 11 h and 13 h ago: two pending, the 11-hour one (1 h left) listed first; one past its deadline.
        data.consumptionRequests = [request(5, sentHoursAgo: 2), request(8, sentHoursAgo: 11), request(9, sentHoursAgo: 13)]
        _ = reduce(&state, .overviewLoaded(data))
        _ = reduce(&state, .key(.tab))
        _ = reduce(&state, .key(.tab))
        #expect(state.overviewPane == 2)
        var buffer = ScreenBuffer(width: 0, height: 0)
        render(state, theme: .builtin, into: &buffer)
        #expect(buffer.cursor.map { buffer.line($0.y).contains("left  C8 ") } == true, "the soonest deadline is not selected first")
        _ = reduce(&state, .key(.char("j")))
        render(state, theme: .builtin, into: &buffer)
        #expect(buffer.cursor.map { buffer.line($0.y).contains("C5 coins.5") } == true)
        // Past the last pending one the selection stays (the missed one is a count, not a row).
        _ = reduce(&state, .key(.char("j")))
        #expect(state.consumptionList.selected == 1)
        // A refresh keeps the selected request, though another arrived with a sooner deadline.
        data.consumptionRequests.append(request(3, sentHoursAgo: 11))
        _ = reduce(&state, .overviewLoaded(data))
        #expect(reduce(&state, .key(.enter)) == [.loadCustomer(5)])
        // Tab goes round the four panes (the chart's last).
        _ = reduce(&state, .key(.tab))
        #expect(state.overviewPane == 3)
        _ = reduce(&state, .key(.tab))
        #expect(state.overviewPane == 0)
    }

    @Test("Enter on a spike alarm opens the refund queue filtered to its product; on a severity, its open flags")
    func spikeOpensItsFlags() throws {
        var state = Fixture.state(screen: .overview)
        func spike(_ product: String, _ day: Int64) -> RefundFlag {
            RefundFlag(id: "refund-spike:\(product):\(day)", rule: "refund-spike", severity: .critical, customerId: nil, transactionId: nil,
                       productId: product, amount: nil, currency: nil, at: Fixture.at(-day), detail: "9 refunds")
        }
        var data = try #require(state.overview)
        data.spikes = [spike("filters.pack", 3), spike("coins.500", 5)]
        _ = reduce(&state, .overviewLoaded(data))
        _ = reduce(&state, .key(.char("j")))
        #expect(state.spikeList.selected == 1)
        var buffer = ScreenBuffer(width: 0, height: 0)
        render(state, theme: .builtin, into: &buffer)
        #expect(buffer.cursor.map { buffer.line($0.y).contains("coins.500") } == true, "the selected spike is not where the cursor is")
        // A refresh keeps the selected spike, though a new one arrived above it.
        data.spikes.insert(spike("pro.monthly", 1), at: 0)
        _ = reduce(&state, .overviewLoaded(data))
        #expect(data.spikes[state.spikeList.selected].productId == "coins.500")
        // The queue was last read from its end (G) under a / filter: Enter reads the product's flags from the start,
        // unfiltered, and drops what the whole queue had loaded.
        state.flagsFromEnd = true
        state.flagsPrevious = FlagCursor(at: Fixture.at(-1), id: "x")
        state.flagFilter = "c12"
        state.flagStatus = .resolved
        let effects = reduce(&state, .key(.enter))
        #expect(state.flags.isEmpty && state.flagsPrevious == nil && !state.flagsFromEnd)
        #expect(state.screen == .refunds && state.flagProduct == "coins.500" && state.flagFilter == nil)
        #expect(effects == [.loadFlags(FlagQuery(status: .open, productId: "coins.500", limit: 200), append: false)])
        #expect(reduce(&state, .key(.char("e")))
            == [.loadFlags(FlagQuery(status: .open, productId: "coins.500", environment: .production, limit: 200), append: false)])
        buffer = ScreenBuffer(width: 0, height: 0)
        render(state, theme: .builtin, into: &buffer)
        #expect(buffer.line(1).contains("Refund flags: open of coins.500"), "\(buffer.line(1))")
        _ = reduce(&state, .key(.char("e")))
        _ = reduce(&state, .key(.char("e")))
        // Enter on the severities pane, while the queue is scoped: the open flags of the severity selected (j: the
        // second line, medium), every product's, unfiltered.
        _ = reduce(&state, .key(.char("1")))
        _ = reduce(&state, .key(.tab))
        _ = reduce(&state, .key(.char("j")))
        state.flagFilter = "c12"
        #expect(reduce(&state, .key(.enter)) == [.loadFlags(FlagQuery(status: .open, severity: .medium, limit: 200), append: false)])
        #expect(state.screen == .refunds && state.flagProduct == nil && state.flagFilter == nil && state.flagSeverity == .medium)
        render(state, theme: .builtin, into: &buffer)
        #expect(buffer.line(1).contains("Refund flags: open, medium"), "\(buffer.line(1))")
        _ = reduce(&state, .key(.char("5")))
        #expect(state.flagSeverity == nil)
        // 5 and :refunds are the whole queue again.
        for keys in ["5", ":refunds\r"] {
            _ = reduce(&state, .key(.char("1")))
            state.overviewPane = 0
            _ = reduce(&state, .key(.enter))
            #expect(state.flagProduct == "coins.500")
            _ = reduce(&state, .key(.char("1")))
            var effects: [Effect] = []
            for c in keys { effects += reduce(&state, .key(c == "\r" ? .enter : .char(c))) }
            #expect(effects == [.loadFlags(FlagQuery(status: .open, limit: 200), append: false)], "\(keys)")
            #expect(state.screen == .refunds && state.flagProduct == nil, "\(keys)")
        }
    }

    @Test("Enter on a spike in the queue narrows it to the spike's product; Esc brings the queue back as it was, the spike selected")
    func spikeInQueueAndBack() throws {
        var state = Fixture.state(screen: .overview)
        _ = reduce(&state, .key(.char("5")))
        // A production spike: its flags are production's (sandbox refunds of the product are tests, not counted in it).
        let spike = RefundFlag(
            id: "refund-spike:coins.500:3", rule: "refund-spike", severity: .critical, customerId: nil, transactionId: nil,
            productId: "coins.500", amount: nil, currency: nil, at: Fixture.at(-3), detail: "9 refunds", environment: .production)
        let others = (1...3).map { i in
            RefundFlag(id: "quick-refund:\(i)", rule: "quick-refund", severity: .high, customerId: Int64(i), transactionId: "t\(i)",
                       productId: "pro.monthly", amount: nil, currency: nil, at: Fixture.at(-Int64(i)), detail: "refund")
        }
        _ = reduce(&state, .flagsLoaded(others + [spike], next: nil, append: false))
        state.flagStatus = .acknowledged
        _ = reduce(&state, .key(.char("G")))
        #expect(visibleFlags(state)[state.flagList.selected].id == spike.id)
        #expect(
            reduce(&state, .key(.enter))
                == [.loadFlags(FlagQuery(status: .open, productId: "coins.500", environment: .production, limit: 200), append: false)])
        #expect(state.flagProduct == "coins.500")
        _ = reduce(&state, .flagsLoaded([spike], next: nil, append: false))
        var buffer = ScreenBuffer(width: 0, height: 0)
        render(state, theme: .builtin, into: &buffer)
        #expect(buffer.line(1).contains("Refund flags: open of coins.500 in Production"), "\(buffer.line(1))")
        #expect(exportCSV(state).hasPrefix("# receiptdesk export: view=refunds environment=production status=open product=coins.500"), "\(exportCSV(state))")
        // Esc: the queue before, not the overview the queue was opened from.
        #expect(reduce(&state, .key(.escape)) == [.loadFlags(FlagQuery(status: .acknowledged, limit: 200), append: false)])
        #expect(state.screen == .refunds && state.flagProduct == nil && state.flagStatus == .acknowledged && state.flagEnvironment == nil)
        _ = reduce(&state, .flagsLoaded(others + [spike], next: nil, append: false))
        #expect(visibleFlags(state)[state.flagList.selected].id == spike.id)
        // The next Esc goes back as before.
        _ = reduce(&state, .key(.escape))
        #expect(state.screen == .overview)
    }

    @Test("time travel moves the subscribed-at filter to the new instant and reads the list again; A says what it counts")
    func coveredFollowsTimeTravel() {
        var state = Fixture.state(screen: .customers)
        _ = reduce(&state, .key(.char("A")))
        #expect(state.customerQuery.activeAt == state.instant)
        // (A grace period and a one-time purchase give access the list cannot tell: said, not called "covered".)
        #expect(state.message?.text.hasSuffix("(A shows all; grace periods and one-time purchases not counted)") == true, "\(state.message?.text ?? "")")
        let earlier = Fixture.at(-30)
        let effects = reduce(&state, .instantParsed(earlier))
        #expect(state.customerQuery.activeAt == earlier)
        #expect(effects == [.loadCustomers(CustomerQuery(activeAt: earlier, limit: 100), append: false)])
        _ = reduce(&state, .key(.char("A")))
        #expect(reduce(&state, .instantParsed(nil)).isEmpty && state.customerQuery.activeAt == nil)
    }

    @Test("e on the overview reloads its figures for the next environment, and the header names it")
    func overviewEnvironment() {
        var state = Fixture.state(screen: .overview)
        let instant = state.instant
        #expect(reduce(&state, .key(.char("e"))) == [.loadOverview(asOf: instant, environment: .production)])
        #expect(reduce(&state, .key(.char("e"))) == [.loadOverview(asOf: instant, environment: .sandbox)])
        var buffer = ScreenBuffer(width: 0, height: 0)
        render(state, theme: .builtin, into: &buffer)
        #expect(buffer.line(0).contains("env sandbox"))
        #expect(reduce(&state, .key(.char("e"))) == [.loadOverview(asOf: instant, environment: .all)])
        // Under time travel the overview is read as of the instant (pinned), back to live with `now`.
        let earlier = Fixture.at(-30)
        #expect(reduce(&state, .instantParsed(earlier)).contains(.loadOverview(asOf: earlier, environment: .all, pinned: true)))
        #expect(reduce(&state, .instantParsed(nil)).contains(.loadOverview(asOf: state.now, environment: .all, pinned: false)))
    }
}

@Suite("the customer screen says refunded only for a refund that stands")
struct RevocationLabelTests {
    @Test("a refund, a family revoke and an upgrade's prorated cancellation read as three different things")
    func revocations() {
        func revoked(_ id: String, _ edit: (inout Transaction) -> Void) -> Transaction {
            var t = Fixture.transaction(id, product: "pro.monthly", purchased: -40, expires: -10)
            t.revocationDate = Fixture.at(-20)
            edit(&t)
            return t
        }
        let refund = revoked("r1") { $0.revocationReason = .appIssue }
        let family = revoked("f1") { $0.revocationType = .familyRevoke }
        let upgrade = revoked("u1") { $0.isUpgraded = true }
        let kept = Fixture.transaction("k1", product: "pro.monthly", purchased: -10, expires: 20)
        let records = CustomerRecords(id: 7, identifiers: [], transactions: [refund, family, upgrade, kept], firstSeen: [:], renewalInfos: [], notifications: [])
        let view = CustomerView(detail: CustomerDetail(records: records, flags: [], log: []), at: Fixture.now, catalog: Catalog())
        #expect(view.revocations["r1"]??.isRefund == true)
        #expect(view.revocations["f1"]! == Revocation.familyRevoke(at: Fixture.at(-20)))
        #expect(view.revocations["u1"]! == nil)
        #expect(view.revocations["k1"] == nil)
    }

    @Test("the overview's refunds per day down to their transactions: h/l choose a day, Enter lists its refunds, Enter opens one")
    func dayRefunds() throws {
        var state = Fixture.state(width: 120, height: 40, screen: .overview)
        func screen() -> [String] {
            var buffer = ScreenBuffer(width: 0, height: 0)
            render(state, theme: .builtin, into: &buffer)
            return (0..<buffer.height).map(buffer.line)
        }
        let series = try #require(state.overview?.refunds90)
        // Tab's fourth stop is the chart: the last day chosen, said under it.
        for _ in 0..<3 { _ = reduce(&state, .key(.tab)) }
        #expect(state.overviewPane == 3)
        let lastDay = Format.day(series.firstDay.adding(milliseconds: 89 * 86_400_000))
        #expect(screen().contains { $0.hasPrefix(" \(lastDay): \(series.counts[89]) refunds; h/l another day, Enter lists its refunds") }, "\(screen().joined(separator: "\n"))")
        // h nine times: the day of 40 refunds (from another pane, h takes the chart's focus itself).
        state.overviewPane = 0
        for _ in 0..<9 { _ = reduce(&state, .key(.char("h"))) }
        #expect(state.overviewPane == 3 && state.seriesDay == 9)
        let day = series.firstDay.adding(milliseconds: 80 * 86_400_000)
        // Live, as the chart counts them: to the end of today (a refund dated later today is in today's bar).
        let endOfToday = Fixture.now.endOfUTCDay
        #expect(reduce(&state, .key(.enter)) == [.loadDayRefunds(day: day, until: endOfToday, environment: .all)])
        #expect(screen().contains { $0.contains("Refunds on \(Format.day(day))") } && screen().contains { $0.contains("reading the ledger…") })
        let refunds = (0..<40).map { n in
            DayRefund(
                transactionId: "7000\(n)", productId: "filters.pack", environment: "Production", price: 4_990, currency: "USD",
                refundedAt: day.adding(milliseconds: Int64(n) * 60_000), share: n == 2 ? 35_000 : 100_000)
        }
        _ = reduce(&state, .dayRefundsLoaded(day: day, refunds))
        var lines = screen()
        #expect(lines.contains { $0.hasPrefix("─ Refunds on \(Format.day(day)) (40); Enter opens one, Esc closes") }, "\(lines.joined(separator: "\n"))")
        #expect(lines.contains { $0.contains("70000") && $0.contains("filters.pack") && $0.hasSuffix("4.99 USD") }, "\(lines.joined(separator: "\n"))")
        #expect(lines.contains { $0.contains("70002") && $0.hasSuffix("4.99 USD (35%)") }, "a partial refund says its share")
        // The panes below give it their room; j moves, y copies, Enter opens the transaction. q closes it, as the footer
        // says, and Tab does nothing (the panes are under it: Tab, Esc, Enter opened an unseen one).
        #expect(!lines.contains { $0.contains("Spike alarms") })
        #expect(lines.last?.contains("q close") == true, "\(lines.last ?? "")")
        #expect(reduce(&state, .key(.tab)).isEmpty && state.overviewPane == 3)
        _ = reduce(&state, .key(.char("j")))
        #expect(reduce(&state, .key(.char("y"))) == [.copy("70001")])
        #expect(reduce(&state, .key(.enter)) == [.loadTransaction("70001")])
        // A refresh keeps the selected refund, though one came before it.
        _ = reduce(&state, .dayRefundsLoaded(day: day, [DayRefund(transactionId: "69999", refundedAt: day)] + refunds))
        #expect(state.dayRefunds?.rows?[safe: state.dayRefunds?.list.selected ?? -1]?.transactionId == "70001")
        // l: the next day's list is read; its late answer for the day left is not taken.
        let next = series.firstDay.adding(milliseconds: 81 * 86_400_000)
        #expect(reduce(&state, .key(.char("l"))) == [.loadDayRefunds(day: next, until: endOfToday, environment: .all)])
        _ = reduce(&state, .dayRefundsLoaded(day: day, refunds))
        #expect(state.dayRefunds?.day == next && state.dayRefunds?.rows == nil)
        _ = reduce(&state, .dayRefundsLoaded(day: next, []))
        lines = screen()
        #expect(lines.contains { $0.trimmingCharacters(in: .whitespaces) == "none" }, "\(lines.joined(separator: "\n"))")
        // The environment cycled: the list is read again with the overview.
        let effects = reduce(&state, .key(.char("e")))
        #expect(effects.contains(.loadDayRefunds(day: next, until: endOfToday, environment: .production)), "\(effects)")
        // Time travel: read again up to the instant (the bar's count moves to it; its rows were of the old one).
        let noon = next.startOfUTCDay.adding(milliseconds: 12 * 3_600_000)
        #expect(reduce(&state, .instantParsed(noon)).contains(.loadDayRefunds(day: next, until: noon, environment: .production)))
        _ = reduce(&state, .instantParsed(nil))
        // The series a day later (midnight passed): the chart's chosen day follows the list's, one further back.
        var moved = try #require(state.overview)
        moved.refunds90 = RefundSeries(firstDay: series.firstDay.adding(milliseconds: 86_400_000), counts: Array(series.counts.dropFirst()) + [0])
        _ = reduce(&state, .overviewLoaded(moved))
        #expect(state.seriesDay == 9 && state.dayRefunds?.day == next && chosenSeriesDay(state)?.day == next)
        _ = reduce(&state, .overviewLoaded(try #require(Fixture.state().overview)))
        // Narrower, the chart shows 30 days: a day chosen 40 back is the first shown, and its list closes.
        state.seriesDay = 40
        _ = reduce(&state, .resize(width: 80, height: 24))
        #expect(state.seriesDay == 29 && state.dayRefunds == nil)
        _ = reduce(&state, .resize(width: 120, height: 40))
        _ = reduce(&state, .key(.enter))
        _ = reduce(&state, .dayRefundsLoaded(day: try #require(state.dayRefunds?.day), []))
        // Esc closes it, the panes come back; another Esc goes nowhere on the top screen.
        _ = reduce(&state, .key(.escape))
        #expect(state.dayRefunds == nil && screen().contains { $0.contains("Spike alarms") })
    }
}
