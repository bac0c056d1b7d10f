import Entitlements
import LedgerQueries
import ReceiptModel

func handleKey(_ state: inout AppState, _ key: Key) -> [Effect] {
    // A terminal too small to draw in shows only that: keys would act unseen (2 changed screens), so only the
    // quitting ones do.
    if !state.fitsTerminal {
        // (Q is a letter of a prompt's text: there only Ctrl-C quits, and the text waits for the terminal to grow.)
        return key == .ctrl("c") || (key == .char("Q") && state.prompt == nil) ? quit(&state) : []
    }
    if state.prompt != nil { return handlePromptKey(&state, key) }
    if state.showHelp {
        // Moving keys scroll the keys when they do not all fit; any other key closes help; Ctrl-C still quits.
        let layout = helpLayout(state)
        let hidden = max(0, layout.bindings.count - layout.rows * layout.columns)
        let step: Int? = switch key {
        case .char("j"), .down, .wheelDown: 1
        case .char("k"), .up, .wheelUp: -1
        case .char(" "), .pageDown, .ctrl("f"): layout.rows
        case .pageUp, .ctrl("b"): -layout.rows
        default: nil
        }
        if let step, hidden > 0 {
            state.helpTop = min(max(0, state.helpTop + step), hidden)
            return []
        }
        state.showHelp = false
        if key == .ctrl("c") || key == .char("Q") { return quit(&state) }
        return []
    }
    if state.rawView != nil {
        // Moving keys scroll the record; `?` says its keys; any other key closes it; Ctrl-C still quits.
        if key == .ctrl("c") || key == .char("Q") { return quit(&state) }
        let page = RawView.viewport(screenWidth: state.width, screenHeight: state.height).height
        let scrolls = state.rawView?.scrolls(screenWidth: state.width, screenHeight: state.height) ?? false
        if key == .char("?") {
            // The record's own keys, as its footer gives them (the screen's help under it named keys that do
            // something else here).
            state.message = StatusMessage(
                scrolls ? "this record: j/k, PgDn/PgUp, g/G scroll it; any other key closes it" : "this record: any key closes it")
            return []
        }
        // A record that fits closes at any key, as its footer says (j, k and G were taken as scrolling it).
        let step: Int? = switch key {
        case .char("j"), .down, .wheelDown: 1
        case .char("k"), .up, .wheelUp: -1
        case .char(" "), .pageDown, .ctrl("f"): page
        case .pageUp, .ctrl("b"): -page
        case .char("g"), .home: Int.min
        case .char("G"), .end: Int.max
        default: nil
        }
        let lines = scrolls ? step : nil
        if let lines { state.rawView?.scroll(by: lines, height: page) } else { state.rawView = nil }
        return []
    }
    if case .click(_, let y) = key, state.mouse { return click(&state, row: y) }
    guard let command = state.keymap.command(for: key, on: state.screen, readOnly: state.readOnly) else {
        if state.readOnly, Keymap.standard.command(for: key, on: state.screen, readOnly: false) != nil {
            let why =
                state.openedReadOnly
                ? state.readOnlyReason ?? "this ledger is opened for reading"
                : "this ledger is set read-only (receiptdesk ledger read-only off lifts it)"
            state.message = StatusMessage("read-only: \(why); triage is refused", kind: .error)
        } else {
            // A key that works on other screens says where (every screen any of its bindings names), rather than
            // doing nothing.
            let elsewhere = state.keymap.bindings.filter { $0.keys.contains(key) && $0.screens != nil && !(state.readOnly && $0.writes) }
            let screens = elsewhere.reduce(into: Set<ScreenID>()) { $0.formUnion($1.screens ?? []) }
            if let first = elsewhere.first, !screens.contains(state.screen) {
                let names = ScreenID.allCases.filter(screens.contains).map(\.title).joined(separator: ", ")
                state.message = StatusMessage("\(key.label) (\(first.help)) works on \(names); not on \(state.screen.title)")
            }
        }
        return []
    }
    state.message = nil
    // Any other key stops `G` following the flag queue or the imports to their end.
    if command != .bottom { state.followingToEnd = false }
    return run(&state, command)
}

/// Rows a notch of the mouse wheel moves.
let wheelRows = 3

private func quit(_ state: inout AppState) -> [Effect] {
    state.quitting = true
    return [.quit]
}

