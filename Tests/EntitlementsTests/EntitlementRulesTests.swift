import Entitlements
import ReceiptModel
import Testing

/// One history per rule of DESIGN sections 6 and 7: the states, the ordered event kinds, the flags,
/// and what must not appear.
@Suite("Entitlements, timelines and flags over small histories")
struct EntitlementRulesTests {
    typealias B = HistoryBuilder

    /// The one entitlement at `days`; a history with another number of them fails the test (not the run).
    func state(_ history: CustomerHistory, at days: Double) throws -> Entitlement {
        let all = history.entitlements(at: B.at(days))
        try #require(all.count == 1, "expected one entitlement, got \(all.map(\.name))")
        return all[0]
    }

    func kinds(_ history: CustomerHistory, upTo days: Double = 1000) -> [EventKind] {
        history.timeline(upTo: B.at(days)).map(\.kind)
    }

    func flags(_ history: CustomerHistory, customer: Int64 = 1, now days: Double = 400, rules: FlagRules = FlagRules()) -> [String] {
        let refunds = history.transactions.map { RefundFact(transaction: $0, customerId: customer) }
        let notes = history.notifications.map {
            NotificationFact(notification: $0.notification, seenAt: $0.seenAt, transactionId: $0.transactionId, productId: "pro.monthly", customerId: customer)
        }
        return rules.evaluate(refunds: refunds, notifications: notes, now: B.at(days)).map(\.rule).sorted()
    }

    @Test("renewals: active in each paid period, expired after the last")
    func renewals() async throws {
        var b = B()
        b.period("1", from: 0, to: 30)
        b.period("2", from: 30, to: 60)
        b.period("3", from: 60, to: 90)
        let h = try await b.history()
        #expect(try state(h, at: 45).state == .active)
        #expect(try state(h, at: 45).transactionId == "2")
        #expect(try state(h, at: 95).state == .expired)
        #expect(kinds(h) == [.subscribed, .renewed, .renewed, .expired])
        #expect(kinds(h, upTo: 45) == [.subscribed, .renewed])
        #expect(flags(h).isEmpty)
    }

    @Test("a refund for an app issue within 48 hours: revoked, refunded, quick-refund and app-issue")
    func quickAppIssueRefund() async throws {
        var b = B()
        b.period("1", from: 0, to: 30, cancelled: 0.125, reason: 1)
        let h = try await b.history()
        let e = try state(h, at: 1)
        #expect(e.state == .revoked)
        #expect(e.revocationReason == .appIssue)
        #expect(try state(h, at: 0.1).state == .active)
        #expect(kinds(h) == [.subscribed, .refunded])
        #expect(!kinds(h).contains(.autoRenewDisabled))
        #expect(flags(h) == ["app-issue", "quick-refund"])
    }

    @Test("a trial that converted, then expired after the customer turned renewal off")
    func trialConvertedThenOptOut() async throws {
        var b = B()
        b.period("1", from: 0, to: 7, trial: true)
        b.period("2", from: 7, to: 37)
        b.renewal(seen: 20, autoRenew: false, intent: 1)
        let h = try await b.history()
        #expect(try state(h, at: 3).state == .active)
        #expect(try state(h, at: 3).reason.contains("trial"))
        #expect(try state(h, at: 25).willRenew == false)
        let after = try state(h, at: 40)
        #expect(after.state == .expired)
        #expect(after.expirationIntent == .customerCancelled)
        #expect(kinds(h) == [.trialStarted, .trialConverted, .autoRenewDisabled, .expired])
        #expect(!kinds(h).contains(.refunded))
        #expect(flags(h).isEmpty)
    }

