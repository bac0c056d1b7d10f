import Entitlements
import LedgerQueries
import ReceiptModel

/// The six screens, numbered as their keys.
public enum ScreenID: Int, CaseIterable, Hashable, Sendable {
    case overview = 1, customers, customer, transaction, refunds, imports

    /// The screens the environment filter applies to (`e`, the header's "env"); the others show one customer,
    /// transaction or import, every environment.
    public static let environmentFiltered: Set<ScreenID> = [.overview, .customers, .refunds]

    public var title: String {
        switch self {
        case .overview: "Overview"
        case .customers: "Customers"
        case .customer: "Customer"
        case .transaction: "Transaction"
        case .refunds: "Refunds"
        case .imports: "Imports"
        }
    }
}

/// What the overview shows, loaded in one go.
public struct OverviewData: Sendable, Equatable {
    public var counts: LedgerOverview
    public var refunds90: RefundSeries
    public var flagCounts: [FlagCount]
    public var spikes: [RefundFlag]
    /// The newest open consumption requests (the pending ones among them).
    public var consumptionRequests: [RefundFlag]
    /// How many open consumption requests' deadlines had passed at the instant read, counted by the ledger (the
    /// list above holds the newest only); nil: those in the list.
    public var consumptionPastDeadline: Int?

    public init(
        counts: LedgerOverview, refunds90: RefundSeries, flagCounts: [FlagCount], spikes: [RefundFlag], consumptionRequests: [RefundFlag],
        consumptionPastDeadline: Int? = nil
    ) {
        self.counts = counts
        self.refunds90 = refunds90
        self.flagCounts = flagCounts
        self.spikes = spikes
        self.consumptionRequests = consumptionRequests
        self.consumptionPastDeadline = consumptionPastDeadline
    }

    /// The refunds of the series' last 30 days (the overview's "refunds 30d" tile, and its export).
    public var refunds30: Int { refunds90.counts.suffix(30).reduce(0, +) }
}

/// One customer as the customer screen shows it: the records, and the flags and notes about them.
public struct CustomerDetail: Sendable {
    public var records: CustomerRecords
    /// As the flags pane lists them: open first, then acknowledged, then resolved; newest first in each, else in the
    /// order given.
    public var flags: [RefundFlag]
    public var log: [TriageEntry]

    public init(records: CustomerRecords, flags: [RefundFlag], log: [TriageEntry]) {
        self.records = records
        let rank = { (status: FlagStatus) in FlagStatus.allCases.firstIndex(of: status) ?? 0 }
        self.flags = flags.enumerated().sorted { a, b in
            if rank(a.element.status) != rank(b.element.status) { return rank(a.element.status) < rank(b.element.status) }
            if a.element.at != b.element.at { return a.element.at > b.element.at }
            return a.offset < b.offset
        }.map(\.element)
        self.log = log
    }

    /// The latest triage entry about one of the flags.
    public func lastTriage(of flagId: String) -> TriageEntry? { log.last { $0.flagId == flagId } }
}

/// A list's cursor: the selected row and the first row on screen.
public struct ListPosition: Sendable, Equatable {
    public var selected = 0
    public var top = 0

    public init(selected: Int = 0, top: Int = 0) {
        self.selected = selected
        self.top = top
    }

    /// Moves the selection by `delta` within `count` rows and keeps it inside a window of `visible` rows.
    public mutating func move(by delta: Int, count: Int, visible: Int) {
        guard count > 0 else {
            self = ListPosition()
            return
        }
        selected = min(max(0, selected + delta), count - 1)
        scroll(visible: visible)
        // No empty rows at the bottom while rows above are hidden (the list shrank, or the window grew).
        top = min(top, max(0, count - max(1, visible)))
    }

    public mutating func scroll(visible: Int) {
        let visible = max(1, visible)
        if selected < top { top = selected }
        if selected >= top + visible { top = selected - visible + 1 }
        top = max(0, top)
    }
}

