import Entitlements
import ReceiptDecoding
import ReceiptModel

extension SQLLedger {
    /// Every refunded or revoked transaction with its customer (the refunds index, not the whole ledger).
    public func refundFacts() async throws -> [RefundFact] {
        try await database.read { c in
            try c.query(
                """
                SELECT t.canonical, COALESCE(cu.merged_into, ci.customer_id)
                FROM transactions t
                LEFT JOIN customer_ids ci ON ci.value = COALESCE(t.original_transaction_id, t.transaction_id) AND ci.kind = \(IdentifierKind.originalTransactionId.sql)
                LEFT JOIN customers cu ON cu.id = ci.customer_id
                WHERE t.revocation_date IS NOT NULL
                """, []
            ).map { row in RefundFact(transaction: try CanonicalJSON.transaction(row[0].text ?? ""), customerId: row[1].int) }
        }
    }

    /// The notifications the refund rules read (consumption requests, refund outcomes), with customers.
    public func refundNotificationFacts() async throws -> [NotificationFact] {
        try await database.read { c in
            try c.query(
                """
                SELECT n.canonical, n.seen_at, n.transaction_id, t.product_id, COALESCE(cu.merged_into, ci.customer_id)
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
                    customerId: row[4].int)
            }
        }
    }

    /// Runs the refund rules over the ledger and stores what they find; flags keep their triage status.
    /// - Returns: the flags found and the refund outcome counts, from one read of the refund facts.
    @discardableResult
    public func refreshFlags(rules: FlagRules, now: Timestamp) async throws -> (flags: [RefundFlag], outcomes: RefundOutcomes) {
        let refunds = try await refundFacts()
        let notifications = try await refundNotificationFacts()
        let flags = rules.evaluate(refunds: refunds, notifications: notifications, now: now)
        try await saveFlags(flags, now: now)
        return (flags, rules.outcomes(refunds: refunds, notifications: notifications, now: now))
    }

    /// The refund outcome counts, read only (the flags stay as the last refresh stored them).
    public func refundOutcomes(rules: FlagRules, now: Timestamp) async throws -> RefundOutcomes {
        rules.outcomes(refunds: try await refundFacts(), notifications: try await refundNotificationFacts(), now: now)
    }
}