func run(_ state: inout AppState, _ command: Command) -> [Effect] {
    if state.screen == .overview, state.dayRefunds != nil, let effects = runInDayRefunds(&state, command) { return effects }
    switch command {
    case .earlierDay, .laterDay:
        // The chart takes the focus, and the day moves (at its ends it stays).
        state.overviewPane = 3
        stepSeriesDay(&state, earlier: command == .earlierDay)
        return []
    case .quit:
        return quit(&state)
    case .back:
        if let previous = state.history.popLast() { return arrive(&state, at: previous) }
        return quit(&state)
    case .dismiss:
        // Esc first clears a list's filter (the queue's, the customer list's), then goes back, and on the top screen
        // only clears what is shown: a stray Esc never quits.
        if state.screen == .refunds, state.flagFilter != nil {
            state.message = StatusMessage("filter cleared")
            return filterQueue(&state, nil)
        }
        if state.screen == .refunds, let before = state.queueBeforeSpike {
            // Back from a spike's flags to the queue it was opened from, the spike selected again once read.
            scopeFlagQueue(&state, to: before.product, severity: before.severity, fromStart: true)
            state.flagStatus = before.status
            state.flagFilter = before.filter
            state.selectFlagOnLoad = before.selectedFlag
            state.message = StatusMessage("the queue as it was before the spike's flags")
            return reloadEffects(state, keepSelection: false)
        }
        if state.screen == .customers, state.customerQuery.filter != nil {
            state.customerQuery.filter = nil
            state.customerList = ListPosition()
            state.message = StatusMessage("filter cleared")
            return [.loadCustomers(pageQuery(state), append: false)]
        }
        if !state.history.isEmpty { return run(&state, .back) }
        state.message = nil
        state.marked = []
        return []
    case .help:
        state.showHelp = true
        state.helpTop = 0
        return []
    case .findCustomer:
        // Where there is nothing to filter, / finds a customer: what is typed after it goes into that prompt, not to
        // the keys (the "u" of "/bug" on the Overview undid a triage).
        var prompt = Prompt(kind: .command, text: "customer ")
        prompt.offered = false
        prompt.hint = StatusMessage("nothing to filter on \(state.screen.title): / finds a customer here (Esc cancels)")
        state.prompt = prompt
        state.message = prompt.hint
        return []
    case .commandLine:
        var prompt = Prompt(kind: .command)
        prompt.completions = completions(for: "", state: state)
        state.prompt = prompt
        return []
    case .filter:
        state.prompt = Prompt(kind: .filter, text: currentFilter(state) ?? "")
        return []
    case .timeTravel:
        state.prompt = Prompt(kind: .instant, text: state.asOf.map { Format.minute($0) } ?? "")
        return []
    case .screen(let screen):
        // The queue by its key is the whole queue, not one spike's product.
        if screen == .refunds { scopeFlagQueue(&state, to: nil) }
        return switchScreen(&state, to: screen)
    case .up: return move(&state, by: -1)
    case .down: return move(&state, by: 1)
    case .scrollUp: return move(&state, by: -wheelRows)
    case .scrollDown: return move(&state, by: wheelRows)
    case .pageUp: return move(&state, by: -pageRows(state))
    case .pageDown: return move(&state, by: pageRows(state))
    case .top where state.screen == .customers && state.customerOffset > 0:
        // The loaded rows start below the top (G loaded the end): the top is read again.
        state.customerList = ListPosition()
        state.selectTopOnLoad = true
        state.customersLoading = true
        return [.loadCustomers(pageQuery(state), append: false)]
    case .top where state.screen == .refunds && state.flagsFromEnd:
        // The loaded flags are the end of the queue: its start is read again.
        state.flagList = ListPosition()
        state.selectTopOnLoad = true
        return [.loadFlags(flagQuery(state), append: false)]
    case .top: return move(&state, by: Int.min / 2)
    case .bottom where state.screen == .customers && state.customerPage.next != nil && !state.customerPage.totalIsLowerBound:
        // The end of the whole list, read backward from it (a counted list: where its rows sit is known).
        var query = pageQuery(state)
        query.direction = .backward
        query.limit = max(query.limit, state.listRows * 2)
        state.customerList.selected = Int.max / 2
        state.customersLoading = true
        return [.loadCustomers(query, append: false)]
    case .bottom where state.screen == .refunds && state.flagsNext != nil:
        // The end of the flag queue, read backward from it: scrolling up loads the flags before.
        var query = flagQuery(state)
        query.direction = .backward
        state.flagList.selected = Int.max / 2
        return [.loadFlags(query, append: false)]
    case .bottom where state.screen == .imports || state.screen == .customers:
        // The imports and a customer list counted only in part (where its end sits is not known) page forward:
        // G follows them toward their end, a few pages per press, the selection on the last row loaded (any
        // other key stops it).
        state.followingToEnd = true
        state.followPagesLeft = 5
        return move(&state, by: Int.max / 2)
    case .bottom: return move(&state, by: Int.max / 2)
    case .nextPane, .previousPane:
        let step = command == .nextPane ? 1 : -1
        switch state.screen {
        case .customer:
            // The flags pane is a stop only for a customer with flags.
            let panes = state.customer?.flags.isEmpty == false ? 4 : 3
            state.customerPane = (min(state.customerPane, panes - 1) + step + panes) % panes
        case .imports: state.importsPane = (state.importsPane + step + 2) % 2
        case .overview: state.overviewPane = (state.overviewPane + step + 4) % 4
        default: break
        }
        return []
    case .open:
        return open(&state)
    case .nextMatch, .previousMatch:
        return nextMatch(&state, forward: command == .nextMatch)
    case .copyId:
        guard let id = selectedId(state) else { return [] }
        // Data is not trusted on the clipboard either: an id holding what the screen shows escaped (a control
        // character, an escape sequence, a line break, a direction override) is not copied: pasted into a shell its
        // line break ran the line. Nor is its escaped form, which is not the id.
        guard Sanitize.text(id) == id else {
            state.message = StatusMessage("not copied: this value holds control or direction characters (shown escaped)", kind: .error)
            return []
        }
        state.message = StatusMessage("copied \(id)")
        return [.copy(id)]
    case .acknowledge, .reopen:
        guard mayTriage(&state) else { return [] }
        let target: FlagStatus = command == .acknowledge ? .acknowledged : .open
        let ids = triageTargets(state, toward: target)
        guard !ids.isEmpty else {
            state.message = StatusMessage(noTriageTarget(state, toward: target), kind: .error)
            return []
        }
        guard beginTriage(&state) else { return [] }
        // Acknowledging expects the flag still open: one someone resolved since the screen was read is left as they
        // set it (the ledger writes nothing), not taken back into work.
        return [
            .triage(
                flagIds: ids, action: command == .acknowledge ? .ack : .reopen, note: nil, undo: false,
                expecting: command == .acknowledge ? .open : nil)
        ]
    case .resolve:
        guard mayTriage(&state) else { return [] }
        let ids = triageTargets(state, toward: .resolved)
        guard !ids.isEmpty else {
            state.message = StatusMessage(noTriageTarget(state, toward: .resolved), kind: .error)
            return []
        }
        // A note whose resolve of these flags was not saved is offered again (Enter keeps it, typing replaces it).
        let unsaved = state.unsavedNote.flatMap { $0.flagIds == Set(ids) ? $0.text : nil }
        state.prompt = Prompt(kind: .note(flagIds: ids), text: unsaved ?? "")
        return []
    case .undo:
        // The last action (one flag or a bulk one) is undone as a unit; it leaves the stack only when the
        // compensating entries are written (`.triaged(undo: true)`), so a failed write can be retried. (While a write
        // is on its way, what there is to undo is not known yet.)
        guard mayTriage(&state) else { return [] }
        guard let batch = state.undoStack.last, !batch.isEmpty else {
            state.message = StatusMessage("nothing of yours to undo this session", kind: .error)
            return []
        }
        // (An undo takes no marks: they stay for the next key.)
        let byTarget = Dictionary(grouping: batch, by: \.from)
        state.undoReport = []
        return byTarget.keys.sorted { $0.rawValue < $1.rawValue }.map { from in
            let changes = byTarget[from] ?? []
            return .triage(
                flagIds: changes.map(\.flagId), action: TriageAction(toReach: from), note: undoNote(of: changes[0].to), undo: true,
                expecting: changes[0].to)
        }
    case .mark:
        guard let flag = visibleFlags(state)[safe: state.flagList.selected] else { return [] }
        if state.marked.contains(flag.id) { state.marked.remove(flag.id) } else { state.marked.insert(flag.id) }
        return move(&state, by: 1)
    case .sort:
        let all = CustomerSort.allCases
        let next = all[(all.firstIndex(of: state.customerQuery.sort)! + 1) % all.count]
        state.customerQuery.sort = next
        state.customerList = ListPosition()
        state.message = StatusMessage("sorted by \(next.label)")
        return [.loadCustomers(pageQuery(state), append: false)]
    case .cycleStatus:
        let order: [FlagStatus?] = FlagStatus.allCases + [nil]
        let index = order.firstIndex(of: state.flagStatus) ?? 0
        state.flagStatus = order[(index + 1) % order.count]
        state.flagList = ListPosition()
        state.marked = []
        return [.loadFlags(flagQuery(state), append: false)]
    case .cycleEnvironment:
        let all = EnvironmentFilter.allCases
        return setEnvironment(&state, all[((all.firstIndex(of: state.environment) ?? 0) + 1) % all.count])
    case .toggleCovered:
        state.customerQuery.activeAt = state.customerQuery.activeAt == nil ? state.instant : nil
        state.customerList = ListPosition()
        state.message = StatusMessage(
            state.customerQuery.activeAt.map {
                // (What the ledger's list can tell: a period of a subscription. A grace period and a one-time purchase
                // give access too, which the customer's screen says, but the list does not know them.)
                "only customers subscribed at \(Format.minute($0)) (A shows all; grace periods and one-time purchases not counted)"
            } ?? "all customers, subscribed or not")
        return [.loadCustomers(pageQuery(state), append: false)]
    case .toggleFlagged:
        state.customerQuery.withOpenFlags.toggle()
        state.customerList = ListPosition()
        state.message = StatusMessage(state.customerQuery.withOpenFlags ? "only customers with open flags (F shows all)" : "all customers, flagged or not")
        return [.loadCustomers(pageQuery(state), append: false)]
    }
}

