/// A first import into an empty SQLite ledger loads without the indexes no import reads, and builds them once
/// after the load (issue 11, item 7): measured on 87,309 verifyReceipt + V1 transactions, 4.0-4.4 s with them
/// kept up row by row, 3.8-3.9 s loaded without them and built after.
///
/// Crash-safe: the indexes' own SQL is kept in `ledger_meta` in the transaction that drops them, and the next
/// open for writing builds whatever a load that was cut short left unbuilt.
extension SQLLedger {
    /// Indexes only reading screens and lookups use: the import's own queries (content hashes, stored
    /// transactions, customer ids, merges, reversals, figures per customer) never read them.
    static let deferrableIndexes = [
        "transactions_web_order", "transactions_token", "transactions_revoked", "transactions_refund_day",
        "transactions_product_refund_day", "raw_records_rejected", "customer_stats_live", "customer_stats_flagged",
        "customer_stats_flagged_activity", "customer_stats_flagged_refunds", "customer_stats_activity", "customer_stats_refunds",
    ]

    /// The `ledger_meta` key holding the deferred indexes' SQL while they are dropped.
    static let deferredIndexesKey = "deferred_indexes"
    /// Between the kept statements (ASCII's record separator: in no SQL).
    private static let separator = "\u{1E}"

    /// Drops the deferrable indexes when this is a SQLite ledger that holds no transaction yet (and is not set
    /// read-only), keeping their SQL to build them after the load.
    /// - Returns: whether any were dropped (then ``buildDeferredIndexes()`` must follow the load).
    public func deferIndexesForFirstLoad() async throws -> Bool {
        guard database.dialect == .sqlite else { return false }
        return try await database.write { c in
            guard try !Self.storedReadOnly(c),
                try c.scalar("SELECT COUNT(*) FROM transactions")?.int == 0,
                try c.scalar("SELECT value FROM ledger_meta WHERE key = ?", [.text(Self.deferredIndexesKey)]) == nil
            else { return false }
            var statements: [String] = []
            for name in Self.deferrableIndexes {
                guard let sql = try c.scalar("SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ?", [.text(name)])?.text
                else { continue }
                statements.append(sql)
                try c.execute("DROP INDEX \(name)")
            }
            guard !statements.isEmpty else { return false }
            try c.execute(
                "INSERT INTO ledger_meta (key, value) VALUES (?, ?)",
                [.text(Self.deferredIndexesKey), .text(statements.joined(separator: Self.separator))])
            return true
        }
    }

    /// Builds the indexes a first load deferred, if any are still unbuilt; nothing otherwise.
    public func buildDeferredIndexes() async throws {
        guard database.dialect == .sqlite else { return }
        try await database.write { c in try Self.buildDeferredIndexes(c) }
    }

    /// Whether a first load left indexes unbuilt (a read).
    static func hasDeferredIndexes(_ c: any SQLConnection) throws -> Bool {
        guard c.dialect == .sqlite else { return false }
        return try c.scalar("SELECT COUNT(*) FROM ledger_meta WHERE key = ?", [.text(deferredIndexesKey)])?.int ?? 0 > 0
    }

    static func buildDeferredIndexes(_ c: any SQLConnection) throws {
        guard let stored = try c.scalar("SELECT value FROM ledger_meta WHERE key = ?", [.text(deferredIndexesKey)])?.text else { return }
        for sql in stored.split(separator: "\u{1E}").map(String.init) {
            // As kept by SQLite ("CREATE INDEX name ON ..."); one built already (by another process) is left.
            let guarded = sql.hasPrefix("CREATE INDEX ") ? "CREATE INDEX IF NOT EXISTS " + sql.dropFirst("CREATE INDEX ".count) : sql
            try c.execute(guarded)
        }
        try c.execute("DELETE FROM ledger_meta WHERE key = ?", [.text(deferredIndexesKey)])
    }
}
