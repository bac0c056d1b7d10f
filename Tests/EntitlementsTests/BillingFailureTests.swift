import Entitlements
import ReceiptModel
import Testing

/// DID_FAIL_TO_RENEW as Apple sends it (DESIGN section 6, Apple's table for billing trouble): a V2
/// notification carrying the renewal info that says whether Apple is retrying and until when the grace
/// period lasts; and the older V1 notification, which says only that billing failed.
@Suite("DID_FAIL_TO_RENEW: grace period, billing retry, recovery")
struct BillingFailureTests {
    typealias B = HistoryBuilder

    @Test("with a grace period: access continues until it ends, then billing retry without access")
    func gracePeriod() async throws {
        var b = B()
        b.period("1", from: 0, to: 30)
        try b.notificationV2(
            "DID_FAIL_TO_RENEW", subtype: "GRACE_PERIOD", at: 30, transactionId: "1",
            renewal: B.SignedRenewal(retry: true, grace: 36))
        let h = try await b.history()
        let inGrace = try #require(h.entitlements(at: B.at(33)).first)
        #expect(inGrace.state == .gracePeriod)
        #expect(inGrace.state.grantsAccess)
        #expect(inGrace.gracePeriodExpiresDate == B.at(36))
        #expect(inGrace.willRenew == true)
        let afterGrace = try #require(h.entitlements(at: B.at(37)).first)
        #expect(afterGrace.state == .billingRetry)
        #expect(!afterGrace.state.grantsAccess)
        // The notification and its renewal info tell one event.
        let timeline = h.timeline(upTo: B.at(40))
        #expect(timeline.map(\.kind) == [.subscribed, .gracePeriodStarted, .expired])
        let failed = try #require(timeline.first { $0.kind == .gracePeriodStarted })
        #expect(failed.at == B.at(30))
        #expect(failed.detail == "billing failed; grace period started")
        // The period's end is not told as access lost.
        #expect(timeline.first { $0.kind == .expired }?.detail == "paid period ended; a grace period began")
        #expect(!timeline.contains { $0.kind == .billingIssue || $0.kind == .refunded })
    }

    @Test("without a grace period: no access while Apple retries; the timeline says billingIssue")
    func billingRetry() async throws {
        var b = B()
        b.period("1", from: 0, to: 30)
        try b.notificationV2("DID_FAIL_TO_RENEW", at: 30, transactionId: "1", renewal: B.SignedRenewal(retry: true))
        let h = try await b.history()
        #expect(h.entitlements(at: B.at(29)).first?.state == .active)
        let retrying = try #require(h.entitlements(at: B.at(31)).first)
        #expect(retrying.state == .billingRetry)
        #expect(!retrying.state.grantsAccess)
        #expect(retrying.gracePeriodExpiresDate == nil)
        let timeline = h.timeline(upTo: B.at(40))
        #expect(timeline.map(\.kind) == [.subscribed, .billingIssue, .expired])
        #expect(timeline.first { $0.kind == .billingIssue }?.detail == "billing failed; Apple is retrying")
        #expect(timeline.first { $0.kind == .expired }?.detail == "paid period ended; Apple began retrying the payment")
    }

