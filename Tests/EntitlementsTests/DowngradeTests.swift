import Entitlements
import ReceiptModel
import Testing

/// A change to a cheaper product of the same subscription (DESIGN sections 6 and 7): it waits for the
/// renewal, the entitlement says what it will renew to meanwhile, and the catalog's price tiers are what
/// tell a downgrade from an upgrade or a crossgrade.
@Suite("Downgrades: scheduled at once, taking effect at renewal")
struct DowngradeTests {
    typealias B = HistoryBuilder

    /// `pro` is the dearer product, `lite` the cheaper, `plus` priced like `pro`; all grant one entitlement.
    static let catalog = Catalog([
        CatalogProduct(productId: "pro.monthly", entitlement: "premium", type: .autoRenewableSubscription, priceTier: 2),
        CatalogProduct(productId: "plus.monthly", entitlement: "premium", type: .autoRenewableSubscription, priceTier: 2),
        CatalogProduct(productId: "lite.monthly", entitlement: "premium", type: .autoRenewableSubscription, priceTier: 1),
    ])

    /// pro.monthly for days 0-30; on day 10 the customer picks `next` for the renewal; `next` for days 30-60.
    static func history(to next: String) async throws -> CustomerHistory {
        var b = B()
        b.period("1", product: "pro.monthly", from: 0, to: 30)
        b.renewal(seen: 10, autoRenew: true, product: "pro.monthly", renewsTo: next)
        b.period("2", product: next, from: 30, to: 60)
        return try await b.history()
    }

    @Test("a downgrade: the old product until the renewal, then downgraded to the cheaper one")
    func downgrade() async throws {
        let h = try await Self.history(to: "lite.monthly")
        // Scheduled: the customer keeps what they paid for, and the entitlement says what comes next.
        let scheduled = h.entitlements(at: B.at(15), catalog: Self.catalog)
        #expect(scheduled.map(\.name) == ["premium"])
        #expect(scheduled.first?.state == .active)
        #expect(scheduled.first?.productId == "pro.monthly")
        #expect(scheduled.first?.transactionId == "1")
        #expect(scheduled.first?.autoRenewProductId == "lite.monthly")
        #expect(scheduled.first?.willRenew == true)
        #expect(h.timeline(upTo: B.at(29), catalog: Self.catalog).map(\.kind) == [.subscribed])

        // At the renewal the cheaper product takes over.
        let after = h.entitlements(at: B.at(45), catalog: Self.catalog)
        #expect(after.first?.state == .active)
        #expect(after.first?.productId == "lite.monthly")
        #expect(after.first?.transactionId == "2")
        let timeline = h.timeline(upTo: B.at(100), catalog: Self.catalog)
        #expect(timeline.map(\.kind) == [.subscribed, .downgraded, .expired])
        let change = try #require(timeline.first { $0.kind == .downgraded })
        #expect(change.at == B.at(30))
        #expect(change.transactionId == "2")
        #expect(change.productId == "lite.monthly")
        #expect(change.detail == "pro.monthly -> lite.monthly")
        #expect(!timeline.contains { $0.kind == .refunded || $0.kind == .lapsed })
    }

    @Test(
        "the catalog's price tiers name the change at renewal",
        arguments: [
            ("lite.monthly", EventKind.downgraded), ("plus.monthly", .crossgraded), ("pro.monthly", .renewed),
        ])
    func tiers(next: String, kind: EventKind) async throws {
        let h = try await Self.history(to: next)
        #expect(h.timeline(upTo: B.at(45), catalog: Self.catalog).map(\.kind) == [.subscribed, kind])
    }

    @Test("from the cheaper product to the dearer one at renewal is an upgrade")
    func upgradeAtRenewal() async throws {
        var b = B()
        b.period("1", product: "lite.monthly", from: 0, to: 30)
        b.period("2", product: "pro.monthly", from: 30, to: 60)
        let h = try await b.history()
        #expect(h.timeline(upTo: B.at(45), catalog: Self.catalog).map(\.kind) == [.subscribed, .upgraded])
    }

    @Test("an upgrade bought mid-period in the App Store, told by a V1 INTERACTIVE_RENEWAL: an upgrade, no resubscription")
    func upgradeWithInteractiveRenewal() async throws {
        var b = B()
        // lite.monthly for days 0-30, upgraded on day 10 (legacy data: is_upgraded, no cancellation date) to pro.monthly.
        b.period("1", product: "lite.monthly", from: 0, to: 30, upgraded: true)
        b.period("2", product: "pro.monthly", from: 10, to: 40)
        let purchase = B.at(10).millisecondsSince1970
        b.notifications.append(
            #"{"notification_type":"INTERACTIVE_RENEWAL","environment":"PROD","auto_renew_status":"true","original_transaction_id":"100","#
                + #""unified_receipt":{"status":0,"environment":"Production","latest_receipt_info":[{"quantity":"1","product_id":"pro.monthly","#
                + #""transaction_id":"2","original_transaction_id":"100","purchase_date_ms":"\#(purchase)","#
                + #""expires_date_ms":"\#(B.at(40).millisecondsSince1970)","web_order_line_item_id":"w2","subscription_group_identifier":"G1"}]}}"#)
        let h = try await b.history()
        let timeline = h.timeline(upTo: B.at(20), catalog: Self.catalog)
        #expect(timeline.map(\.kind) == [.subscribed, .upgraded], "\(timeline.map { "\($0.kind) \($0.detail)" })")
        #expect(h.entitlements(at: B.at(5), catalog: Self.catalog).first?.state == .active)
        #expect(h.entitlements(at: B.at(15), catalog: Self.catalog).first?.productId == "pro.monthly")
    }

    @Test("without price tiers a change of product at renewal is a crossgrade: nothing tells down from up")
    func withoutCatalog() async throws {
        let h = try await Self.history(to: "lite.monthly")
        // One subscription group, so one entitlement either side of the change.
        #expect(h.entitlements(at: B.at(15)).map(\.name) == ["group G1"])
        #expect(h.entitlements(at: B.at(15)).first?.autoRenewProductId == "lite.monthly")
        #expect(h.timeline(upTo: B.at(45)).map(\.kind) == [.subscribed, .crossgraded])
    }

    @Test("a V2 DID_CHANGE_RENEWAL_PREF/DOWNGRADE is what the entitlement renews to; nothing changes before the renewal")
    func renewalPreferenceNotification() async throws {
        var b = B()
        b.period("1", product: "pro.monthly", from: 0, to: 30)
        try b.notificationV2(
            "DID_CHANGE_RENEWAL_PREF", subtype: "DOWNGRADE", at: 12, transactionId: "1", product: "pro.monthly",
            renewal: B.SignedRenewal(renewsTo: "lite.monthly"))
        let h = try await b.history()
        let before = h.entitlements(at: B.at(11), catalog: Self.catalog)
        #expect(before.first?.autoRenewProductId == nil)
        let scheduled = h.entitlements(at: B.at(13), catalog: Self.catalog)
        #expect(scheduled.first?.state == .active)
        #expect(scheduled.first?.productId == "pro.monthly")
        #expect(scheduled.first?.autoRenewProductId == "lite.monthly")
        #expect(scheduled.first?.willRenew == true)
        #expect(h.timeline(upTo: B.at(20), catalog: Self.catalog).map(\.kind) == [.subscribed])
    }
}
