import Entitlements
import ReceiptDecoding
import ReceiptModel

extension SQLLedger: LedgerReading {
    public func overview(environment: EnvironmentFilter) async throws -> LedgerOverview {
        try await database.read { c in
            var values: [String: Int64] = [:]
            for row in try c.query("SELECT name, value FROM ledger_counters", []) {
                if let name = row[0].text, let value = row[1].int { values[name] = value }
            }
            func count(_ name: Counters.Name) -> Int {
                guard let stored = environment.stored, Counters.perEnvironment.contains(name) else {
                    return Int(values[name.rawValue] ?? 0)
                }
                return Int(values[Counters.key(name, in: stored)] ?? 0)
            }
            var openFlags = count(.openFlags)
            if let stored = environment.stored {
                openFlags = Int(
                    try c.scalar(
                        "SELECT COUNT(*) FROM flags WHERE environment = ? AND status = \(FlagStatus.open.sql)", [.text(stored)])?.int ?? 0)
            }
            return LedgerOverview(
                transactions: count(.transactions), customers: count(.customers), sources: count(.sources),
                rawRecords: count(.rawRecords), rejectedRecords: count(.rejectedRecords),
                refundedTransactions: count(.refundedTransactions), openFlags: openFlags,
                renewalInfos: count(.renewalInfos), notifications: count(.notifications),
                lastImport: values[Counters.Name.lastImport.rawValue].map(Timestamp.init(millisecondsSince1970:)))
        }
    }

    public func customers(_ query: CustomerQuery) async throws -> CustomerPage {
        try await customers(query, denseFilter: Queries.denseFilterIdentifiers, countLimit: Queries.customerCountLimit)
    }

    /// `customers(_:)` with the number of identifiers above which a filter counts as dense, and where a
    /// count stops (tests lower them to take those paths on a small ledger).
    func customers(_ query: CustomerQuery, denseFilter: Int, countLimit: Int) async throws -> CustomerPage {
        try await database.read { c in try Queries.customers(c, query, denseFilter: denseFilter, countLimit: countLimit) }
    }

    public func customerId(matching id: String) async throws -> Int64? {
        try await database.read { c in try Queries.customerId(c, matching: id) }
    }

    public func customerId(pasted text: String) async throws -> PastedMatch? {
        try await database.read { c in try Queries.customerId(c, pasted: text) }
    }

    public func customerRecords(_ id: Int64) async throws -> CustomerRecords {
        try await database.read { c in try Queries.records(c, customer: id) }
    }

    public func transaction(_ id: String) async throws -> Transaction? {
        try await database.read { c in
            guard let text = try c.scalar("SELECT canonical FROM transactions WHERE transaction_id = ?", [.text(id)])?.text
            else { return nil }
            return try CanonicalJSON.transaction(text)
        }
    }

    public func flags(_ query: FlagQuery) async throws -> [RefundFlag] {
        try await database.read { c in try Queries.flags(c, query, id: nil) }
    }

    /// The flag with this id, nil when there is none.
    public func flag(id: String) async throws -> RefundFlag? {
        try await database.read { c in try Queries.flags(c, FlagQuery(limit: 1), id: id).first }
    }

    public func flagCount(_ query: FlagQuery) async throws -> Int {
        try await database.read { c in
            let (conditions, arguments) = Queries.flagFilters(query, id: nil, dialect: c.dialect)
            let filter = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
            return Int(try c.scalar("SELECT COUNT(*) FROM flags \(filter)", arguments)?.int ?? 0)
        }
    }

    public func flagCounts(environment: EnvironmentFilter) async throws -> [FlagCount] {
        try await database.read { c in
            let filter = environment.stored == nil ? "" : "WHERE environment = ? "
            return try c.query(
                "SELECT severity, status, COUNT(*) FROM flags \(filter)GROUP BY severity, status ORDER BY severity, status",
                environment.stored.map { [.text($0)] } ?? [])
                .map { row in
                    FlagCount(
                        severity: try row[0].decode(Severity.self, column: "flags.severity"),
                        status: try row[1].decode(FlagStatus.self, column: "flags.status"), count: Int(row[2].int ?? 0))
                }
        }
    }

    public func refundsPerDay(
        days: Int, endingAt end: Timestamp, productId: String?, environment: EnvironmentFilter
    ) async throws -> RefundSeries {
        let day = Queries.dayMilliseconds
        let days = min(max(1, days), Queries.maximumSeriesDays)
        // Within years 1 to 9999, so that no day's bound overflows.
        let instant = min(max(end.millisecondsSince1970, Queries.firstSeriesInstant), Queries.lastSeriesInstant)
        let lastDay = Timestamp(millisecondsSince1970: instant).startOfUTCDay.millisecondsSince1970
        let first = lastDay - Int64(days - 1) * day
        return try await database.read { c in
            let (sql, arguments) = Queries.refundSeriesSQL(
                c.dialect, days: days, first: first, until: instant, productId: productId, environment: environment)
            var counts = Array(repeating: 0, count: days)
            for row in try c.query(sql, arguments) {
                guard let index = row[0].int.map(Int.init), counts.indices.contains(index) else { continue }
                counts[index] += Int(row[1].int ?? 0)
            }
            // A refund Apple reversed after the instant stood at it, as the customer's screen and `lookup --at` say:
            // stored as reversed, it is not among the refunds the series reads (under time travel a day's bar and
            // the 30 days' count left it out).
            for (_, refunded) in try Queries.refundsReversedAfter(
                c, first: first, until: instant, productId: productId, environment: environment)
            {
                let index = Int((refunded.millisecondsSince1970 - first) / day)
                if counts.indices.contains(index) { counts[index] += 1 }
            }
            return RefundSeries(firstDay: Timestamp(millisecondsSince1970: first), counts: counts)
        }
    }