/// The refunds one day's bar of the overview's chart counts: the figure down to its transactions (Enter on one
/// opens it, with the records it came from).
public struct DayRefundsList: Sendable, Equatable {
    /// The day's start (UTC).
    public var day: Timestamp
    /// Up to ``limit`` of them, in the order they were refunded; `nil` while they are read.
    public var rows: [DayRefund]?
    /// How many the day's bar counts (more than the rows when the day held more than ``limit``).
    public var count: Int
    public var list = ListPosition()

    /// The most refunds listed for one day (a spike day's are a few hundred; the bar says how many in all).
    public static let limit = 1000

    public init(day: Timestamp, count: Int) {
        self.day = day
        self.count = count
    }
}

/// What is being typed at the bottom line.
public struct Prompt: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        /// `:` commands.
        case command
        /// `/` filter of the current list.
        case filter
        /// `t`: the instant everything is computed as of.
        case instant
        /// The note for resolving flags.
        case note(flagIds: [String])
    }

    /// The most characters a prompt holds (a pasted note longer than this stops at it).
    public static let maxLength = 512

    public var kind: Kind
    /// What is typed; set whole (a completion taken), the cursor goes to its end.
    public var text: String { didSet { cursor = text.count } }
    /// Where the next character goes, in characters from the start (0...text.count).
    public private(set) var cursor: Int
    /// Completions for what is typed (fuzzy), best first.
    public var completions: [String] = []
    /// The text is the last value, offered as a selection is: the first character typed replaces it, Backspace,
    /// Delete and the keys that delete clear it (`t now` after `t 2025-05-01` is now, not "2025-05-01…now"), the
    /// keys that move keep it to edit, Enter takes it unchanged.
    public var offered: Bool
    /// What the status line said when the prompt opened, about the prompt (`/` where there is nothing to filter):
    /// taken off with it, not left under the screen it leads to.
    public var hint: StatusMessage?

    public init(kind: Kind, text: String = "") {
        self.kind = kind
        self.text = text
        self.cursor = text.count
        self.offered = !text.isEmpty
    }

    /// A character typed at the cursor (replacing an offered value); false when the prompt is full.
    public mutating func insert(_ character: Character) -> Bool {
        if offered { clear() }
        guard text.count < Self.maxLength else { return false }
        var characters = Array(text)
        let position = min(cursor, characters.count)
        // What follows the cursor stays after it: a scalar that joins the character before it (a variation
        // selector, a skin tone, a flag's second half, a combining accent, typed one code point at a time) makes no
        // new character, so the cursor is counted back from the end, not forward by one.
        let following = characters.count - position
        characters.insert(character, at: position)
        text = String(characters)
        cursor = max(0, text.count - following)
        return true
    }

    /// Moves the cursor (clamped to the text); an offered value becomes text to edit.
    public mutating func move(to position: Int) {
        offered = false
        cursor = min(max(0, position), text.count)
    }

    /// Backspace: the character before the cursor.
    public mutating func deleteBackward() {
        if offered { return clear() }
        guard cursor > 0 else { return }
        delete(cursor - 1..<cursor)
    }

    /// Delete: the character at the cursor.
    public mutating func deleteForward() {
        if offered { return clear() }
        guard cursor < text.count else { return }
        delete(cursor..<cursor + 1)
    }

    /// Ctrl-W: the word before the cursor, and the spaces between it and the cursor.
    public mutating func deleteWordBackward() {
        if offered { return clear() }
        let characters = Array(text)
        var start = cursor
        while start > 0, characters[start - 1].isWhitespace { start -= 1 }
        while start > 0, !characters[start - 1].isWhitespace { start -= 1 }
        delete(start..<cursor)
    }

    /// Ctrl-K: from the cursor to the end.
    public mutating func deleteToEnd() {
        if offered { return clear() }
        delete(cursor..<text.count)
    }

    /// Ctrl-U: everything.
    public mutating func clear() {
        text = ""
        offered = false
    }

    private mutating func delete(_ range: Range<Int>) {
        var characters = Array(text)
        let range = min(range.lowerBound, characters.count)..<min(range.upperBound, characters.count)
        let following = characters.count - range.upperBound
        characters.removeSubrange(range)
        text = String(characters)
        // (Taking a character out can join its neighbours into one: counted back from the end, as an insert is.)
        cursor = min(range.lowerBound, max(0, text.count - following))
    }

    public var label: String {
        switch kind {
        case .command: ":"
        case .filter: "/"
        case .instant: "as of (UTC: YYYY-MM-DD[ HH:MM], or now): "
        case .note(let ids): "resolve \(Format.counted(ids.count, "flag"))\(flagRules(ids)), note: "
        }
    }
}

