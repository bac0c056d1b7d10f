import Entitlements
import ReceiptModel
import Testing

/// The refund rules that look at one refund's amount and timing (DESIGN section 7): `partial-refund`
/// (revocationPercentage under 100 000), `late-refund` (refunded once most of the period was used) and
/// `high-value` (a refunded price at or above a threshold), each at and either side of its threshold.
@Suite("Refund flags: partial, late and high-value refunds")
struct RefundFlagRuleTests {
    static let t0 = Timestamp.utc(year: 2025, month: 1, day: 1)
    static let day: Int64 = 86_400_000

    /// A refund a rule is asked about: a 30-day period bought at t0 unless said otherwise, refunded on a
    /// later day (past the 48 hours of `quick-refund`, so that rule stays quiet).
    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var price: Int64 = 9_990
        var percentage: Int64?
        /// The period's end in days after t0; nil for a purchase without one (a non-consumable).
        var expiresDay: Double? = 30
        var refundDay: Double? = 10
        var currency = "USD"
        var upgraded = false
        var familyRevoke = false
        /// The flags expected: rule and detail.
        var flags: [(rule: String, detail: String)]
        var testDescription: String { name }

        var transaction: Transaction {
            var t = Transaction(transactionId: "T1")
            t.originalTransactionId = "O1"
            t.productId = expiresDay == nil ? "lifetime" : "pro.monthly"
            t.type = expiresDay == nil ? .nonConsumable : .autoRenewableSubscription
            t.purchaseDate = RefundFlagRuleTests.t0
            t.expiresDate = expiresDay.map(RefundFlagRuleTests.at)
            t.price = price
            t.currency = currency
            t.revocationDate = refundDay.map(RefundFlagRuleTests.at)
            t.revocationPercentage = percentage
            if upgraded { t.isUpgraded = true }
            if familyRevoke {
                t.inAppOwnershipType = .familyShared
                t.revocationType = .familyRevoke
            }
            return t
        }
    }

    static func at(_ days: Double) -> Timestamp { t0.adding(milliseconds: Int64(days * Double(day))) }

    static let cases: [Case] = [
        Case(name: "a full refund a third into the period, under the high-value price: no flag", flags: []),
        // partial-refund: revocationPercentage below 100 000 (thousandths of a percent).
        Case(name: "half refunded: partial-refund", percentage: 50_000, flags: [("partial-refund", "partial refund of 50%")]),
        Case(
            name: "one thousandth of a percent short of full: partial-refund", percentage: 99_999,
            flags: [("partial-refund", "partial refund of 99.999%")]),
        Case(name: "100 000 is a full refund: no partial-refund", percentage: 100_000, flags: []),
        // late-refund: at least 75 % of the period had passed when it was refunded.
        Case(
            name: "refunded exactly 75 % into the period: late-refund", refundDay: 22.5,
            flags: [("late-refund", "refunded after 75% of the period was used")]),
        Case(name: "refunded a little before 75 %: no late-refund", refundDay: 22.4, flags: []),
        Case(
            name: "refunded after the period ended: late-refund at 100 %", refundDay: 40,
            flags: [("late-refund", "refunded after 100% of the period was used")]),
        Case(name: "a purchase without a period is never late", expiresDay: nil, refundDay: 300, flags: []),
        // high-value: a refunded price of 100 000 milliunits (100.00) or more.
        Case(name: "a refunded price of exactly 100.00: high-value", price: 100_000, flags: [("high-value", "refund of 100.00 USD")]),
        Case(name: "a refunded price of 99.999: no high-value", price: 99_999, flags: []),
        // In another currency, 100 dollars' worth of it: 750 yen is not high-value, 15,000 yen is; a currency the
        // rates do not list is compared as dollars.
        Case(name: "750 yen: no high-value", price: 750_000, currency: "JPY", flags: []),
        Case(name: "14,999 yen: no high-value", price: 14_999_000, currency: "JPY", flags: []),
        Case(name: "15,000 yen: high-value", price: 15_000_000, currency: "JPY", flags: [("high-value", "refund of 15000 JPY")]),
        Case(name: "249.99 BRL: no high-value", price: 249_990, currency: "BRL", flags: []),
        Case(name: "100 of a currency not listed: high-value", price: 100_000, currency: "XTS", flags: [("high-value", "refund of 100.00 XTS")]),
        Case(name: "an expensive purchase that was not refunded: no flag", price: 500_000, refundDay: nil, flags: []),
        // What is not a refund raises none of the three.
        Case(
            name: "a family member's revoked access is no refund, whatever its price or timing", price: 500_000, percentage: 50_000,
            refundDay: 29, familyRevoke: true, flags: [("family-revoke", "family sharing access revoked")]),
        Case(name: "an upgrade's prorated cancellation is no refund", price: 500_000, refundDay: 29, upgraded: true, flags: []),
        allThree,
    ]

    /// All three at once, each with its own flag: 250.00, a quarter refunded, 28 of 30 days in.
    static let allThree = Case(
        name: "a late partial refund of an expensive period: all three", price: 250_000, percentage: 25_000, refundDay: 28,
        flags: [
            ("high-value", "refund of 250.00 USD"), ("late-refund", "refunded after 93% of the period was used"),
            ("partial-refund", "partial refund of 25%"),
        ])

    @Test("a quick refund says how soon in hours, else minutes, else seconds")
    func quickRefundDelay() {
        for (delay, said) in [
            (50_000, "50 s after purchase"), (59_999, "59 s after purchase"), (60_000, "1 min after purchase"),
            (1_800_000, "30 min after purchase"), (3_600_000, "1 h after purchase"), (86_400_000, "24 h after purchase"),
            (-120_000, "2 min before its purchase date"),
        ] {
            var t = Transaction(transactionId: "T1")
            t.productId = "pro.monthly"
            t.purchaseDate = Self.t0
            t.revocationDate = Self.t0.adding(milliseconds: Int64(delay))
            let flags = FlagRules().evaluate(refunds: [RefundFact(transaction: t, customerId: 7)], notifications: [], now: Self.at(400))
            #expect(flags.filter { $0.rule == "quick-refund" }.map(\.detail) == ["refunded \(said)"], "\(delay) ms")
        }
        // A refund at the start of time of a purchase at its end: the distance saturates at Int64.min, whose negation
        // would trap.
        var t = Transaction(transactionId: "T1")
        t.purchaseDate = Timestamp(millisecondsSince1970: .max)
        t.revocationDate = Timestamp(millisecondsSince1970: .min)
        let flags = FlagRules().evaluate(refunds: [RefundFact(transaction: t, customerId: 7)], notifications: [], now: Self.at(400))
        #expect(flags.first { $0.rule == "quick-refund" }?.detail.hasSuffix("h before its purchase date") == true)
    }

    /// Customer 62's refund of a monthly subscription `day` days from the start, bought five days before.
    static func refund(_ id: String, day: Double) -> RefundFact {
        var t = Transaction(transactionId: id)
        t.productId = "pro.monthly"
        t.purchaseDate = at(day - 5)
        t.revocationDate = at(day)
        return RefundFact(transaction: t, customerId: 62)
    }

    @Test("serial-refunder is raised at the third refund within 90 days and names the ones after it in that window")
    func serialRefunderNamesLaterRefunds() {
        func refund(_ id: String, day: Double) -> RefundFact { Self.refund(id, day: day) }
        let refunds = [refund("A", day: 0), refund("B", day: 10), refund("C", day: 20), refund("D", day: 41), refund("E", day: 95)]
        let flags = FlagRules().evaluate(refunds: refunds, notifications: [], now: Self.at(400)).filter { $0.rule == "serial-refunder" }
        #expect(flags.map(\.id) == ["serial-refunder:C62:A"])
        #expect(flags.first?.at == Self.at(20) && flags.first?.transactionId == "C")
        // E is 95 days after A: outside the window the flag is about.
        #expect(flags.first?.detail == "3 refunds within 90 days: A, B, C; 1 more since: D", "\(flags.first?.detail ?? "")")
    }

    @Test("serial-refunder is raised again for a second burst of refunds after the first flag's, not for the same burst twice")
    func serialRefunderSecondBurst() {
        func refund(_ id: String, day: Double) -> RefundFact { Self.refund(id, day: day) }
        func serial(_ refunds: [RefundFact]) -> [RefundFlag] {
            FlagRules().evaluate(refunds: refunds, notifications: [], now: Self.at(400)).filter { $0.rule == "serial-refunder" }
                .sorted { $0.at < $1.at }
        }
        // Three in January, three in June: two flags, each naming its own burst (the second was never raised).
        let twoBursts = serial([
            refund("A", day: 0), refund("B", day: 9), refund("C", day: 19), refund("D", day: 150), refund("E", day: 159), refund("F", day: 169),
        ])
        #expect(twoBursts.map(\.id) == ["serial-refunder:C62:A", "serial-refunder:C62:D"])
        #expect(twoBursts.last?.at == Self.at(169) && twoBursts.last?.detail == "3 refunds within 90 days: D, E, F")
        // A refund every 20 days: A-C flagged with D and E named (within 90 days of A); D-F, the three after C, are the
        // next, naming G and H; five are no second flag.
        let steady = (0..<8).map { refund(String(UnicodeScalar(UInt8(65 + $0))), day: Double($0) * 20) }
        let flags = serial(steady)
        #expect(flags.map(\.id) == ["serial-refunder:C62:A", "serial-refunder:C62:D"], "\(flags.map(\.detail))")
        #expect(flags.first?.detail == "3 refunds within 90 days: A, B, C; 2 more since: D, E")
        #expect(flags.last?.detail == "3 refunds within 90 days: D, E, F; 2 more since: G, H")
        #expect(serial(Array(steady.prefix(5))).count == 1)
        // Three at once, then four within days near the window's end: the four are a flag of their own, none unseen
        // (counted after the first flag's named ones, F and G were two and never named anywhere).
        let late = serial([0, 1, 2, 88, 89, 91, 92].enumerated().map { refund("R\($0.offset)", day: $0.element) })
        #expect(late.map(\.id) == ["serial-refunder:C62:R0", "serial-refunder:C62:R3"], "\(late.map(\.detail))")
        #expect(late.last?.detail == "3 refunds within 90 days: R3, R4, R5; 1 more since: R6")
    }

    @Test("each rule fires at its threshold and not below it", arguments: cases)
    func thresholds(_ c: Case) {
        let flags = FlagRules().evaluate(
            refunds: [RefundFact(transaction: c.transaction, customerId: 7)], notifications: [], now: Self.at(400))
        let found = flags.map { ($0.rule, $0.detail) }.sorted { $0.0 < $1.0 }
        #expect(found.map(\.0) == c.flags.map(\.rule))
        #expect(found.map(\.1) == c.flags.map(\.detail))
        for flag in flags {
            // A flag names what it is about: its id, the transaction, the customer and the money.
            #expect(flag.id == "\(flag.rule):T1")
            #expect(flag.transactionId == "T1" && flag.customerId == 7)
            // A family member's revoked access moved no money of theirs: no amount (the price was the purchaser's).
            if flag.rule == "family-revoke" {
                #expect(flag.amount == nil && flag.currency == nil)
            } else {
                #expect(flag.amount == c.price && flag.currency == c.currency)
            }
            #expect(flag.at == Self.at(c.refundDay ?? -1))
            #expect(flag.status == .open)
        }
    }

    @Test("default severities: partial-refund low, late-refund and high-value medium")
    func severities() {
        let flags = FlagRules().evaluate(
            refunds: [RefundFact(transaction: Self.allThree.transaction, customerId: 7)], notifications: [], now: Self.at(400))
        let severities = Dictionary(uniqueKeysWithValues: flags.map { ($0.rule, $0.severity) })
        #expect(severities == ["partial-refund": .low, "late-refund": .medium, "high-value": .medium])
    }

    @Test("a rules file moves each threshold, changes a severity, or switches a rule off")
    func rulesFile() throws {
        let t = Self.allThree.transaction
        func rules(_ text: String) throws -> [String: Severity] {
            let flags = try FlagRules.parse(text).evaluate(
                refunds: [RefundFact(transaction: t, customerId: 7)], notifications: [], now: Self.at(400))
            return Dictionary(uniqueKeysWithValues: flags.map { ($0.rule, $0.severity) })
        }
        #expect(try rules("high-value.price = 250001") == ["partial-refund": .low, "late-refund": .medium])
        #expect(try rules("late-refund.share = 0.95") == ["partial-refund": .low, "high-value": .medium])
        #expect(try rules("partial-refund.enabled = false\nhigh-value.severity = critical") == ["late-refund": .medium, "high-value": .critical])

        // Lowered thresholds catch what the defaults let pass.
        var early = t
        early.revocationDate = Self.at(16)  // 53 % into the period
        early.price = 50_000
        let lowered = try FlagRules.parse("late-refund.share = 0.5\nhigh-value.price = 50000").evaluate(
            refunds: [RefundFact(transaction: early, customerId: 7)], notifications: [], now: Self.at(400))
        #expect(lowered.map(\.rule).sorted() == ["high-value", "late-refund", "partial-refund"])
        #expect(lowered.first { $0.rule == "late-refund" }?.detail == "refunded after 53% of the period was used")
    }

    @Test("every rule parameter a rules file's error lists is one it takes; an unknown one is refused, naming those there are")
    func parametersListed() throws {
        for (rule, names) in FlagRules.parameters {
            for name in names + ["enabled", "severity"] {
                let value = name == "enabled" ? "true" : name == "severity" ? "high" : "1"
                let parameter = name.hasPrefix("rate.") ? "rate.EUR" : name
                #expect(throws: Never.self, "\(rule).\(parameter)") { try FlagRules.parse("\(rule).\(parameter) = \(value)") }
            }
        }
        #expect(Set(FlagRules.parameters.keys).isSubset(of: Set(FlagRules.ruleIds)))
        do {
            _ = try FlagRules.parse("quick-refund.hours = 1")
            Issue.record("an unknown parameter was taken")
        } catch {
            #expect(error.message == "quick-refund has no parameter hours; it has enabled, severity, windowHours", "\(error)")
        }
    }
}
