import ReceiptModel

/// What a revocation took away: the one definition of "is this a real refund" that entitlements,
/// spend, timelines and refund flags all use.
///
/// - A revocation of type FAMILY_REVOKE, or of a family-shared transaction with no refund reason, is a
///   family member losing shared access: no money moved for this customer.
/// - An upgraded transaction's revocation is the prorated cancellation of the upgrade: neither.
/// - Any other revocation is Apple refunding the purchase, in full or (with a percentage) in part.
/// - A revocation that Apple reversed (REFUND_REVERSED at or after it) is void: ask
///   ``Transaction/revocation(reversedAt:)`` or ``CustomerHistory/revocation(of:at:)``, not
///   ``Transaction/revocation``, whether one still stands. A merged transaction keeps its revocation after
///   a reversal (the timeline shows the refund and then the reversal; time travel shows the access taken
///   away in between), so `revocationDate` alone does not say that a refund stands.
public enum Revocation: Hashable, Sendable {
    /// Apple refunded the purchase; `share` is the refunded part in thousandths of a percent (100 000 = all).
    case refund(at: Timestamp, share: Int64)
    /// A family member lost access another member shared.
    case familyRevoke(at: Timestamp)

    /// When the revocation took effect.
    public var date: Timestamp {
        switch self {
        case .refund(let at, _), .familyRevoke(let at): at
        }
    }

    /// Whether Apple took money back.
    public var isRefund: Bool {
        if case .refund = self { return true }
        return false
    }

    /// The refunded share, 0 to 100 000; `nil` for a family revoke.
    public var refundedShare: Int64? {
        if case .refund(_, let share) = self { return share }
        return nil
    }
}

extension Transaction {
    /// This transaction's revocation as the rules read it, or `nil` when it was not revoked or the
    /// revocation is an upgrade's prorated cancellation (an upgraded transaction with a refund type is refunded).
    public var revocation: Revocation? {
        guard let date = revocationDate else { return nil }
        let family = revocationType == .familyRevoke
            || (inAppOwnershipType == .familyShared && revocationReason == nil && revocationType == nil)
        if family { return .familyRevoke(at: date) }
        // An upgrade's prorated cancellation is no refund, unless Apple says it is one: a refund type is explicit.
        if isUpgraded == true && revocationType != .refundFull && revocationType != .refundProrated { return nil }
        // Apple sends 0...100 000; anything else is read as the nearest possible share.
        return .refund(at: date, share: min(max(revocationPercentage ?? 100_000, 0), 100_000))
    }

    /// This transaction's revocation unless Apple reversed it: `reversal` is when a refund of it was last
    /// reversed (REFUND_REVERSED) as far as the caller knows. A reversal at or after the revocation voids it
    /// (it reinstates what the refund took away); one before it was of an earlier refund.
    public func revocation(reversedAt reversal: Timestamp?) -> Revocation? {
        guard let revocation else { return nil }
        if let reversal, reversal >= revocation.date { return nil }
        return revocation
    }
}

extension CustomerHistory {
    /// The revocation in force at `instant`: taken effect by then and not reversed since
    /// (REFUND_REVERSED reinstates what the refund took away).
    public func revocation(of t: Transaction, at instant: Timestamp) -> Revocation? {
        guard let revocation = t.revocation, revocation.date <= instant else { return nil }
        return t.revocation(reversedAt: refundReversal(of: t.transactionId, at: instant))
    }
}

extension Sequence<NotificationFact> {
    /// When a refund of each transaction was last reversed (REFUND_REVERSED, at its signedDate, else when it
    /// was seen) by `instant`: what the refund rules pass to ``Transaction/revocation(reversedAt:)``.
    func refundReversals(at instant: Timestamp) -> [String: Timestamp] {
        var latest: [String: Timestamp] = [:]
        for fact in self where fact.notification.notificationType == .refundReversed {
            let at = fact.notification.signedDate ?? fact.seenAt
            guard let transactionId = fact.transactionId, at <= instant else { continue }
            latest[transactionId] = Swift.max(latest[transactionId] ?? at, at)
        }
        return latest
    }

    /// The consumption requests sent by `instant` whose 12 hours had not run out then (the overview's and `refunds`'
    /// "awaiting data"; the notifications alone say it, without the refunds the other outcomes read).
    public func pendingConsumptionRequests(at instant: Timestamp) -> Int {
        lazy.filter { fact in
            let at = fact.notification.signedDate ?? fact.seenAt
            return fact.notification.notificationType == .consumptionRequest && at <= instant
                && at.adding(milliseconds: RefundFlag.consumptionAnswerWindow) > instant
        }.count
    }
}
