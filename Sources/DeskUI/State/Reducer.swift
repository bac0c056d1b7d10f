import Entitlements
import LedgerQueries
import ReceiptModel

/// The dashboard's only state transition: applies an action and returns the effects to run.
public func reduce(_ state: inout AppState, _ action: Action) -> [Effect] {
    // A read that answered: when its screen was read (the clock's minute: during an outage, what a screen shows is as
    // read then), and a failure said before is over, its line with it (it stayed after the ledger answered).
    var answered = true
    switch action {
    case .overviewLoaded: state.readAt[.overview] = state.now
    case .customersLoaded: state.readAt[.customers] = state.now
    case .customerLoaded: state.readAt[.customer] = state.now
    case .transactionLoaded: state.readAt[.transaction] = state.now
    case .flagsLoaded, .flagsBeforeLoaded: state.readAt[.refunds] = state.now
    case .importsLoaded: state.readAt[.imports] = state.now
    case .customerNotFound, .rawLoaded, .dayRefundsLoaded: break
    default: answered = false
    }
    if answered, let failed = state.readFailed {
        state.readFailed = nil
        if state.message?.text == failed { state.message = nil }
    }
    switch action {
    case .key(let key):
        return handleKey(&state, key)
    case .paste(let text):
        return handlePaste(&state, text)
    case .resize(let width, let height):
        state.width = width
        state.height = height
        clampPositions(&state)
        state.rawView?.resize(screenWidth: width, screenHeight: height)
        return []
    case .ledgerChanged:
        state.refreshingMarks = state.screen == .refunds && !state.marked.isEmpty
        return reloadEffects(state, keepSelection: true)
    case .clockAdvanced(let now):
        // Time travel pins the instant shown: then only the header's clock moves.
        guard moveNow(&state, to: now) else { return [] }
        // What holds now moves with it (an expiry, a deadline, "covered now"): the screen on view is read again at
        // the new instant, keeping its selection as a live refresh does.
        return reloadEffects(state, keepSelection: true)
    case .overviewLoaded(let data):
        // The selected spike kept while it is still alarmed, the selected consumption request while it is pending.
        let selectedSpike = state.overview?.spikes[safe: state.spikeList.selected]?.id
        let selectedRequest = state.overview.flatMap { pendingConsumptionRequests($0, at: state.instant)[safe: state.consumptionList.selected]?.id }
        let selectedSeverity = state.overview.flatMap { overviewSeverities($0)[safe: state.severityList.selected]?.severity }
        state.overview = data
        let severities = overviewSeverities(data)
        if let index = selectedSeverity.flatMap({ severity in severities.firstIndex { $0.severity == severity } }) {
            state.severityList.selected = index
        }
        state.severityList.move(by: 0, count: severities.count, visible: severities.count)
        if let index = selectedSpike.flatMap({ id in data.spikes.firstIndex { $0.id == id } }) {
            state.spikeList.selected = index
        }
        state.spikeList.move(by: 0, count: data.spikes.count, visible: data.spikes.count)
        let pending = pendingConsumptionRequests(data, at: state.instant)
        if let index = selectedRequest.flatMap({ id in pending.firstIndex { $0.id == id } }) {
            state.consumptionList.selected = index
        }
        state.consumptionList.move(by: 0, count: pending.count, visible: pending.count)
        // A day's refunds listed: its bar's count as read now, and the chart's chosen day still its day (the series
        // moves at midnight and with the instant); a day the chart no longer shows (travelled to before it) closes it.
        if let list = state.dayRefunds {
            let index = clampedDifference(list.day.millisecondsSince1970, data.refunds90.firstDay.millisecondsSince1970) / 86_400_000
            let back = Int64(data.refunds90.counts.count - 1) - index
            if index >= 0, back < overviewChartDays(state), let count = data.refunds90.counts[safe: Int(index)] {
                state.dayRefunds?.count = count
                state.seriesDay = Int(back)
            } else {
                state.dayRefunds = nil
            }
        }
        return []
    case .customersLoaded(let page, let append, .backward):
        state.customersLoading = false
        if append {
            // The rows before the loaded ones: in front, the selection staying on its customer.
            state.customerPage.rows = page.rows + state.customerPage.rows
            state.customerPage.previous = page.previous
            state.customerOffset = max(0, state.customerOffset - page.rows.count)
            state.customerList.selected += page.rows.count
            state.customerList.top += page.rows.count
        } else {
            // The end of the list (G, or a refresh of the end): the selected customer kept, else the last row.
            let selectedId = state.customerPage.rows[safe: state.customerList.selected]?.id
            state.customerPage = page
            listRead(&state)
            state.customerOffset = max(0, page.total - page.rows.count)
            state.customerList.selected = selectedId.flatMap { id in page.rows.firstIndex { $0.id == id } } ?? page.rows.count - 1
            state.customerList.move(by: 0, count: page.rows.count, visible: state.listRows)
        }
        return []
    case .customersLoaded(let page, let append, .forward):
        state.customersLoading = false
        if append {
            state.customerPage.rows += page.rows
            state.customerPage.next = page.next
            if page.next == nil {
                // The last page: every match is loaded, so the count is exact.
                state.customerPage.total = state.customerPage.rows.count
                state.customerPage.totalIsLowerBound = false
            } else if page.totalIsLowerBound {
                // A later page's bound knows less than the first page's; what is loaded, and one more, is known.
                state.customerPage.total = max(state.customerPage.total, page.total, state.customerPage.rows.count + 1)
                state.customerPage.totalIsLowerBound = true
            } else {
                state.customerPage.total = page.total
                state.customerPage.totalIsLowerBound = false
            }
        } else {
            // A reload keeps the selected customer selected when it is still in the list (not the top read again:
            // the row selected was the end window's first).
            let selectedId = state.selectTopOnLoad ? nil : state.customerPage.rows[safe: state.customerList.selected]?.id
            state.selectTopOnLoad = false
            state.customerPage = page
            listRead(&state)
            state.customerOffset = 0
            if let selectedId, let index = page.rows.firstIndex(where: { $0.id == selectedId }) {
                state.customerList.selected = index
            }
            state.customerList.move(by: 0, count: page.rows.count, visible: state.listRows)
        }
        if append && state.followingToEnd && state.screen == .customers {
            state.followPagesLeft -= 1
            if page.next == nil || state.followPagesLeft <= 0 { state.followingToEnd = false }
            return move(&state, by: Int.max / 2)
        }
        return []
    case .customerAccessLoaded(let access):
        state.customerAccess.merge(access) { _, new in new }
        return []
    case .customerLoaded(let detail):
        let sameCustomer = state.customer?.records.id == detail.records.id
        // Another customer opened over the one shown (`:customer`): going back shows that one again. (Only an open
        // a person asked for: a refresh that follows a merge to the customer it went into is not a visit.)
        if let visit = state.rememberOnLoad, visit.customerId != detail.records.id { remember(&state, visit) }
        state.rememberOnLoad = nil
        // A refresh of the same customer keeps each pane on the row it was on, found by what the row is (new
        // transactions and events arrive at the top or in the middle, and rows move).
        let kept = sameCustomer ? customerRowKeys(state) : nil
        state.customer = detail
        state.customerView = CustomerView(detail: detail, at: state.instant, catalog: state.catalog)
        if let kept {
            restoreCustomerRows(&state, kept)
            clampPositions(&state)
        }
        let timeline = state.customerView?.timeline ?? []
        if !sameCustomer {
            state.customerPositions = AppState.freshCustomerPositions
            state.customerPane = 1
            // Start the timeline at its newest events.
            state.customerPositions[1].move(by: timeline.count, count: timeline.count, visible: customerPaneRows(state))
        }
        // Opened for a flag: the timeline on the latest event of its transaction, whoever was shown before.
        if let index = state.focusFlag.flatMap({ timelineIndex(of: $0, in: timeline) }) {
            state.customerPane = 1
            state.customerPositions[1].selected = index
            state.customerPositions[1].move(by: 0, count: timeline.count, visible: customerPaneRows(state))
        }
        state.focusFlag = nil
        if state.screen != .customer { go(&state, to: .customer) }
        return []
    case .customerNotFound(let query):
        // On a customer's screen, the customer shown is not the one asked for: said (the screen stayed as it was, read
        // as the answer).
        let shown = state.screen == .customer ? state.customer.map { "; C\($0.records.id) is the one shown before" } ?? "" : ""
        state.message = StatusMessage("no customer matches \(query)\(shown)", kind: .error)
        state.focusFlag = nil
        state.rememberOnLoad = nil
        return []
    case .transactionLoaded(let transaction, let id):
        guard let transaction else {
            state.message = StatusMessage("no transaction \(id)", kind: .error)
            return []
        }
        // A refresh of the same transaction keeps where it was scrolled to.
        if state.transaction?.transactionId != transaction.transactionId { state.transactionScroll = ListPosition() }
        state.transaction = transaction
        if state.screen != .transaction { go(&state, to: .transaction) }
        return []
    case .flagsLoaded(let flags, let next, let append, let filter):
        // A page of a query the queue no longer shows (its filter changed since): the new query's first page is on
        // its way.
        if append, filter != state.flagsReadFilter { return [] }
        if append {
            state.flags += flags
            takeBackAside(&state, flags)
        } else {
            // The selection indexes the filtered list: the flag it is on keeps it.
            let selectedId = state.selectFlagOnLoad ?? (state.selectTopOnLoad ? nil : visibleFlags(state)[safe: state.flagList.selected]?.id)
            state.selectFlagOnLoad = nil
            state.selectTopOnLoad = false
            replaceFlags(&state, flags, filter: filter)
            if let selectedId, let index = visibleFlags(state).firstIndex(where: { $0.id == selectedId }) {
                state.flagList.selected = index
            }
            state.refreshingMarks = false
            state.flagTriage = [:]
        }
        state.flagsNext = next
        if !append {
            state.flagsPrevious = nil
            state.flagsFromEnd = false
        }
        state.flagList.move(by: 0, count: visibleFlags(state).count, visible: state.listRows)
        return []
    case .flagTriageLoaded(let latest):
        state.flagTriage.merge(latest) { _, new in new }
        return []
    case .flagTotalLoaded(let total):
        state.flagTotal = total
        return []
    case .flagsBeforeLoaded(let flags, let previous, let append, let filter):
        if append, filter != state.flagsReadFilter { return [] }
        if append {
            // The flags before the loaded ones: in front, the selection staying on its flag.
            let shown = state.flags.count
            state.flags = flags + state.flags
            takeBackAside(&state, flags)
            state.flagsPrevious = previous
            let added = visibleFlags(state).count - visibleCount(state, of: shown)
            state.flagList.selected += added
            state.flagList.top += added
        } else {
            // The end of the queue (G, or a refresh of it): the selected flag kept, else the last.
            let selectedId = visibleFlags(state)[safe: state.flagList.selected]?.id
            replaceFlags(&state, flags, filter: filter)
            state.flagsNext = nil
            state.flagsPrevious = previous
            state.flagsFromEnd = true
            state.refreshingMarks = false
            state.flagTriage = [:]
            let visible = visibleFlags(state)
            state.flagList.selected = selectedId.flatMap { id in visible.firstIndex { $0.id == id } } ?? max(0, visible.count - 1)
        }
        state.flagList.move(by: 0, count: visibleFlags(state).count, visible: state.listRows)
        return []
    case .importsLoaded(let sources, let rejected, let append):
        state.importsLoading = false
        if append {
            state.sources += sources
            state.rejected += rejected
            // A page that came back short is the last; the other list keeps what it knew.
            if !sources.isEmpty || state.importsMore[0] { state.importsMore[0] = sources.count == AppState.importsPageSizes[0] }
            if !rejected.isEmpty || state.importsMore[1] { state.importsMore[1] = rejected.count == AppState.importsPageSizes[1] }
        } else {
            // A refresh keeps the selected source and rejected record (sources are newest first: a new import
            // arrives above the selection).
            let selectedSource = state.sources[safe: state.importPositions[0].selected]?.id
            let selectedRejected = state.rejected[safe: state.importPositions[1].selected]?.id
            state.sources = sources
            state.rejected = rejected
            state.importsMore = [sources.count == AppState.importsPageSizes[0], rejected.count == AppState.importsPageSizes[1]]
            if let selectedSource, let index = sources.firstIndex(where: { $0.id == selectedSource }) {
                state.importPositions[0].top += index - state.importPositions[0].selected
                state.importPositions[0].selected = index
            }
            if let selectedRejected, let index = rejected.firstIndex(where: { $0.id == selectedRejected }) {
                state.importPositions[1].top += index - state.importPositions[1].selected
                state.importPositions[1].selected = index
            }
        }
        let sources = state.sources
        let rejected = state.rejected
        state.importPositions[0].move(by: 0, count: sources.count, visible: importsRows(state, pane: 0))
        state.importPositions[1].move(by: 0, count: rejected.count, visible: importsRows(state, pane: 1))
        if append && state.followingToEnd && state.screen == .imports {
            state.followPagesLeft -= 1
            if !state.importsMore[state.importsPane] || state.followPagesLeft <= 0 { state.followingToEnd = false }
            return move(&state, by: Int.max / 2)
        }
        return []
    case .dayRefundsLoaded(let day, let refunds):
        // (A day left since, with h/l or Esc, is not opened again by its late answer.)
        guard var list = state.dayRefunds, list.day == day else { return [] }
        let selected = list.rows?[safe: list.list.selected]?.transactionId
        list.rows = refunds
        if let selected, let index = refunds.firstIndex(where: { $0.transactionId == selected }) {
            list.list.top += index - list.list.selected
            list.list.selected = index
        }
        list.list.move(by: 0, count: refunds.count, visible: max(1, dayRefundsRows(state)))
        state.dayRefunds = list
        return []
    case .rawLoaded(let id, let bytes):
        let record = state.rejected.first { $0.id == id }
        state.rawView = RawView(id: id, record: record, text: Sanitize.bytes(bytes), screenWidth: state.width, screenHeight: state.height)
        return []
    case .triaged(let changes, let undo):
        if undo {
            let done = Set(changes.map(\.flagId))
            // Each flag's customer as the change being undone knew it (an undo's own answer may not).
            var customers: [String: Int64] = [:]
            if var batch = state.undoStack.popLast() {
                for change in batch { customers[change.flagId] = change.customerId }
                batch.removeAll { done.contains($0.flagId) }
                if !batch.isEmpty { state.undoStack.append(batch) }
            }
            let named = changes.map { change in
                var change = change
                change.customerId = change.customerId ?? customers[change.flagId]
                return change
            }
            // A flag someone changed after you comes back unchanged (from == to): it is left as they set it.
            let undone = named.filter { $0.from != $0.to }
            let left = named.filter { $0.from == $0.to }
            // (One write per status the flags go back to: each adds to what the undo has said.)
            if !undone.isEmpty {
                state.undoReport.append("undone: " + undone.map { "\($0.flagAndCustomer) back to \($0.to.rawValue)" }.joined(separator: ", "))
            }
            if !left.isEmpty {
                state.undoReport.append(
                    "left as someone else set them since: " + left.map { "\($0.flagAndCustomer) (\($0.to.rawValue))" }.joined(separator: ", "))
            }
            state.message = StatusMessage(
                state.undoReport.isEmpty ? "nothing to undo: the flags were already back" : state.undoReport.joined(separator: "; "),
                kind: state.undoReport.contains { $0.hasPrefix("left as") } ? .error : .info)
        } else {
            let moved = changes.filter { $0.from != $0.to }
            // Flags someone else had moved there since the queue was read: nothing was written for them (nor the note).
            let already = changes.filter { $0.from == $0.to }
            var parts: [String] = []
            if !moved.isEmpty {
                state.undoStack.append(moved)
                // (On a customer, a key moves every flag of theirs it can: it says which.)
                let which = state.screen == .customer ? flagRules(moved.map(\.flagId)) : ""
                // (Files loaded in memory: the triage goes when the dashboard does, said each time.)
                let kept = state.inMemory ? "; in memory: gone when you quit, a --ledger keeps triage" : ""
                // (Moved back to open, a flag is "reopened": "1 flag open" read as a count.)
                let done = moved[0].to == .open ? "reopened" : moved[0].to.rawValue
                parts.append("\(Format.counted(moved.count, "flag"))\(which) \(done) (u undoes\(kept))")
            }
            if let first = already.first {
                // What happened first (a long flag id cut the rest off at 120 columns), and who, when the log says.
                let who = Set(already.map { $0.by ?? "" }).count == 1 ? first.by.map(Sanitize.text) ?? "someone else" : "others"
                let which = already.count == 1 ? "it" : "\(already.count) of them"
                var said = "nothing written: \(who) had \(first.to == .open ? "reopened" : first.to.rawValue) \(which) since you read it"
                // The note typed for a resolve that was not written: shown, to copy, before the long flag id (at 80
                // and 100 columns the id cut it off).
                if let note = state.unsavedNote, !note.flagIds.isDisjoint(with: already.map(\.flagId)) {
                    said += "; your note, not written: \(note.text)"
                }
                parts.append(said + " (\(already.count == 1 ? first.flagId : "\(first.flagId), …"))")
            }
            // A resolve's note is saved with the flags it resolved; offered again only for those it could not (an
            // ack of them since does not save it).
            if let note = state.unsavedNote {
                let left = note.flagIds.subtracting(moved.filter { $0.to == .resolved }.map(\.flagId))
                state.unsavedNote = left.isEmpty ? nil : (left, note.text)
            }
            // Marked flags the action does not move were not asked for (triageTargets): counted, not left unsaid.
            if let target = changes.first?.to, state.screen == .refunds {
                let asked = Set(changes.map(\.flagId))
                let skipped = state.flags.filter {
                    state.triageMarks.contains($0.id) && !asked.contains($0.id) && !triageMoves($0, toward: target)
                }
                if !skipped.isEmpty {
                    parts.append("\(skipped.count) marked \(skipped.count == 1 ? "was" : "were") \(statusList(skipped)) already")
                }
            }
            if !parts.isEmpty { state.message = StatusMessage(parts.joined(separator: "; "), kind: already.isEmpty ? .info : .error) }
        }
        // (The marks the write took were cleared when it was sent; flags marked while it was on its way stay marked.
        // Those it wrote are done; the rest go back to the marks if the write then fails part-way.)
        state.triageMarks.subtract(changes.map(\.flagId))
        return reloadEffects(state, keepSelection: true)
    case .instantParsed(let instant):
        state.asOf = instant
        state.message = StatusMessage(instant.map { "as of \($0.iso8601)" } ?? "as of now")
        viewCustomerAtInstant(&state)
        // "Subscribed at" (A) is subscribed at the instant shown: it moves with it, and the list is read again. (The
        // overview's day of refunds listed is read again with it.)
        var effects: [Effect] = state.screen == .overview ? reloadEffects(state, keepSelection: true) : []
        if state.customerQuery.activeAt != nil {
            state.customerQuery.activeAt = state.instant
            state.customerList = ListPosition()
            if state.screen == .customers { effects.append(.loadCustomers(pageQuery(state), append: false)) }
        }
        // The queue as of the instant: the flags raised by then.
        if state.screen == .refunds { effects += reloadEffects(state, keepSelection: true) }
        return effects
    case .instantRejected(let text, let reason):
        state.message = StatusMessage(reason, kind: .error)
        // The text typed is kept to mend (a month of 13 threw it away, and the Esc meant for the prompt left the
        // screen), unless another prompt was opened meanwhile.
        if state.prompt == nil {
            var prompt = Prompt(kind: .instant, text: text)
            prompt.offered = false
            state.prompt = prompt
        }
        return []
    case .themeChanged(let name):
        state.themeName = name
        state.message = StatusMessage("theme \(name)")
        return []
    case .message(let message):
        state.message = message
        return []
    case .saving(let what):
        state.saving = what
        if let what {
            state.message = StatusMessage("saving: \(what)… (the ledger is busy; keys go on)")
        } else {
            // Every write answered: the marks they took are theirs no more (the unsaved went back in triageFailed),
            // and a "saving" line the answer left standing goes.
            state.triageMarks = []
            if state.message?.text.hasPrefix("saving: ") == true { state.message = nil }
        }
        return []
    case .triageFailed(let reason, let action, let ids, let note, let undo, let saved, _):
        // Said over the "retrying" line too: a triage lost without a word is the one thing an on-call cannot have.
        // The reason first: a long flag id pushed it past the line's end ("... may not make this ch…").
        var text = triageDescription(action, ids, undo: undo)
        if saved > 0 { text += "; \(Format.counted(saved, "other")) saved before it failed" }
        // The flags not saved stay marked for another try (the write of those saved cleared the marks).
        // The marks the write took and did not save go back (a single flag's too, and a marked flag it skipped).
        state.marked.formUnion(state.triageMarks)
        state.triageMarks = []
        if ids.count > 1, !undo {
            state.marked.formUnion(ids)
            text += "; still marked"
        }
        if let note, !note.isEmpty {
            state.unsavedNote = (Set(ids), note)
            text += "; r offers your note again"
        }
        // Without the ledger's URL the reason names (the header names the ledger): at 80 columns the URL took the
        // line, and the reason and what was not saved were cut off.
        let why = state.ledgerName.isEmpty ? reason : reason.replacing(" at \(state.ledgerName)", with: "")
        state.message = StatusMessage("not saved: \(why) (\(text))", kind: .error, urgent: true)
        return []
    case .failed(let text, let unavailable):
        // What an open was asked to do on arrival is dropped with it. (A customer gone back to that could not be read
        // leaves the one shown, which is what a refresh and a recovery read.)
        state.focusFlag = nil
        state.rememberOnLoad = nil
        if unavailable {
            if state.unavailable == nil {
                state.unavailableSince = state.now
                // The retrying line covers what was said before the outage: not said again when it ends (below).
                if state.message?.urgent == false && state.message?.kind == .info { state.message = nil }
            }
            state.unavailable = text
        } else if state.unavailable != nil {
            // Asked for while the ledger is away (Enter on a row, :customer): said over the "retrying" line, which hid
            // it as if the key did nothing; the recovery reloads the screen, not what was asked. (Its own reason kept:
            // a theme that is not there is not the ledger's doing.)
            // (Without the ledger's URL, as the retrying line: the reason was cut off behind it.)
            let why = state.ledgerName.isEmpty ? text : text.replacing(" at \(state.ledgerName)", with: "")
            state.message = StatusMessage("not done (the ledger is unavailable; retrying): \(why)", kind: .error, urgent: true)
        } else {
            state.message = StatusMessage(text, kind: .error)
        }
        state.customersLoading = false
        state.importsLoading = false
        return []
    case .readFailed(let text):
        // As another failed request, and remembered until a read answers.
        let effects = reduce(&state, .failed(text, unavailable: false))
        if state.unavailable == nil { state.readFailed = text }
        return effects
    case .recovered(let now):
        // A minute that passed during the outage is in the one read that follows it.
        if let now { _ = moveNow(&state, to: now) }
        state.unavailable = nil
        state.unavailableSince = nil
        // Whatever failed while it was away (a screen's load, a triage) said so then; this says it is over. What went
        // well meanwhile stays said first (a triage that reached the server as it came back: "1 flag acknowledged"); what
        // was said before the outage went when it began.
        let recovered = "the ledger answers again: reloaded"
        if let kept = state.message, kept.kind == .info, !kept.text.hasPrefix("saving: "), !kept.text.hasSuffix(recovered)
        {
            state.message = StatusMessage("\(kept.text); \(recovered)")
        } else {
            state.message = StatusMessage(recovered)
        }
        return reloadEffects(state, keepSelection: true)
    case .ledgerReadOnly(let on):
        guard on != state.ledgerReadOnly else { return [] }
        let before = state.readOnly
        state.ledgerReadOnly = on
        // Said only when it changes what this dashboard may do (one opened --read-only stays so).
        if state.readOnly != before {
            state.message =
                on
                ? StatusMessage("the ledger was set read-only (receiptdesk ledger read-only on): triage is refused until it is lifted", kind: .error)
                : StatusMessage("the ledger's read-only setting was lifted: triage is back")
        }
        return []
    }
}

