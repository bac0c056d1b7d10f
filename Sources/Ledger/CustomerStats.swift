import Entitlements
import ReceiptModel

/// The figures the customer list sorts, filters and shows, kept per surviving customer in `customer_stats`.
///
/// A transaction belongs to the customer that owns the `originalTransactionId` identifier
/// `original_transaction_id ?? transaction_id` (the identifier the importer links it by), so every
/// transaction counts for exactly one customer: stats add up, and a merge adds the loser's to the survivor.
struct CustomerStats: Equatable, Sendable {
    var transactionCount: Int64 = 0
    var lastPurchase: Int64?
    var latestExpiry: Int64?
    /// The latest expiry among transactions whose access stands: not revoked, or revoked and reversed (a customer
    /// is covered at `t` when this is after `t`).
    var liveExpiry: Int64?
    /// Refunds that stand (``RevocationKind/refund``): not family revokes, upgrades or reversed refunds.
    var refunds: Int64 = 0
    var environments: Set<String> = []
    var openFlags: Int64 = 0

    /// Counts one transaction.
    mutating func add(_ t: Contribution) {
        transactionCount += 1
        lastPurchase = Self.max(lastPurchase, t.purchase)
        latestExpiry = Self.max(latestExpiry, t.expires)
        if t.refunded { refunds += 1 }
        if t.live { liveExpiry = Self.max(liveExpiry, t.expires) }
        if let environment = t.environment { environments.insert(environment) }
    }

    /// Adds another customer's figures (a merge, or an aggregate of disjoint transactions).
    mutating func absorb(_ other: CustomerStats) {
        transactionCount += other.transactionCount
        lastPurchase = Self.max(lastPurchase, other.lastPurchase)
        latestExpiry = Self.max(latestExpiry, other.latestExpiry)
        liveExpiry = Self.max(liveExpiry, other.liveExpiry)
        refunds += other.refunds
        environments.formUnion(other.environments)
        openFlags += other.openFlags
    }

    /// The most-recent-activity sort key: the latest purchase, 0 without one.
    var lastActivity: Int64 { lastPurchase ?? 0 }

    private static func max(_ a: Int64?, _ b: Int64?) -> Int64? {
        guard let a else { return b }
        guard let b else { return a }
        return Swift.max(a, b)
    }

    /// What a transaction contributes; two transactions with the same contribution leave stats unchanged.
    struct Contribution: Equatable {
        var purchase: Int64?
        var expires: Int64?
        /// A refund that stands.
        var refunded: Bool
        /// The transaction's access stands (it counts for ``CustomerStats/liveExpiry``).
        var live: Bool
        var environment: String?

        init(_ t: Transaction, _ kind: RevocationKind?) {
            purchase = t.purchaseDate?.millisecondsSince1970
            expires = t.expiresDate?.millisecondsSince1970
            refunded = kind == .refund
            live = kind.map { !$0.takesAccess } ?? true
            environment = t.environment?.rawValue
        }
    }

    /// The separator of `customer_stats.environments` (a control character no environment name holds).
    static let separator = "\u{1F}"

    /// The columns of ``values``, in order.
    static let columnList = [
        "transaction_count", "last_purchase", "last_activity", "latest_expiry", "live_expiry", "refunds", "environments", "in_production",
        "in_sandbox", "open_flags",
    ]
    /// ``columnList`` for a `SELECT`.
    static let columns = columnList.joined(separator: ", ")

    var values: [SQLValue] {
        [
            .int(transactionCount), .of(lastPurchase), .int(lastActivity), .of(latestExpiry), .of(liveExpiry), .int(refunds),
            .text(environments.sorted().joined(separator: Self.separator)),
            .int(environments.contains("Production") ? 1 : 0), .int(environments.contains("Sandbox") ? 1 : 0), .int(openFlags),
        ]
    }

    /// Reads the columns of ``columns`` starting at `offset`.
    init(row: [SQLValue], offset: Int) {
        transactionCount = row[offset].int ?? 0
        lastPurchase = row[offset + 1].int
        latestExpiry = row[offset + 3].int
        liveExpiry = row[offset + 4].int
        refunds = row[offset + 5].int ?? 0
        let text = row[offset + 6].text ?? ""
        environments = text.isEmpty ? [] : Set(text.split(separator: Self.separator).map(String.init))
        openFlags = row[offset + 9].int ?? 0
    }

