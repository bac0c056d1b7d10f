import Entitlements
import ReceiptModel
import Testing

/// One definition of a refund used by every figure, and one timeline for one history whatever the input order.
@Suite("One meaning of a refund; one order of a timeline")
struct OneMeaningTests {
    static let t0 = Timestamp.utc(year: 2025, month: 1, day: 1)
    static let day: Int64 = 86_400_000
    static func at(_ days: Int64) -> Timestamp { t0.adding(milliseconds: days * day) }

    static func period(_ id: String, product: String = "pro.monthly", group: String = "G1", from: Int64, to: Int64) -> Transaction {
        var t = Transaction(transactionId: id)
        t.originalTransactionId = "O-" + group
        t.productId = product
        t.subscriptionGroupIdentifier = group
        t.type = .autoRenewableSubscription
        t.purchaseDate = at(from)
        t.expiresDate = at(to)
        t.price = 9_990
        t.currency = "USD"
        t.webOrderLineItemId = "w" + id
        return t
    }

    /// What each consumer of the data says about one transaction.
    struct Readings: Equatable {
        var refundCount: Int
        var refundedUSD: Int64
        var outcomeRefunded: Int
        var refundedEvent: Bool
        var familyEvent: Bool
        var state: EntitlementState
    }

    static func readings(_ t: Transaction, notifications: [CustomerHistory.SeenNotification] = []) -> Readings {
        let history = CustomerHistory(transactions: [t], notifications: notifications)
        let now = at(20)
        let facts = history.facts(at: now)
        let notes = notifications.map {
            NotificationFact(notification: $0.notification, seenAt: $0.seenAt, transactionId: $0.transactionId, productId: t.productId, customerId: 1)
        }
        let outcomes = FlagRules().outcomes(refunds: [RefundFact(transaction: t, customerId: 1)], notifications: notes, now: now)
        let kinds = history.timeline(upTo: now).map(\.kind)
        return Readings(
            refundCount: facts.refundCount, refundedUSD: facts.refunded["USD"] ?? 0, outcomeRefunded: outcomes.refunded,
            refundedEvent: kinds.contains(.refunded), familyEvent: kinds.contains(.familyRevoked),
            state: history.entitlements(at: now).first?.state ?? .none)
    }

    @Test("a family member's revoked access is no refund: not in spend, not in outcomes, revoked, familyRevoked")
    func familyRevokeIsNoRefund() {
        var t = Self.period("1", from: 0, to: 30)
        t.inAppOwnershipType = .familyShared
        t.revocationDate = Self.at(5)
        t.revocationType = .familyRevoke
        #expect(Self.readings(t) == Readings(refundCount: 0, refundedUSD: 0, outcomeRefunded: 0, refundedEvent: false, familyEvent: true, state: .revoked))
        #expect(t.revocation == .familyRevoke(at: Self.at(5)))
    }

    @Test("an upgrade's prorated cancellation is neither a refund nor a revocation")
    func upgradeIsNoRefund() {
        var t = Self.period("1", from: 0, to: 30)
        t.isUpgraded = true
        t.revocationDate = Self.at(5)
        t.revocationPercentage = 80_000
        #expect(t.revocation == nil)
        let r = Self.readings(t)
        #expect(r.refundCount == 0 && r.refundedUSD == 0 && r.outcomeRefunded == 0 && !r.refundedEvent)
    }

    @Test("an upgraded transaction Apple says was refunded (a refund type) is a refund everywhere, by its share")
    func upgradedButRefunded() {
        var t = Self.period("1", from: 0, to: 30)
        t.isUpgraded = true
        t.revocationDate = Self.at(5)
        t.revocationReason = .appIssue
        t.revocationType = .refundProrated
        t.revocationPercentage = 50_000
        #expect(t.revocation == .refund(at: Self.at(5), share: 50_000))
        #expect(Self.readings(t) == Readings(refundCount: 1, refundedUSD: 4_995, outcomeRefunded: 1, refundedEvent: true, familyEvent: false, state: .revoked))
    }

    @Test("a partial refund counts once everywhere, by its share")
    func partialRefund() {
        var t = Self.period("1", from: 0, to: 30)
        t.revocationDate = Self.at(5)
        t.revocationPercentage = 25_000
        #expect(Self.readings(t) == Readings(refundCount: 1, refundedUSD: 2_497, outcomeRefunded: 1, refundedEvent: true, familyEvent: false, state: .revoked))
    }

    @Test("a reversed refund no longer takes money out of spend nor access away, nor counts as refunded")
    func reversedRefund() {
        var t = Self.period("1", from: 0, to: 30)
        t.revocationDate = Self.at(5)
        var n = Notification(version: "2.0", notificationType: .refundReversed)
        n.signedDate = Self.at(6)
        let r = Self.readings(t, notifications: [.init(notification: n, seenAt: Self.at(6), transactionId: "1")])
        #expect(r.refundCount == 0)
        #expect(r.refundedUSD == 0)
        #expect(r.outcomeRefunded == 0)
        #expect(r.state == .active)
    }

    @Test("the same history in any input order gives the same timeline, byte for byte")
    func shuffledInputSameTimeline() {
        // Two subscriptions bought at the same instant, renewal infos and notifications seen at the same instant.
        var transactions = [
            Self.period("11", product: "a.monthly", group: "A", from: 0, to: 30), Self.period("21", product: "b.monthly", group: "B", from: 0, to: 30),
            Self.period("12", product: "a.monthly", group: "A", from: 30, to: 60), Self.period("22", product: "b.monthly", group: "B", from: 30, to: 60),
            Self.period("13", product: "a.monthly", group: "A", from: 70, to: 100),
        ]
        transactions[1].revocationDate = Self.at(10)
        var renewals: [CustomerHistory.SeenRenewal] = []
        for (original, status) in [("O-A", AutoRenewStatus.off), ("O-B", .off), ("O-A", .on), ("O-B", .on)] {
            var info = RenewalInfo()
            info.originalTransactionId = original
            info.autoRenewStatus = status
            renewals.append(.init(info: info, seenAt: Self.at(40)))
        }
        var notifications: [CustomerHistory.SeenNotification] = []
        for (index, type) in [NotificationType.consumptionRequest, .refundDeclined, .priceIncrease, .renewalExtended].enumerated() {
            var n = Notification(version: "2.0", notificationType: type)
            n.signedDate = Self.at(45)
            n.notificationUUID = "u\(index)"
            notifications.append(.init(notification: n, seenAt: Self.at(45), transactionId: index % 2 == 0 ? "12" : "22"))
        }
        func render(_ history: CustomerHistory) -> String {
            history.timeline(upTo: Self.at(200)).map { "\($0.at) \($0.seenAt) \($0.kind) \($0.productId ?? "-") \($0.transactionId ?? "-") \($0.detail)" }
                .joined(separator: "\n")
        }
        let expected = render(CustomerHistory(transactions: transactions, renewals: renewals, notifications: notifications))
        #expect(expected.contains("subscribed"))
        var generator = SplitMix(seed: 10)
        for _ in 0..<40 {
            let shuffled = CustomerHistory(
                transactions: transactions.shuffled(using: &generator), renewals: renewals.shuffled(using: &generator),
                notifications: notifications.shuffled(using: &generator))
            #expect(render(shuffled) == expected)
        }
    }
}

/// A small deterministic generator so a failure can be replayed.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