/// Moves "now" to the wall clock's minute; returns whether the instant shown moved with it (not under time travel),
/// having computed the open customer's view and the "covered now" filter at it again.
private func moveNow(_ state: inout AppState, to now: Timestamp) -> Bool {
    state.now = now
    guard state.asOf == nil else { return false }
    viewCustomerAtInstant(&state)
    if state.customerQuery.activeAt != nil { state.customerQuery.activeAt = now }
    return true
}

/// The open customer's entitlements, coverage and timeline computed again at the instant shown (after it moved).
private func viewCustomerAtInstant(_ state: inout AppState) {
    guard let detail = state.customer else { return }
    // Each pane stays on the row it was on when that row is still listed (the transactions pane lists fewer back in
    // time, so its indices move).
    let kept = customerRowKeys(state)
    state.customerView = CustomerView(detail: detail, at: state.instant, catalog: state.catalog)
    restoreCustomerRows(&state, kept)
    clampPositions(&state)
}

/// Loads what a screen shows.
func reloadEffects(_ state: AppState, keepSelection: Bool) -> [Effect] {
    switch state.screen {
    case .overview:
        // A day's refunds listed are read again with it (another import, another instant, another environment).
        let day = state.dayRefunds.map { loadDayRefunds(state, day: $0.day) }
        return [.loadOverview(asOf: state.instant, environment: state.environment, pinned: state.asOf != nil)] + (day.map { [$0] } ?? [])
    case .customers:
        var query = state.customerQuery
        query.after = nil
        // Read again as far as the selection and a window past it, so the selection survives a live refresh
        // and a refresh does not re-read every row paged through (more load as the selection nears their
        // end); rows loaded from the end (G) are read again from the end.
        if keepSelection {
            let rows = state.customerPage.rows.count
            query.limit = max(query.limit, state.customerOffset > 0 ? rows : min(rows, state.customerList.selected + 2 * state.listRows))
            if state.customerOffset > 0 { query.direction = .backward }
        }
        return [.loadCustomers(query, append: false)]
    case .customer: return state.customer.map { [.loadCustomer($0.records.id)] } ?? []
    case .transaction: return state.transaction.map { [.loadTransaction($0.transactionId)] } ?? []
    case .refunds:
        if keepSelection && state.flagsFromEnd {
            // Read from the end (G): the end again, as many flags as are loaded.
            var query = flagQuery(state, limit: max(200, state.flags.count))
            query.direction = .backward
            return [.loadFlags(query, append: false)]
        }
        // As far as the selection and a window past it (the rest loads again as the selection nears it), and as far
        // as the last marked flag: a mark further down is kept, not dropped as if its flag had left the list.
        let lastMarked = state.marked.isEmpty ? -1 : state.flags.lastIndex { state.marked.contains($0.id) } ?? -1
        // (The selection indexes what is shown, a filter being typed the loaded flags it keeps: where its flag is
        // among the loaded ones.)
        let selectedFlag = visibleFlags(state)[safe: state.flagList.selected]
        let selected = selectedFlag.flatMap { flag in state.flags.firstIndex { $0.id == flag.id } } ?? state.flagList.selected
        let limit = keepSelection ? min(state.flags.count, max(selected + 2 * state.listRows, lastMarked + 1)) : 0
        return [.loadFlags(flagQuery(state, limit: max(200, limit)), append: false)]
    case .imports: return [.loadImports]
    }
}