/// The note an undo writes with its compensating entries, naming the change undone ("undo of resolve"): the log
/// says why the flag moved back, and the customer's header, which shows what people wrote, leaves it out.
func undoNote(of status: FlagStatus) -> String {
    let change = switch status {
    case .open: "reopen"
    case .acknowledged: "acknowledge"
    case .resolved: "resolve"
    }
    return "undo of \(change)"
}

/// Whether a note is one an undo wrote (as this build words it, or as earlier ones did: "undo of resolved").
func isUndoNote(_ note: String) -> Bool {
    FlagStatus.allCases.contains { undoNote(of: $0) == note || "undo of \($0.rawValue)" == note }
}

/// ` (app-issue, quick-refund)`: the rules of up to three flags by their ids (`rule:key`), so that a key that acts on
/// several flags at once (a customer's) says which; empty for more.
func flagRules(_ ids: [String]) -> String {
    var rules: [String] = []
    for id in ids {
        let rule = String(id.prefix { $0 != ":" })
        if !rules.contains(rule) { rules.append(rule) }
    }
    return rules.isEmpty || rules.count > 3 ? "" : " (" + rules.joined(separator: ", ") + ")"
}

/// A line at the bottom that says what just happened.
public struct StatusMessage: Sendable, Equatable {
    public enum Kind: Sendable, Equatable { case info, error }
    public var text: String
    public var kind: Kind
    /// Shown over the "ledger unavailable, retrying" line (a triage not saved): what the outage would otherwise hide.
    public var urgent: Bool

    public init(_ text: String, kind: Kind = .info, urgent: Bool = false) {
        self.text = text
        self.kind = kind
        self.urgent = urgent
    }
}

/// A triage change this session made, so `u` can append its compensating entry.
public struct TriageChange: Sendable, Equatable {
    public var flagId: String
    public var from: FlagStatus
    public var to: FlagStatus
    /// The flag's customer, when the ledger said: an undo names it (`u` undoes your last change wherever you are).
    public var customerId: Int64?
    /// For a flag someone else had moved there since it was read (from == to: nothing written), who did, when the
    /// ledger's triage log says: the status line names them ("bob resolved it since").
    public var by: String?

    public init(flagId: String, from: FlagStatus, to: FlagStatus, customerId: Int64? = nil, by: String? = nil) {
        self.flagId = flagId
        self.from = from
        self.to = to
        self.customerId = customerId
        self.by = by
    }

    /// `quick-refund:2004 of C7`, or the flag id alone when its customer is not known.
    var flagAndCustomer: String { flagId + (customerId.map { " of C\($0)" } ?? "") }
}

/// A screen left for another, with the customer or transaction it showed: going back shows that one again, not
/// the one opened since.
public struct Visit: Sendable, Equatable {
    public var screen: ScreenID
    public var customerId: Int64?
    public var transactionId: String?

    public init(screen: ScreenID, customerId: Int64? = nil, transactionId: String? = nil) {
        self.screen = screen
        self.customerId = customerId
        self.transactionId = transactionId
    }
}

