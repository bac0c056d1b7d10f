import Entitlements
import ReceiptDecoding
import ReceiptModel

/// The read side the dashboard and the commands page through: each call returns what one screen shows.
public protocol LedgerReading: Sendable {
    /// The overview's counts.
    func overview() async throws -> LedgerOverview
    /// A page of customers, in id order after `after`, optionally only those with an id starting with `filter`.
    func customers(matching filter: String?, after: Int64?, limit: Int) async throws -> [CustomerSummary]
    /// The customer an id belongs to: external id, appAccountToken, transactionId, originalTransactionId or webOrderLineItemId.
    func customerId(matching id: String) async throws -> Int64?
    /// Everything about one customer.
    func customerRecords(_ id: Int64) async throws -> CustomerRecords
    /// One transaction by id, with its sources.
    func transaction(_ id: String) async throws -> Transaction?
    /// Flags matching a query, newest first.
    func flags(_ query: FlagQuery) async throws -> [RefundFlag]
    /// The triage log of a flag or a customer, oldest first.
    func triageLog(flagId: String?, customerId: Int64?) async throws -> [TriageEntry]
    /// Imported sources, newest first.
    func sources(after: Int64?, limit: Int) async throws -> [SourceSummary]
    /// Rejected records, oldest first.
    func rejectedRecords(after: Int64?, limit: Int) async throws -> [RejectedRecord]
}

extension SQLLedger: LedgerReading {
    public func overview() async throws -> LedgerOverview {
        try await database.read { c in
            func count(_ sql: String) throws -> Int { Int(try c.scalar(sql)?.int ?? 0) }
            return LedgerOverview(
                transactions: try count("SELECT COUNT(*) FROM transactions"),
                customers: try count("SELECT COUNT(*) FROM customers WHERE merged_into IS NULL"),
                sources: try count("SELECT COUNT(*) FROM sources"),
                rawRecords: try count("SELECT COUNT(*) FROM raw_records"),
                rejectedRecords: try count("SELECT COUNT(*) FROM raw_records WHERE status = 'rejected'"),
                revokedTransactions: try count("SELECT COUNT(*) FROM transactions WHERE revocation_date IS NOT NULL"),
                openFlags: try count("SELECT COUNT(*) FROM flags WHERE status = 'open'"),
                renewalInfos: try count("SELECT COUNT(*) FROM renewal_infos"),
                notifications: try count("SELECT COUNT(*) FROM notifications"))
        }
    }

    public func customers(matching filter: String?, after: Int64?, limit: Int) async throws -> [CustomerSummary] {
        try await database.read { c in
            var ids: [Int64]
            if let filter, !filter.isEmpty {
                var found = Set<Int64>()
                if let exact = try Queries.customerId(c, matching: filter) { found.insert(exact) }
                for row in try c.query(
                    """
                    SELECT DISTINCT COALESCE(cu.merged_into, ci.customer_id) FROM customer_ids ci JOIN customers cu ON cu.id = ci.customer_id
                    WHERE ci.value >= ? AND ci.value < ? LIMIT ?
                    """, [.text(filter), .text(filter + "\u{10FFFF}"), .of(limit * 4)])
                {
                    if let id = row[0].int { found.insert(id) }
                }
                ids = found.sorted().filter { $0 > (after ?? 0) }
                ids = Array(ids.prefix(limit))
            } else {
                ids = try c.query(
                    "SELECT id FROM customers WHERE merged_into IS NULL AND id > ? ORDER BY id LIMIT ?",
                    [.int(after ?? 0), .of(limit)]
                ).compactMap { $0[0].int }
            }
            return try ids.map { try Queries.summary(c, customer: $0) }
        }
    }

    public func customerId(matching id: String) async throws -> Int64? {
        try await database.read { c in try Queries.customerId(c, matching: id) }
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

    public func triageLog(flagId: String?, customerId: Int64?) async throws -> [TriageEntry] {
        try await database.read { c in
            var sql = "SELECT flag_id, customer_id, at, operator, action, note, from_status, to_status FROM triage_log WHERE "
            var arguments: [SQLValue] = []
            if let flagId {
                sql += "flag_id = ?"
                arguments.append(.text(flagId))
            } else if let customerId {
                sql += "customer_id IN (SELECT id FROM customers WHERE id = ? OR merged_into = ?)"
                arguments += [.int(customerId), .int(customerId)]
            } else {
                sql += "1 = 1"
            }
            return try c.query(sql + " ORDER BY id", arguments).map { row in
                TriageEntry(
                    flagId: row[0].text, customerId: row[1].int, at: Timestamp(millisecondsSince1970: row[2].int ?? 0),
                    operatorName: row[3].text ?? "", action: row[4].text ?? "", note: row[5].text, fromStatus: row[6].text,
                    toStatus: row[7].text)
            }
        }
    }

    public func sources(after: Int64?, limit: Int) async throws -> [SourceSummary] {
        try await database.read { c in
            try c.query(
                """
                SELECT id, path, sha256, size, started_at, completed_at, records_read, imported, duplicates, rejected
                FROM sources WHERE id < ? ORDER BY id DESC LIMIT ?
                """, [.int(after ?? Int64.max), .of(limit)]
            ).map { row in
                SourceSummary(
                    id: row[0].int ?? 0, path: row[1].text ?? "", sha256: row[2].text ?? "", size: row[3].int ?? 0,
                    startedAt: Timestamp(millisecondsSince1970: row[4].int ?? 0),
                    completedAt: row[5].int.map(Timestamp.init(millisecondsSince1970:)),
                    counts: ImportCounts(
                        read: Int(row[6].int ?? 0), imported: Int(row[7].int ?? 0), duplicate: Int(row[8].int ?? 0),
                        rejected: Int(row[9].int ?? 0)))
            }
        }
    }

    public func rejectedRecords(after: Int64?, limit: Int) async throws -> [RejectedRecord] {
        try await database.read { c in
            try c.query(
                """
                SELECT r.id, s.path, r.record_index, r.byte_offset, r.kind, r.error_code, r.error_message, r.raw
                FROM raw_records r JOIN sources s ON s.id = r.source_id
                WHERE r.status = 'rejected' AND r.id > ? ORDER BY r.id LIMIT ?
                """, [.int(after ?? 0), .of(limit)]
            ).map { row in
                RejectedRecord(
                    id: row[0].int ?? 0, sourcePath: row[1].text ?? "", index: Int(row[2].int ?? 0), offset: row[3].int ?? 0,
                    kind: row[4].text ?? "", code: row[5].text ?? "", message: row[6].text ?? "", raw: row[7].blob ?? [])
            }
        }
    }
}

/// The SQL behind the read side, shared by every backend.
enum Queries {
    static func resolve(_ c: any SQLConnection, _ id: Int64) throws -> Int64 {
        try c.scalar("SELECT COALESCE(merged_into, id) FROM customers WHERE id = ?", [.int(id)])?.int ?? id
    }