func flagQuery(_ state: AppState, limit: Int = 200) -> FlagQuery {
    // As of a time travelled to, the flags raised by then (a flag about a later refund is not in that past's queue).
    FlagQuery(
        status: state.flagStatus, productId: state.flagProduct, severity: state.flagSeverity, environment: queueEnvironment(state),
        limit: limit, until: state.asOf, text: state.flagFilter)
}

/// The environment the queue reads: the dashboard's, narrowed to a spike's when it shows every environment.
func queueEnvironment(_ state: AppState) -> EnvironmentFilter {
    state.environment == .all ? state.flagEnvironment ?? .all : state.environment
}

/// Keeps a screen left for another in the history (the newest 50).
private func remember(_ state: inout AppState, _ visit: Visit) {
    state.history.append(visit)
    if state.history.count > 50 { state.history.removeFirst() }
}

/// Shows a screen of the history again (its entries above it already taken off): the customer or transaction it
/// showed when another was opened since, else the screen as it is, read again.
func arrive(_ state: inout AppState, at visit: Visit) -> [Effect] {
    state.screen = visit.screen
    state.search = nil
    // (The one shown stays until that one arrives; its arrival is no visit: only `:customer` makes one.)
    if let id = visit.customerId, id != state.customer?.records.id { return [.loadCustomer(id)] }
    if let id = visit.transactionId, id != state.transaction?.transactionId { return [.loadTransaction(id)] }
    return reloadEffects(state, keepSelection: true)
}