/// Where the dashboard is and what it shows: a value, changed only by ``reduce(_:_:)``.
public struct AppState: Sendable {
    // Session facts.
    public var width: Int
    public var height: Int
    /// The present: the wall clock, or the end of the demo data's span.
    public var now: Timestamp
    /// Time travel: everything computed as of this instant instead of `now`.
    public var asOf: Timestamp?
    public var isDemo: Bool
    /// The data was decoded without checking signatures (`--files` with `--no-verify`): the header says so, in
    /// warning colours, on every screen.
    public var unverified = false
    public var ledgerName: String
    public var operatorName: String
    /// Opened for reading (`--read-only`): writes are refused for the whole session.
    public var openedReadOnly: Bool
    /// Why it was opened read-only, when not for `--read-only` (a role that may not triage).
    public var readOnlyReason: String?
    /// The ledger's own setting (`receiptdesk ledger read-only on`), followed while the dashboard is open.
    public var ledgerReadOnly: Bool
    /// Whether triage is refused: the keys that write are hidden and the header says READ-ONLY.
    public var readOnly: Bool { openedReadOnly || ledgerReadOnly }
    /// Whether the ledger lives in memory (files loaded, no ledger): triage works and is gone when the dashboard
    /// quits, which the header and each triage message say.
    public var inMemory = false
    public var ascii: Bool
    public var mouse: Bool
    public var themeName: String
    public var themeNames: [String]
    public var catalog: Catalog
    public var keymap: Keymap

    // Navigation.
    public var screen: ScreenID = .overview
    /// The screens left for another, newest last (`q` and Esc go back through them).
    public var history: [Visit] = []
    /// The flag whose event the next customer opened should show selected in the timeline.
    public var focusFlag: RefundFlag?
    /// The customer shown when `:customer` asked for another: a visit once the other arrives.
    public var rememberOnLoad: Visit?
    public var prompt: Prompt?
    public var showHelp = false
    /// The first key the help shows (j/k scroll it when the terminal is too short for every key).
    public var helpTop = 0
    public var message: StatusMessage?
    /// A resolve's note that was not saved (the write failed), and the flags it was for: a resolve of the same
    /// flags offers it again.
    public var unsavedNote: (flagIds: Set<String>, text: String)?
    /// The triage write on its way to the ledger ("acknowledge of FLAG"), while the keys go on: nil when none is.
    /// Another triage key waits for it (is refused, saying so), so that two writes never cross.
    public var saving: String?
    /// The marks the triage write on its way took (cleared from ``marked`` when it was sent): the flags it was
    /// asked to move are among them, and those it would not move are counted when it answers.
    public var triageMarks: Set<String> = []
    /// Set while a read slower than the runtime's grace is on its way: a screen with nothing to show yet says it is
    /// being read, not that the ledger holds nothing.
    public var reading = false
    /// Why the last read of a screen failed while the ledger could be reached (a read timeout behind a lock, a
    /// refused statement), until a read succeeds: a screen with nothing to show says it could not be read, not that
    /// the ledger holds nothing.
    public var readFailed: String?
    /// Set while the ledger cannot be reached; the last screen stays.
    public var unavailable: String?
    /// When the header's clock saw the ledger go away: the screen kept is as read before it.
    public var unavailableSince: Timestamp?
    /// When each screen was last read, by the header's clock: during an outage a screen shows what it read then (the
    /// Overview read at the start, opened again, is not as of the queue read a minute before the outage).
    public var readAt: [ScreenID: Timestamp] = [:]
    /// Set while the queue's reload that another process's change asked for is on its way: marked flags it no longer
    /// lists were moved by someone else, and are said to be unmarked (not those the user's own keys leave out).
    public var refreshingMarks = false
    public var environment: EnvironmentFilter = .all
    /// The environment the screen shown applies: ``environment`` on the screens it filters, else all (the header's
    /// "env" and an export's first line say this one).
    var screenEnvironment: EnvironmentFilter { ScreenID.environmentFiltered.contains(screen) ? environment : .all }
    public var quitting = false