    @Test("billing failure: grace period grants access until it ends; billing retry without grace does not")
    func graceVersusRetry() async throws {
        var grace = B()
        grace.period("1", from: 0, to: 30)
        grace.renewal(seen: 30, autoRenew: true, retry: true, grace: 46)
        let g = try await grace.history()
        #expect(try state(g, at: 35).state == .gracePeriod)
        #expect(try state(g, at: 35).state.grantsAccess)
        #expect(try state(g, at: 50).state == .billingRetry)
        #expect(kinds(g).contains(.gracePeriodStarted))

        var retry = B()
        retry.period("1", from: 0, to: 30)
        retry.renewal(seen: 30, autoRenew: true, retry: true)
        retry.renewal(seen: 33, autoRenew: true, retry: false)
        retry.period("2", from: 33, to: 63)
        let r = try await retry.history()
        #expect(try state(r, at: 31).state == .billingRetry)
        #expect(try !state(r, at: 31).state.grantsAccess)
        #expect(try state(r, at: 40).state == .active)
        let events = kinds(r, upTo: 40)
        #expect(events.contains(.billingIssue) && events.contains(.billingRecovered))
        #expect(!events.contains(.gracePeriodStarted))
    }

    @Test("an upgrade mid-period supersedes the old period from the upgrade on; its prorated cancellation is not a refund")
    func upgrade() async throws {
        var b = B()
        b.period("0", product: "pro.monthly", from: -30, to: 0)
        b.period("1", product: "pro.monthly", from: 0, to: 30, upgraded: true, cancelled: 10)
        b.period("2", product: "pro.yearly", from: 10, to: 375)
        let h = try await b.history()
        let e = try state(h, at: 15)
        #expect(e.state == .active)
        #expect(e.productId == "pro.yearly")
        // Before the upgrade, the upgraded period is what covered the customer, though the data says upgraded.
        let before = try state(h, at: 5)
        #expect(before.state == .active)
        #expect(before.productId == "pro.monthly")
        // The timeline tells the upgraded period as the renewal it was, then the upgrade: no lapse between them.
        #expect(kinds(h, upTo: 20) == [.subscribed, .renewed, .upgraded])
        #expect(kinds(h) == [.subscribed, .renewed, .upgraded, .expired])
        #expect(!kinds(h).contains(.refunded))
        #expect(flags(h).isEmpty)
    }

    @Test("non-consumables are owned; a refunded one is revoked")
    func nonConsumables() async throws {
        var b = B()
        b.period("1", product: "lifetime", from: 0, to: nil)
        b.period("2", product: "stickers", from: 1, to: nil, cancelled: 5)
        let h = try await b.history()
        let all = Dictionary(uniqueKeysWithValues: h.entitlements(at: B.at(10), catalog: Catalog([
            CatalogProduct(productId: "lifetime", entitlement: "lifetime", type: .nonConsumable),
            CatalogProduct(productId: "stickers", entitlement: "stickers", type: .nonConsumable),
        ]), known: ["extra"]).map { ($0.name, $0.state) })
        #expect(all == ["lifetime": .owned, "stickers": .revoked, "extra": .none])
        #expect(kinds(h) == [.purchase, .purchase, .refunded])
    }

    @Test("a family-shared purchase revoked: familyRevoked, never refunded")
    func familyRevoke() async throws {
        var b = B()
        b.period("1", from: 0, to: 30, ownership: "FAMILY_SHARED")
        try b.notificationV2("REVOKE", at: 10, transactionId: "1", revocationType: "FAMILY_REVOKE")
        let h = try await b.history()
        #expect(try state(h, at: 5).state == .active)
        #expect(try state(h, at: 12).state == .revoked)
        #expect(try state(h, at: 12).revocationType == .familyRevoke)
        #expect(kinds(h) == [.subscribed, .familyRevoked])
        #expect(!kinds(h).contains(.refunded))
        #expect(flags(h) == ["family-revoke"])
    }