func go(_ state: inout AppState, to screen: ScreenID) {
    guard screen != state.screen else { return }
    remember(
        &state,
        Visit(
            screen: state.screen, customerId: state.screen == .customer ? state.customer?.records.id : nil,
            transactionId: state.screen == .transaction ? state.transaction?.transactionId : nil))
    state.screen = screen
    state.search = nil
}

/// How many of the first `count` loaded flags the refunds list shows (after the `/` filter).
func visibleCount(_ state: AppState, of count: Int) -> Int {
    var prefix = state
    prefix.flags = Array(state.flags.prefix(count))
    return visibleFlags(prefix).count
}

/// Sets which product's and severity's flags the refund queue shows (nil: every product's, every severity's).
/// Another scope is another list: what was loaded, marked and selected in the old one is dropped, and the new one is
/// read from the queue's start (`fromStart`: also when the scope stays).
func scopeFlagQueue(_ state: inout AppState, to product: String?, severity: Severity? = nil, fromStart: Bool = false) {
    guard fromStart || product != state.flagProduct || severity != state.flagSeverity else { return }
    state.flagProduct = product
    state.flagSeverity = severity
    state.flags = []
    state.flagsNext = nil
    state.flagsPrevious = nil
    state.flagsFromEnd = false
    state.flagList = ListPosition()
    state.marked = []
    state.markedAside = []
    state.queueBeforeSpike = nil
    state.flagEnvironment = nil
}