    // Screens.
    public var overview: OverviewData?
    public var overviewPane = 0
    /// The selected spike alarm (the overview's first pane).
    public var spikeList = ListPosition()
    /// The selected severity (the overview's second pane).
    public var severityList = ListPosition()
    /// The selected pending consumption request (the overview's third pane).
    public var consumptionList = ListPosition()
    /// The day chosen on the refunds-per-day chart (the overview's fourth pane), in days before the last day shown.
    public var seriesDay = 0
    /// The refunds of the chosen day, listed over the overview's panes (Enter on the chart), until Esc.
    public var dayRefunds: DayRefundsList?

    public var customerPage = CustomerPage(rows: [], next: nil, total: 0)
    /// Where the loaded customers start in the whole list: 0 from the top, more once `G` loaded its end.
    public var customerOffset = 0
    public var customerQuery = CustomerQuery(limit: 100)
    public var customerList = ListPosition()
    public var customersLoading = false
    /// What the Customers list says of each customer's access, by the entitlement engine (the customer screen's
    /// one definition), by customer id: the runtime computes it for the rows on screen when no key is waiting.
    public var customerAccess: [Int64: ListedAccess] = [:]
    /// Moves when the list is read again (the ledger may have changed): older values stay shown until recomputed.
    public var customerAccessGeneration = 0

    public var customer: CustomerDetail?
    public var customerView: CustomerView?
    /// The customer screen's pane: 0 entitlements, 1 timeline, 2 transactions, 3 flags (a Tab stop when they have some).
    public var customerPane = 0
    public var customerPositions = AppState.freshCustomerPositions
    /// One position per customer pane.
    public static let freshCustomerPositions = Array(repeating: ListPosition(), count: 4)

    public var transaction: Transaction?
    public var transactionScroll = ListPosition()

    public var flags: [RefundFlag] = []
    public var flagStatus: FlagStatus? = .open
    public var flagList = ListPosition()
    /// The queue's `/` filter, which the ledger reads the queue with (every flag of it, not only the pages loaded).
    public var flagFilter: String?
    /// The `/` filter the loaded flags were read with: while it is not ``flagFilter`` (typed, not yet read; a test
    /// that sets the filter alone) the loaded flags are filtered here as the ledger would.
    public var flagsReadFilter: String?
    /// The queue shows this product's flags only (Enter on a spike alarm); the ledger reads them.
    public var flagProduct: String?
    /// The queue shows this severity's flags only (Enter on the overview's severities); the ledger reads them.
    public var flagSeverity: Severity?
    /// The queue shows this environment's flags only while the dashboard shows every environment (Enter on a spike:
    /// spikes are counted per environment, so a production spike's flags are not its product's sandbox tests).
    public var flagEnvironment: EnvironmentFilter?
    public var marked: Set<String> = []
    /// Marked flags a `/` filter read since left out of the loaded ones: still marked, and acted on by the triage
    /// keys with the rest.
    public var markedAside: [RefundFlag] = []
    /// Who last moved each loaded flag, and their note (read with the flags).
    public var flagTriage: [String: TriageEntry] = [:]
    public var flagsNext: FlagCursor?
    /// How many flags the queue's query matches in all, read with its first page.
    public var flagTotal: Int?
    /// Where the flags before the loaded ones end, once G loaded the end of the queue (nil: loaded from its start).
    public var flagsPrevious: FlagCursor?
    /// The loaded flags were read from the end of the queue (G), so a refresh reads the end again.
    public var flagsFromEnd = false
    /// The queue as it was before Enter on a spike in it narrowed it to the spike's product: Esc goes back to it.
    public var queueBeforeSpike: QueueScope?
    /// The flag to select when the queue's next first page arrives (going back from a spike's flags to the spike).
    public var selectFlagOnLoad: String?
    /// Whether the list being read again (g or Home from its end) is shown from its first row, not kept on the
    /// row selected before, which was the first of the end's window.
    public var selectTopOnLoad = false

