import Entitlements
import ReceiptModel

/// The read side the dashboard and the commands page through: each call returns what one screen shows,
/// bounded by the page or the customer, never by the ledger's size.
public protocol LedgerReading: Sendable {
    /// The overview's counters, of one environment or all. Customers, transactions, refunds and open flags are
    /// the environment's; sources and records (a file holds both) are always of all.
    func overview(environment: EnvironmentFilter) async throws -> LedgerOverview
    /// A filtered, sorted page of customers (keyset paging) with the count of all that match.
    func customers(_ query: CustomerQuery) async throws -> CustomerPage
    /// The customer an id belongs to: external id, appAccountToken, transactionId, originalTransactionId,
    /// webOrderLineItemId or a display id (`C12`).
    func customerId(matching id: String) async throws -> Int64?
    /// The customer of an id as a person pasted it, with the punctuation around it taken off when it matches
    /// nothing as it is (the fewest characters first), the id that matched, and the other customers other words of
    /// the text name.
    func customerId(pasted text: String) async throws -> PastedMatch?
    /// Everything about one customer.
    func customerRecords(_ id: Int64) async throws -> CustomerRecords
    /// One transaction by id.
    func transaction(_ id: String) async throws -> Transaction?
    /// Flags matching a query, newest first.
    func flags(_ query: FlagQuery) async throws -> [RefundFlag]
    /// How many flags match a query's filters (its cursor, direction and limit aside).
    func flagCount(_ query: FlagQuery) async throws -> Int
    /// Flag counts by severity and status, of the flags about refunds in one environment or all.
    func flagCounts(environment: EnvironmentFilter) async throws -> [FlagCount]
    /// Refunds per UTC day over `days` days ending with the day of `end`, for one product or all, in one
    /// environment or all.
    func refundsPerDay(days: Int, endingAt end: Timestamp, productId: String?, environment: EnvironmentFilter) async throws -> RefundSeries
    /// The refunds one day's bar of ``refundsPerDay(days:endingAt:productId:environment:)`` counts, the day being the
    /// UTC day of `day`, up to `until` (those that stood then), in the order they were refunded; at most `limit`.
    func refunds(onDayOf day: Timestamp, until: Timestamp, environment: EnvironmentFilter, limit: Int) async throws -> [DayRefund]
    /// The triage log of a flag, or of a customer (their notes and their flags' triage), oldest first.
    func triageLog(flagId: String?, customerId: Int64?) async throws -> [TriageEntry]
    /// The latest triage entry of each of these flags that has one (who moved it last, and their note).
    func latestTriage(flagIds: [String]) async throws -> [String: TriageEntry]
    /// Imported sources, newest first.
    func sources(after: Int64?, limit: Int) async throws -> [SourceSummary]
    /// Rejected records, oldest first, without their raw bytes.
    func rejectedRecords(after: Int64?, limit: Int) async throws -> [RejectedRecord]
    /// The raw bytes of one rejected record.
    func rejectedRaw(_ id: Int64) async throws -> [UInt8]
    /// A number that changes whenever another process commits to the ledger (cheap: polled every second).
    func changeToken() async throws -> Int64
    /// Whether the ledger is set read-only (`receiptdesk ledger read-only on`): writes are refused until it is
    /// lifted. Setting or lifting it moves the change token.
    func isSetReadOnly() async throws -> Bool
}

extension LedgerReading {
    /// The overview's counters over every environment.
    public func overview() async throws -> LedgerOverview { try await overview(environment: .all) }
    /// Flag counts over every environment.
    public func flagCounts() async throws -> [FlagCount] { try await flagCounts(environment: .all) }
    /// Refunds per day over every environment.
    public func refundsPerDay(days: Int, endingAt end: Timestamp, productId: String?) async throws -> RefundSeries {
        try await refundsPerDay(days: days, endingAt: end, productId: productId, environment: .all)
    }
}

extension LedgerReading {
    /// Hands the flags `query` selects to `body` a page of `pageSize` at a time, in the queue's order, at most `limit` of
    /// them (every one without a limit; the query's own limit is the pages'), each page read after the one before was
    /// handed on; returns whether more match than `limit`.
    public func forEachFlagPage(
        _ query: FlagQuery, limit: Int? = nil, pageSize: Int = 1000, _ body: ([RefundFlag]) throws -> Void
    ) async throws -> Bool {
        precondition(pageSize > 0, "a page holds a flag at least")
        var page = query
        var left = limit ?? .max
        while true {
            // One more than the page: whether anything follows it.
            let size = min(pageSize, left)
            page.limit = size + 1
            let rows = try await flags(page)
            let shown = rows.prefix(size)
            try body(Array(shown))
            left -= shown.count
            guard rows.count > shown.count, let last = shown.last else { return false }
            if left == 0 { return true }
            page.after = FlagCursor(after: last)
        }
    }
}
