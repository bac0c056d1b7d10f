import Entitlements
import ReceiptModel
import Testing

/// Renewal that stopped without the customer turning it off (DESIGN sections 6-7): Apple's billing retry ran out, a
/// product left the store, a price increase went unanswered. The timeline says what stopped it; only the customer's
/// own choice says "the customer turned renewal off".
@Suite("renewal stopped by Apple is never told as the customer's choice")
struct RenewalStoppedTests {
    typealias B = HistoryBuilder
    static let customer = "the customer turned renewal off"
    static let retryEnded = "Apple stopped renewal: billing retry ended"

    @Test("verifyReceipt: billing retry over, renewal off, expiration intent 2: Apple stopped it, the subscription expired")
    func legacyRetryEnded() async throws {
        var b = B()
        b.period("1", from: 0, to: 30)
        b.renewal(seen: 10, autoRenew: true)
        b.renewal(seen: 30, autoRenew: true, retry: true, intent: 2)
        b.renewal(seen: 90, autoRenew: false, intent: 2)
        let timeline = try await b.history().timeline(upTo: B.at(100))
        #expect(!timeline.contains { $0.kind == .autoRenewDisabled }, "\(timeline)")
        let end = try #require(timeline.last)
        #expect(end.kind == .expired && end.at == B.at(90) && end.detail == Self.retryEnded, "\(end)")
        #expect(!timeline.contains { $0.detail.contains(Self.customer) })
    }

    @Test("a retry that ends with renewal off and no expiration intent is not told as Apple's (the customer may have turned it off)")
    func retryEndedWithoutIntent() async throws {
        var b = B()
        b.period("1", from: 0, to: 30)
        b.renewal(seen: 30, autoRenew: true, retry: true)
        b.renewal(seen: 40, autoRenew: false)
        let timeline = try await b.history().timeline(upTo: B.at(50))
        #expect(!timeline.contains { $0.detail == Self.retryEnded }, "\(timeline)")
    }

    @Test("a stop and a notification at the far ends of time, whose distance overflows, do not trap")
    func extremeInstants() async throws {
        var b = B()
        b.period("1", from: 0, to: 30)
        b.renewal(seen: 30, autoRenew: true, retry: true, intent: 2)
        b.renewal(seen: 1.0e11, autoRenew: false, intent: 2)
        b.notificationV1("DID_CHANGE_RENEWAL_STATUS", at: -1.0e11, autoRenew: false)
        let timeline = try await b.history().timeline(upTo: B.at(1.05e11))
        #expect(timeline.contains { $0.detail == Self.retryEnded }, "\(timeline)")
    }

    @Test("V1: DID_CHANGE_RENEWAL_STATUS with renewal off as the retry ends is Apple's, by its receipt's renewal info")
    func v1RetryEnded() async throws {
        var b = B()
        b.period("1", from: 0, to: 30)
        b.notificationV1("DID_FAIL_TO_RENEW", at: 30)
        b.renewal(seen: 30, autoRenew: true, retry: true, intent: 2)
        b.notificationV1("DID_CHANGE_RENEWAL_STATUS", at: 90, autoRenew: false)
        b.renewal(seen: 90, autoRenew: false, intent: 2)
        let timeline = try await b.history().timeline(upTo: B.at(100))
        #expect(!timeline.contains { $0.kind == .autoRenewDisabled }, "\(timeline)")
        #expect(timeline.filter { $0.at == B.at(90) }.map(\.detail) == [Self.retryEnded], "\(timeline)")
        #expect(timeline.last?.kind == .expired)
    }

    @Test("a period that ended for a reason that is not the customer turning renewal off says that reason, once", arguments: [
        (3, "renewal stopped: the customer did not consent to the price increase"),
        (4, "Apple stopped renewal: the product is no longer for sale"),
        (5, "renewal stopped by Apple (expiration intent 5), not by the customer"),
    ])
    func otherIntents(intent: Int, words: String) async throws {
        var b = B()
        b.period("1", from: 0, to: 30)
        b.renewal(seen: 10, autoRenew: true)
        b.renewal(seen: 30, autoRenew: false, intent: intent)
        let timeline = try await b.history().timeline(upTo: B.at(40))
        #expect(!timeline.contains { $0.kind == .autoRenewDisabled }, "\(timeline)")
        // The period's own end says why: one expired event, not two.
        let ends = timeline.filter { $0.kind == .expired }
        #expect(ends.count == 1 && ends.first?.at == B.at(30) && ends.first?.detail == words, "\(ends)")
        #expect(ends.first?.transactionId == "1")
    }