    public var sources: [SourceSummary] = []
    public var rejected: [RejectedRecord] = []
    /// Whether a next page of sources / rejected records may exist (the last page came back full).
    public var importsMore = [false, false]
    public var importsLoading = false
    /// `G` on the imports or on a customer list counted only in part: each page that arrives moves the selection
    /// to its end and asks for the next, a few pages per press (so a key never waits long), until the list ends or
    /// another key is pressed.
    public var followingToEnd = false
    /// Pages `G` may still ask for before it waits for the next press.
    public var followPagesLeft = 0
    /// Page sizes of the Imports screen's two lists.
    public static let importsPageSizes = [200, 500]
    public var importsPane = 0
    public var importPositions = [ListPosition(), ListPosition()]
    public var rawView: RawView?

    /// What the undo under way has said so far: an undo of flags moved from different statuses is one write per
    /// status, and the line says all of them, not the last.
    public var undoReport: [String] = []
    /// This session's triage changes, newest last, for `u`.
    /// Your triage actions this session, newest last; a bulk action is one entry.
    public var undoStack: [[TriageChange]] = []
    /// The text of the last `/` filter on a screen that searches (customer timeline, imports).
    public var search: String?

    public init(
        width: Int, height: Int, now: Timestamp, isDemo: Bool = false, ledgerName: String = "", operatorName: String = "",
        readOnly: Bool = false, ascii: Bool = false, mouse: Bool = false, themeName: String = "default",
        themeNames: [String] = [], catalog: Catalog = Catalog(), keymap: Keymap = .standard
    ) {
        self.width = width
        self.height = height
        self.now = now
        self.isDemo = isDemo
        self.ledgerName = ledgerName
        self.operatorName = operatorName
        self.openedReadOnly = readOnly
        self.ledgerReadOnly = false
        self.ascii = ascii
        self.mouse = mouse
        self.themeName = themeName
        self.themeNames = themeNames
        self.catalog = catalog
        self.keymap = keymap
    }

    /// The instant entitlements and timelines are computed for.
    public var instant: Timestamp { asOf ?? now }

    /// Rows of body the list screens have (header, table header, message and footer lines excluded).
    public var listRows: Int { max(1, height - 6) }

    /// The customers on the Customers list's screen whose access is not yet known at the instant for the list as last
    /// read, at most `limit`, the selected one's first.
    /// (`onScreenOnly: false`: every customer loaded, for an export, those that could not be read asked again.)
    public func customersNeedingAccess(limit: Int, onScreenOnly: Bool = true) -> [Int64] {
        guard screen == .customers, unavailable == nil, !customerPage.rows.isEmpty else { return [] }
        let rows = customerPage.rows
        let top = min(max(0, customerList.top), rows.count)
        let shown = onScreenOnly ? rows[top..<min(rows.count, top + listRows)] : rows[...]
        let selected = rows[safe: customerList.selected].map { [$0] } ?? []
        var out: [Int64] = []
        var seen = Set<Int64>()
        for row in selected + shown where out.count < limit && seen.insert(row.id).inserted {
            if let known = customerAccess[row.id], known.instant == instant, known.generation == customerAccessGeneration,
                known.state != nil || onScreenOnly
            {
                continue
            }
            out.append(row.id)
        }
        return out
    }

    public var glyphs: Glyphs { ascii ? .ascii : .unicode }
}

/// What the Customers list says of a customer's access at an instant: the entitlement that gives the most (active,
/// then a grace period, owned, billing retry, revoked, expired), with the date that goes with it. The list's own
/// figures know expiries only: a grace period read as "expired", a family member's revoked year as a date to come.
public struct ListedAccess: Sendable, Equatable {
    /// `nil` when the customer could not be read (the list then says what its figures know).
    public var state: EntitlementState?
    /// Active: the latest expiry; grace: its end; revoked: the revocation; expired: the latest expiry.
    public var date: Timestamp?
    public var instant: Timestamp
    /// Judged at the clock's now, not an instant travelled to: shown until judged again at the next minute.
    public var live: Bool
    public var generation: Int

