import Entitlements
import ReceiptDecoding
import ReceiptModel

extension SQLLedger {
    /// Every refunded or revoked transaction with its customer (the refunds index, not the whole ledger).
    public func refundFacts() async throws -> [RefundFact] {
        var facts: [RefundFact] = []
        try await forEachRefundPage { facts += $0 }
        return facts
    }

    /// The refunded or revoked transactions with their customers, a page at a time in revocation order, so a
    /// caller holds one page of decoded transactions, not the ledger's every refund.
    func forEachRefundPage(size: Int = 2_000, _ body: ([RefundFact]) throws -> Void) async throws {
        var after: (date: Int64, id: String)?
        while true {
            let cursor = after
            let rows = try await database.read { c in
                try c.query(
                    """
                    SELECT t.canonical, COALESCE(cu.merged_into, ci.customer_id), t.revocation_date, t.transaction_id
                    FROM transactions t
                    LEFT JOIN customer_ids ci ON ci.value = COALESCE(t.original_transaction_id, t.transaction_id) AND ci.kind = \(IdentifierKind.originalTransactionId.sql)
                    LEFT JOIN customers cu ON cu.id = ci.customer_id
                    WHERE t.revocation_date IS NOT NULL\(cursor == nil ? "" : " AND (t.revocation_date > ? OR (t.revocation_date = ? AND t.transaction_id > ?))")
                    ORDER BY t.revocation_date, t.transaction_id LIMIT ?
                    """, (cursor.map { [.int($0.date), .int($0.date), .text($0.id)] } ?? []) + [.int(Int64(size))])
            }
            try body(try rows.map { row in RefundFact(transaction: try CanonicalJSON.transaction(row[0].text ?? ""), customerId: row[1].int) })
            guard rows.count == size, let last = rows.last, let date = last[2].int, let id = last[3].text else { return }
            after = (date, id)
        }
    }

    /// The notifications the refund rules read (consumption requests, refund outcomes), with customers.
    public func refundNotificationFacts() async throws -> [NotificationFact] {
        try await database.read { c in
            try c.query(
                """
                SELECT n.canonical, n.seen_at, n.transaction_id, t.product_id, COALESCE(cu.merged_into, ci.customer_id), t.price, t.currency
                FROM notifications n
                LEFT JOIN transactions t ON t.transaction_id = n.transaction_id
                LEFT JOIN customer_ids ci ON ci.value = n.original_transaction_id AND ci.kind = \(IdentifierKind.originalTransactionId.sql)
                LEFT JOIN customers cu ON cu.id = ci.customer_id
                WHERE n.notification_type IN (\([NotificationType.consumptionRequest, .refundReversed, .refundDeclined, .refund].map(\.sql).joined(separator: ", ")))
                """, []
            ).map { row in
                NotificationFact(
                    notification: try CanonicalJSON.notification(row[0].text ?? ""),
                    seenAt: Timestamp(millisecondsSince1970: row[1].int ?? 0), transactionId: row[2].text, productId: row[3].text,
                    customerId: row[4].int, price: row[5].int, currency: row[6].text)
            }
        }
    }

    /// Runs the refund rules over the ledger and stores what they find; flags keep their triage status. The
    /// refunds are read a page at a time (``FlagEvaluation``): an import's memory does not grow with the ledger.
    /// - Returns: the flags found and the refund outcome counts, from one read of the refund facts.
    @discardableResult
    public func refreshFlags(rules: FlagRules, now: Timestamp) async throws -> (flags: [RefundFlag], outcomes: RefundOutcomes) {
        let found = try await evaluate(rules: rules, now: now)
        try await saveFlags(found.flags, now: now)
        return found
    }

    /// The refund outcome counts, read only (the flags stay as the last refresh stored them).
    public func refundOutcomes(rules: FlagRules, now: Timestamp) async throws -> RefundOutcomes {
        try await evaluate(rules: rules, now: now).outcomes
    }

    /// The consumption requests awaiting data at an instant (`refunds --at`): from the notifications alone, without
    /// running the rules over every refund again.
    public func pendingConsumptionRequests(at instant: Timestamp) async throws -> Int {
        try await refundNotificationFacts().pendingConsumptionRequests(at: instant)
    }

    func evaluate(rules: FlagRules, now: Timestamp, pageSize: Int = 2_000) async throws -> (flags: [RefundFlag], outcomes: RefundOutcomes) {
        var evaluation = FlagEvaluation(rules: rules, notifications: try await refundNotificationFacts(), now: now)
        try await forEachRefundPage(size: pageSize) { evaluation.add($0) }
        return evaluation.finish()
    }
}