    @Test("V2 EXPIRED with PRODUCT_NOT_FOR_SALE or PRICE_INCREASE at the period's end is that reason, not an opt-out", arguments: [
        ("PRODUCT_NOT_FOR_SALE", "Apple stopped renewal: the product is no longer for sale"),
        ("PRICE_INCREASE", "renewal stopped: the customer did not consent to the price increase"),
    ])
    func v2Expired(subtype: String, words: String) async throws {
        var b = B()
        b.period("1", from: 0, to: 30)
        try b.notificationV2("EXPIRED", subtype: subtype, at: 30, transactionId: "1", renewal: B.SignedRenewal(autoRenew: false))
        let timeline = try await b.history().timeline(upTo: B.at(40))
        #expect(!timeline.contains { $0.kind == .autoRenewDisabled }, "\(timeline)")
        #expect(timeline.filter { $0.kind == .expired }.map(\.detail) == [words], "\(timeline)")
    }

    @Test("the customer turning renewal off keeps the customer's words: while a period runs, however an old intent reads")
    func customerStill() async throws {
        // While the period runs, in any shape.
        var legacy = B()
        legacy.period("1", from: 0, to: 30)
        legacy.renewal(seen: 5, autoRenew: true)
        legacy.renewal(seen: 10, autoRenew: false)
        var stale = B()
        stale.period("1", from: 0, to: 30)
        stale.renewal(seen: 5, autoRenew: true, intent: 2)
        stale.renewal(seen: 10, autoRenew: false, intent: 2)
        var v1 = B()
        v1.period("1", from: 0, to: 30)
        v1.notificationV1("DID_CHANGE_RENEWAL_STATUS", at: 10, autoRenew: false)
        var v2 = B()
        v2.period("1", from: 0, to: 30)
        try v2.notificationV2("DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_DISABLED", at: 10, transactionId: "1", renewal: B.SignedRenewal(autoRenew: false))
        // After the period ended, with the customer's intent (1).
        var voluntary = B()
        voluntary.period("1", from: 0, to: 30)
        voluntary.renewal(seen: 5, autoRenew: true)
        voluntary.renewal(seen: 31, autoRenew: false, intent: 1)
        for (name, b) in [("legacy", legacy), ("stale intent", stale), ("V1", v1), ("V2", v2), ("voluntary", voluntary)] {
            let timeline = try await b.history().timeline(upTo: B.at(40))
            let off = timeline.filter { $0.kind == .autoRenewDisabled }
            #expect(off.map(\.detail) == [Self.customer], "\(name): \(timeline)")
            #expect(timeline.filter { $0.kind == .expired }.map(\.detail) == ["period ended"], "\(name): \(timeline)")
        }
    }

    @Test("renewal turned back on is the customer's, in the same words whether a notification or a renewal info tells it")
    func backOn() async throws {
        var legacy = B()
        legacy.period("1", from: 0, to: 30)
        legacy.renewal(seen: 5, autoRenew: false)
        legacy.renewal(seen: 10, autoRenew: true)
        var v1 = B()
        v1.period("1", from: 0, to: 30)
        v1.notificationV1("DID_CHANGE_RENEWAL_STATUS", at: 5, autoRenew: false)
        v1.notificationV1("DID_CHANGE_RENEWAL_STATUS", at: 10, autoRenew: true)
        var v2 = B()
        v2.period("1", from: 0, to: 30)
        try v2.notificationV2("DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_DISABLED", at: 5, transactionId: "1", renewal: B.SignedRenewal(autoRenew: false))
        try v2.notificationV2("DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_ENABLED", at: 10, transactionId: "1", renewal: B.SignedRenewal(autoRenew: true))
        for (name, b) in [("renewal infos", legacy), ("V1", v1), ("V2", v2)] {
            let on = try await b.history().timeline(upTo: B.at(20)).filter { $0.kind == .autoRenewEnabled }
            #expect(on.map(\.detail) == ["the customer turned renewal back on"], "\(name): \(on)")
            #expect(on.map(\.at) == [B.at(10)], "\(name): \(on)")
        }
    }
}