extension CustomerSort {
    var label: String {
        switch self {
        case .id: "customer id"
        case .lastActivity: "last activity"
        case .refunds: "refunds"
        }
    }
}

func pageQuery(_ state: AppState) -> CustomerQuery {
    var query = state.customerQuery
    query.after = nil
    query.environment = state.environment
    return query
}

func setEnvironment(_ state: inout AppState, _ environment: EnvironmentFilter) -> [Effect] {
    state.environment = environment
    state.customerQuery.environment = environment
    state.customerList = ListPosition()
    // (`:env` works on every screen, `e` on those it filters: elsewhere the header keeps saying "env all", so the
    // message says where the choice applies rather than that this screen changed.)
    let filtered = ScreenID.allCases.filter(ScreenID.environmentFiltered.contains).map(\.title)
    let names = filtered.dropLast().joined(separator: ", ") + " and " + (filtered.last ?? "")
    state.message = StatusMessage(
        "environment: \(environment.rawValue)"
            + (ScreenID.environmentFiltered.contains(state.screen) ? "" : " on the \(names) (the \(state.screen.title) screen shows every environment)"))
    return state.screen == .customers ? [.loadCustomers(pageQuery(state), append: false)] : reloadEffects(state, keepSelection: false)
}

func switchScreen(_ state: inout AppState, to screen: ScreenID) -> [Effect] {
    switch screen {
    case .customer where state.customer == nil:
        state.message = StatusMessage("no customer open yet: Enter on a customer, or :customer ID", kind: .error)
        return []
    case .transaction where state.transaction == nil:
        state.message = StatusMessage("no transaction open yet: Enter on a transaction of a customer", kind: .error)
        return []
    default:
        // A screen chosen by its key or command that the trail holds already is gone back to, not stacked again: the
        // trail stays the way there (the overview is its start), so q never walks back through every screen visited.
        // (It shows the customer or transaction open now, not the one that visit held: the key names the screen.)
        if screen != state.screen, let index = state.history.lastIndex(where: { $0.screen == screen }) {
            state.history.removeSubrange(index...)
            state.screen = screen
            state.search = nil
            return reloadEffects(state, keepSelection: true)
        }
        go(&state, to: screen)
        return reloadEffects(state, keepSelection: true)
    }
}

func move(_ state: inout AppState, by delta: Int) -> [Effect] {
    switch state.screen {
    case .customers:
        state.customerList.move(by: delta, count: state.customerPage.rows.count, visible: state.listRows)
        // Rows loaded from the end: fetch the page before them as the selection nears their start.
        if delta < 0, state.customerList.selected < state.listRows, let previous = state.customerPage.previous, !state.customersLoading {
            state.customersLoading = true
            var query = pageQuery(state)
            query.after = previous
            query.direction = .backward
            return [.loadCustomers(query, append: true)]
        }
        // Fetch the next page before the selection reaches the end of what is loaded.
        if state.customerList.selected >= state.customerPage.rows.count - state.listRows, let next = state.customerPage.next,
            !state.customersLoading
        {
            state.customersLoading = true
            var query = pageQuery(state)
            query.after = next
            return [.loadCustomers(query, append: true)]
        }
    case .customer:
        guard state.customerView != nil else { return [] }
        let counts = customerPaneCounts(state)
        state.customerPositions[state.customerPane].move(by: delta, count: counts[state.customerPane], visible: customerPaneRows(state))
    case .transaction:
        state.transactionScroll.move(by: delta, count: transactionFields(state.transaction).count, visible: state.listRows)
    case .refunds:
        let count = visibleFlags(state).count
        state.flagList.move(by: delta, count: count, visible: state.listRows)
        // Flags loaded from the end: the page before them as the selection nears their start.
        if delta < 0, state.flagList.selected < state.listRows, let previous = state.flagsPrevious {
            state.flagsPrevious = nil
            var query = flagQuery(state)
            query.after = previous
            query.direction = .backward
            return [.loadFlags(query, append: true)]
        }
        if state.flagList.selected >= count - state.listRows, let next = state.flagsNext {
            state.flagsNext = nil
            var query = flagQuery(state)
            query.after = next
            return [.loadFlags(query, append: true)]
        }
    case .imports:
        let pane = state.importsPane
        let count = pane == 0 ? state.sources.count : state.rejected.count
        state.importPositions[pane].move(by: delta, count: count, visible: pageRows(state))
        // The next page before the selection reaches the end of what is loaded.
        if state.importPositions[pane].selected >= count - state.listRows, state.importsMore[pane], !state.importsLoading {
            state.importsLoading = true
            return [
                pane == 0
                    ? .loadMoreImports(sourcesAfter: state.sources.last?.id, rejectedAfter: nil)
                    : .loadMoreImports(sourcesAfter: nil, rejectedAfter: state.rejected.last?.id)
            ]
        }
    case .overview:
        guard let data = state.overview else { break }
        switch state.overviewPane {
        case 0: state.spikeList.move(by: delta, count: data.spikes.count, visible: data.spikes.count)
        case 1:
            let count = overviewSeverities(data).count
            state.severityList.move(by: delta, count: count, visible: count)
        case 2:
            let count = pendingConsumptionRequests(data, at: state.instant).count
            state.consumptionList.move(by: delta, count: count, visible: count)
        default: break
        }
    }
    return []
}