    public func refunds(onDayOf day: Timestamp, until: Timestamp, environment: EnvironmentFilter, limit: Int) async throws -> [DayRefund] {
        let start = day.startOfUTCDay.millisecondsSince1970
        let end = min(until.millisecondsSince1970, day.endOfUTCDay.millisecondsSince1970)
        guard end >= start, limit > 0 else { return [] }
        return try await database.read { c in
            // What the day's bar counts: the refunds that stand, and those Apple reversed after `until`.
            var sql = """
                SELECT transaction_id, canonical FROM transactions
                WHERE revocation_kind = \(RevocationKind.refund.sql) AND revocation_date >= ? AND revocation_date <= ?
                """
            let (filter, filterArguments) = Queries.refundFilter(column: "", productId: nil, environment: environment)
            sql += filter + " ORDER BY revocation_date, transaction_id LIMIT ?"
            let arguments: [SQLValue] = [.int(start), .int(end)] + filterArguments + [.int(Int64(limit))]
            var found: [(Transaction, Timestamp)] = []
            for row in try c.query(sql, arguments) {
                let t = try Queries.storedTransaction(id: row[0].text ?? "?", canonical: row[1].text ?? "")
                found.append((t, t.revocationDate ?? Timestamp(millisecondsSince1970: start)))
            }
            found += try Queries.refundsReversedAfter(
                c, first: start, last: end, until: until.millisecondsSince1970, productId: nil, environment: environment)
            return found.sorted { ($0.1, $0.0.transactionId) < ($1.1, $1.0.transactionId) }.prefix(limit).map { t, at in
                DayRefund(
                    transactionId: t.transactionId, productId: t.productId, environment: t.environment?.rawValue, price: t.price,
                    currency: t.currency, refundedAt: at, share: t.revocation?.refundedShare ?? 100_000, sources: t.sources)
            }
        }
    }

    public func changeToken() async throws -> Int64 {
        try await database.read { c in
            try c.scalar("SELECT value FROM ledger_counters WHERE name = 'change'")?.int ?? 0
        }
    }

    public func triageLog(flagId: String?, customerId: Int64?) async throws -> [TriageEntry] {
        try await database.read { c in
            let (sql, arguments) = Queries.triageLogSQL(flagId: flagId, customerId: customerId)
            return try c.query(sql, arguments).map(Queries.triageEntry)
        }
    }

    public func latestTriage(flagIds: [String]) async throws -> [String: TriageEntry] {
        guard !flagIds.isEmpty else { return [:] }
        return try await database.read { c in
            let rows = try c.queryIn(Queries.latestTriageSQL, [], list: flagIds.map(SQLValue.text))
            var latest: [String: TriageEntry] = [:]
            for entry in try rows.map(Queries.triageEntry) {
                if let flag = entry.flagId { latest[flag] = entry }
            }
            return latest
        }
    }

    public func sources(after: Int64?, limit: Int) async throws -> [SourceSummary] {
        try await database.read { c in
            try c.query(
                "SELECT \(Self.sourceColumns) FROM sources WHERE id < ? ORDER BY id DESC LIMIT ?", [.int(after ?? Int64.max), .of(limit)]
            ).map(Self.sourceSummary)
        }
    }

    /// The source of this content (sources are told apart by their SHA-256, not their path), if it was imported.
    public func source(sha256: String) async throws -> SourceSummary? {
        try await database.read { c in
            try c.query("SELECT \(Self.sourceColumns) FROM sources WHERE sha256 = ?", [.text(sha256)]).first.map(Self.sourceSummary)
        }
    }

    /// How many records of a source stand on a record imported with `--no-verify` (its own, or one it duplicates):
    /// a ledger keeps the first import of a record, so a later run that verifies checks none of them again.
    public func recordsStandingUnverified(sourceId: Int64) async throws -> Int {
        try await database.read { c in
            let skipped = "'\(Verification.skipped.rawValue)'"
            return Int(
                try c.scalar(
                    """
                    SELECT COUNT(*) FROM raw_records r WHERE r.source_id = ? AND (
                        (r.status = \(RecordStatus.imported.sql) AND r.verification = \(skipped))
                        OR (r.status = \(RecordStatus.duplicate.sql) AND EXISTS (SELECT 1 FROM raw_records o
                            WHERE o.content_hash = r.content_hash AND o.status = \(RecordStatus.imported.sql) AND o.verification = \(skipped))))
                    """, [.int(sourceId)])?.int ?? 0)
        }
    }

    private static let sourceColumns = "id, path, sha256, size, started_at, completed_at, records_read, imported, duplicates, rejected"

    private static func sourceSummary(_ row: [SQLValue]) -> SourceSummary {
        SourceSummary(
            id: row[0].int ?? 0, path: row[1].text ?? "", sha256: row[2].text ?? "", size: row[3].int ?? 0,
            startedAt: Timestamp(millisecondsSince1970: row[4].int ?? 0),
            completedAt: row[5].int.map(Timestamp.init(millisecondsSince1970:)),
            counts: ImportCounts(
                read: Int(row[6].int ?? 0), imported: Int(row[7].int ?? 0), duplicate: Int(row[8].int ?? 0),
                rejected: Int(row[9].int ?? 0)))
    }

    public func rejectedRecords(after: Int64?, limit: Int) async throws -> [RejectedRecord] {
        try await database.read { c in
            try c.query(
                """
                SELECT r.id, s.path, r.record_index, r.byte_offset, r.kind, r.error_code, r.error_message, LENGTH(r.raw)
                FROM raw_records r JOIN sources s ON s.id = r.source_id
                WHERE r.status = \(RecordStatus.rejected.sql) AND r.id > ? ORDER BY r.id LIMIT ?
                """, [.int(after ?? 0), .of(limit)]
            ).map { row in
                RejectedRecord(
                    id: row[0].int ?? 0, sourcePath: row[1].text ?? "", index: Int(row[2].int ?? 0), offset: row[3].int ?? 0,
                    kind: row[4].text ?? "", code: row[5].text ?? "", message: row[6].text ?? "", size: Int(row[7].int ?? 0))
            }
        }
    }

