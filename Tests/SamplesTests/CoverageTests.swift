import Foundation
import Testing

@testable import Samples

@Suite("what the generator covers", .ownThreads)
struct CoverageTests {
    /// Counts, over the lives of `customers` customers, of every kind of life issue 9 item 1 asks for.
    static func kinds(customers: Int, seed: UInt64) -> [String: Int] {
        let generator = SampleGenerator(.init(customers: customers, seed: seed))
        var counts: [String: Int] = [:]
        func count(_ kind: String, _ n: Int = 1) { counts[kind, default: 0] += n }
        var storefronts = Set<String>()
        var currencies = Set<String>()
        for index in 0..<customers {
            let life = generator.life(index)
            count("format \(life.format.rawValue)")
            count("environment \(life.environment)")
            count(life.token != nil ? "appAccountToken" : "customers.csv mapping")
            storefronts.insert(life.storefront.code)
            currencies.insert(life.storefront.currency)
            for t in life.transactions {
                switch t.product.kind {
                case .subscription:
                    let days = t.product.durationDays ?? 0
                    count(days == 7 ? "weekly subscription" : days <= 31 ? "monthly subscription" : "yearly subscription")
                    count("subscription group \(t.product.group ?? "?")")
                case .consumable: count("consumable")
                case .nonConsumable: count("non-consumable")
                }
                if t.familyShared { count("family shared") }
                // Milliunits: $9.99 is 9990, so a real price never has a digit below the cent.
                if t.price % 10 != 0 || t.price < 0 { count("price not in milliunits of a real price") }
                // Apple refunds money: a free period (a free trial) is never refunded, only family access revoked.
                if t.price == 0, t.revokedAt != nil, t.revocationType != "FAMILY_REVOKE" { count("refund of a free period") }
                switch (t.offerType, t.offerDiscount) {
                case (1?, "FREE_TRIAL"?):
                    let converted = life.transactions.contains { $0.original == t.original && $0.purchase > t.purchase }
                    count(converted ? "free trial converted" : "free trial not converted")
                case (1?, _): count("intro offer")
                case (2?, _): count("promotional offer")
                case (3?, _): count("offer code")
                case (4?, _): count("win-back offer")
                default: break
                }
                if t.revokedAt != nil {
                    count(t.revocationType == "FAMILY_REVOKE" ? "family revoke" : "refund")
                    if t.revocationReason == 0 { count("refund reason 0 (other)") }
                    if t.revocationReason == 1 { count("refund reason 1 (app issue)") }
                    if t.revocationType == "REFUND_PRORATED" { count("partial (prorated) refund") }
                    if t.reversedAt != nil { count("refund reversed") }
                }
            }
            for e in life.events {
                switch (e.type, e.subtype) {
                case ("DID_CHANGE_RENEWAL_PREF", "UPGRADE"?): count("upgrade")
                case ("DID_CHANGE_RENEWAL_PREF", "DOWNGRADE"?): count("downgrade")
                case ("DID_CHANGE_RENEWAL_PREF", nil): count("crossgrade")
                case ("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED"?): count("renewal turned off")
                case ("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_ENABLED"?): count("renewal turned on")
                case ("DID_FAIL_TO_RENEW", "GRACE_PERIOD"?): count("billing retry with grace period")
                case ("DID_FAIL_TO_RENEW", nil): count("billing retry without grace period")
                case ("DID_RENEW", "BILLING_RECOVERY"?): count("billing recovery")
                case ("EXPIRED", "VOLUNTARY"?): count("lapse")
                case ("EXPIRED", "BILLING_RETRY"?): count("lapse after billing retry")
                case ("SUBSCRIBED", "RESUBSCRIBE"?): count("resubscribe")
                case ("CONSUMPTION_REQUEST", _): count("refund request with consumption request")
                case ("REFUND_DECLINED", _): count("refund declined")
                default: break
                }
            }
        }
        counts["storefronts"] = storefronts.count
        counts["currencies"] = currencies.count
        return counts
    }

    static let required = [
        "weekly subscription", "monthly subscription", "yearly subscription", "subscription group 21000001",
        "subscription group 21000002", "non-consumable", "consumable", "free trial converted", "free trial not converted",
        "intro offer", "offer code", "promotional offer", "win-back offer", "upgrade", "downgrade", "crossgrade",
        "renewal turned off", "renewal turned on", "billing retry with grace period", "billing retry without grace period",
        "billing recovery", "lapse", "lapse after billing retry", "resubscribe", "family shared", "family revoke", "refund",
        "refund reason 0 (other)", "refund reason 1 (app issue)", "partial (prorated) refund",
        "refund request with consumption request", "refund declined", "refund reversed", "environment Production",
        "environment Sandbox", "appAccountToken", "customers.csv mapping", "format notificationsV2", "format serverAPI",
        "format verifyReceipt", "format notificationsV1",
    ]

    @Test("2,000 customers live every kind of life issue 9 names, with a refund spike")
    func everyKind() throws {
        let counts = Self.kinds(customers: 2_000, seed: 42)
        let missing = Self.required.filter { (counts[$0] ?? 0) == 0 }
        #expect(missing.isEmpty, "no customer has: \(missing)")
        #expect((counts["storefronts"] ?? 0) >= 4)
        #expect((counts["currencies"] ?? 0) >= 4)
        #expect(counts["price not in milliunits of a real price"] == nil)
        #expect(counts["refund of a free period"] == nil)
        // The two subscription groups both really occur, not just once.
        #expect((counts["subscription group 21000002"] ?? 0) > 100)
        var spikes = SpikeCounter()
        let generator = SampleGenerator(.init(customers: 2_000, seed: 42))
        for index in 0..<2_000 { spikes.add(generator.life(index).refundDays) }
        #expect(spikes.spikes().count == 1)
        #expect(spikes.spikes().first?.hasPrefix("refund-spike:\(SampleCatalog.filters.id):") == true)
    }

    @Test("the first customers are the stories, in order, whatever the seed")
    func storiesFirst() {
        for seed: UInt64 in [1, 2, SampleGenerator.Options.seed("demo-1")] {
            let generator = SampleGenerator(.init(customers: 20, seed: seed))
            for (index, story) in SampleStory.allCases.enumerated() {
                #expect(generator.life(index).story == story.rawValue)
            }
            #expect(generator.life(SampleStory.allCases.count).story == nil)
        }
    }

    @Test("a text seed is hashed deterministically; a number is used as is")
    func textSeeds() {
        #expect(SampleGenerator.Options.seed("7") == 7)
        #expect(SampleGenerator.Options.seed("demo-1") == SampleGenerator.Options.seed("demo-1"))
        #expect(SampleGenerator.Options.seed("demo-1") != SampleGenerator.Options.seed("demo-2"))
        let options = SampleGenerator.Options(customers: 1, seedText: "demo-1")
        #expect(options.seedName == "demo-1")
    }
}