private func open(_ state: inout AppState) -> [Effect] {
    switch state.screen {
    case .customers:
        guard let row = state.customerPage.rows[safe: state.customerList.selected] else { return [] }
        return [.loadCustomer(row.id)]
    case .customer:
        guard let detail = state.customer, let view = state.customerView else { return [] }
        let position = state.customerPositions[state.customerPane].selected
        switch state.customerPane {
        case 1:
            guard let id = view.timeline[safe: position]?.transactionId else { return [] }
            return [.loadTransaction(id)]
        case 2:
            guard let t = view.transactions[safe: position] else { return [] }
            return [.loadTransaction(t.transactionId)]
        case 3:
            // A flag opens the timeline on what it is about, as Enter on the queue does.
            guard let flag = detail.flags[safe: position] else { return [] }
            guard flag.at <= view.instant else {
                state.message = StatusMessage(
                    "\(flag.id) was raised \(Format.minute(flag.at)), after the instant shown: t now shows its event", kind: .error)
                return []
            }
            guard let index = timelineIndex(of: flag, in: view.timeline) else {
                state.message = StatusMessage("\(flag.id) names no transaction of this timeline", kind: .error)
                return []
            }
            state.customerPane = 1
            state.customerPositions[1].move(by: index - state.customerPositions[1].selected, count: view.timeline.count, visible: customerPaneRows(state))
            return []
        default:
            guard let id = view.entitlements[safe: position]?.transactionId else { return [] }
            return [.loadTransaction(id)]
        }
    case .refunds:
        guard let flag = visibleFlags(state)[safe: state.flagList.selected] else { return [] }
        if let customer = flag.customerId {
            // The customer's timeline opens on what the flag is about (the refund, the request), not their newest event.
            state.focusFlag = flag
            return [.loadCustomer(customer)]
        }
        // A spike is about a product: its product's flags, as Enter on the overview's spike gives.
        guard flag.rule == "refund-spike", let product = flag.productId else {
            state.message = StatusMessage("\(flag.id) names no customer: nothing to open", kind: .error)
            return []
        }
        guard state.flagProduct != product else {
            state.message = StatusMessage("these are the flags of \(product) already; 5 shows the whole queue")
            return []
        }
        return openFlagQueue(&state, spike: flag)
    case .imports:
        guard state.importsPane == 1 else {
            state.message = StatusMessage("a source opens nothing more: its rejected records are below (Tab), Enter shows their bytes")
            return []
        }
        guard let record = state.rejected[safe: state.importPositions[1].selected] else { return [] }
        return [.loadRaw(record.id)]
    case .overview where state.overviewPane == 3:
        // Enter on a day of the chart lists the refunds its bar counts.
        return openDayRefunds(&state)
    case .overview where state.overviewPane == 2:
        // Enter on a pending consumption request opens its customer: the answer is due within hours.
        guard let data = state.overview, let request = pendingConsumptionRequests(data, at: state.instant)[safe: state.consumptionList.selected],
            let customer = request.customerId
        else { return [] }
        state.focusFlag = request
        return [.loadCustomer(customer)]
    case .overview:
        // Enter on a spike alarm opens the refund queue of the spike's product (read by the ledger), the flags behind
        // the figure; on a severity, the open flags it counts. Either is the queue from its start, unfiltered, its
        // open flags whatever status `f` showed last.
        if state.overviewPane == 1 {
            guard let data = state.overview, let line = overviewSeverities(data)[safe: state.severityList.selected] else { return [] }
            return openFlagQueue(&state, spike: nil, severity: line.severity)
        }
        return openFlagQueue(&state, spike: state.overview?.spikes[safe: state.spikeList.selected])
    case .transaction:
        return []
    }
}

/// The rows PgUp and PgDn move: a list's rows on screen (on Imports, the focused list's, as drawn: paging by the
/// screen's skipped rows never shown).
func pageRows(_ state: AppState) -> Int {
    state.screen == .imports ? importsRows(state, pane: state.importsPane) : state.listRows
}

/// The day chosen on the overview's chart: its start, and how many refunds its bar counts.
func chosenSeriesDay(_ state: AppState) -> (day: Timestamp, count: Int)? {
    guard let series = state.overview?.refunds90, !series.counts.isEmpty else { return nil }
    let index = series.counts.count - 1 - min(state.seriesDay, max(0, overviewChartDays(state) - 1))
    guard let count = series.counts[safe: index] else { return nil }
    return (series.firstDay.adding(milliseconds: Int64(index) * 86_400_000), count)
}

/// Lists the refunds of the chosen day over the overview's panes (read by the ledger, up to the instant).
func openDayRefunds(_ state: inout AppState) -> [Effect] {
    guard let (day, count) = chosenSeriesDay(state) else { return [] }
    let kept = state.dayRefunds.flatMap { $0.day == day ? $0 : nil }
    state.dayRefunds = kept ?? DayRefundsList(day: day, count: count)
    state.dayRefunds?.count = count
    return [loadDayRefunds(state, day: day)]
}