    @Test("Apple retries for 60 days: past them the subscription has expired, not still in billing retry")
    func retriesEnd() async throws {
        var b = B()
        b.period("1", from: 0, to: 30)
        try b.notificationV2("DID_FAIL_TO_RENEW", at: 30, transactionId: "1", renewal: B.SignedRenewal(retry: true))
        let h = try await b.history()
        #expect(h.entitlements(at: B.at(89)).first?.state == .billingRetry)
        let over = try #require(h.entitlements(at: B.at(91)).first)
        #expect(over.state == .expired)
        #expect(over.willRenew == false)
        #expect(
            over.reason == "expired \(B.at(30).iso8601): billing failed, and Apple's retries (60 days) ended \(B.at(90).iso8601)",
            "\(over.reason)")
    }

    @Test("billing recovered in the grace period: DID_RENEW/BILLING_RECOVERY and the new period keep access")
    func recovery() async throws {
        var b = B()
        b.period("1", from: 0, to: 30)
        try b.notificationV2(
            "DID_FAIL_TO_RENEW", subtype: "GRACE_PERIOD", at: 30, transactionId: "1",
            renewal: B.SignedRenewal(retry: true, grace: 36))
        b.period("2", from: 33, to: 63)
        try b.notificationV2("DID_RENEW", subtype: "BILLING_RECOVERY", at: 33, transactionId: "2", renewal: B.SignedRenewal())
        let h = try await b.history()
        // Access never stopped: grace until the recovery, then the new period.
        #expect(h.entitlements(at: B.at(32)).first?.state == .gracePeriod)
        let recovered = try #require(h.entitlements(at: B.at(40)).first)
        #expect(recovered.state == .active)
        #expect(recovered.transactionId == "2")
        let timeline = h.timeline(upTo: B.at(40))
        let kinds = timeline.map(\.kind)
        #expect(kinds.filter { $0 == .gracePeriodStarted }.count == 1)
        #expect(kinds.filter { $0 == .billingRecovered }.count == 1)
        let failed = try #require(kinds.firstIndex(of: .gracePeriodStarted))
        #expect(try #require(kinds.firstIndex(of: .billingRecovered)) > failed)
        #expect(timeline.first { $0.kind == .billingRecovered }?.at == B.at(33))
        // The grace period is not a gap: the period that began at the recovery is the recovery, not a lapse
        // ("no subscription for 3 days") and a resubscribe, and the old period did not expire at 30.
        #expect(!kinds.contains(.lapsed))
        #expect(!kinds.contains(.resubscribed))
        #expect(kinds == [.subscribed, .gracePeriodStarted, .billingRecovered])
        let recovery = try #require(timeline.first { $0.kind == .billingRecovered })
        #expect(recovery.transactionId == "2")
        #expect(recovery.detail == "billing recovered; renewed until \(B.at(63).iso8601)")
    }

    @Test("recovered after the grace period ran out, in billing retry: a recovery, not a lapse and a resubscribe")
    func recoveryAfterGrace() async throws {
        var b = B()
        b.period("1", from: 0, to: 30)
        try b.notificationV2(
            "DID_FAIL_TO_RENEW", subtype: "GRACE_PERIOD", at: 30, transactionId: "1",
            renewal: B.SignedRenewal(retry: true, grace: 36))
        b.period("2", from: 41, to: 71)
        try b.notificationV2("DID_RENEW", subtype: "BILLING_RECOVERY", at: 41, transactionId: "2", renewal: B.SignedRenewal())
        let h = try await b.history()
        #expect(h.entitlements(at: B.at(38)).first?.state == .billingRetry)
        #expect(h.entitlements(at: B.at(42)).first?.state == .active)
        #expect(h.timeline(upTo: B.at(50)).map(\.kind) == [.subscribed, .gracePeriodStarted, .billingRecovered])
        // Before the recovery, the period that failed to renew has ended (no access since the grace period).
        #expect(h.timeline(upTo: B.at(40)).map(\.kind) == [.subscribed, .gracePeriodStarted, .expired])
    }

    @Test("a recovery told only by renewal infos (legacy data, no notification) is still a recovery")
    func recoveryFromRenewalInfos() async throws {
        var b = B()
        b.period("1", from: 0, to: 30)
        b.renewal(seen: 30, autoRenew: true, retry: true)
        b.period("2", from: 34, to: 64)
        let h = try await b.history()
        #expect(h.entitlements(at: B.at(32)).first?.state == .billingRetry)
        let timeline = h.timeline(upTo: B.at(40))
        #expect(timeline.map(\.kind) == [.subscribed, .billingIssue, .billingRecovered])
        #expect(timeline.last?.at == B.at(34))
    }

    @Test("a recovery notification signed minutes after the new period began is the same one recovery")
    func recoveryNotificationLater() async throws {
        var b = B()
        b.period("1", from: 0, to: 30)
        try b.notificationV2("DID_FAIL_TO_RENEW", at: 30, transactionId: "1", renewal: B.SignedRenewal(retry: true))
        b.period("2", from: 33, to: 63)
        try b.notificationV2("DID_RENEW", subtype: "BILLING_RECOVERY", at: 33 + 7.0 / 1440, transactionId: "2", renewal: B.SignedRenewal())
        let h = try await b.history()
        let timeline = h.timeline(upTo: B.at(40))
        #expect(timeline.map(\.kind) == [.subscribed, .billingIssue, .billingRecovered])
        #expect(timeline.last?.at == B.at(33))
    }

    @Test("when Apple gave up retrying, a later purchase is a lapse and a resubscribe, not a recovery")
    func gaveUpThenResubscribed() async throws {
        var b = B()
        b.period("1", from: 0, to: 30)
        try b.notificationV2("DID_FAIL_TO_RENEW", at: 30, transactionId: "1", renewal: B.SignedRenewal(retry: true))
        try b.notificationV2("EXPIRED", subtype: "BILLING_RETRY", at: 90, transactionId: "1", renewal: B.SignedRenewal(autoRenew: false))
        b.period("3", from: 100, to: 130)
        let h = try await b.history()
        let timeline = h.timeline(upTo: B.at(110))
        // The renewal info of the EXPIRED notification ends the retry with renewal off: an end, not a recovery, and
        // Apple's, not the customer turning renewal off.
        #expect(timeline.map(\.kind) == [.subscribed, .billingIssue, .expired, .lapsed, .expired, .resubscribed])
        #expect(timeline[4].at == B.at(90) && timeline[4].detail == "Apple stopped renewal: billing retry ended")
        #expect(timeline.first { $0.kind == .lapsed }?.detail == "no subscription for 70 days")
        #expect(!timeline.contains { $0.kind == .billingRecovered })
    }

    @Test("a V1 DID_FAIL_TO_RENEW is a billing issue at its date, never a refund or an opt-out")
    func v1() async throws {
        var b = B()
        b.period("1", from: 0, to: 30)
        b.notificationV1("DID_FAIL_TO_RENEW", at: 30, autoRenew: true)
        let h = try await b.history()
        let timeline = h.timeline(upTo: B.at(40))
        #expect(timeline.map(\.kind) == [.subscribed, .billingIssue, .expired])
        #expect(timeline.first { $0.kind == .billingIssue }?.at == B.at(30))
        #expect(FlagRules().evaluate(
            refunds: h.transactions.map { RefundFact(transaction: $0, customerId: 1) },
            notifications: h.notifications.map {
                NotificationFact(notification: $0.notification, seenAt: $0.seenAt, transactionId: $0.transactionId, productId: nil, customerId: 1)
            },
            now: B.at(40)).isEmpty)
    }
}