    init() {}
}

/// What a flush of the customer linker did: customers it created, customers merged away, and the surviving
/// customer of every identifier it saw.
struct LinkResult {
    var created: [Int64] = []
    /// (merged customer, the survivor it now points to).
    var merges: [(loser: Int64, root: Int64)] = []
    var owner: [CustomerIdentifier: Int64] = [:]
}

/// Keeps `customer_stats` and the ledger's counters in step with a write, inside the same transaction.
enum StatsWriter {
    /// Applies a linker flush, per-customer additions and customers to recount from their transactions.
    static func apply(
        _ c: any SQLConnection, link: LinkResult, additions: [Int64: CustomerStats] = [:], recount: Set<Int64> = []
    ) throws {
        let created = Set(link.created)
        var wanted = Set(additions.keys).union(recount)
        for merge in link.merges {
            wanted.insert(merge.loser)
            wanted.insert(merge.root)
        }
        guard !wanted.isEmpty || !created.isEmpty else { return }
        let stored = try load(c, Array(wanted.subtracting(created)))
        var working = stored
        for id in created { working[id] = CustomerStats() }
        var deleted = Set<Int64>()
        for merge in link.merges {
            let loser = working[merge.loser] ?? CustomerStats()
            working[merge.root, default: CustomerStats()].absorb(loser)
            working[merge.loser] = nil
            deleted.insert(merge.loser)
        }
        for (id, addition) in additions where !deleted.contains(id) {
            working[id, default: CustomerStats()].absorb(addition)
        }
        let fresh = try recountStats(c, Array(recount.subtracting(deleted)))
        for id in recount where !deleted.contains(id) {
            working[id] = fresh[id] ?? CustomerStats()
        }
        for id in deleted where stored[id] != nil {
            try c.executeDeferred("DELETE FROM customer_stats WHERE customer_id = ?", [.int(id)])
        }
        // New rows and changed rows each go to the backend as one set (COPY on PostgreSQL): an import of new
        // customers otherwise costs a statement, and a round trip, per customer.
        var inserts: [[SQLValue]] = []
        var updates: [[SQLValue]] = []
        for (id, stats) in working {
            if created.contains(id) || stored[id] == nil {
                inserts.append([.int(id)] + stats.values)
            } else if stored[id] != stats {
                updates.append([.int(id)] + stats.values)
            }
        }
        let columns = CustomerStats.columnList
        try c.insertRows(into: "customer_stats", columns: ["customer_id"] + columns, rows: inserts, onConflict: "")
        try c.updateRows(in: "customer_stats", key: "customer_id", columns: columns, rows: updates)
        let customers = link.created.count - link.merges.count
        if customers != 0 { try Counters.add(c, .customers, customers) }
        // Customers per environment: each customer touched counts where it is now and no longer where it was.
        var perEnvironment: [String: Int] = [:]
        for id in Set(stored.keys).union(working.keys).union(deleted) {
            let before = stored[id]?.environments ?? []
            let after = working[id]?.environments ?? []
            for environment in after.subtracting(before) { perEnvironment[environment, default: 0] += 1 }
            for environment in before.subtracting(after) { perEnvironment[environment, default: 0] -= 1 }
        }
        for (environment, delta) in perEnvironment { try Counters.add(c, .customers, in: environment, delta) }
    }

    static func load(_ c: any SQLConnection, _ ids: [Int64]) throws -> [Int64: CustomerStats] {
        var out: [Int64: CustomerStats] = [:]
        for row in try c.queryIn(
            "SELECT customer_id, \(CustomerStats.columns) FROM customer_stats WHERE customer_id IN (?*)", [], list: ids.map(SQLValue.int))
        {
            if let id = row[0].int { out[id] = CustomerStats(row: row, offset: 1) }
        }
        return out
    }