/// The read of a day's refunds as its bar counts them: to the series' end (the instant under time travel, else the
/// end of today), in the environment shown.
func loadDayRefunds(_ state: AppState, day: Timestamp) -> Effect {
    .loadDayRefunds(day: day, until: refundSeriesEnd(state.instant, pinned: state.asOf != nil), environment: state.environment)
}

/// The chosen day one earlier or later, within the days the chart shows.
func stepSeriesDay(_ state: inout AppState, earlier: Bool) {
    state.seriesDay = min(max(0, state.seriesDay + (earlier ? 1 : -1)), max(0, overviewChartDays(state) - 1))
}

/// A key while a day's refunds are listed on the overview: the list's own (move, Enter opens the transaction, y
/// copies its id as anywhere, h/l another day, Esc and q close it); nil for the others, which do what they do
/// anywhere.
private func runInDayRefunds(_ state: inout AppState, _ command: Command) -> [Effect]? {
    guard var list = state.dayRefunds else { return nil }
    let rows = list.rows ?? []
    let page = max(1, dayRefundsRows(state))
    let delta: Int? = switch command {
    case .down: 1
    case .up: -1
    case .scrollDown: wheelRows
    case .scrollUp: -wheelRows
    case .pageDown: page
    case .pageUp: -page
    case .top: Int.min / 2
    case .bottom: Int.max / 2
    default: nil
    }
    if let delta {
        list.list.move(by: delta, count: rows.count, visible: page)
        state.dayRefunds = list
        return []
    }
    switch command {
    case .open:
        guard let refund = rows[safe: list.list.selected] else { return [] }
        return [.loadTransaction(refund.transactionId)]
    case .dismiss, .back:
        state.dayRefunds = nil
        return []
    case .nextPane, .previousPane:
        // The panes are under the list: Tab moved the focus to one unseen, and Enter after Esc opened it.
        return []
    case .earlierDay, .laterDay:
        stepSeriesDay(&state, earlier: command == .earlierDay)
        state.dayRefunds = nil
        return openDayRefunds(&state)
    default:
        return nil
    }
}

/// The open flags of the queue from its start, of a spike's product when one is given (the flags behind its
/// figure, read by the ledger), else every product's; of one severity when one is given.
private func openFlagQueue(_ state: inout AppState, spike: RefundFlag?, severity: Severity? = nil) -> [Effect] {
    // From the queue itself, Esc comes back to the queue as it was (a spike in it is no new screen).
    let before =
        state.screen == .refunds
        ? QueueScope(
            product: state.flagProduct, severity: state.flagSeverity, status: state.flagStatus, filter: state.flagFilter,
            selectedFlag: visibleFlags(state)[safe: state.flagList.selected]?.id)
        : nil
    scopeFlagQueue(&state, to: spike?.productId, severity: severity, fromStart: true)
    state.queueBeforeSpike = before
    // A spike is counted in one environment (an unstated one with production's): its flags are that environment's.
    switch spike?.environment {
    case .production?: state.flagEnvironment = .production
    case .sandbox?: state.flagEnvironment = .sandbox
    default: break
    }
    state.flagFilter = nil
    state.flagStatus = .open
    if let spike, let product = spike.productId {
        state.message = StatusMessage("the flags of \(product), whose refunds spiked on \(Format.day(spike.at)); 5 shows the whole queue")
    }
    return state.screen == .refunds ? reloadEffects(state, keepSelection: false) : switchScreen(&state, to: .refunds)
}

private func click(_ state: inout AppState, row y: Int) -> [Effect] {
    let firstRow = 3
    // The row under the pointer as the list is drawn: the rows it shows (the queue gives one to who last moved the
    // selected flag under 120 columns, once any flag shown was moved) and its window, the selection inside it.
    // Only a click on those rows selects: one on the header, the column names, the detail or status line or the
    // footer selected a row off the screen (which a triage key then acted on, unseen).
    let visible: Int
    let count: Int
    var window: ListPosition
    switch state.screen {
    case .customers:
        (visible, count, window) = (state.listRows, state.customerPage.rows.count, state.customerList)
    case .refunds:
        (visible, count, window) = (flagQueueRows(state), visibleFlags(state).count, state.flagList)
    default:
        return []
    }
    guard y >= firstRow, y < firstRow + visible else { return [] }
    if (0..<count).contains(window.selected) { window.move(by: 0, count: count, visible: visible) }
    let index = window.top + y - firstRow
    guard (0..<count).contains(index) else { return [] }
    if state.screen == .customers { state.customerList.selected = index } else { state.flagList.selected = index }
    return []
}

/// The transaction screen's rows `y` copies as they are: identifiers a customer or another tool may quote.
private let copiedFields: Set<String> = [
    "transactionId", "originalTransactionId", "webOrderLineItemId", "bundleId", "productId", "subscriptionGroupIdentifier",
    "appAccountToken", "offerIdentifier", "storefrontId", "appTransactionId",
]

/// The id `y` copies on each screen.

func selectedId(_ state: AppState) -> String? {
    switch state.screen {
    case .customers:
        guard let row = state.customerPage.rows[safe: state.customerList.selected] else { return nil }
        return row.identifiers.first { $0.kind == .originalTransactionId }?.value ?? row.displayId
    case .customer:
        guard let detail = state.customer, let view = state.customerView else { return nil }
        let position = state.customerPositions[state.customerPane].selected
        switch state.customerPane {
        case 1: return view.timeline[safe: position]?.transactionId
        case 2: return view.transactions[safe: position]?.transactionId
        case 3: return detail.flags[safe: position]?.id
        default: return view.entitlements[safe: position]?.transactionId ?? "C\(detail.records.id)"
        }
    case .transaction:
        // The selected row's value when it is an identifier (a customer may quote any of them), else the transaction's id.
        if let field = transactionFields(state.transaction)[safe: state.transactionScroll.selected], copiedFields.contains(field.key) {
            return field.value
        }
        return state.transaction?.transactionId
    case .refunds: return visibleFlags(state)[safe: state.flagList.selected]?.id
    case .overview: return state.dayRefunds.flatMap { $0.rows?[safe: $0.list.selected]?.transactionId }
    default: return nil
    }
}