    /// The order in which an entitlement's state is said, the one giving the most first.
    /// (What grants access first: an owned item above a subscription in billing retry, which grants none.)
    static let precedence: [EntitlementState] = [.active, .gracePeriod, .owned, .billingRetry, .revoked, .expired, .none]

    public init(_ entitlements: [Entitlement], instant: Timestamp, live: Bool = false, generation: Int) {
        let best = Self.precedence.first { state in entitlements.contains { $0.state == state } } ?? EntitlementState.none
        let those = entitlements.filter { $0.state == best }
        state = best
        date = switch best {
        case .active, .expired: those.compactMap(\.expiresDate).max()
        case .gracePeriod: those.compactMap(\.gracePeriodExpiresDate).max()
        case .revoked: those.compactMap(\.revocationDate).max()
        case .billingRetry, .owned, .none: nil
        }
        self.instant = instant
        self.live = live
        self.generation = generation
    }

    /// A customer that could not be read.
    public init(unreadAt instant: Timestamp, live: Bool = false, generation: Int) {
        state = nil
        self.instant = instant
        self.live = live
        self.generation = generation
    }
}

/// The customer screen's derived view at the chosen instant: recomputed when the instant changes.
public struct CustomerView: Sendable {
    public var entitlements: [Entitlement]
    public var timeline: [TimelineEvent]
    public var facts: CustomerFacts
    public var instant: Timestamp
    /// What each revoked transaction's revocation is at the instant (the one definition,
    /// `CustomerHistory.revocation(of:at:)`): a refund, a family revoke, or none (an upgrade's prorated
    /// cancellation, a refund Apple reversed), by transaction id.
    public var revocations: [String: Revocation?]
    /// The transactions pane's rows, newest first: those bought by the instant (under time travel a pane of every
    /// transaction listed purchases after it, beside a header and timeline that left them out), and how many later.
    public var transactions: [Transaction]
    public var transactionsLater: Int

    public init(detail: CustomerDetail, at instant: Timestamp, catalog: Catalog) {
        let history = detail.records.history
        var revocations: [String: Revocation?] = [:]
        for t in detail.records.transactions where t.revocationDate != nil {
            revocations[t.transactionId] = .some(history.revocation(of: t, at: instant))
        }
        self.revocations = revocations
        entitlements = history.entitlements(at: instant, catalog: catalog)
        timeline = history.timeline(upTo: instant, catalog: catalog)
        facts = history.facts(at: instant)
        self.instant = instant
        // (As the header counts them: CustomerRecords.transactionCount(at:).)
        transactions = detail.records.transactions.reversed().filter { CustomerRecords.bought($0, by: instant) }
        transactionsLater = detail.records.transactions.count - transactions.count
    }
}

/// A rejected record over the Imports screen: where it came from and why it was rejected, then its raw bytes
/// escaped, wrapped to the overlay's width (on load and on a resize, not on every key) and scrolled by line.
public struct RawView: Sendable {
    public let id: Int64
    /// The list's row for the record (source, code, reason) when it is loaded.
    public let record: RejectedRecord?
    /// The bytes as text: valid UTF-8 sanitised, every other byte `\xNN`.
    public let text: String
    public private(set) var lines: [String] = []
    /// How many of `lines` say where the record came from and why it was rejected (before its bytes).
    public private(set) var headerCount = 0
    /// The first line shown.
    public private(set) var top = 0

    init(id: Int64, record: RejectedRecord?, text: String, screenWidth: Int, screenHeight: Int) {
        self.id = id
        self.record = record
        self.text = text
        resize(screenWidth: screenWidth, screenHeight: screenHeight)
    }

    /// The overlay's size on a screen of this size (4 cells narrower and 4 rows shorter than the screen).
    static func overlaySize(screenWidth: Int, screenHeight: Int) -> (width: Int, height: Int) {
        (screenWidth - 4, screenHeight - 4)
    }

