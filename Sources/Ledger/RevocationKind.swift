import Entitlements
import ReceiptDecoding
import ReceiptModel

/// What a stored transaction's revocation is, kept in `transactions.revocation_kind` so the customer list's
/// refund counts, its coverage filter, the overview and the refunds-per-day series count with SQL what
/// ``Transaction/revocation(reversedAt:)`` says (the one definition of a real refund), not any `revocation_date`.
///
/// Reversals come from the REFUND_REVERSED notifications the ledger holds for the transaction, read when the
/// transaction is written; a reversal imported later rewrites the transaction it carries.
enum RevocationKind: String, Sendable, CaseIterable {
    /// Apple refunded the purchase (in full or in part) and the refund stands.
    case refund
    /// A family member lost access another member shared: no money moved.
    case family
    /// The prorated cancellation of an upgraded subscription: neither.
    case upgrade
    /// A revocation Apple reversed (REFUND_REVERSED at or after it): the access stands.
    case reversed

    /// `nil` when the transaction was not revoked.
    init?(_ t: Transaction, reversal: Timestamp?) {
        guard t.revocationDate != nil else { return nil }
        guard t.revocation != nil else {
            self = .upgrade
            return
        }
        switch t.revocation(reversedAt: reversal) {
        case .refund?: self = .refund
        case .familyRevoke?: self = .family
        case nil: self = .reversed
        }
    }

    /// Whether the revocation took the transaction's access away (a reversed one gave it back).
    var takesAccess: Bool { self != .reversed }

    /// The SQL condition "this transaction's access stands" over `transactions` aliased `t`.
    static let accessStandsSQL = "(t.revocation_date IS NULL OR t.revocation_kind = \(RevocationKind.reversed.sql))"
    /// The SQL condition "this transaction is a refund that stands" over `transactions` aliased `t`.
    static let refundSQL = "t.revocation_kind = \(RevocationKind.refund.sql)"

    /// When each of these transactions' refunds was last reversed, from the stored REFUND_REVERSED notifications
    /// (their signed date, else when they were seen): what ``Transaction/revocation(reversedAt:)`` takes.
    static func storedReversals(_ c: any SQLConnection, of ids: [String]) throws -> [String: Timestamp] {
        var out: [String: Timestamp] = [:]
        for row in try c.queryIn(
            """
            SELECT transaction_id, MAX(COALESCE(signed_date, seen_at)) FROM notifications
            WHERE notification_type = \(NotificationType.refundReversed.sql) AND transaction_id IN (?*)
            GROUP BY transaction_id
            """, [], list: ids.map(SQLValue.text))
        {
            if let id = row[0].text, let at = row[1].int { out[id] = Timestamp(millisecondsSince1970: at) }
        }
        return out
    }

    /// A stored row of `transaction_id, canonical, ...`: its id and what its revocation is.
    private static func stored(_ row: [SQLValue], reversals: [String: Timestamp]) throws -> (id: String, kind: RevocationKind?) {
        let id = row[0].text ?? "?"
        return (id, RevocationKind(try Queries.storedTransaction(id: id, canonical: row[1].text ?? ""), reversal: reversals[id]))
    }

    /// Sets `revocation_kind` on every revoked transaction a ledger already holds (migration v4).
    static func fill(_ c: any SQLConnection) throws {
        let rows = try c.query("SELECT transaction_id, canonical FROM transactions WHERE revocation_date IS NOT NULL", [])
        let reversals = try storedReversals(c, of: rows.compactMap { $0[0].text })
        for row in rows {
            let (id, kind) = try stored(row, reversals: reversals)
            try c.executeDeferred("UPDATE transactions SET revocation_kind = ? WHERE transaction_id = ?", [.of(kind?.rawValue), .text(id)])
        }
        try c.flush()
    }

    /// Reads again every transaction stored as an upgrade's cancellation (migration v12): before 71827f5 an upgraded
    /// transaction was one even when Apple's revocation type said refund, so its refund was counted nowhere.
    /// Recounts the customers' figures and the refund counters when one changed.
    static func refillUpgrades(_ c: any SQLConnection) throws {
        let rows = try c.query(
            "SELECT transaction_id, canonical, environment FROM transactions WHERE revocation_kind = \(RevocationKind.upgrade.sql)", [])
        guard !rows.isEmpty else { return }
        let reversals = try storedReversals(c, of: rows.compactMap { $0[0].text })
        var refunds: [String?: Int] = [:]
        var changed = 0
        for row in rows {
            let (id, kind) = try stored(row, reversals: reversals)
            guard kind != .upgrade else { continue }
            changed += 1
            if kind == .refund { refunds[row[2].text, default: 0] += 1 }
            try c.executeDeferred("UPDATE transactions SET revocation_kind = ? WHERE transaction_id = ?", [.of(kind?.rawValue), .text(id)])
        }
        guard changed > 0 else { return }
        try c.flush()
        for (environment, count) in refunds {
            try Counters.add(c, .refundedTransactions, count)
            try Counters.add(c, .refundedTransactions, in: environment, count)
        }
        try StatsWriter.recountAll(c)
    }
}