    @Test("renewal turned off, then a resubscribe: the old renewal info is not why the new period ended, nor says it will not renew")
    func staleRenewalInfo() async throws {
        var b = B()
        b.period("1", from: 0, to: 30)
        b.renewal(seen: 20, autoRenew: false, intent: 1)
        b.period("2", from: 40, to: 70)
        let h = try await b.history()
        let lapsed = try state(h, at: 35)
        #expect(lapsed.state == .expired && lapsed.expirationIntent == .customerCancelled)
        #expect(lapsed.reason.hasSuffix(": the customer turned renewal off") && lapsed.willRenew == false)
        // The period bought again on day 40 was bought with renewal on: the day-20 info says nothing of it.
        let active = try state(h, at: 45)
        #expect(active.state == .active && active.willRenew == nil, "\(active)")
        let ended = try state(h, at: 75)
        #expect(ended.state == .expired && ended.expirationIntent == nil && ended.willRenew == nil, "\(ended)")
        #expect(ended.reason == "expired \(B.at(70).iso8601)", "\(ended.reason)")
        // A renewal info seen in the new period is what it says.
        b.renewal(seen: 50, autoRenew: false, intent: 1)
        let told = try state(try await b.history(), at: 75)
        #expect(told.expirationIntent == .customerCancelled && told.willRenew == false)
    }

    @Test("a renewal info signed with the charge, hours before the renewed period begins, holds for that period")
    func renewalInfoBeforeItsPeriod() async throws {
        var b = B()
        b.period("1", from: 0, to: 30)
        b.period("2", from: 30, to: 60)
        b.renewal(seen: 29.5, autoRenew: false, intent: 1)
        let h = try await b.history()
        #expect(try state(h, at: 45).willRenew == false)
        #expect(try state(h, at: 65).expirationIntent == .customerCancelled)
    }