    static func customerId(_ c: any SQLConnection, matching id: String) throws -> Int64? {
        if let found = try c.scalar("SELECT customer_id FROM customer_ids WHERE value = ? LIMIT 1", [.text(id)])?.int {
            return try resolve(c, found)
        }
        var original = try c.scalar("SELECT original_transaction_id FROM transactions WHERE transaction_id = ?", [.text(id)])
        if original == nil || original == .null {
            original = try c.scalar(
                "SELECT original_transaction_id FROM transactions WHERE web_order_line_item_id = ? LIMIT 1", [.text(id)])
        }
        if let value = original?.text,
            let found = try c.scalar(
                "SELECT customer_id FROM customer_ids WHERE kind = 'originalTransactionId' AND value = ?", [.text(value)])?.int
        {
            return try resolve(c, found)
        }
        if let number = parseDisplayId(id), try c.scalar("SELECT id FROM customers WHERE id = ?", [.int(number)]) != nil {
            return try resolve(c, number)
        }
        return nil
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
        ).map { CustomerIdentifier(kind: $0[0].text ?? "", value: $0[1].text ?? "") }
    }

    static func summary(_ c: any SQLConnection, customer id: Int64) throws -> CustomerSummary {
        let identifiers = try identifiers(c, customer: id)
        let originals = identifiers.filter { $0.kind == "originalTransactionId" }.map(\.value)
        var count = 0
        var lastPurchase: Int64?
        var latestExpiry: Int64?
        var revoked = 0
        for chunk in chunks(originals) {
            guard let row = try c.query(
                """
                SELECT COUNT(*), MAX(purchase_date), MAX(expires_date), COUNT(revocation_date) FROM transactions
                WHERE original_transaction_id IN (\(placeholders(chunk.count))) OR transaction_id IN (\(placeholders(chunk.count)))
                """, chunk.map(SQLValue.text) + chunk.map(SQLValue.text)
            ).first else { continue }
            count += Int(row[0].int ?? 0)
            if let value = row[1].int { lastPurchase = max(lastPurchase ?? value, value) }
            if let value = row[2].int { latestExpiry = max(latestExpiry ?? value, value) }
            revoked += Int(row[3].int ?? 0)
        }
        return CustomerSummary(
            id: id, identifiers: identifiers, transactionCount: count,
            lastPurchase: lastPurchase.map(Timestamp.init(millisecondsSince1970:)),
            latestExpiry: latestExpiry.map(Timestamp.init(millisecondsSince1970:)), revokedCount: revoked)
    }

    static func records(_ c: any SQLConnection, customer requested: Int64) throws -> CustomerRecords {
        let id = try resolve(c, requested)
        let identifiers = try identifiers(c, customer: id)
        let originals = identifiers.filter { $0.kind == "originalTransactionId" }.map(\.value)
        let tokens = identifiers.filter { $0.kind == "appAccountToken" }.map(\.value)
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

    static func flags(_ c: any SQLConnection, _ query: FlagQuery, id: String?) throws -> [RefundFlag] {
        let filters: [(clause: String, value: SQLValue?)] = [
            ("id = ?", id.map(SQLValue.text)), ("status = ?", query.status.map(SQLValue.text)),
            ("rule = ?", query.rule.map(SQLValue.text)), ("at >= ?", query.since.map { SQLValue.of($0) }),
            ("customer_id = ?", query.customerId.map(SQLValue.int)),
        ]
        let used = filters.filter { $0.value != nil }
        let conditions = used.map(\.clause)
        let arguments = used.compactMap(\.value)
        let filter = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
        return try c.query(
            """
            SELECT id, rule, severity, status, customer_id, transaction_id, product_id, amount, currency, at, detail
            FROM flags \(filter) ORDER BY at DESC, id LIMIT ?
            """, arguments + [.of(query.limit)]
        ).map { row in
            RefundFlag(
                id: row[0].text ?? "", rule: row[1].text ?? "", severity: Severity(rawValue: row[2].text ?? "") ?? .medium,
                status: row[3].text ?? "",
                customerId: row[4].int, transactionId: row[5].text, productId: row[6].text, amount: row[7].int,
                currency: row[8].text, at: Timestamp(millisecondsSince1970: row[9].int ?? 0), detail: row[10].text ?? "")
        }
    }
}