/// The queue under a new `/` filter (nil: none), read by the ledger from its start; the selection stays on its
/// flag where the filter keeps it.
func filterQueue(_ state: inout AppState, _ text: String?) -> [Effect] {
    let selected = visibleFlags(state)[safe: state.flagList.selected]?.id
    state.flagFilter = text?.isEmpty == false ? text : nil
    keepFlagSelected(&state, selected)
    return [.loadFlags(flagQuery(state), append: false)]
}

/// The selection on this flag again after what the queue shows changed (its filter), else on the row it was on.
func keepFlagSelected(_ state: inout AppState, _ id: String?) {
    let visible = visibleFlags(state)
    if let index = id.flatMap({ id in visible.firstIndex { $0.id == id } }) { state.flagList.selected = index }
    state.flagList.move(by: 0, count: visible.count, visible: state.listRows)
}

/// The `/` filter the queue shows: the text being typed at its prompt, else the one the ledger reads it with.
func shownFlagFilter(_ state: AppState) -> String? {
    if state.screen == .refunds, let prompt = state.prompt, case .filter = prompt.kind {
        // (As Enter takes it: without the spaces around it.)
        let text = prompt.text.trimmingWhitespace()
        return text.isEmpty ? nil : text
    }
    return state.flagFilter
}

/// The shown filter is not the one the loaded flags were read with: they are filtered here, the ledger not asked
/// yet (a filter being typed).
func flagFilterPreviewed(_ state: AppState) -> Bool { shownFlagFilter(state) != state.flagsReadFilter }