/// Whether a triage key toward `target` moves a flag: acknowledge moves an open one (a resolved flag is reopened
/// with `o`, not acknowledged back into work), resolve one not resolved, reopen one not open.
func triageMoves(_ flag: RefundFlag, toward target: FlagStatus) -> Bool {
    switch target {
    case .acknowledged: flag.status == .open
    case .resolved: flag.status != .resolved
    case .open: flag.status != .open
    }
}

/// The flags a triage key acts on, of those chosen (`chosenFlags`) the ones the action moves (one it would not move
/// is not asked for).
private func triageTargets(_ state: AppState, toward target: FlagStatus) -> [String] {
    chosenFlags(state).filter { triageMoves($0, toward: target) }.map(\.id)
}

/// The flags a triage key is about: on the queue the marked flags, else the selected one; on a customer the flag
/// selected in the flags pane, else every flag of theirs.
private func chosenFlags(_ state: AppState) -> [RefundFlag] {
    switch state.screen {
    case .refunds:
        if !state.marked.isEmpty {
            // (Each once: a flag kept aside and read again is in one list only, and this keeps it so.)
            var seen = Set<String>()
            return (state.flags + state.markedAside).filter { state.marked.contains($0.id) && seen.insert($0.id).inserted }
        }
        return visibleFlags(state)[safe: state.flagList.selected].map { [$0] } ?? []
    case .customer:
        let flags = state.customer?.flags ?? []
        guard state.customerPane == 3 else { return flags }
        return flags[safe: state.customerPositions[3].selected].map { [$0] } ?? []
    default:
        return []
    }
}

/// The statuses of some flags, in their order: "acknowledged or resolved".
func statusList(_ flags: [RefundFlag]) -> String {
    FlagStatus.allCases.filter { status in flags.contains { $0.status == status } }.map(\.rawValue).joined(separator: " or ")
}

/// Why a triage key found no flag to move.
private func noTriageTarget(_ state: AppState, toward target: FlagStatus) -> String {
    let chosen = chosenFlags(state)
    // A resolved flag is not acknowledged: it is reopened.
    let reopen = target == .acknowledged && chosen.contains { $0.status == .resolved } ? " (o reopens a resolved flag)" : ""
    if chosen.count == 1 { return "\(chosen[0].id) is \(chosen[0].status.rawValue) already\(reopen)" }
    if state.screen == .customer, state.customerPane != 3 {
        return "no flag of this customer to make \(target.rawValue)\(reopen)"
    }
    return chosen.isEmpty ? "no flag selected" : "the \(chosen.count) marked flags are \(statusList(chosen)) already\(reopen)"
}

private func currentFilter(_ state: AppState) -> String? {
    switch state.screen {
    case .customers: state.customerQuery.filter
    case .refunds: state.flagFilter
    default: state.search
    }
}

private func nextMatch(_ state: inout AppState, forward: Bool) -> [Effect] {
    guard let needle = currentFilter(state)?.lowercased(), !needle.isEmpty else { return [] }
    switch state.screen {
    case .customer:
        guard let view = state.customerView else { return [] }
        // The detail as `lookup` prints it and as the screen shows it.
        let lines = view.timeline.map {
            "\($0.kind.rawValue) \($0.productId ?? "") \($0.transactionId ?? "") \($0.detail) \(Format.instants(in: $0.detail))".lowercased()
        }
        state.customerPane = 1
        guard !lines.isEmpty else {
            state.message = StatusMessage("no match for \(needle): the timeline is empty", kind: .error)
            return []
        }
        // Every row once, starting after the selection and wrapping around.
        let start = min(max(0, state.customerPositions[1].selected), lines.count - 1)
        let order = (1...lines.count).map { step in (start + (forward ? step : lines.count - step)) % lines.count }
        if let hit = order.first(where: { lines[$0].contains(needle) }) {
            state.customerPositions[1].move(by: hit - start, count: lines.count, visible: customerPaneRows(state))
        } else {
            state.message = StatusMessage("no match for \(needle)", kind: .error)
        }
        return []
    default:
        return move(&state, by: forward ? 1 : -1)
    }
}

// MARK: The prompt line

func handlePromptKey(_ state: inout AppState, _ key: Key) -> [Effect] {
    // The queue shows a `/` filter's flags as it is typed (of the loaded ones, until Enter has the ledger read them
    // all); the selection stays on its flag.
    guard state.screen == .refunds, case .filter? = state.prompt?.kind else { return editPrompt(&state, key) }
    let selected = visibleFlags(state)[safe: state.flagList.selected]?.id
    let effects = editPrompt(&state, key)
    keepFlagSelected(&state, selected)
    return effects
}

private func editPrompt(_ state: inout AppState, _ key: Key) -> [Effect] {
    guard var prompt = state.prompt else { return [] }
    switch key {
    case .escape, .ctrl("c"):
        closePrompt(&state)
        return []
    case .enter:
        closePrompt(&state)
        return submit(&state, prompt)
    case .backspace, .delete, .ctrl("d"):
        // Deleting from an empty prompt closes it, as Esc does.
        if prompt.text.isEmpty {
            closePrompt(&state)
            return []
        }
        if key == .backspace { prompt.deleteBackward() } else { prompt.deleteForward() }
    // The cursor moves as readline's does (what a terminal user's fingers expect), the arrows and Home/End too.
    case .left, .ctrl("b"):
        prompt.move(to: prompt.cursor - 1)
    case .right, .ctrl("f"):
        prompt.move(to: prompt.cursor + 1)
    case .home, .ctrl("a"):
        prompt.move(to: 0)
    case .end, .ctrl("e"):
        prompt.move(to: prompt.text.count)
    case .ctrl("w"):
        prompt.deleteWordBackward()
    case .ctrl("k"):
        prompt.deleteToEnd()
    case .tab:
        // Outside the command line there is nothing to complete: a Tab is the space it stands for in a note (it was
        // dropped, "tab<Tab>here" saved as "tabhere"; a control character is never kept).
        guard case .command = prompt.kind else { return editPrompt(&state, .char(" ")) }
        guard !prompt.completions.isEmpty else { return [] }
        // Tab takes the best completion, and again the next one (the list stays the one for what was typed); a
        // command that takes words it can list (a theme, an environment) lists them instead.
        let next = prompt.completions.firstIndex(of: prompt.text).map { ($0 + 1) % prompt.completions.count } ?? 0
        prompt.text = prompt.completions[next]
        prompt.offered = false
        if prompt.text.hasSuffix(" ") {
            // (One that takes words nobody can list, an id or a file, keeps the commands for the next Tab.)
            let words = completions(for: prompt.text, state: state)
            if !words.isEmpty { prompt.completions = words }
        }
        state.prompt = prompt
        return []
    case .ctrl("u"):
        prompt.clear()
    case .char(let c):
        guard prompt.insert(c) else { return [] }
    default:
        return []
    }
    if case .command = prompt.kind { prompt.completions = completions(for: prompt.text, state: state) }
    state.prompt = prompt
    return []
}

