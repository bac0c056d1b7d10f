import Entitlements
import ReceiptModel
import Testing

/// Inputs that used to trap or lie on a data path (issue 10): rules and catalog values out of range,
/// disabled rules, money near Int64.max, subscriptions without an expiry date.
@Suite("Rules, catalogs, money and timelines on hostile values")
struct DataPathRobustnessTests {
    static let t0 = Timestamp.utc(year: 2025, month: 1, day: 1)
    static let day: Int64 = 86_400_000

    static func notification(_ type: NotificationType, uuid: String, at: Timestamp) -> Notification {
        var n = Notification(version: "2.0", notificationType: type)
        n.notificationUUID = uuid
        n.signedDate = at
        return n
    }

    static func fact(_ type: NotificationType, uuid: String, transaction: String) -> NotificationFact {
        NotificationFact(
            notification: notification(type, uuid: uuid, at: t0), seenAt: t0, transactionId: transaction, productId: "pro",
            customerId: 1)
    }

    @Test("a disabled consumption-request rule raises nothing and does not touch another flag")
    func disabledConsumptionRequest() throws {
        let rules = try FlagRules.parse("# operators\nconsumption-request.enabled = false\n")
        #expect(rules.disabled == ["consumption-request"])
        // Alone: used to read findings[-1].
        let alone = rules.evaluate(refunds: [], notifications: [Self.fact(.consumptionRequest, uuid: "c1", transaction: "T1")], now: Self.t0)
        #expect(alone.isEmpty)
        // After another flag: used to overwrite that flag's transaction id.
        let flags = rules.evaluate(
            refunds: [],
            notifications: [Self.fact(.refundReversed, uuid: "r1", transaction: "T9"), Self.fact(.consumptionRequest, uuid: "c1", transaction: "T1")],
            now: Self.t0)
        #expect(flags.map(\.rule) == ["refund-reversed"])
        #expect(flags.first?.transactionId == "T9")
    }

    @Test("every rule enabled: consumption-request and refund-reversed carry their own transaction ids")
    func notificationFlagsCarryTheirTransactions() {
        let flags = FlagRules().evaluate(
            refunds: [],
            notifications: [Self.fact(.refundReversed, uuid: "r1", transaction: "T9"), Self.fact(.consumptionRequest, uuid: "c1", transaction: "T1")],
            now: Self.t0)
        #expect(Dictionary(uniqueKeysWithValues: flags.map { ($0.rule, $0.transactionId) }) == ["refund-reversed": "T9", "consumption-request": "T1"])
    }

    @Test(
        "a rules value out of range is an error naming its line",
        arguments: [
            ("refund-spike.trailingDays = 0", "refund-spike.trailingDays must be a whole number from 1 to 3650"),
            ("quick-refund.windowHours = nan", "is not a finite number"),
            ("quick-refund.windowHours = inf", "is not a finite number"),
            ("serial-refunder.windowDays = 1e400", "is not a finite number"),
            ("high-value.price = 9223372036854775807", "high-value.price must be a whole number from 0 to"),
            ("serial-refunder.count = 2.5", "must be a whole number"),
            ("refund-spike.minimum = -3", "must be a whole number from 1"),
            ("late-refund.share = 1.5", "late-refund.share must be a number from 0 to 1"),
            ("consumption-request.deadlineHours = 6", "consumption-request.deadlineHours is not a setting: Apple waits 12 hours for consumption data"),
            ("consumption-request.windowHours = 6", "consumption-request has no parameter windowHours; it has enabled, severity"),
            ("app-issue.enabled = flase", "app-issue.enabled is true or false"),
        ])
    func rulesValuesValidated(line: String, message: String) {
        do {
            _ = try FlagRules.parse("quick-refund.windowHours = 24\n\n\(line)\n")
            Issue.record("\(line) was accepted")
        } catch {
            #expect(error.line == 3)
            #expect(error.description.contains(message), "\(error)")
        }
    }

    @Test("values in range are read exactly")
    func rulesValuesRead() throws {
        let rules = try FlagRules.parse("quick-refund.windowHours = 1.5\nrefund-spike.trailingDays = 1\nhigh-value.price = 250000\nlate-refund.enabled = true")
        #expect(rules.quickRefundWindow == 5_400_000)
        #expect(rules.spikeTrailingDays == 1)
        #expect(rules.highValuePrice == 250_000)
        // A currency's rate, set or added by the rules file; a name that is not a currency code is refused.
        let rated = try FlagRules.parse("high-value.rate.jpy = 20000\nhigh-value.rate.XTS = 1000")
        #expect(rated.highValueRates["JPY"] == 20_000 && rated.highValueThreshold(currency: "JPY") == 20_000_000)
        #expect(rated.highValueThreshold(currency: "XTS") == 1_000_000 && rated.highValueThreshold(currency: nil) == 100_000)
        #expect(throws: (any Error).self) { try FlagRules.parse("high-value.rate.YENS = 100") }
        #expect(throws: (any Error).self) { try FlagRules.parse("high-value.rate.JPY = 0") }
    }