/// The flags the refunds list shows: as the ledger read them, or, while a `/` filter is typed, those of them it
/// keeps, matched as the ledger matches (``FlagText``): the detail's instants as the screen shows them
/// (`2025-07-01 02:00`) and as `lookup` prints them (`2025-07-01T02:00:00Z`).
public func visibleFlags(_ state: AppState) -> [RefundFlag] {
    guard flagFilterPreviewed(state), let filter = shownFlagFilter(state) else { return state.flags }
    let needles = FlagText.needles(filter)
    return state.flags.filter { FlagText.matches($0, needles) }
}

/// The timeline event a flag is about: of its transaction's events, the last at or before the flag was raised (the
/// refund, the request; not the renewal turned off a minute later), else the transaction's first.
func timelineIndex(of flag: RefundFlag, in timeline: [TimelineEvent]) -> Int? {
    guard let id = flag.transactionId else { return nil }
    let events = timeline.indices.filter { timeline[$0].transactionId == id }
    return events.last { timeline[$0].at <= flag.at } ?? events.first
}

/// The overview's severities with their open flags, most severe first: every one with an open flag, and high,
/// medium and low always (so that the lines add up to the open-flags tile).
func overviewSeverities(_ data: OverviewData) -> [(severity: Severity, open: Int)] {
    ([.critical, .high, .medium, .low, .info] as [Severity]).map { severity in
        (severity, data.flagCounts.filter { $0.severity == severity && $0.status == .open }.reduce(0) { $0 + $1.count })
    }
    .filter { $0.open > 0 || [.high, .medium, .low].contains($0.severity) }
}