/// Closes the prompt, and what the status line said about it (a line set since, about something else, stays).
private func closePrompt(_ state: inout AppState) {
    if let hint = state.prompt?.hint, state.message == hint { state.message = nil }
    state.prompt = nil
}

/// Pasted text (the terminal's bracketed paste) is typed into the prompt at its cursor, its line breaks and tabs as
/// spaces; outside a prompt its first line opens the command line as `customer LINE` (what a support agent pastes
/// is an id, from a message), for Enter to run. It is never keys: a line break in a paste was Enter, and the
/// letters after it triage keys (`a` in "Regards" acknowledged a flag).
func handlePaste(_ state: inout AppState, _ pasted: String) -> [Effect] {
    guard state.fitsTerminal else { return [] }
    var text = pastedText(pasted)
    guard !text.trimmingWhitespace().isEmpty else { return [] }
    if state.prompt == nil {
        let lines = pasted.split(whereSeparator: \.isNewline).map { pastedText(String($0)).trimmingWhitespace() }.filter { !$0.isEmpty }
        text = lines.first ?? text
        state.showHelp = false
        state.rawView = nil
        // As a key does: what was said before (a lookup that found no one) is not left under what this one finds.
        state.message = nil
        var prompt = Prompt(kind: .command, text: "customer ")
        prompt.offered = false
        state.prompt = prompt
    }
    // (The prompt holds what fits of it, as it does of what is typed.)
    var effects: [Effect] = []
    for character in text.prefix(Prompt.maxLength) { effects += handlePromptKey(&state, .char(character)) }
    return effects
}

/// A paste as one line: the line breaks at its ends dropped, the others and tabs spaces, other control characters
/// dropped.
func pastedText(_ text: String) -> String {
    var out = ""
    let lines = text.drop(while: \.isNewline)
    for character in lines.reversed().drop(while: \.isNewline).reversed() {
        if character.isNewline || character == "\t" {
            out.append(" ")
        } else if !character.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7F..<0xA0).contains($0.value) }) {
            out.append(character)
        }
    }
    return out
}

private func submit(_ state: inout AppState, _ prompt: Prompt) -> [Effect] {
    let text = prompt.text.trimmingWhitespace()
    switch prompt.kind {
    case .filter:
        switch state.screen {
        case .customers:
            // Quotes a message put around a pasted id are not part of it (ids hold none).
            let id = PastedId.unquoted(text)
            state.customerQuery.filter = id.isEmpty ? nil : id
            state.customerList = ListPosition()
            return [.loadCustomers(pageQuery(state), append: false)]
        case .refunds:
            return filterQueue(&state, text)
        default:
            state.search = text.isEmpty ? nil : text
            return nextMatch(&state, forward: true)
        }
    case .instant:
        // The instant offered (to the minute) taken as it is: the instant stays, seconds and all.
        if prompt.offered { return [] }
        if text.isEmpty || text == "now" { return reduce(&state, .instantParsed(nil)) }
        return [.parseInstant(text)]
    case .note(let ids):
        // A resolve says why (DESIGN: resolve with a note): the next on-call reads it. Enter on nothing keeps the
        // prompt and says so.
        guard !text.allSatisfy(\.isWhitespace) else {
            // (Its line goes with the prompt: Esc left it under the queue.)
            let said = StatusMessage("a resolve says why: type a note, then Enter (Esc cancels)", kind: .error)
            var kept = prompt
            kept.hint = said
            state.prompt = kept
            state.message = said
            return []
        }
        guard beginTriage(&state) else { return [] }
        // Kept until the write says which flags it moved: a note that was not written is shown, or offered again.
        state.unsavedNote = (Set(ids), text)
        return [.triage(flagIds: ids, action: .resolve, note: text, undo: false)]
    case .command:
        return runCommandLine(&state, text)
    }
}

/// Whether a triage key may act now: not while another triage write is on its way (the status says so), so
/// that two writes never cross and an undo never undoes what the ledger has not answered yet.
func mayTriage(_ state: inout AppState) -> Bool {
    guard let saving = state.saving else { return true }
    state.message = StatusMessage("still saving: \(saving); triage keys wait for it (the others work)", kind: .error)
    return false
}

/// A triage write is about to be sent: the marks it takes are its own from now on (``AppState/triageMarks``), so
/// that flags marked while it is on its way stay marked when it answers. False (and nothing sent) while another
/// write is on its way.
func beginTriage(_ state: inout AppState) -> Bool {
    guard mayTriage(&state) else { return false }
    state.triageMarks = state.marked
    state.marked = []
    return true
}

/// Other names of the `:` commands.
let commandAliases: [String: String] = ["quit": "q", "q!": "q", "c": "customer", "flags": "refunds"]

/// The `:` commands that take a word after them.
let takesArgument: Set<String> = ["customer", "theme", "env", "at", "export", "mouse"]

/// The `:` commands, with what each takes.
public let commandLineCommands: [(name: String, help: String)] = [
    ("customer", "customer ID: open a customer by any id"), ("customers", "the customer list"),
    ("overview", "the overview"), ("refunds", "the refund flag queue"), ("imports", "sources and rejected records"),
    ("theme", "theme NAME"), ("env", "env production|sandbox|all"), ("at", "at DATE|now: time travel"),
    ("export", "export csv FILE: the current view"), ("mouse", "mouse on|off"), ("q", "quit"), ("help", "every key"),
]