    /// Each customer's figures counted from its transactions and flags (the customers' `originalTransactionId`s).
    static func recountStats(_ c: any SQLConnection, _ ids: [Int64]) throws -> [Int64: CustomerStats] {
        var out: [Int64: CustomerStats] = [:]
        for chunk in chunks(ids) {
            let list = placeholders(chunk.count)
            let arguments = chunk.map(SQLValue.int)
            try aggregate(
                c,
                """
                SELECT ci.customer_id, t.environment, COUNT(*), MAX(t.purchase_date), MAX(t.expires_date),
                    MAX(CASE WHEN \(RevocationKind.accessStandsSQL) THEN t.expires_date END),
                    COUNT(CASE WHEN \(RevocationKind.refundSQL) THEN 1 END)
                FROM customer_ids ci JOIN transactions t ON t.original_transaction_id = ci.value
                WHERE ci.kind = \(IdentifierKind.originalTransactionId.sql) AND ci.customer_id IN (\(list))
                GROUP BY ci.customer_id, t.environment
                """, arguments, into: &out)
            try aggregate(
                c,
                """
                SELECT ci.customer_id, t.environment, COUNT(*), MAX(t.purchase_date), MAX(t.expires_date),
                    MAX(CASE WHEN \(RevocationKind.accessStandsSQL) THEN t.expires_date END),
                    COUNT(CASE WHEN \(RevocationKind.refundSQL) THEN 1 END)
                FROM customer_ids ci JOIN transactions t ON t.transaction_id = ci.value AND t.original_transaction_id IS NULL
                WHERE ci.kind = \(IdentifierKind.originalTransactionId.sql) AND ci.customer_id IN (\(list))
                GROUP BY ci.customer_id, t.environment
                """, arguments, into: &out)
            for row in try c.query(
                "SELECT customer_id, COUNT(*) FROM flags WHERE status = \(FlagStatus.open.sql) AND customer_id IN (\(list)) GROUP BY customer_id",
                arguments)
            {
                if let id = row[0].int { out[id, default: CustomerStats()].openFlags = row[1].int ?? 0 }
            }
        }
        return out
    }

    /// Folds rows of `(owner, environment, count, max purchase, max expiry, max live expiry, refunds)` into stats.
    static func aggregate(
        _ c: any SQLConnection, _ sql: String, _ arguments: [SQLValue], into out: inout [Int64: CustomerStats]
    ) throws {
        for row in try c.query(sql, arguments) {
            guard let id = row[0].int else { continue }
            var part = CustomerStats()
            part.transactionCount = row[2].int ?? 0
            part.lastPurchase = row[3].int
            part.latestExpiry = row[4].int
            part.liveExpiry = row[5].int
            part.refunds = row[6].int ?? 0
            if let environment = row[1].text { part.environments = [environment] }
            out[id, default: CustomerStats()].absorb(part)
        }
    }

    /// Recounts the open flags of these customers (after flags were saved or triaged).
    static func recountOpenFlags(_ c: any SQLConnection, _ ids: Set<Int64>) throws {
        for chunk in chunks(ids.sorted()) {
            try c.executeDeferred(
                """
                UPDATE customer_stats SET open_flags = (
                    SELECT COUNT(*) FROM flags WHERE flags.customer_id = customer_stats.customer_id AND status = \(FlagStatus.open.sql))
                WHERE customer_id IN (\(placeholders(chunk.count)))
                """, chunk.map(SQLValue.int))
        }
    }

    /// Fills `customer_stats` from the rows a ledger already holds: migration v2's fill, as shipped (it runs
    /// before later migrations add the columns ``recountAll(_:)`` reads).
    static func fill(_ c: any SQLConnection) throws {
        try c.execute("INSERT INTO customer_stats (customer_id) SELECT id FROM customers WHERE merged_into IS NULL")
        var stats: [Int64: CustomerStats] = [:]
        try aggregate(
            c,
            """
            SELECT COALESCE(cu.merged_into, cu.id), t.environment, COUNT(*), MAX(t.purchase_date), MAX(t.expires_date),
                MAX(CASE WHEN t.revocation_date IS NULL THEN t.expires_date END), COUNT(t.revocation_date)
            FROM transactions t
            JOIN customer_ids ci ON ci.kind = \(IdentifierKind.originalTransactionId.sql) AND ci.value = COALESCE(t.original_transaction_id, t.transaction_id)
            JOIN customers cu ON cu.id = ci.customer_id
            GROUP BY COALESCE(cu.merged_into, cu.id), t.environment
            """, [], into: &stats)
        for row in try c.query("SELECT customer_id, COUNT(*) FROM flags WHERE status = \(FlagStatus.open.sql) AND customer_id IS NOT NULL GROUP BY customer_id", []) {
            if let id = row[0].int { stats[id, default: CustomerStats()].openFlags = row[1].int ?? 0 }
        }
        for (id, figures) in stats {
            try c.executeDeferred(
                """
                UPDATE customer_stats SET transaction_count = ?, last_purchase = ?, last_activity = ?, latest_expiry = ?,
                    live_expiry = ?, refunds = ?, environments = ?, in_production = ?, in_sandbox = ?, open_flags = ?
                WHERE customer_id = ?
                """, figures.values + [.int(id)])
        }
        try c.flush()
    }