    /// The room for lines inside the overlay on a screen of this size.
    /// Whether the record has more lines than the overlay shows on a screen of that size (its keys scroll it then;
    /// otherwise any key closes it).
    func scrolls(screenWidth: Int, screenHeight: Int) -> Bool {
        lines.count > Self.viewport(screenWidth: screenWidth, screenHeight: screenHeight).height
    }

    static func viewport(screenWidth: Int, screenHeight: Int) -> (width: Int, height: Int) {
        let size = overlaySize(screenWidth: screenWidth, screenHeight: screenHeight)
        let inside = Painter.overlayInside(width: size.width, height: size.height, screenWidth: screenWidth, screenHeight: screenHeight)
        return (max(1, inside.width), max(1, inside.height))
    }

    /// Wraps the lines for a screen of this size, keeping the place: the first line shown stays as far through
    /// the lines as it was.
    mutating func resize(screenWidth: Int, screenHeight: Int) {
        let viewport = Self.viewport(screenWidth: screenWidth, screenHeight: screenHeight)
        let before = lines.count
        var lines: [String] = []
        if let record {
            lines += wrapped("\(record.sourcePath)#\(record.index)", width: viewport.width)
            lines += wrapped("\(record.code): \(record.message)", width: viewport.width, words: true)
        }
        lines.append(record == nil ? "raw bytes, escaped:" : "its raw bytes, escaped:")
        headerCount = lines.count
        self.lines = lines + wrapped(text, width: viewport.width)
        if before > 0 { top = Int((Double(top) / Double(before) * Double(self.lines.count)).rounded()) }
        scroll(by: 0, height: viewport.height)
    }

    /// Moves the first line shown by `lines`, kept within the text.
    mutating func scroll(by lines: Int, height: Int) {
        let last = max(0, self.lines.count - height)
        top = min(max(0, top + max(-last - 1, min(last + 1, lines))), last)
    }
}

/// `text` sanitised and cut into lines of at most `width` cells (a wide character is never split); with
/// `words`, at the last space that fits when there is one.
func wrapped(_ text: String, width: Int, words: Bool = false) -> [String] {
    var lines: [String] = []
    var line = ""
    var used = 0
    for character in Sanitize.text(text) {
        let cells = DisplayWidth.of(character)
        if used + cells > width, !line.isEmpty {
            if words, character != " ", let space = line.lastIndex(of: " "), space > line.startIndex {
                lines.append(String(line[..<space]))
                line = String(line[line.index(after: space)...])
                used = DisplayWidth.of(line)
            } else {
                lines.append(line)
                line = ""
                used = 0
            }
            if character == " ", line.isEmpty { continue }
        }
        line.append(character)
        used += cells
    }
    if !line.isEmpty || lines.isEmpty { lines.append(line) }
    return lines
}

/// The consumption requests whose 12 hours to answer are still running at `instant`, soonest deadline first, as
/// the overview lists them.
func pendingConsumptionRequests(_ data: OverviewData, at instant: Timestamp) -> [RefundFlag] {
    let now = instant.millisecondsSince1970
    return data.consumptionRequests
        .filter { consumptionDeadline($0) > now && $0.at.millisecondsSince1970 <= now }
        .sorted { consumptionDeadline($0) < consumptionDeadline($1) }
}

/// When Apple stops waiting for a consumption request's answer: 12 hours after it was sent.
func consumptionDeadline(_ flag: RefundFlag) -> Int64 { clampedSum(flag.at.millisecondsSince1970, RefundFlag.consumptionAnswerWindow) }

/// What the refund queue shows: its scope, status and filter, and the flag selected in it.
public struct QueueScope: Sendable, Equatable {
    public var product: String?
    public var severity: Severity?
    public var status: FlagStatus?
    public var filter: String?
    public var selectedFlag: String?
}