func runCommandLine(_ state: inout AppState, _ text: String) -> [Effect] {
    let parts = text.split(separator: " ", maxSplits: 1).map(String.init)
    guard let typed = parts.first else { return [] }
    let argument = parts.count > 1 ? parts[1].trimmingWhitespace() : ""
    // A command by its name, another name, or the start of one no other shares (`:ref`, `:imp`; `:cust ID` is
    // `:customer`, the one of those that takes an id).
    let names = commandLineCommands.map(\.name)
    var starting = Set((names + commandAliases.keys).filter { $0.hasPrefix(typed) }.map { commandAliases[$0] ?? $0 })
    if starting.count > 1 { starting = starting.filter { takesArgument.contains($0) == !argument.isEmpty } }
    let exact = names.contains(typed) ? typed : commandAliases[typed]
    guard let name = exact ?? (starting.count == 1 ? starting.first : nil) else {
        let all = Set((names + commandAliases.keys).filter { $0.hasPrefix(typed) }.map { commandAliases[$0] ?? $0 })
        state.message =
            all.count > 1
            ? StatusMessage(":\(typed) could be " + all.sorted().map { ":" + $0 }.joined(separator: " or "), kind: .error)
            : StatusMessage("unknown command :\(typed) (Tab completes; ? lists keys)", kind: .error)
        return []
    }
    switch name {
    case "q": return quit(&state)
    case "customer":
        guard !argument.isEmpty else {
            state.message = StatusMessage(":customer takes an id (transaction, original, web order, token, external or C12)", kind: .error)
            return []
        }
        // Over a customer shown: going back from the one found shows this one again.
        if state.screen == .customer, let shown = state.customer?.records.id {
            state.rememberOnLoad = Visit(screen: .customer, customerId: shown)
        }
        return [.openCustomer(query: argument)]
    case "customers": return switchScreen(&state, to: .customers)
    case "overview": return switchScreen(&state, to: .overview)
    case "refunds":
        scopeFlagQueue(&state, to: nil)
        return switchScreen(&state, to: .refunds)
    case "imports": return switchScreen(&state, to: .imports)
    case "help":
        state.showHelp = true
        state.helpTop = 0
        return []
    case "theme":
        guard !argument.isEmpty else {
            state.message = StatusMessage("themes: \(state.themeNames.joined(separator: ", "))")
            return []
        }
        // A theme's start will do when no other theme shares it (`:theme d`).
        let starting = state.themeNames.filter { $0.hasPrefix(argument.lowercased()) }
        return [.setTheme(state.themeNames.contains(argument) || starting.count != 1 ? argument : starting[0])]
    case "env":
        guard let environment = EnvironmentFilter(parsing: argument) else {
            state.message = StatusMessage(":env takes production, sandbox or all", kind: .error)
            return []
        }
        return setEnvironment(&state, environment)
    case "at":
        if argument.isEmpty || argument == "now" { return reduce(&state, .instantParsed(nil)) }
        return [.parseInstant(argument)]
    case "mouse":
        guard argument == "on" || argument == "off" else {
            state.message = StatusMessage(":mouse takes on or off", kind: .error)
            return []
        }
        state.mouse = argument == "on"
        state.message = StatusMessage("mouse \(argument)\(state.mouse ? ": hold Shift to select text" : "")")
        return [.setMouse(state.mouse)]
    case "export":
        let words = argument.split(separator: " ", maxSplits: 1).map(String.init)
        guard words.count == 2, words[0] == "csv" else {
            state.message = StatusMessage(":export csv FILE", kind: .error)
            return []
        }
        // The queue is read whole: an export is every flag it matches, not the pages loaded (nor those a scroll is
        // loading).
        if state.screen == .refunds { return [.exportQueue(path: words[1])] }
        // The customer list is the pages loaded: said when there are more (an export of 100 of 11,812 said "100 rows").
        var saying = ""
        if state.screen == .customers, state.customerPage.next != nil {
            let page = state.customerPage
            saying = " of \(Format.count(page.total))\(page.totalIsLowerBound ? "+" : ""): those loaded (scrolling loads more)"
        }
        if state.screen == .customers { return [.exportCustomers(path: words[1], saying: saying)] }
        return [.export(path: words[1], contents: exportCSV(state), saying: saying)]
    default:
        state.message = StatusMessage("unknown command :\(name) (Tab completes; ? lists keys)", kind: .error)
        return []
    }
}

/// Fuzzy completion: commands (and theme names after `theme `) whose letters appear in order.
/// The command line's completions for what is typed: the commands it could be, best first, or once a command and
/// a space are typed, the words that command takes that can be listed.
func completions(for text: String, state: AppState) -> [String] {
    // The words each command takes (an id, a file name or a date is the person's to type).
    let words: [String: [String]] = [
        "theme": state.themeNames, "env": EnvironmentFilter.allCases.map(\.rawValue), "export": ["csv "], "mouse": ["on", "off"],
        "at": ["now"],
    ]
    if let space = text.firstIndex(of: " ") {
        let command = String(text[..<space])
        // (A space typed after Tab's own is no part of the word.)
        let typed = String(text[text.index(after: space)...].drop { $0 == " " })
        return ranked(typed, among: words[command] ?? []).map { "\(command) \($0)" }
    }
    return ranked(text, among: commandLineCommands.map(\.name)).map { takesArgument.contains($0) ? $0 + " " : $0 }
}

/// The candidates `typed` matches, those it starts first (`n`: nord before high-contrast), then the fuzzy matches.
func ranked(_ typed: String, among candidates: [String]) -> [String] {
    let lowered = typed.lowercased()
    let prefixed = candidates.filter { $0.lowercased().hasPrefix(lowered) }
    return prefixed + candidates.filter { !$0.lowercased().hasPrefix(lowered) && fuzzyMatch(typed, $0) }
}

/// Whether the characters of `pattern` appear in `candidate` in order (case-insensitive).
func fuzzyMatch(_ pattern: String, _ candidate: String) -> Bool {
    var remaining = Substring(pattern.lowercased())
    for c in candidate.lowercased() where remaining.first == c { remaining = remaining.dropFirst() }
    return remaining.isEmpty
}

extension String {
    func trimmingWhitespace() -> String {
        var s = Substring(self)
        while s.first?.isWhitespace == true { s = s.dropFirst() }
        while s.last?.isWhitespace == true { s = s.dropLast() }
        return String(s)
    }
}