func customerPaneRows(_ state: AppState) -> Int { max(1, (state.height - 14) / 1) }

private func clampPositions(_ state: inout AppState) {
    state.customerList.move(by: 0, count: state.customerPage.rows.count, visible: state.listRows)
    state.flagList.move(by: 0, count: visibleFlags(state).count, visible: state.listRows)
    for (pane, count) in customerPaneCounts(state).enumerated() {
        state.customerPositions[pane].move(by: 0, count: count, visible: customerPaneRows(state))
    }
    // A flags pane left without flags (after a merge, say) is no Tab stop: the timeline stands in.
    if state.customerPane == 3, state.customer?.flags.isEmpty != false { state.customerPane = 1 }
    // Narrower, the chart shows 30 days, not 90: a day chosen before them is the first shown, and its list closes.
    let days = overviewChartDays(state)
    if state.seriesDay > days - 1 {
        state.seriesDay = max(0, days - 1)
        state.dayRefunds = nil
    }
    if var list = state.dayRefunds {
        list.list.move(by: 0, count: list.rows?.count ?? 0, visible: max(1, dayRefundsRows(state)))
        state.dayRefunds = list
    }
}

/// The rows of each customer pane: entitlements, timeline events, transactions, flags.
func customerPaneCounts(_ state: AppState) -> [Int] {
    guard let view = state.customerView, let detail = state.customer else { return [0, 0, 0, 0] }
    return [view.entitlements.count, view.timeline.count, view.transactions.count, detail.flags.count]
}

