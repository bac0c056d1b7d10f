import Entitlements
import ReceiptDecoding
import ReceiptModel

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
                notifications: try count("SELECT COUNT(*) FROM notifications"),
                lastImport: try c.scalar("SELECT MAX(COALESCE(completed_at, started_at)) FROM sources")?.int
                    .map(Timestamp.init(millisecondsSince1970:)))
        }
    }

    public func customers(_ query: CustomerQuery) async throws -> CustomerPage {
        try await database.read { c in try Queries.customers(c, query) }
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

    public func flagCounts() async throws -> [FlagCount] {
        try await database.read { c in
            try c.query("SELECT severity, status, COUNT(*) FROM flags GROUP BY severity, status ORDER BY severity, status", [])
                .compactMap { row in
                    guard let severity = row[0].text.flatMap(Severity.init(rawValue:)) else { return nil }
                    return FlagCount(severity: severity, status: row[1].text ?? "", count: Int(row[2].int ?? 0))
                }
        }
    }

    public func refundsPerDay(days: Int, endingAt end: Timestamp, productId: String?) async throws -> RefundSeries {
        let day: Int64 = 86_400_000
        let days = max(1, days)
        let lastDay = end.millisecondsSince1970 - ((end.millisecondsSince1970 % day) + day) % day
        let first = lastDay - Int64(days - 1) * day
        return try await database.read { c in
            var sql = "SELECT revocation_date FROM transactions WHERE revocation_date >= ? AND revocation_date < ?"
            var arguments: [SQLValue] = [.int(first), .int(lastDay + day)]
            if let productId {
                sql += " AND product_id = ?"
                arguments.append(.text(productId))
            }
            var counts = Array(repeating: 0, count: days)
            for row in try c.query(sql, arguments) {
                guard let at = row[0].int else { continue }
                let index = Int((at - first) / day)
                if counts.indices.contains(index) { counts[index] += 1 }
            }
            return RefundSeries(firstDay: Timestamp(millisecondsSince1970: first), counts: counts)
        }
    }

    public func changeToken() async throws -> Int64 {
        try await database.read { c in
            try c.scalar(
                """
                SELECT (SELECT COALESCE(MAX(id), 0) FROM raw_records) + (SELECT COALESCE(MAX(id), 0) FROM triage_log)
                    + (SELECT COUNT(*) FROM sources WHERE completed_at IS NOT NULL) + (SELECT COALESCE(MAX(updated_at), 0) FROM flags)
                """)?.int ?? 0
        }
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
                SELECT r.id, s.path, r.record_index, r.byte_offset, r.kind, r.error_code, r.error_message, LENGTH(r.raw)
                FROM raw_records r JOIN sources s ON s.id = r.source_id
                WHERE r.status = 'rejected' AND r.id > ? ORDER BY r.id LIMIT ?
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
            try c.scalar("SELECT raw FROM raw_records WHERE id = ? AND status = 'rejected'", [.int(id)])?.blob ?? []
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

    static func customers(_ c: any SQLConnection, _ query: CustomerQuery) throws -> CustomerPage {
        // Per-customer figures over the customer's original transaction ids (merged customers included).
        let originals = """
            SELECT ci.value FROM customer_ids ci JOIN customers m ON m.id = ci.customer_id
            WHERE ci.kind = 'originalTransactionId' AND (m.id = c.id OR m.merged_into = c.id)
            """
        let sortKey: String
        switch query.sort {
        case .id: sortKey = "c.id"
        case .lastActivity:
            sortKey = "COALESCE((SELECT MAX(t.purchase_date) FROM transactions t WHERE t.original_transaction_id IN (\(originals))), 0)"
        case .refunds:
            sortKey = "(SELECT COUNT(t.revocation_date) FROM transactions t WHERE t.original_transaction_id IN (\(originals)))"
        }
        var conditions = ["c.merged_into IS NULL"]
        var arguments: [SQLValue] = []
        if let filter = query.filter, !filter.isEmpty {
            let exact = try customerId(c, matching: filter)
            conditions.append(
                """
                (c.id = ? OR c.id IN (SELECT COALESCE(cu.merged_into, ci.customer_id) FROM customer_ids ci
                    JOIN customers cu ON cu.id = ci.customer_id WHERE ci.value >= ? AND ci.value < ?))
                """)
            arguments += [.int(exact ?? -1), .text(filter), .text(filter + "\u{10FFFF}")]
        }
        if let environment = query.environment.stored {
            conditions.append(
                "EXISTS (SELECT 1 FROM transactions t WHERE t.original_transaction_id IN (\(originals)) AND t.environment = ?)")
            arguments.append(.text(environment))
        }
        if let activeAt = query.activeAt {
            conditions.append(
                "EXISTS (SELECT 1 FROM transactions t WHERE t.original_transaction_id IN (\(originals)) AND t.expires_date > ? AND t.revocation_date IS NULL)")
            arguments.append(.of(activeAt))
        }
        if query.withOpenFlags {
            conditions.append("EXISTS (SELECT 1 FROM flags f WHERE f.customer_id = c.id AND f.status = 'open')")
        }
        let filtered = conditions.joined(separator: " AND ")
        let total = Int(try c.scalar("SELECT COUNT(*) FROM customers c WHERE \(filtered)", arguments)?.int ?? 0)
        var pageConditions = filtered
        var pageArguments = arguments
        let descending = query.sort != .id
        if let after = query.after {
            pageConditions += descending
                ? " AND (\(sortKey) < ? OR (\(sortKey) = ? AND c.id > ?))" : " AND (\(sortKey) > ? OR (\(sortKey) = ? AND c.id > ?))"
            pageArguments += [.int(after.key), .int(after.key), .int(after.id)]
        }
        let rows = try c.query(
            "SELECT c.id, \(sortKey) FROM customers c WHERE \(pageConditions) ORDER BY 2 \(descending ? "DESC" : "ASC"), c.id LIMIT ?",
            pageArguments + [.of(query.limit + 1)])
        let more = rows.count > query.limit
        let shown = rows.prefix(query.limit)
        let summaries = try shown.map { row in try summary(c, customer: row[0].int ?? 0) }
        let next = more ? shown.last.map { CustomerCursor(key: $0[1].int ?? 0, id: $0[0].int ?? 0) } : nil
        return CustomerPage(rows: summaries, next: next, total: total)
    }

    static func summary(_ c: any SQLConnection, customer id: Int64) throws -> CustomerSummary {
        let identifiers = try identifiers(c, customer: id)
        let originals = identifiers.filter { $0.kind == "originalTransactionId" }.map(\.value)
        var count = 0
        var lastPurchase: Int64?
        var latestExpiry: Int64?
        var revoked = 0
        var environments = Set<String>()
        for chunk in chunks(originals) {
            for row in try c.query(
                "SELECT DISTINCT environment FROM transactions WHERE original_transaction_id IN (\(placeholders(chunk.count)))",
                chunk.map(SQLValue.text))
            {
                if let environment = row[0].text { environments.insert(environment) }
            }
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
            latestExpiry: latestExpiry.map(Timestamp.init(millisecondsSince1970:)), revokedCount: revoked,
            environments: environments.sorted(),
            openFlags: Int(try c.scalar("SELECT COUNT(*) FROM flags WHERE customer_id = ? AND status = 'open'", [.int(id)])?.int ?? 0))
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
        var conditions = used.map(\.clause)
        var arguments = used.compactMap(\.value)
        if let after = query.after {
            // Keyset: newest first by (at DESC, id ASC).
            conditions.append("(at < ? OR (at = ? AND id > ?))")
            arguments += [.of(after.at), .of(after.at), .text(after.id)]
        }
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