    @Test("a trailing window of 0 days set in code still evaluates spikes instead of building 1...0")
    func zeroTrailingDaysInCode() {
        var rules = FlagRules()
        rules.spikeTrailingDays = 0
        let refunds = (0..<6).map { n -> RefundFact in
            var t = Transaction(transactionId: "R\(n)")
            t.productId = "pro"
            t.purchaseDate = Self.t0.adding(milliseconds: -30 * Self.day)
            t.revocationDate = Self.t0.adding(milliseconds: Int64(n) * 60_000)
            return RefundFact(transaction: t, customerId: Int64(n))
        }
        let spikes = rules.evaluate(refunds: refunds, notifications: [], now: Self.t0).filter { $0.rule == "refund-spike" }
        #expect(spikes.count == 1)
        #expect(spikes.first?.detail.contains("trailing 1-day mean") == true)
    }

    @Test("refunds at the ends of time do not overflow the rules' arithmetic")
    func extremeDates() {
        var t = Transaction(transactionId: "X")
        t.productId = "pro"
        t.purchaseDate = Timestamp(millisecondsSince1970: .min)
        t.expiresDate = Timestamp(millisecondsSince1970: .max)
        t.revocationDate = Timestamp(millisecondsSince1970: .max - 1)
        var u = t
        u.transactionId = "Y"
        u.revocationDate = Timestamp(millisecondsSince1970: .min + 1)
        let flags = FlagRules().evaluate(
            refunds: [RefundFact(transaction: t, customerId: 1), RefundFact(transaction: u, customerId: 1)], notifications: [],
            now: Self.t0)
        #expect(flags.contains { $0.rule == "late-refund" && $0.transactionId == "X" })
        // Y was refunded a millisecond after purchase; X after the whole span of time.
        #expect(flags.filter { $0.rule == "quick-refund" }.map(\.transactionId) == ["Y"])
        #expect(!flags.contains { $0.rule == "serial-refunder" })
    }

    @Test("a price near Int64.max leaves its currency out of the totals with a warning instead of trapping")
    func moneyOverflow() {
        var big = Transaction(transactionId: "1")
        big.purchaseDate = Self.t0
        big.price = .max - 1
        big.currency = "USD"
        big.quantity = 2
        var small = Transaction(transactionId: "2")
        small.purchaseDate = Self.t0
        small.price = 9_990
        small.currency = "EUR"
        let facts = CustomerHistory(transactions: [big, small]).facts(at: Self.t0.adding(milliseconds: Self.day))
        #expect(facts.netSpend == ["EUR": 9_990])
        #expect(facts.unrepresentableCurrencies == ["USD"])
        // Which warning: the currency, the transaction and the product that overflowed, and what was done about it.
        #expect(
            facts.warnings == [
                "USD figures do not fit in 64-bit milliunits (transaction 1: price \(Int64.max - 1) x 2); USD is left out of the totals"
            ])
    }

    @Test("a partial refund of a price near Int64.max is computed exactly")
    func partialRefundNearMax() {
        var t = Transaction(transactionId: "1")
        t.purchaseDate = Self.t0
        t.price = .max
        t.currency = "USD"
        t.revocationDate = Self.t0.adding(milliseconds: 1000)
        t.revocationPercentage = 50_000
        let facts = CustomerHistory(transactions: [t]).facts(at: Self.t0.adding(milliseconds: Self.day))
        #expect(facts.refunded["USD"] == Int64.max / 2)
        #expect(facts.netSpend["USD"] == Int64.max - Int64.max / 2)
        #expect(facts.unrepresentableCurrencies.isEmpty)
    }

    @Test("an auto-renewable subscription without an expiresDate followed by another period: no gap is invented")
    func subscriptionWithoutExpiry() {
        var first = Transaction(transactionId: "1")
        first.type = .autoRenewableSubscription
        first.productId = "pro.monthly"
        first.originalTransactionId = "1"
        first.purchaseDate = Self.t0
        var second = first
        second.transactionId = "2"
        second.purchaseDate = Self.t0.adding(milliseconds: 40 * Self.day)
        second.expiresDate = Self.t0.adding(milliseconds: 70 * Self.day)
        let history = CustomerHistory(transactions: [first, second])
        let events = history.timeline(upTo: Self.t0.adding(milliseconds: 100 * Self.day))
        #expect(events.map(\.kind) == [.subscribed, .renewed, .expired])
        #expect(history.entitlements(at: Self.t0.adding(milliseconds: 50 * Self.day)).map(\.state) == [.active])
    }

    @Test("a catalog duration too long for milliseconds is an error naming its line")
    func catalogDuration() {
        let rows: [(line: Int, fields: [String])] = [
            (1, ["product_id", "entitlement", "type", "duration_days"]), (2, ["pro.year", "pro", "non-renewing", "365"]),
            (3, ["pro.forever", "pro", "non-renewing", "106751991167301"]),
        ]
        do {
            _ = try Catalog.parse(rows: rows)
            Issue.record("accepted")
        } catch {
            #expect(error.line == 3)
            #expect(error.message.contains("duration_days must be from 1 to 36500"))
        }
        #expect(throws: CatalogError.self) { try Catalog.parse(rows: [(1, ["pro.week", "pro", "non-renewing", "0"])]) }
    }

    @Test("only a header line is skipped: a product id starting with product_id is a product")
    func catalogHeader() throws {
        let catalog = try Catalog.parse(rows: [(1, ["product_id", "entitlement"]), (2, ["product_id_plus", "plus"])])
        #expect(catalog.products.keys.sorted() == ["product_id_plus"])
        let headerless = try Catalog.parse(rows: [(1, ["product_idX", "x"])])
        #expect(headerless.products["product_idX"]?.entitlement == "x")
    }
}
