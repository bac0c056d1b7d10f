import Entitlements
import LedgerQueries
import ReceiptModel

/// Everything that can happen to the dashboard: a key, a resize, or the answer to an effect.
public enum Action: Sendable {
    case key(Key)
    /// Text the terminal marked as pasted: typed into the prompt, never read as keys.
    case paste(String)
    case resize(width: Int, height: Int)
    /// Another process changed the ledger: reload what is on screen, keeping the selection.
    case ledgerChanged
    case overviewLoaded(OverviewData)
    /// A page of customers; `direction` is the query's: a backward page is the end of the list (not appended)
    /// or the rows before the loaded ones (appended in front).
    case customersLoaded(CustomerPage, append: Bool, direction: PageDirection = .forward)
    /// The access of customers on the Customers list, by the entitlement engine (``AppState/customerAccess``).
    case customerAccessLoaded([Int64: ListedAccess])
    case customerLoaded(CustomerDetail)
    case customerNotFound(String)
    case transactionLoaded(Transaction?, id: String)
    /// `filter`: the `/` text the ledger read them with (``FlagQuery/text``).
    case flagsLoaded([RefundFlag], next: FlagCursor?, append: Bool, filter: String? = nil)
    /// The latest triage entry of each of the flags just loaded that has one.
    case flagTriageLoaded([String: TriageEntry])
    /// How many flags the queue's query matches in all (the loaded pages hold some of them).
    case flagTotalLoaded(Int)
    /// Flags read backward: the end of the queue (G; not appended) or the flags before the loaded ones (appended
    /// in front); `previous` is where the page before them ends, nil at the start of the queue.
    case flagsBeforeLoaded([RefundFlag], previous: FlagCursor?, append: Bool, filter: String? = nil)
    /// The first pages of sources and rejected records, or (`append`) the next page of one of them.
    case importsLoaded(sources: [SourceSummary], rejected: [RejectedRecord], append: Bool = false)
    /// The refunds of one day of the overview's chart (the day's start).
    case dayRefundsLoaded(day: Timestamp, [DayRefund])
    case rawLoaded(id: Int64, bytes: [UInt8])
    /// Triage changes were appended to the log.
    case triaged([TriageChange], undo: Bool)
    /// A triage write failed (the ledger unavailable, the role refused): nothing of it was written for `flagIds`
    /// (`saved` others were, before it failed); `note`, the note typed for it, is offered again at their next resolve;
    /// `refused`: the ledger refused it (``TriageRefused``) rather than failed to take it.
    case triageFailed(
        String, action: TriageAction, flagIds: [String], note: String?, undo: Bool, saved: Int = 0, refused: Bool = false)
    /// A triage write went on to the ledger while the keys go on (what it is, "resolve of FLAG"), or (nil) every
    /// write sent has answered, with ``triaged(_:undo:)`` or ``triageFailed(_:action:flagIds:note:undo:saved:refused:)``.
    case saving(String?)
    /// `:at` / `t` text was understood as an instant (nil: back to now).
    case instantParsed(Timestamp?)
    /// `:at` / `t` text that is no instant the dashboard shows, and why: the `t` prompt opens again holding it, to mend.
    case instantRejected(text: String, reason: String)
    case themeChanged(String)
    case message(StatusMessage)
    /// The ledger failed; `unavailable` when it cannot be reached at all (retrying), else a failed request.
    case failed(String, unavailable: Bool)
    /// A read of a screen failed while the ledger could be reached (a read timeout, a refused statement).
    case readFailed(String)
    /// The wall clock reached another minute (a dashboard over a live ledger; the demo's time stands still).
    case clockAdvanced(Timestamp)
    /// The ledger answered again after being unavailable; `now`, the wall clock when it reached another minute
    /// meanwhile.
    case recovered(now: Timestamp?)
    /// The ledger's read-only setting, read after the change signal moved (another process set or lifted it).
    case ledgerReadOnly(Bool)
}

/// What the reducer asks the outside world to do. Run by ``EffectHandlers``; results come back as actions.
public enum Effect: Sendable, Equatable {
    /// `pinned` under time travel: the refunds and alarms are those by the instant; live, every one the ledger holds
    /// (one imported within the minute the header's now has not moved past yet among them).
    case loadOverview(asOf: Timestamp, environment: EnvironmentFilter, pinned: Bool = false)
    case loadCustomers(CustomerQuery, append: Bool)
    case openCustomer(query: String)
    case loadCustomer(Int64)
    case loadTransaction(String)
    case loadFlags(FlagQuery, append: Bool)
    case loadImports
    /// The next page of the sources (after that id) or of the rejected records (after that id).
    case loadMoreImports(sourcesAfter: Int64?, rejectedAfter: Int64?)
    case loadRaw(Int64)
    /// The refunds one day's bar counts (`day` its start), up to `until`.
    case loadDayRefunds(day: Timestamp, until: Timestamp, environment: EnvironmentFilter)
    /// `expecting`, on an undo: the status the undone change set; a flag someone changed since is left alone.
    case triage(flagIds: [String], action: TriageAction, note: String?, undo: Bool, expecting: FlagStatus? = nil)
    case parseInstant(String)
    case copy(String)
    /// `saying` follows the count of rows in the message: what the export holds, when it is not the whole view.
    case export(path: String, contents: String, saying: String = "")
    /// The whole flag queue (every page of the current query, the `/` filter applied) as CSV to `path`.
    case exportQueue(path: String)
    /// The customers loaded as CSV to `path`, every one's access judged by the entitlement engine first (the list judges
    /// those on screen only).
    case exportCustomers(path: String, saying: String)
    case setTheme(String)
    case setMouse(Bool)
    case quit
}