    public func rejectedRaw(_ id: Int64) async throws -> [UInt8] {
        try await database.read { c in
            try c.scalar("SELECT raw FROM raw_records WHERE id = ? AND status = \(RecordStatus.rejected.sql)", [.int(id)])?.blob ?? []
        }
    }
}

/// The SQL behind the read side, shared by every backend.
enum Queries {
    static func resolve(_ c: any SQLConnection, _ id: Int64) throws -> Int64 {
        try c.scalar("SELECT COALESCE(merged_into, id) FROM customers WHERE id = ?", [.int(id)])?.int ?? id
    }

    /// Each listed flag's newest triage entry (``SQLConnection/queryIn(_:_:list:)``), found by the (flag_id, id) index.
    static let latestTriageSQL = """
        SELECT \(triageColumns) FROM triage_log
        WHERE id IN (SELECT MAX(id) FROM triage_log WHERE flag_id \(SQLDialect.inListMarker) GROUP BY flag_id)
        """

    /// A triage log row's columns, the entry's id first.
    static let triageColumns = "id, flag_id, customer_id, at, operator, action, note, from_status, to_status"

    /// A triage log row (``triageColumns``) as an entry.
    static func triageEntry(_ row: [SQLValue]) throws -> TriageEntry {
        let row = Array(row.dropFirst())
        return TriageEntry(
            flagId: row[0].text, customerId: row[1].int, at: Timestamp(millisecondsSince1970: row[2].int ?? 0),
            operatorName: row[3].text ?? "", action: try row[4].decode(TriageAction.self, column: "triage_log.action"),
            note: row[5].text, fromStatus: try row[6].decodeIfPresent(FlagStatus.self, column: "triage_log.from_status"),
            toStatus: try row[7].decodeIfPresent(FlagStatus.self, column: "triage_log.to_status"))
    }

    /// The triage log of a flag, of a customer, or all of it, oldest first; each row starts with the entry's id.
    static func triageLogSQL(flagId: String?, customerId: Int64?) -> (sql: String, arguments: [SQLValue]) {
        let columns = triageColumns
        if let flagId {
            return ("SELECT \(columns) FROM triage_log WHERE flag_id = ? ORDER BY id", [.text(flagId)])
        }
        guard let customerId else { return ("SELECT \(columns) FROM triage_log ORDER BY id", []) }
        // A customer's notes, and the triage of their flags (whose entries name the flag alone): two reads, each by
        // its own index (for one OR of the two, PostgreSQL reads the whole log).
        let customers = "SELECT id FROM customers WHERE id = ? OR merged_into = ?"
        return (
            """
            SELECT \(columns) FROM triage_log WHERE customer_id IN (\(customers))
            UNION SELECT \(columns) FROM triage_log WHERE flag_id IN (SELECT id FROM flags WHERE customer_id IN (\(customers)))
            ORDER BY id
            """, Array(repeating: .int(customerId), count: 4)
        )
    }