    @Test("a subscription known only by its renewal info: no access said, but what the info says, and since when the customer is known")
    func renewalInfoAlone() async throws {
        var b = B()
        b.renewal(seen: 20, autoRenew: true, original: "900", product: "pro.quarterly")
        let h = try await b.history()
        #expect(h.entitlements(at: B.at(10)).isEmpty)
        let e = try #require(h.entitlements(at: B.at(30)).first)
        #expect(e.name == "pro.quarterly" && e.state == .none && !e.state.grantsAccess)
        #expect(e.willRenew == true && e.autoRenewProductId == "pro.quarterly")
        #expect(
            e.reason == "renewal info only, seen \(B.at(20).iso8601): renewal on, renewing to pro.quarterly; no transaction of subscription 900 is known",
            "\(e.reason)")
        #expect(h.facts(at: B.at(30)).firstSeen == B.at(20))
        // Once a transaction of it is known, the subscription is told from its periods.
        b.period("901", product: "pro.quarterly", from: 15, to: 105, original: "900")
        let told = try #require(try await b.history().entitlements(at: B.at(30)).first)
        #expect(told.state == .active && told.reason.hasPrefix("paid through"))
    }

    @Test("a resubscription that begins a free trial says so, so that the trialConverted after it follows from it")
    func resubscribedIntoATrial() async throws {
        var b = B()
        b.period("1", from: 0, to: 30)
        b.period("2", from: 40, to: 47, trial: true)
        b.period("3", from: 47, to: 77)
        let h = try await b.history()
        #expect(kinds(h, upTo: 50) == [.subscribed, .expired, .lapsed, .resubscribed, .trialConverted])
        let again = try #require(h.timeline(upTo: B.at(50)).first { $0.kind == .resubscribed })
        #expect(again.detail == "subscribed again to pro.monthly, with a free trial until \(B.at(47).iso8601)", "\(again.detail)")
    }

    @Test("a lapse and a resubscribe")
    func lapse() async throws {
        var b = B()
        b.period("1", from: 0, to: 30)
        b.period("2", from: 40, to: 70)
        let h = try await b.history()
        #expect(try state(h, at: 35).state == .expired)
        #expect(try state(h, at: 45).state == .active)
        #expect(kinds(h, upTo: 50) == [.subscribed, .expired, .lapsed, .resubscribed])
        #expect(h.timeline(upTo: B.at(50)).first { $0.kind == .lapsed }?.detail.contains("10 days") == true)
    }

    @Test("three refunds by one customer within 90 days: serial-refunder; two are not")
    func serialRefunder() async throws {
        var b = B()
        b.period("1", product: "a", from: 0, to: 30, original: "1", cancelled: 20)
        b.period("2", product: "b", from: 10, to: 40, original: "2", cancelled: 50)
        let two = try await b.history()
        #expect(!flags(two).contains("serial-refunder"))
        b.period("3", product: "c", from: 60, to: 90, original: "3", cancelled: 80)
        let three = try await b.history()
        #expect(flags(three).filter { $0 == "serial-refunder" }.count == 1)
    }

    @Test("a V1 CANCEL notification is a refund, not an opt-out")
    func v1Cancel() async throws {
        var b = B()
        b.period("1", from: 0, to: 30)
        b.notificationV1("CANCEL", at: 5)
        let h = try await b.history()
        #expect(kinds(h).contains(.refunded))
        #expect(!kinds(h).contains(.autoRenewDisabled))
    }

    @Test("a refund reversed reinstates access")
    func refundReversed() async throws {
        var b = B()
        b.period("1", from: 0, to: 30, cancelled: 5)
        try b.notificationV2("REFUND_REVERSED", at: 8, transactionId: "1")
        let h = try await b.history()
        #expect(try state(h, at: 6).state == .revoked)
        #expect(try state(h, at: 10).state == .active)
        #expect(kinds(h, upTo: 20) == [.subscribed, .refunded, .refundReversed])
        #expect(flags(h).contains("refund-reversed"))
    }

    @Test("renewal turned off is Apple's doing only after a refund request of the same subscription, however Apple tells it")
    func renewalOffAttributed() async throws {
        let apple = "renewal turned off by Apple after a refund request, not by the customer"
        // A consumable's refund request (another original transaction) says nothing about the subscription.
        var other = B()
        other.period("1", from: 0, to: 30)
        other.period("9", product: "coins.100", from: 1, to: nil, original: "900")
        try other.notificationV2("CONSUMPTION_REQUEST", at: 3, transactionId: "9", original: "900", product: "coins.100")
        try other.notificationV2("DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_DISABLED", at: 3.5, transactionId: "1")
        let off = try #require(try await other.history().timeline(upTo: B.at(10)).last { $0.kind == .autoRenewDisabled })
        #expect(off.detail == "the customer turned renewal off")

        // The subscription's own refund, a minute before: told by a notification or by a renewal info, the same words.
        var notified = B()
        notified.period("1", from: 0, to: 30, cancelled: 3, reason: 0)
        try notified.notificationV2("DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_DISABLED", at: 3.001, transactionId: "1")
        #expect(try await notified.history().timeline(upTo: B.at(10)).last { $0.kind == .autoRenewDisabled }?.detail == apple)
        var reported = B()
        reported.period("1", from: 0, to: 30, cancelled: 3, reason: 0)
        reported.renewal(seen: 1, autoRenew: true)
        reported.renewal(seen: 3.001, autoRenew: false)
        #expect(try await reported.history().timeline(upTo: B.at(10)).last { $0.kind == .autoRenewDisabled }?.detail == apple)
        // Learned days later: likely the refund's doing, said as likely; with no refund since the last report, the customer.
        var late = B()
        late.period("1", from: 0, to: 30, cancelled: 3, reason: 0)
        late.renewal(seen: 1, autoRenew: true)
        late.renewal(seen: 6, autoRenew: false)
        #expect(
            try await late.history().timeline(upTo: B.at(10)).last { $0.kind == .autoRenewDisabled }?.detail
                == "renewal turned off, after a refund request (the App Store turns it off then)")
        // Family sharing revoked (the purchaser stopped sharing): the member's renewal ends with it, not by their choice.
        var revoked = B()
        revoked.period("1", from: 0, to: 30, ownership: "FAMILY_SHARED")
        revoked.renewal(seen: 1, autoRenew: true)
        try revoked.notificationV2("REVOKE", at: 3, transactionId: "1", renewal: .init(autoRenew: false))
        #expect(
            try await revoked.history().timeline(upTo: B.at(10)).last { $0.kind == .autoRenewDisabled }?.detail
                == "renewal turned off as family sharing was revoked, not by the customer")
        var customer = B()
        customer.period("1", from: 0, to: 30)
        customer.renewal(seen: 1, autoRenew: true)
        customer.renewal(seen: 6, autoRenew: false)
        #expect(try await customer.history().timeline(upTo: B.at(10)).last { $0.kind == .autoRenewDisabled }?.detail == "the customer turned renewal off")
    }

    @Test("a consumption request's flag says its deadline, the same before and after it; renewal turned off right after is Apple's doing")
    func consumptionRequest() async throws {
        var b = B()
        b.period("1", from: 0, to: 30)
        try b.notificationV2("CONSUMPTION_REQUEST", at: 3, transactionId: "1")
        try b.notificationV2("DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_DISABLED", at: 3.01, transactionId: "1")
        let h = try await b.history()
        let timeline = h.timeline(upTo: B.at(10))
        #expect(timeline.map(\.kind) == [.subscribed, .consumptionRequested, .autoRenewDisabled])
        #expect(timeline.last?.detail.contains("by Apple after a refund request") == true)
        let refunds = h.transactions.map { RefundFact(transaction: $0, customerId: 1) }
        let notes = h.notifications.map { NotificationFact(notification: $0.notification, seenAt: $0.seenAt, transactionId: $0.transactionId, productId: nil, customerId: 1) }
        let pending = FlagRules().evaluate(refunds: refunds, notifications: notes, now: B.at(3.2)).first { $0.rule == "consumption-request" }
        #expect(pending?.detail.contains("send consumption data by") == true)
        let late = FlagRules().evaluate(refunds: refunds, notifications: notes, now: B.at(4)).first { $0.rule == "consumption-request" }
        // The flag's text is the same whenever the rules run (it is stored, and read at other instants: `lookup --at`,
        // the dashboard's `t`); whether the deadline has passed is the reader's to say, at the instant it shows.
        #expect(late != nil && late?.detail == pending?.detail, "\(String(describing: late?.detail))")
        #expect(FlagRules().outcomes(refunds: refunds, notifications: notes, now: B.at(3.2)).pendingConsumptionRequests == 1)
        #expect(FlagRules().outcomes(refunds: refunds, notifications: notes, now: B.at(4)).pendingConsumptionRequests == 0)
    }

    @Test("a refund spike per product and day against its trailing 28-day rate")
    func spike() {
        func refund(_ id: Int, day: Int64, hour: Int64 = 1) -> RefundFact {
            var t = Transaction(transactionId: "s\(id)")
            t.productId = "pro.monthly"
            t.environment = .production
            t.purchaseDate = Timestamp(millisecondsSince1970: B.t0 + (day - 20) * B.day)
            t.expiresDate = Timestamp(millisecondsSince1970: B.t0 + (day + 10) * B.day)
            t.revocationDate = Timestamp(millisecondsSince1970: B.t0 + day * B.day + hour * 3_600_000)
            return RefundFact(transaction: t, customerId: Int64(id))
        }
        var steady = (0..<28).map { refund($0, day: Int64($0)) }
        #expect(FlagRules().evaluate(refunds: steady, notifications: [], now: B.at(40)).allSatisfy { $0.rule != "refund-spike" })
        // Ten in a day, one an hour from 2:00, listed out of order: the alarm is the fifth (three times the mean of
        // one a day, five at least), at 6:00, not the day's midnight, which no refund had reached yet.
        steady += (100..<110).reversed().map { refund($0, day: 28, hour: Int64($0 - 98)) }
        let spikes = FlagRules().evaluate(refunds: steady, notifications: [], now: B.at(40)).filter { $0.rule == "refund-spike" }
        #expect(spikes.count == 1)
        #expect(spikes.first?.id == "refund-spike:pro.monthly:2025-01-29")
        #expect(spikes.first?.severity == .critical)
        #expect(spikes.first?.at == Timestamp(millisecondsSince1970: B.t0 + 28 * B.day + 6 * 3_600_000))
        #expect(spikes.first?.detail.hasSuffix("mean of 1.00/day; an alarm from the 5th, at 06:00:00Z") == true, "\(spikes.first?.detail ?? "")")
        // With a higher factor, the alarm waits for the refund that reaches it: the ninth, at 10:00.
        var rules = FlagRules()
        rules.spikeFactor = 8.5
        let later = rules.evaluate(refunds: steady, notifications: [], now: B.at(40)).first { $0.rule == "refund-spike" }
        #expect(later?.at == Timestamp(millisecondsSince1970: B.t0 + 28 * B.day + 10 * 3_600_000), "\(later?.detail ?? "")")
    }

    @Test("a refund's day is its UTC day, floored before 1970 too (a day's bucket and its spike's id and date agree)")
    func refundDays() {
        let day: Int64 = 86_400_000
        let cases: [(Int64, Int64)] = [(0, 0), (day - 1, 0), (day, 1), (-1, -1), (-day, -1), (-day - 1, -2), (.min, .min / day - 1), (.max, .max / day)]
        for (ms, expected) in cases {
            #expect(Timestamp(millisecondsSince1970: ms).utcDay == expected, "\(ms)")
        }
        // Its first instant, held at the first representable one for the first day.
        for (ms, start) in [(day + 5, day), (-1, -day), (-day, -day), (Int64.min + 4, Int64.min)] {
            #expect(Timestamp(millisecondsSince1970: ms).startOfUTCDay.millisecondsSince1970 == start, "\(ms)")
        }
        // Its last, held at the last representable one for the last day.
        for (ms, end) in [(day + 5, 2 * day - 1), (-1, -1), (0, day - 1), (Int64.max - 4, Int64.max)] {
            #expect(Timestamp(millisecondsSince1970: ms).endOfUTCDay.millisecondsSince1970 == end, "\(ms)")
        }
        // A spike on the first day Int64's milliseconds hold: raised without trapping, its day's start the least.
        let refunds = (0..<6).map { n -> RefundFact in
            var t = Transaction(transactionId: "m\(n)")
            t.productId = "p"
            t.purchaseDate = Timestamp(millisecondsSince1970: .min)
            t.revocationDate = Timestamp(millisecondsSince1970: .min + Int64(n))
            return RefundFact(transaction: t, customerId: Int64(n))
        }
        let spikes = FlagRules().evaluate(refunds: refunds, notifications: [], now: Timestamp(millisecondsSince1970: 0)).filter { $0.rule == "refund-spike" }
        #expect(spikes.count == 1 && spikes.first?.at == Timestamp(millisecondsSince1970: .min + 4), "\(spikes.map(\.id))")
    }

    @Test("spikes are counted per environment: sandbox test refunds neither make nor hide a production spike")
    func spikePerEnvironment() {
        func refund(_ id: Int, day: Int64, _ environment: Environment) -> RefundFact {
            var t = Transaction(transactionId: "e\(id)")
            t.productId = "pro.monthly"
            t.environment = environment
            t.purchaseDate = Timestamp(millisecondsSince1970: B.t0 + (day - 20) * B.day)
            t.expiresDate = Timestamp(millisecondsSince1970: B.t0 + (day + 10) * B.day)
            t.revocationDate = Timestamp(millisecondsSince1970: B.t0 + day * B.day + 3_600_000)
            return RefundFact(transaction: t, customerId: Int64(id))
        }
        // A steady production rate, and one day of ten sandbox refunds (a tester's afternoon).
        var refunds = (0..<29).map { refund($0, day: Int64($0), .production) }
        refunds += (100..<110).map { refund($0, day: 28, .sandbox) }
        let spikes = FlagRules().evaluate(refunds: refunds, notifications: [], now: B.at(40)).filter { $0.rule == "refund-spike" }
        #expect(spikes.map(\.id) == ["refund-spike:pro.monthly:2025-01-29:sandbox"])
        #expect(spikes.first?.environment == .sandbox)
        // Refunds stating no environment (a verifyReceipt in_app may have none) are counted apart from Production's,
        // as the dashboard's environments count them, under an id of their own: with Production's id, 5 and 7 of one
        // day made two alarms of one id, and which was kept changed from run to run.
        func unstated(_ refund: RefundFact) -> RefundFact {
            var refund = refund
            refund.transaction.environment = nil
            return refund
        }
        let mixed = (200..<205).map { refund($0, day: 28, .production) } + (300..<307).map { unstated(refund($0, day: 28, .production)) }
        let found = FlagRules().evaluate(refunds: refunds.prefix(28) + mixed, notifications: [], now: B.at(40))
            .filter { $0.rule == "refund-spike" }.sorted { $0.id < $1.id }
        #expect(found.map(\.id) == ["refund-spike:pro.monthly:2025-01-29", "refund-spike:pro.monthly:2025-01-29:unstated"])
        #expect(found.map(\.environment) == [.production, nil])
        #expect(found.first?.detail.hasPrefix("5 refunds on 2025-01-29") == true && found.last?.detail.hasPrefix("7 refunds on 2025-01-29") == true, "\(found.map(\.detail))")
        // Every flag carries the environment of its refund.
        let flags = FlagRules().evaluate(refunds: refunds, notifications: [], now: B.at(40))
        #expect(flags.filter { $0.transactionId == "e3" }.allSatisfy { $0.environment == .production })
        // A flag raised by a notification carries the notification's environment.
        var request = Notification(version: "2.0", notificationType: .consumptionRequest)
        request.environment = .sandbox
        request.signedDate = B.at(39)
        let fromNotification = FlagRules().evaluate(
            refunds: [], notifications: [NotificationFact(notification: request, seenAt: B.at(39), transactionId: "e3", productId: "pro.monthly", customerId: 3)],
            now: B.at(40))
        #expect(fromNotification.map(\.rule) == ["consumption-request"] && fromNotification.first?.environment == .sandbox)
        // With the price of the transaction it is about: the amount at stake, as a refund's flags carry it.
        let priced = FlagRules().evaluate(
            refunds: [],
            notifications: [
                NotificationFact(
                    notification: request, seenAt: B.at(39), transactionId: "e3", productId: "pro.monthly", customerId: 3, price: 9990,
                    currency: "USD")
            ],
            now: B.at(40))
        #expect(priced.first?.amount == 9990 && priced.first?.currency == "USD")
    }

    @Test("rules files override parameters, severities and switch rules off")
    func rulesFile() throws {
        let rules = try FlagRules.parse("quick-refund.windowHours = 1\napp-issue.severity = critical\nlate-refund.enabled = false # noisy\n")
        #expect(rules.quickRefundWindow == 3_600_000)
        #expect(rules.severities["app-issue"] == .critical)
        #expect(rules.disabled == ["late-refund"])
        #expect(throws: CatalogError.self) { try FlagRules.parse("nosuchrule.x = 1") }
    }

    @Test("timeline events carry when they were learned; late knowledge is shown")
    func seenAt() async throws {
        var b = B()
        b.period("1", from: 0, to: 30)
        var h = try await b.history()
        h.firstSeen["1"] = B.at(2)
        let event = try #require(h.timeline(upTo: B.at(10)).first)
        #expect(event.at == B.at(0))
        #expect(event.seenAt == B.at(2))
        #expect(event.learnedLate)
    }

    @Test("a refund is learned no earlier than it happened, though its transaction was seen before; a notification of it says when")
    func refundLearned() async throws {
        var b = B()
        b.period("1", from: 0, to: 30, cancelled: 5, reason: 1)
        // First seen at its purchase (day 0): the refund on day 5 was said to be learned on day 0.
        let refund = try #require(try await b.history().timeline(upTo: B.at(10)).first { $0.kind == .refunded })
        #expect(refund.at == B.at(5) && refund.seenAt == B.at(5), "\(refund)")
        try b.notificationV2("REFUND", at: 5.5, transactionId: "1")
        let told = try await b.history().timeline(upTo: B.at(10)).filter { $0.kind == .refunded }
        #expect(told.count == 1)
        #expect(told.first?.at == B.at(5) && told.first?.seenAt == B.at(5.5), "\(told)")
        #expect(told.first?.learnedLate == true)
        // A notification signed before the revocation it is about (an earlier refund of it, since reversed): never
        // learned before it happened.
        var early = B()
        early.period("1", from: 0, to: 30, cancelled: 5, reason: 1)
        try early.notificationV2("REFUND", at: 3, transactionId: "1")
        let refund3 = try #require(try await early.history().timeline(upTo: B.at(10)).first { $0.kind == .refunded })
        #expect(refund3.at == B.at(5) && refund3.seenAt == B.at(5), "\(refund3)")
    }

    @Test("a first report that renewal is off says so while a period runs, not when it came after the last period ended")
    func renewalOffReported() async throws {
        var running = B()
        running.period("1", from: 0, to: 30)
        running.renewal(seen: 10, autoRenew: false)
        let off = try await running.history().timeline(upTo: B.at(20)).filter { $0.kind == .autoRenewDisabled }
        #expect(off.map(\.at) == [B.at(10)], "\(off)")
        // A verifyReceipt imported long after the subscription expired: its renewal info is seen at the import.
        var late = B()
        late.period("1", from: 0, to: 30)
        late.renewal(seen: 600, autoRenew: false, intent: 1)
        let timeline = try await late.history().timeline(upTo: B.at(700))
        #expect(!timeline.contains { $0.kind == .autoRenewDisabled }, "\(timeline)")
        #expect(timeline.last?.kind == .expired && timeline.last?.at == B.at(30))
        // After the period ended, while Apple retries billing (in a grace period or not), it is news: it will not renew.
        for grace in [40.0, nil] {
            var retrying = B()
            retrying.period("1", from: 0, to: 30)
            retrying.renewal(seen: 35, autoRenew: false, retry: true, grace: grace)
            let told = try await retrying.history().timeline(upTo: B.at(36)).filter { $0.kind == .autoRenewDisabled }
            #expect(told.map(\.at) == [B.at(35)], "grace \(String(describing: grace)): \(told)")
        }
    }

    @Test("lifetime spend is net of refunds (prorated by percentage), with first seen and environments")
    func facts() {
        func paid(_ id: String, price: Int64, currency: String = "USD", day: Int64, refund: Int64? = nil) -> Transaction {
            var t = Transaction(transactionId: id)
            t.price = price
            t.currency = currency
            t.environment = .production
            let purchase = Timestamp(millisecondsSince1970: B.t0 + day * B.day)
            t.purchaseDate = purchase
            if let refund {
                t.revocationDate = purchase.adding(milliseconds: B.hour)
                t.revocationPercentage = refund
            }
            return t
        }
        let h = CustomerHistory(transactions: [
            paid("1", price: 9990, day: 0), paid("2", price: 9990, day: 30, refund: 50_000), paid("3", price: 4990, currency: "EUR", day: 60, refund: 100_000),
        ])
        let facts = h.facts(at: B.at(100))
        #expect(facts.netSpend == ["USD": 14985, "EUR": 0])
        #expect(facts.refunded == ["USD": 4995, "EUR": 4990])
        #expect(facts.refundCount == 2)
        #expect(facts.firstSeen == B.at(0))
        #expect(facts.environments == ["Production"])
        #expect(h.facts(at: B.at(10)).netSpend == ["USD": 9990])

        // A purchase a family member shared with the customer: the purchaser paid. Counted, not in the net.
        var shared = paid("4", price: 119_990, currency: "AUD", day: 10)
        shared.inAppOwnershipType = .familyShared
        let family = CustomerHistory(transactions: [shared]).facts(at: B.at(100))
        #expect(family.netSpend.isEmpty && family.sharedCount == 1 && family.transactionCount == 1 && family.unpricedCount == 0)
    }
}