/// The Customers list read again: what is known of its customers' access is to be computed again (the ledger may have
/// changed), and shown until then (`G` then `g`, a sort or a filter forgot it, and the list's figures showed meanwhile);
/// past a few thousand customers, those no longer listed are forgotten.
private func listRead(_ state: inout AppState) {
    state.customerAccessGeneration += 1
    guard state.customerAccess.count > 4_000 else { return }
    let listed = Set(state.customerPage.rows.map(\.id))
    state.customerAccess = state.customerAccess.filter { listed.contains($0.key) }
}

extension Array {
    subscript(safe index: Int) -> Element? { indices.contains(index) ? self[index] : nil }
}

/// What the selected row of each customer pane is: the entitlement's name, the event (instant, kind,
/// transaction), the transaction's id, the flag's id.
struct CustomerRowKeys {
    var entitlement: String?
    var event: (at: Timestamp, kind: EventKind, transactionId: String?)?
    var transactionId: String?
    var flagId: String?
}

func customerRowKeys(_ state: AppState) -> CustomerRowKeys {
    let view = state.customerView
    let event = view?.timeline[safe: state.customerPositions[1].selected]
    return CustomerRowKeys(
        entitlement: view?.entitlements[safe: state.customerPositions[0].selected]?.name,
        event: event.map { ($0.at, $0.kind, $0.transactionId) },
        transactionId: view?.transactions[safe: state.customerPositions[2].selected]?.transactionId,
        flagId: state.customer?.flags[safe: state.customerPositions[3].selected]?.id)
}

/// Puts each customer pane back on the row `kept` names, when it is still there; the window moves with it.
func restoreCustomerRows(_ state: inout AppState, _ kept: CustomerRowKeys) {
    guard let view = state.customerView, let detail = state.customer else { return }
    let indices: [Int?] = [
        kept.entitlement.flatMap { name in view.entitlements.firstIndex { $0.name == name } },
        kept.event.flatMap { key in view.timeline.firstIndex { $0.at == key.at && $0.kind == key.kind && $0.transactionId == key.transactionId } },
        kept.transactionId.flatMap { id in view.transactions.firstIndex { $0.transactionId == id } },
        kept.flagId.flatMap { id in detail.flags.firstIndex { $0.id == id } },
    ]
    for (pane, index) in indices.enumerated() {
        guard let index else { continue }
        state.customerPositions[pane].top += index - state.customerPositions[pane].selected
        state.customerPositions[pane].selected = index
    }
}

/// A triage write as the status line names it: "acknowledge of FLAG", "resolve of 3 flags", "undo of FLAG".
public func triageDescription(_ action: TriageAction, _ flagIds: [String], undo: Bool) -> String {
    let what = undo ? "undo" : action == .ack ? "acknowledge" : action.rawValue
    return "\(what) of \(flagIds.count == 1 ? flagIds[0] : "\(flagIds.count) flags")"
}

/// The loaded flags replaced by what the ledger read under `filter`. Marks outlive a filter of their own, as
/// they did when the filter was the loaded flags': a marked flag the new filter leaves out is kept aside, for the
/// triage keys (the title says how many of the marked are outside the filter).
private func replaceFlags(_ state: inout AppState, _ flags: [RefundFlag], filter: String?) {
    let before = state.flags + state.markedAside
    state.flags = flags
    if state.flagsReadFilter != filter {
        let read = Set(flags.map(\.id))
        var aside: [String: RefundFlag] = [:]
        for flag in before where state.marked.contains(flag.id) && !read.contains(flag.id) { aside[flag.id] = flag }
        state.markedAside = aside.values.sorted { ($0.at, $1.id) > ($1.at, $0.id) }
    } else {
        state.markedAside = state.markedAside.filter { flag in !flags.contains { $0.id == flag.id } }
    }
    state.flagsReadFilter = filter
    unmarkGone(&state, keeping: flags + state.markedAside)
}

/// Marked flags kept aside that a page just read lists again: in the list now, no longer aside (or a triage key
/// sent them twice, and the title said them not shown while they were).
private func takeBackAside(_ state: inout AppState, _ flags: [RefundFlag]) {
    guard !state.markedAside.isEmpty else { return }
    let read = Set(flags.map(\.id))
    state.markedAside.removeAll { read.contains($0.id) }
}

/// Drops the marks of flags a reload no longer lists; after another process's change (someone else moved them out
/// of the status shown) it says so: the next triage key would otherwise act on fewer flags than were marked without a
/// word. (A reload the user's own keys asked for, time travel or `G`, drops them as before.)
private func unmarkGone(_ state: inout AppState, keeping flags: [RefundFlag]) {
    let kept = state.marked.filter { id in flags.contains { $0.id == id } }
    let gone = state.marked.count - kept.count
    state.marked = kept
    guard gone > 0, state.refreshingMarks else { return }
    state.message = StatusMessage(
        "\(Format.counted(gone, "marked flag")) left the list (moved since you marked \(gone == 1 ? "it" : "them")): unmarked", kind: .error)
}