    /// The customer of an id as a person pasted it: as it is first; else with the punctuation a message puts
    /// around an id (`#1500…,`, `"o1"`, `(tok-A).`) taken off one character at a time, the fewest first, so that
    /// an id that itself ends in such a character (`acct-9.`) is found before a shorter one (`acct-9`). Returns
    /// the id that matched (the pasted text without white space around it when nothing else was taken off), for
    /// the caller to show when it is not what was pasted. Text of several words that matches none of that as a
    /// whole is tried word by word, the longest first (at most six): "Transaction ID: 1500…" or "my token is
    /// (tok-A)." is the customer of the id inside. (Not by a display id among the words: "c3" in a sentence is a
    /// word, and the display id is ReceiptDesk's own, which no customer quotes.)
    static func customerId(_ c: any SQLConnection, pasted text: String) throws -> PastedMatch? {
        let id = String(text.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
        guard !id.isEmpty else { return nil }
        if let found = try customerId(c, quoted: id, displayIds: true) {
            // A display id of a customer merged since into another: said, or the other number reads as a wrong match.
            let named = parseDisplayId(found.matched)
            let merged = try named.map { n in try n != found.customer && resolve(c, n) == found.customer } ?? false
            return PastedMatch(customer: found.customer, matched: found.matched, mergedFrom: merged ? named : nil)
        }
        // (A short number among words is a count, a price or a year, not an id: "charged 2 times" named the customer of
        // Xcode's transaction 2, first or as another customer beside the one the text is about. As the whole text it is
        // tried above.)
        let words = id.split(whereSeparator: \.isWhitespace).filter { !Self.isShortNumber($0) }.enumerated()
            .sorted { $0.element.count != $1.element.count ? $0.element.count > $1.element.count : $0.offset < $1.offset }
        guard id.contains(where: \.isWhitespace), !words.isEmpty else { return nil }
        let tried = Array(words.prefix(6))
        for (position, (_, word)) in tried.enumerated() {
            guard let found = try customerId(c, quoted: String(word), displayIds: false) else { continue }
            // The words after it that name someone else: said, not left out without a word.
            var match = PastedMatch(customer: found.customer, matched: found.matched)
            for (_, other) in tried.dropFirst(position + 1) {
                guard let more = try customerId(c, quoted: String(other), displayIds: false), more.customer != found.customer,
                    !match.others.contains(where: { $0.customer == more.customer })
                else { continue }
                match.others.append((more.matched, more.customer))
            }
            return match
        }
        return nil
    }

    /// Whether a word of a pasted text is a number of at most four digits, with the punctuation around it.
    static func isShortNumber(_ word: Substring) -> Bool {
        let digits = word.drop { PastedId.around.contains($0) }.reversed().drop { PastedId.around.contains($0) }
        return !digits.isEmpty && digits.count <= 4 && digits.allSatisfy { $0.isASCII && $0.isNumber }
    }

    /// The customer of `id` as it is, else with the punctuation around it taken off, the fewest characters first (see
    /// ``customerId(_:pasted:)``), and the id that matched.
    private static func customerId(
        _ c: any SQLConnection, quoted id: String, displayIds: Bool
    ) throws -> (customer: Int64, matched: String)? {
        if let found = try customerId(c, matching: id, displayIds: displayIds) { return (found, id) }
        let characters = Array(id)
        // How many characters at each end could be punctuation around the id (at most four each).
        let leading = min(4, characters.prefix { PastedId.around.contains($0) }.count)
        let trailing = min(4, characters.reversed().prefix { PastedId.around.contains($0) }.count)
        guard leading + trailing > 0 else { return nil }
        for total in 1...(leading + trailing) {
            for front in max(0, total - trailing)...min(total, leading) {
                let back = total - front
                guard front + back < characters.count else { continue }
                let candidate = String(characters[front..<(characters.count - back)])
                if let found = try customerId(c, matching: candidate, displayIds: displayIds) { return (found, candidate) }
            }
        }
        return nil
    }

    /// The customer of an id of any kind, as it is: an identifier the ledger links (original transaction id,
    /// app account token, external id), a transaction or web order line item id, or the display id `C42`.
    static func customerId(_ c: any SQLConnection, matching id: String, displayIds: Bool = true) throws -> Int64? {
        if let found = try c.scalar("SELECT customer_id FROM customer_ids WHERE value = ? LIMIT 1", [.text(id)])?.int {
            return try resolve(c, found)
        }
        // An app account token is a UUID, the same in either case: Swift's `uuidString` is upper case, Apple's JSON
        // lower case, and a person pastes whichever their logs hold.
        if isUUID(id),
            let found = try c.scalar(
                "SELECT customer_id FROM customer_ids WHERE kind = \(IdentifierKind.appAccountToken.sql) AND value IN (?, ?) LIMIT 1",
                [.text(id.lowercased()), .text(id.uppercased())])?.int
        {
            return try resolve(c, found)
        }
        var original = try c.scalar("SELECT original_transaction_id FROM transactions WHERE transaction_id = ?", [.text(id)])
        if original == nil || original == .null {
            original = try c.scalar(
                "SELECT original_transaction_id FROM transactions WHERE web_order_line_item_id = ? LIMIT 1", [.text(id)])
        }
        if let value = original?.text,
            let found = try c.scalar(
                "SELECT customer_id FROM customer_ids WHERE kind = \(IdentifierKind.originalTransactionId.sql) AND value = ?", [.text(value)])?.int
        {
            return try resolve(c, found)
        }
        if displayIds, let number = parseDisplayId(id), try c.scalar("SELECT id FROM customers WHERE id = ?", [.int(number)]) != nil {
            return try resolve(c, number)
        }
        return nil
    }

    /// Whether `text` is a UUID as text (8-4-4-4-12 hex digits).
    static func isUUID(_ text: String) -> Bool {
        let utf8 = Array(text.utf8)
        guard utf8.count == 36 else { return false }
        return utf8.enumerated().allSatisfy { index, byte in
            [8, 13, 18, 23].contains(index) ? byte == UInt8(ascii: "-") : (byte < 128 && Character(Unicode.Scalar(byte)).isHexDigit)
        }
    }

    /// `C42` -> 42.
    static func parseDisplayId(_ text: String) -> Int64? {
        guard text.first == "C" || text.first == "c" else { return nil }
        return Int64(text.dropFirst())
    }

    static func identifiers(_ c: any SQLConnection, customer id: Int64) throws -> [CustomerIdentifier] {
        try c.query(
            """
            SELECT kind, value FROM customer_ids WHERE customer_id IN (SELECT id FROM customers WHERE id = ? OR merged_into = ?)
            ORDER BY kind, value
            """, [.int(id), .int(id)]
        ).map { CustomerIdentifier(kind: try $0[0].decode(IdentifierKind.self, column: "customer_ids.kind"), value: $0[1].text ?? "") }
    }

    /// A filter whose prefix holds more identifiers than this is dense: its customers are found by walking
    /// the list in order and checking each, and its count stops here. Measured at 1,000,000 transactions
    /// (226,501 customers, every original transaction id starting "15"): collecting every match of "15"
    /// and counting them took 644 ms a key. Here each of the three queries takes 2-3 ms (sqlite3, 99,685
    /// customers, a prefix matching all): up to 2,000 identifiers are collected cheaply. The threshold is
    /// this or one identifier per hundred customers, whichever is more, so a dense prefix has at least one
    /// customer in a hundred or so matching, and a page of 50 is found within a few thousand steps (a dense
    /// prefix under another narrow filter can still walk further).
    static let denseFilterIdentifiers = 2_000

    /// A filtered list is counted up to this many customers and shown as "10,000+" beyond: counting a filter
    /// that keeps most of 226,501 customers scans them all on every key (about 25 ms), and a person reading
    /// the list needs to know it is long, not how long to the unit. The unfiltered count is the ledger's
    /// running total, exact and free.
    static let customerCountLimit = 10_000

    static let dayMilliseconds: Int64 = 86_400_000
    /// The longest refund series asked of the ledger (about 2,700 years).
    static let maximumSeriesDays = 1_000_000
    /// The first and last instants a refund series ends at: 0001-01-01 and the end of 9999-12-31 UTC.
    static let firstSeriesInstant: Int64 = -62_135_596_800_000
    static let lastSeriesInstant: Int64 = 253_402_300_799_999

    /// Refunds that stand (not family revokes, upgrades or reversed refunds: RevocationKind) per UTC day from
    /// `first`, as rows of (day index, count), read from an index range (transactions_refund_day, or
    /// transactions_product_refund_day for one product).
    ///
    /// SQLite counts each day's range: grouping the whole range by day sorted every refund in it first (7-8 ms for
    /// the overview's 90 days at 1,000,000 transactions, 2-3 ms counted per day, timed in sqlite3). PostgreSQL
    /// groups them by hashing, as fast, and the grouping is the plain SQL every engine that speaks its protocol
    /// takes (docs/SCALING.md; Citus plans a recursive CTE on one shard only).
    /// The refunds of each day from `first`, up to the instant `until` (its own day counts only those by then: the
    /// overview as of an instant showed the rest of that day's refunds too).
    static func refundSeriesSQL(
        _ dialect: SQLDialect, days: Int, first: Int64, until: Int64, productId: String?, environment: EnvironmentFilter
    ) -> (sql: String, arguments: [SQLValue]) {
        let day = dayMilliseconds
        let (filter, filterArguments) = refundFilter(column: "", productId: productId, environment: environment)
        let refund = "revocation_kind = \(RevocationKind.refund.sql)"
        switch dialect {
        case .sqlite:
            let sql = """
                WITH RECURSIVE days (i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM days WHERE i < ?)
                SELECT i, (SELECT COUNT(*) FROM transactions
                    WHERE \(refund) AND revocation_date >= ? + i * ? AND revocation_date < ? + (i + 1) * ? AND revocation_date <= ?\(filter))
                FROM days
                """
            return (sql, [.int(Int64(days - 1)), .int(first), .int(day), .int(first), .int(day), .int(until)] + filterArguments)
        case .postgres:
            let sql = """
                SELECT (revocation_date - ?) / ?, COUNT(*) FROM transactions
                WHERE \(refund) AND revocation_date >= ? AND revocation_date < ?\(filter)
                GROUP BY 1
                """
            let end = min(first + Int64(days) * day, until + 1)
            return (sql, [.int(first), .int(day), .int(first), .int(end)] + filterArguments)
        }
    }

    /// Each refund that stood at `until` but was reversed after it, refunded from `first` to `last` (else `until`),
    /// and when:
    /// stored as reversed (the ledger's now), these are the refunds a series as of `until` must add. A refund
    /// reversed by `until` is not one of them; nor is a family revoke or an upgrade's cancellation reversed. Reads
    /// the REFUND_REVERSED notifications after the instant (none, live) and their transactions.
    static func refundsReversedAfter(
        _ c: any SQLConnection, first: Int64, last: Int64? = nil, until: Int64, productId: String?, environment: EnvironmentFilter
    ) throws -> [(Transaction, Timestamp)] {
        let last = min(last ?? until, until)
        let reversed = "notification_type = \(NotificationType.refundReversed.sql)"
        var sql = """
            SELECT t.transaction_id, t.canonical, COALESCE(n.signed_date, n.seen_at) FROM transactions t
            JOIN notifications n ON n.transaction_id = t.transaction_id AND n.\(reversed)
            WHERE t.revocation_kind = \(RevocationKind.reversed.sql) AND t.revocation_date >= ? AND t.revocation_date <= ?
            AND t.transaction_id IN (SELECT transaction_id FROM notifications WHERE \(reversed) AND COALESCE(signed_date, seen_at) > ?)
            """
        let (filter, filterArguments) = refundFilter(column: "t.", productId: productId, environment: environment)
        sql += filter
        let arguments: [SQLValue] = [.int(first), .int(last), .int(until)] + filterArguments
        // Each transaction's canonical JSON, and its reversals by the instant (the latest of them is the one
        // `revocation(reversedAt:)` takes, as `CustomerHistory.revocation(of:at:)` does).
        var transactions: [String: (canonical: String, reversal: Int64?)] = [:]
        for row in try c.query(sql, arguments) {
            guard let id = row[0].text else { continue }
            var entry = transactions[id] ?? (row[1].text ?? "", nil)
            if let at = row[2].int, at <= until { entry.reversal = max(entry.reversal ?? .min, at) }
            transactions[id] = entry
        }
        return try transactions.sorted { $0.key < $1.key }.compactMap { id, entry in
            let t = try storedTransaction(id: id, canonical: entry.canonical)
            guard case .refund(let at, _)? = t.revocation(reversedAt: entry.reversal.map(Timestamp.init)),
                at.millisecondsSince1970 >= first, at.millisecondsSince1970 <= last
            else { return nil }
            return (t, at)
        }
    }

    /// The conditions (each after an `AND`) that keep one product's refunds, or all, in one environment or all, over
    /// `transactions` columns prefixed by `column` (`t.` or nothing), and their arguments.
    static func refundFilter(column: String, productId: String?, environment: EnvironmentFilter) -> (String, [SQLValue]) {
        var filter = ""
        var arguments: [SQLValue] = []
        if let productId {
            filter += " AND \(column)product_id = ?"
            arguments.append(.text(productId))
        }
        if let stored = environment.stored {
            filter += " AND \(column)environment = ?"
            arguments.append(.text(stored))
        }
        return (filter, arguments)
    }

    /// A stored transaction's canonical JSON read back, or an error naming it.
    static func storedTransaction(id: String, canonical: String) throws -> Transaction {
        do {
            return try CanonicalJSON.transaction(canonical)
        } catch {
            throw LedgerError(code: .badRow, message: "the stored transaction \(id) holds canonical JSON this receiptdesk cannot read: \(error)")
        }
    }

    static func customers(
        _ c: any SQLConnection, _ query: CustomerQuery, denseFilter: Int = denseFilterIdentifiers,
        countLimit: Int = customerCountLimit
    ) throws -> CustomerPage {
        let limit = max(0, query.limit)
        var conditions: [String] = []
        var arguments: [SQLValue] = []
        switch query.environment {
        case .all: break
        case .production: conditions.append("in_production = 1")
        case .sandbox: conditions.append("in_sandbox = 1")
        }
        if let activeAt = query.activeAt,
            activeAt.millisecondsSince1970 >= (try c.scalar("SELECT MAX(last_activity) FROM customer_stats")?.int ?? 0)
        {
            // Covered at an instant after every purchase (now, always): the latest expiry whose access stands is
            // after it. (The latest purchase is the first entry of the activity index.)
            conditions.append("live_expiry > ?")
            arguments.append(.of(activeAt))
        } else if let activeAt = query.activeAt {
            // Covered at the instant: a purchase whose access stands, bought by then and expiring after. The latest
            // such expiry after it says enough for a customer whose purchases all came by then; one who bought later
            // is looked at purchase by purchase (time travel to before their first purchase). On a large ledger this
            // reads each candidate's purchases: time travel's list is slower than now's.
            let bought = "t.purchase_date <= ? AND t.expires_date > ? AND \(RevocationKind.accessStandsSQL)"
            let customer = "ci.customer_id = customer_stats.customer_id AND ci.kind = \(IdentifierKind.originalTransactionId.sql)"
            conditions.append(
                """
                live_expiry > ? AND (last_purchase <= ? \
                OR EXISTS (SELECT 1 FROM customer_ids ci JOIN transactions t ON t.original_transaction_id = ci.value \
                WHERE \(customer) AND \(bought)) \
                OR EXISTS (SELECT 1 FROM customer_ids ci JOIN transactions t ON t.transaction_id = ci.value \
                AND t.original_transaction_id IS NULL WHERE \(customer) AND \(bought)))
                """)
            arguments += Array(repeating: .of(activeAt), count: 6)
        }
        if query.withOpenFlags { conditions.append("open_flags > 0") }
        // Without the filter: the lower bound of a dense filter's count adds its own.
        let (plainConditions, plainArguments) = (conditions, arguments)
        var lowerBound: (condition: String, arguments: [SQLValue])?
        if let filter = query.filter, !filter.isEmpty {
            // Customers with an identifier starting with the filter, or the one the filter names exactly (any id kind).
            // Identifiers always point at the surviving customer (the linker moves them on a merge).
            let exact = try customerId(c, matching: filter)
            // A prefix is a range of byte order: PostgreSQL compares by the database's collation unless told
            // otherwise, so there the range uses the C collation (and the index made for it).
            let value = c.dialect == .postgres ? "ci.value COLLATE \"C\"" : "ci.value"
            let inRange = "\(value) >= ? AND \(value) < ?"
            let range: [SQLValue] = [.text(filter), .text(filter + "\u{10FFFF}")]
            // Dense means at least one customer in a hundred: the walk then finds a page within a few thousand steps.
            let customers = Int(try c.scalar("SELECT value FROM ledger_counters WHERE name = 'customers'")?.int ?? 0)
            let denseFilter = max(denseFilter, customers / 100)
            let identifiers = try c.scalar(
                "SELECT COUNT(*) FROM (SELECT 1 FROM customer_ids ci WHERE \(inRange) LIMIT \(denseFilter + 1)) AS matches", range)?.int ?? 0
            if identifiers <= denseFilter {
                // Selective: the matching customers are collected once (a few ms for a few thousand).
                conditions.append("(customer_id = ? OR customer_id IN (SELECT ci.customer_id FROM customer_ids ci WHERE \(inRange)))")
            } else {
                // Dense: each customer on the way down the sort order is checked, and the count is a lower bound,
                // the matches among the customers of the first identifiers of the range.
                conditions.append(
                    "(customer_id = ? OR EXISTS (SELECT 1 FROM customer_ids ci WHERE ci.customer_id = customer_stats.customer_id AND \(inRange)))")
                lowerBound = (
                    "(customer_id = ? OR customer_id IN (SELECT ci.customer_id FROM customer_ids ci WHERE \(inRange) LIMIT \(denseFilter)))",
                    [.int(exact ?? -1)] + range
                )
            }
            arguments += [.int(exact ?? -1)] + range
        }
        let filtered = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
        var total: Int
        var totalIsLowerBound = false
        if let lowerBound {
            let clause = "WHERE " + (plainConditions + [lowerBound.condition]).joined(separator: " AND ")
            total = Int(try c.scalar("SELECT COUNT(*) FROM customer_stats \(clause)", plainArguments + lowerBound.arguments)?.int ?? 0)
            totalIsLowerBound = true
        } else if conditions.isEmpty {
            total = Int(try c.scalar("SELECT value FROM ledger_counters WHERE name = 'customers'")?.int ?? 0)
        } else if let environment = query.environment.stored, query.filter == nil, query.activeAt == nil, !query.withOpenFlags {
            // One environment and nothing else: its running count, exact, instead of a capped scan.
            total = Int(
                try c.scalar("SELECT value FROM ledger_counters WHERE name = ?", [.text(Counters.key(.customers, in: environment))])?.int ?? 0)
        } else {
            total = Int(
                try c.scalar(
                    "SELECT COUNT(*) FROM (SELECT 1 FROM customer_stats \(filtered) LIMIT \(countLimit + 1)) AS matches", arguments)?.int ?? 0)
            if total > countLimit { (total, totalIsLowerBound) = (countLimit, true) }
        }

        let key: String
        switch query.sort {
        case .id: key = "customer_id"
        case .lastActivity: key = "last_activity"
        case .refunds: key = "refunds"
        }
        let columns = "customer_id, \(key), \(CustomerStats.columns)"
        func page(_ extra: [String], _ extraArguments: [SQLValue], order: String, limit: Int) throws -> [[SQLValue]] {
            let all = conditions + extra
            let clause = all.isEmpty ? "" : "WHERE " + all.joined(separator: " AND ")
            return try c.query(
                "SELECT \(columns) FROM customer_stats \(clause) ORDER BY \(order) LIMIT ?",
                arguments + extraArguments + [.of(limit)])
        }
        // One more row than shown says whether there is a next page.
        var rows: [[SQLValue]]
        if query.direction == .backward {
            // The list's order reversed: (id DESC), or (key ASC, id DESC); the rows come back in the list's order.
            if query.sort == .id {
                rows = try page(query.after.map { _ in ["customer_id < ?"] } ?? [], query.after.map { [.int($0.id)] } ?? [],
                    order: "customer_id DESC", limit: limit + 1)
            } else if let before = query.after {
                rows = try page(["\(key) = ?", "customer_id < ?"], [.int(before.key), .int(before.id)], order: "customer_id DESC", limit: limit + 1)
                if rows.count < limit + 1 {
                    rows += try page(["\(key) > ?"], [.int(before.key)], order: "\(key), customer_id DESC", limit: limit + 1 - rows.count)
                }
            } else {
                rows = try page([], [], order: "\(key), customer_id DESC", limit: limit + 1)
            }
            let more = rows.count > limit
            let shown = Array(rows.prefix(limit).reversed())
            func cursor(_ row: [SQLValue]?) -> CustomerCursor? { row.map { CustomerCursor(key: $0[1].int ?? 0, id: $0[0].int ?? 0) } }
            return CustomerPage(
                rows: try summaries(c, shown), next: query.after == nil ? nil : cursor(shown.last), previous: more ? cursor(shown.first) : nil,
                total: total, totalIsLowerBound: totalIsLowerBound)
        }
        if query.sort == .id {
            rows = try page(query.after.map { _ in ["customer_id > ?"] } ?? [], query.after.map { [.int($0.id)] } ?? [],
                order: "customer_id", limit: limit + 1)
        } else if let after = query.after {
            // Keyset over (key DESC, id ASC): the rest of the cursor's key, then lower keys. Two index ranges;
            // an OR of both would be read from the start of the index.
            rows = try page(["\(key) = ?", "customer_id > ?"], [.int(after.key), .int(after.id)], order: "customer_id", limit: limit + 1)
            if rows.count < limit + 1 {
                rows += try page(["\(key) < ?"], [.int(after.key)], order: "\(key) DESC, customer_id", limit: limit + 1 - rows.count)
            }
        } else {
            rows = try page([], [], order: "\(key) DESC, customer_id", limit: limit + 1)
        }
        let more = rows.count > limit
        let shown = Array(rows.prefix(limit))
        let next = more ? shown.last.map { CustomerCursor(key: $0[1].int ?? 0, id: $0[0].int ?? 0) } : nil
        // A first page is itself a lower bound: at least what it shows, and one more when there is a next page.
        if totalIsLowerBound, query.after == nil { total = max(total, rows.count) }
        return CustomerPage(rows: try summaries(c, shown), next: next, total: total, totalIsLowerBound: totalIsLowerBound)
    }

    /// Rows of `customer_id, key, CustomerStats.columns` as summaries, with their identifiers (one query).
    static func summaries(_ c: any SQLConnection, _ rows: [[SQLValue]]) throws -> [CustomerSummary] {
        let identifiers = try identifiers(c, customers: rows.compactMap { $0[0].int })
        return rows.map { row in
            let id = row[0].int ?? 0
            let stats = CustomerStats(row: row, offset: 2)
            return CustomerSummary(
                id: id, identifiers: identifiers[id] ?? [], transactionCount: Int(stats.transactionCount),
                lastPurchase: stats.lastPurchase.map(Timestamp.init(millisecondsSince1970:)),
                latestExpiry: stats.latestExpiry.map(Timestamp.init(millisecondsSince1970:)),
                liveExpiry: stats.liveExpiry.map(Timestamp.init(millisecondsSince1970:)), refunds: Int(stats.refunds),
                environments: stats.environments.sorted(), openFlags: Int(stats.openFlags))
        }
    }

    /// The identifiers of several customers in one query (merged customers' included), each list sorted.
    static func identifiers(_ c: any SQLConnection, customers ids: [Int64]) throws -> [Int64: [CustomerIdentifier]] {
        var out: [Int64: [CustomerIdentifier]] = [:]
        for chunk in chunks(ids) {
            let list = placeholders(chunk.count)
            for row in try c.query(
                """
                SELECT COALESCE(cu.merged_into, cu.id), ci.kind, ci.value FROM customer_ids ci JOIN customers cu ON cu.id = ci.customer_id
                WHERE cu.id IN (\(list)) OR cu.merged_into IN (\(list))
                ORDER BY 1, ci.kind, ci.value
                """, chunk.map(SQLValue.int) + chunk.map(SQLValue.int))
            {
                guard let id = row[0].int else { continue }
                out[id, default: []].append(
                    CustomerIdentifier(kind: try row[1].decode(IdentifierKind.self, column: "customer_ids.kind"), value: row[2].text ?? ""))
            }
        }
        return out
    }

    static func records(_ c: any SQLConnection, customer requested: Int64) throws -> CustomerRecords {
        let id = try resolve(c, requested)
        let identifiers = try identifiers(c, customer: id)
        let originals = identifiers.filter { $0.kind == .originalTransactionId }.map(\.value)
        let tokens = identifiers.filter { $0.kind == .appAccountToken }.map(\.value)
        var transactions: [String: Transaction] = [:]
        var firstSeen: [String: Timestamp] = [:]
        func load(_ sql: String, _ values: [String]) throws {
            for chunk in chunks(values) {
                for row in try c.query(sql.replacing("{IN}", with: placeholders(chunk.count)), chunk.map(SQLValue.text)) {
                    guard let text = row[0].text else { continue }
                    let t = try CanonicalJSON.transaction(text)
                    transactions[t.transactionId] = t
                    firstSeen[t.transactionId] = Timestamp(millisecondsSince1970: row[1].int ?? 0)
                }
            }
        }
        try load("SELECT canonical, first_seen_at FROM transactions WHERE original_transaction_id IN ({IN})", originals)
        try load("SELECT canonical, first_seen_at FROM transactions WHERE transaction_id IN ({IN})", originals)
        try load("SELECT canonical, first_seen_at FROM transactions WHERE app_account_token IN ({IN})", tokens)
        var renewals: [(info: RenewalInfo, seenAt: Timestamp)] = []
        var notifications: [(notification: Notification, seenAt: Timestamp, transactionId: String?)] = []
        for chunk in chunks(originals) {
            for row in try c.query(
                "SELECT canonical, seen_at FROM renewal_infos WHERE original_transaction_id IN (\(placeholders(chunk.count))) ORDER BY seen_at, id",
                chunk.map(SQLValue.text))
            {
                guard let text = row[0].text else { continue }
                renewals.append((try CanonicalJSON.renewalInfo(text), Timestamp(millisecondsSince1970: row[1].int ?? 0)))
            }
            for row in try c.query(
                "SELECT canonical, seen_at, transaction_id FROM notifications WHERE original_transaction_id IN (\(placeholders(chunk.count))) ORDER BY seen_at, id",
                chunk.map(SQLValue.text))
            {
                guard let text = row[0].text else { continue }
                notifications.append(
                    (try CanonicalJSON.notification(text), Timestamp(millisecondsSince1970: row[1].int ?? 0), row[2].text))
            }
        }
        let ordered = transactions.values.sorted {
            ($0.purchaseDate ?? Timestamp(millisecondsSince1970: 0), $0.transactionId)
                < ($1.purchaseDate ?? Timestamp(millisecondsSince1970: 0), $1.transactionId)
        }
        return CustomerRecords(
            id: id, identifiers: identifiers, transactions: ordered, firstSeen: firstSeen, renewalInfos: renewals,
            notifications: notifications)
    }

    /// A flag query's filters as SQL conditions and their arguments (the cursor aside).
    static func flagFilters(_ query: FlagQuery, id: String?, dialect: SQLDialect) -> (conditions: [String], arguments: [SQLValue]) {
        let filters: [(clause: String, value: SQLValue?)] = [
            ("id = ?", id.map(SQLValue.text)), ("status = ?", query.status.map { SQLValue.of($0) }),
            ("rule = ?", query.rule.map(SQLValue.text)), ("at >= ?", query.since.map { SQLValue.of($0) }),
            ("at <= ?", query.until.map { SQLValue.of($0) }),
            ("customer_id = ?", query.customerId.map(SQLValue.int)),
            ("product_id = ?", query.productId.map(SQLValue.text)),
            ("severity = ?", query.severity.map { SQLValue.of($0) }),
            ("environment = ?", query.environment.stored.map(SQLValue.text)),
        ]
        let used = filters.filter { $0.value != nil }
        var conditions = used.map(\.clause)
        var arguments = used.compactMap(\.value)
        if let text = query.text, !text.isEmpty {
            // FlagText's match: SQLite's LIKE folds ASCII letters itself; PostgreSQL's tells case apart, so its fields
            // are folded the same way (lower() would fold other letters too, and find what the preview did not).
            // Every flag of the other filters' scan is read: a sparse match reads them all.
            let fold = { (column: String) in
                dialect == .sqlite ? column : "translate(\(column), 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')"
            }
            let columns = ["id", "rule", "product_id", "'c' || CAST(customer_id AS TEXT)", "detail"].map(fold)
            var terms: [String] = []
            for needle in FlagText.needles(text) {
                terms += columns.map { "\($0) LIKE ? ESCAPE '!'" }
                arguments += Array(repeating: .text(likePattern(needle)), count: columns.count)
            }
            conditions.append("(" + terms.joined(separator: " OR ") + ")")
        }
        return (conditions, arguments)
    }

    /// `%text%` for LIKE ... ESCAPE '!', its `%`, `_` and `!` matching themselves (`!`, not a backslash, which a
    /// PostgreSQL session with `standard_conforming_strings` off reads as escaping the quote).
    static func likePattern(_ text: String) -> String {
        var pattern = "%"
        for character in text {
            if character == "%" || character == "_" || character == "!" { pattern.append("!") }
            pattern.append(character)
        }
        return pattern + "%"
    }

    static func flags(_ c: any SQLConnection, _ query: FlagQuery, id: String?) throws -> [RefundFlag] {
        let (conditions, arguments) = flagFilters(query, id: id, dialect: c.dialect)
        func page(_ extra: [String], _ extraArguments: [SQLValue], order: String = "at DESC, id", limit: Int) throws -> [[SQLValue]] {
            let all = conditions + extra
            let filter = all.isEmpty ? "" : "WHERE " + all.joined(separator: " AND ")
            return try c.query(
                """
                SELECT id, rule, severity, status, customer_id, transaction_id, product_id, amount, currency, at, detail, environment
                FROM flags \(filter) ORDER BY \(order) LIMIT ?
                """, arguments + extraArguments + [.of(limit)])
        }
        var rows: [[SQLValue]]
        if query.direction == .backward {
            // The queue's order reversed, (at ASC, id DESC), from the cursor back (or from the oldest flag), then
            // turned round: G reads the end of the queue without reading the rest.
            if let before = query.after {
                rows = try page(["at = ?", "id < ?"], [.of(before.at), .text(before.id)], order: "id DESC", limit: query.limit)
                if rows.count < query.limit {
                    rows += try page(["at > ?"], [.of(before.at)], order: "at, id DESC", limit: query.limit - rows.count)
                }
            } else {
                rows = try page([], [], order: "at, id DESC", limit: query.limit)
            }
            rows.reverse()
        } else if let after = query.after {
            // Keyset, newest first by (at DESC, id ASC): the rest of the cursor's instant, then older ones.
            // Two index ranges; an OR of both would be read from the start of the index.
            rows = try page(["at = ?", "id > ?"], [.of(after.at), .text(after.id)], limit: query.limit)
            if rows.count < query.limit {
                rows += try page(["at < ?"], [.of(after.at)], limit: query.limit - rows.count)
            }
        } else {
            rows = try page([], [], limit: query.limit)
        }
        return try rows.map { row in
            RefundFlag(
                id: row[0].text ?? "", rule: row[1].text ?? "", severity: try row[2].decode(Severity.self, column: "flags.severity"),
                status: try row[3].decode(FlagStatus.self, column: "flags.status"),
                customerId: row[4].int, transactionId: row[5].text, productId: row[6].text, amount: row[7].int,
                currency: row[8].text, at: Timestamp(millisecondsSince1970: row[9].int ?? 0), detail: row[10].text ?? "",
                environment: row[11].text.map(Environment.init(rawValue:)))
        }
    }
}
