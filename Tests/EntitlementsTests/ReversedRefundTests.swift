import Entitlements
import ReceiptModel
import Testing

/// A refund Apple reversed (REFUND_REVERSED) is void. The transaction keeps its revocation as history (the
/// timeline shows the refund, and the entitlement was revoked until the reversal), so every reader must ask the
/// one definition whether it still stands: the refund rules as much as entitlements and spend.
@Suite("A reversed refund is no refund to the flag rules")
struct ReversedRefundTests {
    typealias B = HistoryBuilder

    /// The flag rules and refund outcomes over one customer's history, as the ledger runs them at `now`.
    static func rules(_ h: CustomerHistory, now days: Double) -> (flags: [String], outcomes: RefundOutcomes) {
        let refunds = h.transactions.map { RefundFact(transaction: $0, customerId: 1) }
        let notes = h.notifications.map {
            NotificationFact(notification: $0.notification, seenAt: $0.seenAt, transactionId: $0.transactionId, productId: "pro.monthly", customerId: 1)
        }
        let rules = FlagRules()
        return (
            rules.evaluate(refunds: refunds, notifications: notes, now: B.at(days)).map(\.rule).sorted(),
            rules.outcomes(refunds: refunds, notifications: notes, now: B.at(days))
        )
    }

    @Test("a late refund reversed before its period ended: revoked, then active again; refund-reversed, no late-refund")
    func lateRefundReversedInItsPeriod() async throws {
        // The generator's case (seed 42, customers acct-0000026 and index 686): a month refunded 82 % of the way
        // in, the refund reversed three days later; the reversal's signed transaction carries no revocationDate.
        var b = B()
        b.period("1", from: 0, to: 30, cancelled: 24.6, reason: 0)
        #expect(Self.rules(try await b.history(), now: 40).flags == ["late-refund"])
        try b.notificationV2("REFUND_REVERSED", at: 27.6, transactionId: "1")
        let h = try await b.history()
        #expect(h.entitlements(at: B.at(26)).first?.state == .revoked)
        #expect(h.entitlements(at: B.at(28)).first?.state == .active)
        #expect(h.facts(at: B.at(40)).refundCount == 0)
        let (flags, outcomes) = Self.rules(h, now: 40)
        #expect(flags == ["refund-reversed"])
        #expect(outcomes.refunded == 0)
        #expect(outcomes.reversed == 1)
    }

    @Test("a non-consumable whose refund Apple reversed is owned, and its why says the reversal, then the refund")
    func ownedAfterReversal() async throws {
        var b = B()
        b.period("9", product: "lifetime.unlock", from: 0, to: nil, original: "9", cancelled: 5, reason: 0)
        try b.notificationV2("REFUND_REVERSED", at: 8, transactionId: "9", original: "9", product: "lifetime.unlock")
        let h = try await b.history()
        let before = try #require(h.entitlements(at: B.at(6)).first)
        #expect(before.state == .revoked)
        let after = try #require(h.entitlements(at: B.at(10)).first)
        #expect(after.state == .owned)
        // The reversal first: cut at a narrow screen's edge, the refund alone read as standing.
        #expect(after.reason.hasPrefix("bought 2025-01-01T00:00:00Z; refund reversed 2025-01-09T00:00:00Z (refunded 2025-01-06T00:00:00Z)"), "\(after.reason)")
    }

    @Test("a reversal dated before the refund was of an earlier one: the refund stands")
    func reversalBeforeTheRefund() async throws {
        var b = B()
        b.period("1", from: 0, to: 30, cancelled: 25, reason: 0)
        try b.notificationV2("REFUND_REVERSED", at: 8, transactionId: "1")
        let h = try await b.history()
        #expect(h.entitlements(at: B.at(26)).first?.state == .revoked)
        let (flags, outcomes) = Self.rules(h, now: 40)
        #expect(flags == ["late-refund", "refund-reversed"])
        #expect(outcomes.refunded == 1)
    }

    @Test("a reversed refund does not count towards serial-refunder")
    func reversedRefundIsNotCounted() async throws {
        var b = B()
        b.period("1", product: "a", from: 0, to: 30, original: "1", cancelled: 10)
        b.period("2", product: "b", from: 10, to: 40, original: "2", cancelled: 20)
        b.period("3", product: "c", from: 20, to: 50, original: "3", cancelled: 30)
        #expect(Self.rules(try await b.history(), now: 60).flags == ["serial-refunder"])
        try b.notificationV2("REFUND_REVERSED", at: 32, transactionId: "3", original: "3", product: "c")
        let (flags, outcomes) = Self.rules(try await b.history(), now: 60)
        #expect(flags == ["refund-reversed"])
        #expect(outcomes.refunded == 2)
    }
}