    /// Recounts every customer's transaction figures from the rows (a migration that changes what they count).
    static func recountAll(_ c: any SQLConnection) throws {
        var stats: [Int64: CustomerStats] = [:]
        try aggregate(
            c,
            """
            SELECT COALESCE(cu.merged_into, cu.id), t.environment, COUNT(*), MAX(t.purchase_date), MAX(t.expires_date),
                MAX(CASE WHEN \(RevocationKind.accessStandsSQL) THEN t.expires_date END),
                COUNT(CASE WHEN \(RevocationKind.refundSQL) THEN 1 END)
            FROM transactions t
            JOIN customer_ids ci ON ci.kind = \(IdentifierKind.originalTransactionId.sql) AND ci.value = COALESCE(t.original_transaction_id, t.transaction_id)
            JOIN customers cu ON cu.id = ci.customer_id
            GROUP BY COALESCE(cu.merged_into, cu.id), t.environment
            """, [], into: &stats)
        for (id, figures) in stats {
            try c.executeDeferred(
                "UPDATE customer_stats SET live_expiry = ?, refunds = ? WHERE customer_id = ?",
                [.of(figures.liveExpiry), .int(figures.refunds), .int(id)])
        }
        try c.flush()
    }
}

/// The ledger's running totals (`ledger_counters`): kept by every write, so the overview and the change
/// signal are one small read instead of a scan per table.
enum Counters {
    enum Name: String, CaseIterable {
        /// Bumped by every write transaction that changed something: the change signal readers poll.
        case change
        case transactions, customers, sources
        case rawRecords = "raw_records"
        case rejectedRecords = "rejected_records"
        /// Refunds that stand (``RevocationKind/refund``).
        case refundedTransactions = "refunded_transactions"
        case openFlags = "open_flags"
        case renewalInfos = "renewal_infos"
        case notifications
        /// The latest `completed_at`/`started_at` of any source (milliseconds).
        case lastImport = "last_import"
    }

    static func add(_ c: any SQLConnection, _ name: Name, _ delta: Int) throws {
        guard delta != 0 else { return }
        try c.executeDeferred("UPDATE ledger_counters SET value = value + ? WHERE name = ?", [.of(delta), .text(name.rawValue)])
    }

    /// The environments whose figures are kept apart (what the dashboard's environment filter offers).
    static let environments = EnvironmentFilter.allCases.compactMap(\.stored)

    /// Figures kept per environment as well as in all: customers, transactions and refunds.
    static let perEnvironment: [Name] = [.customers, .transactions, .refundedTransactions]

    /// The counter of `name` in one environment: `transactions@Production`.
    static func key(_ name: Name, in environment: String) -> String { name.rawValue + "@" + environment }

    /// Adds to the counter of `name` in `environment`; environments not kept apart are counted in all only.
    static func add(_ c: any SQLConnection, _ name: Name, in environment: String?, _ delta: Int) throws {
        guard delta != 0, let environment, environments.contains(environment) else { return }
        try c.executeDeferred(
            "UPDATE ledger_counters SET value = value + ? WHERE name = ?", [.of(delta), .text(key(name, in: environment))])
    }

    /// Marks the transaction as a change readers should see.
    static func bump(_ c: any SQLConnection) throws {
        try add(c, .change, 1)
    }

    static func raiseLastImport(_ c: any SQLConnection, to value: Timestamp) throws {
        try c.executeDeferred(
            "UPDATE ledger_counters SET value = ? WHERE name = 'last_import' AND (value IS NULL OR value < ?)",
            [.of(value), .of(value)])
    }

    /// Creates counters by name, each counted once by its query from the rows a ledger already holds (the
    /// migrations that add counters; their lists are as shipped, so names no longer kept appear there).
    static func fill(_ c: any SQLConnection, _ counts: [(name: String, sql: String)]) throws {
        for (name, sql) in counts {
            try c.execute("INSERT INTO ledger_counters (name, value) SELECT ?, (\(sql))", [.text(name)])
        }
    }
}
