import Entitlements
import LedgerQueries
import ReceiptModel

/// A triage write that failed part-way: the flags written before the failure, and why the rest were not.
public struct TriageInterrupted: Error, Sendable {
    public var written: [TriageChange]
    public var reason: String
    /// Whether the ledger refused the rest (see ``TriageRefused``) rather than failed to take them.
    public var refused: Bool

    public init(written: [TriageChange], reason: String, refused: Bool = false) {
        self.written = written
        self.reason = reason
        self.refused = refused
    }
}

/// A triage write the ledger refused (set read-only, opened read-only, a role that may not write) rather than one it
/// failed to take (unreachable, busy): the dashboard ends as a refused command does (exit 2) when such writes are all
/// it leaves unsaved, and as a failed ledger (exit 3) otherwise.
public struct TriageRefused: Error, Sendable, CustomStringConvertible {
    /// The ledger's words (what refused it, and what lifts it).
    public var reason: String
    /// The reason, as the status line says it.
    public var description: String { reason }

    /// A refusal, in the ledger's words.
    public init(reason: String) { self.reason = reason }
}

/// The outside world as the dashboard sees it: closures the command line builds over a ledger, the
/// theme files and the file system, so DeskUI never imports storage.
public struct EffectHandlers: Sendable {
    public var reader: any LedgerReading
    /// Appends triage changes to the log (ack/resolve/reopen); returns what changed. With `expecting` (an
    /// undo), a flag whose status is no longer that is left alone and returned unchanged (`from == to`). A write
    /// that fails after some flags were written throws ``TriageInterrupted`` with them.
    public var triage:
        @Sendable (_ flagIds: [String], _ action: TriageAction, _ note: String?, _ expecting: FlagStatus?) async throws -> [TriageChange]
    /// Understands `:at` text (ISO 8601 or milliseconds).
    /// An instant typed for time travel: nil when it is not one; throws when it is one the dashboard cannot show
    /// (the error says why).
    public var parseInstant: @Sendable (String) throws -> Timestamp?
    /// Loads a theme by name.
    public var loadTheme: @Sendable (String) throws -> Theme
    /// Writes an export.
    /// Whether a file was there, which the export replaced (the message says so).
    public var writeFile: @Sendable (_ path: String, _ contents: String) throws -> Bool
    /// The wall clock, read at each poll: "now" follows it. `nil` where time stands still (the demo's now is
    /// the end of its data).
    public var clock: (@Sendable () -> Timestamp)?

    public init(
        reader: any LedgerReading,
        triage: @escaping @Sendable ([String], TriageAction, String?, FlagStatus?) async throws -> [TriageChange],
        parseInstant: @escaping @Sendable (String) throws -> Timestamp?,
        loadTheme: @escaping @Sendable (String) throws -> Theme,
        writeFile: @escaping @Sendable (String, String) throws -> Bool,
        clock: (@Sendable () -> Timestamp)? = nil
    ) {
        self.reader = reader
        self.triage = triage
        self.parseInstant = parseInstant
        self.loadTheme = loadTheme
        self.writeFile = writeFile
        self.clock = clock
    }

    /// Everything the overview shows of one environment or all, in a few bounded queries. `pinned` (time travel): the
    /// refunds per day and the spike alarms are those by the instant; live, all of today's and every alarm (the
    /// header's now moves by the minute, and a refund imported within it would wait for the next).
    public func overview(asOf instant: Timestamp, environment: EnvironmentFilter = .all, pinned: Bool = false) async throws -> OverviewData {
        async let counts = reader.overview(environment: environment)
        async let series = reader.refundsPerDay(
            days: 90, endingAt: refundSeriesEnd(instant, pinned: pinned), productId: nil, environment: environment)
        async let flagCounts = reader.flagCounts(environment: environment)
        // Under time travel, alarms raised by the instant (the refunds after it are not in the series either).
        async let spikes = reader.flags(FlagQuery(status: .open, rule: "refund-spike", environment: environment, limit: 20, until: pinned ? instant : nil))
        // Requests open or acknowledged: someone looking at one does not stop Apple's 12 hours.
        async let consumption = reader.flags(FlagQuery(status: .open, rule: "consumption-request", environment: environment, limit: 20))
        async let consumptionSeen = reader.flags(
            FlagQuery(status: .acknowledged, rule: "consumption-request", environment: environment, limit: 20))
        // Every open request whose 12 hours had run out by the instant, not only those among the newest 20.
        let deadlinePassed = Timestamp(millisecondsSince1970: clampedSum(instant.millisecondsSince1970, -RefundFlag.consumptionAnswerWindow))
        async let pastDeadline = reader.flagCount(
            FlagQuery(status: .open, rule: "consumption-request", environment: environment, until: deadlinePassed))
        async let seenPastDeadline = reader.flagCount(
            FlagQuery(status: .acknowledged, rule: "consumption-request", environment: environment, until: deadlinePassed))
        return OverviewData(
            counts: try await counts, refunds90: try await series, flagCounts: try await flagCounts, spikes: try await spikes,
            consumptionRequests: Array((try await consumption + consumptionSeen).sorted { ($0.at, $0.id) > ($1.at, $1.id) }.prefix(20)),
            consumptionPastDeadline: try await pastDeadline + seenPastDeadline)
    }

    /// One customer with their flags and triage log.
    public func customer(_ id: Int64) async throws -> CustomerDetail {
        let records = try await reader.customerRecords(id)
        async let flags = reader.flags(FlagQuery(customerId: records.id, limit: 500))
        async let log = reader.triageLog(flagId: nil, customerId: records.id)
        return CustomerDetail(records: records, flags: try await flags, log: try await log)
    }
}

/// Where the overview's refunds per day end: under time travel (`pinned`) the instant; live, the end of its UTC day
/// (the header's now moves by the minute, and a refund imported within it would wait for the next). A day's list of
/// refunds ends there too, or the bar and the list of today differ.
func refundSeriesEnd(_ instant: Timestamp, pinned: Bool) -> Timestamp {
    pinned ? instant : instant.endOfUTCDay
}
