import ReceiptModel

/// How serious a flag is.
public enum Severity: String, Hashable, Sendable, Comparable {
    case info, low, medium, high, critical
    var rank: Int { [.info, .low, .medium, .high, .critical].firstIndex(of: self)! }
    public static func < (lhs: Severity, rhs: Severity) -> Bool { lhs.rank < rhs.rank }
}

/// The refund rules' parameters: defaults here, overridable by an operator's rules file.
public struct FlagRules: Sendable {
    /// `quick-refund`: refunded within this long of purchase.
    public var quickRefundWindow: Int64 = 48 * 3_600_000
    /// `serial-refunder`: this many refunds for one customer ...
    public var serialRefundCount = 3
    /// ... within this window.
    public var serialRefundWindow: Int64 = 90 * 86_400_000
    /// `refund-spike`: a product's refunds on one day at least this many times its trailing daily mean ...
    public var spikeFactor = 3.0
    /// ... and at least this many refunds that day.
    public var spikeMinimum = 5
    /// ... with the mean taken over this many days before.
    public var spikeTrailingDays = 28
    /// `late-refund`: refunded after this share of the period had passed.
    public var lateRefundShare = 0.75
    /// `high-value`: a refunded price worth at least this many US dollars' milliunits (100 dollars), in the
    /// currency's own units by ``highValueRates``: 750 yen is not high-value because 750 dollars would be.
    public var highValuePrice: Int64 = 100_000
    /// Hundredths of a unit of each currency to one US dollar, roughly (the rates of late 2025, rounded): enough to
    /// tell a high-value refund in any currency Apple pays in, not to convert money. A rules file sets one with
    /// `high-value.rate.JPY = 15000`; a currency not listed is compared as if it were dollars.
    public var highValueRates: [String: Int64] = [
        "USD": 100, "EUR": 95, "GBP": 80, "CHF": 90, "CAD": 135, "AUD": 150, "NZD": 170, "JPY": 15_000, "CNY": 720,
        "HKD": 780, "TWD": 3_200, "KRW": 140_000, "SGD": 135, "INR": 8_500, "IDR": 1_600_000, "THB": 3_500, "MYR": 450,
        "PHP": 5_800, "VND": 2_500_000, "PKR": 28_000, "BRL": 500, "MXN": 1_800, "COP": 400_000, "CLP": 95_000,
        "PEN": 370, "ZAR": 1_800, "EGP": 5_000, "NGN": 150_000, "KES": 13_000, "TZS": 260_000, "SAR": 375, "AED": 367,
        "QAR": 364, "ILS": 370, "TRY": 3_500, "RUB": 9_000, "KZT": 50_000, "PLN": 400, "CZK": 2_300, "HUF": 36_000,
        "RON": 460, "BGN": 180, "SEK": 1_050, "NOK": 1_080, "DKK": 700,
    ]

    /// The `high-value` threshold in milliunits of `currency`.
    public func highValueThreshold(currency: String?) -> Int64 {
        let rate = currency.flatMap { highValueRates[$0.uppercased()] } ?? 100
        let (product, overflow) = highValuePrice.multipliedReportingOverflow(by: rate)
        return overflow ? .max : product / 100
    }
    /// Severity by rule id.
    public var severities: [String: Severity] = [
        "quick-refund": .high, "serial-refunder": .high, "app-issue": .medium, "refund-spike": .critical,
        "partial-refund": .low, "late-refund": .medium, "high-value": .medium, "consumption-request": .high,
        "refund-reversed": .info, "family-revoke": .low,
    ]
    /// Rules turned off.
    public var disabled: Set<String> = []

    /// Every rule id, stable.
    public static let ruleIds = [
        "quick-refund", "serial-refunder", "app-issue", "refund-spike", "partial-refund", "late-refund", "high-value",
        "consumption-request", "refund-reversed", "family-revoke",
    ]

    public init() {}

    /// Reads `rule.parameter = value` lines (`quick-refund.windowHours = 24`, `app-issue.severity = high`,
    /// `late-refund.enabled = false`); `#` starts a comment.
    ///
    /// Every value is checked against the range its rule can use (a finite number, whole where it counts
    /// something, `true` or `false` for `enabled`); anything else is an error naming the line.
    public static func parse(_ text: String) throws(CatalogError) -> FlagRules {
        var rules = FlagRules()
        for (lineIndex, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let lineNumber = lineIndex + 1
            let line = raw.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first.map { $0.trimmingWhitespace() } ?? ""
            if line.isEmpty { continue }
            let parts = line.split(separator: "=", maxSplits: 1).map { $0.trimmingWhitespace() }
            let key = parts.first?.split(separator: ".", maxSplits: 1).map(String.init) ?? []
            guard parts.count == 2, key.count == 2, ruleIds.contains(key[0]) else {
                throw CatalogError(line: lineNumber, message: "expected RULE.PARAMETER = VALUE with a known rule id")
            }
            let (rule, parameter, value) = (key[0], key[1], parts[1])
            /// The value as a finite number within `range`; whole when `whole`.
            func number(_ range: ClosedRange<Double>, whole: Bool = false) throws(CatalogError) -> Double {
                guard let parsed = Double(value), parsed.isFinite else {
                    throw CatalogError(line: lineNumber, message: "\(rule).\(parameter): \(value.prefix(40)) is not a finite number")
                }
                guard range.contains(parsed), !whole || parsed.rounded() == parsed else {
                    let kind = whole ? "a whole number" : "a number"
                    throw CatalogError(
                        line: lineNumber,
                        message: "\(rule).\(parameter) must be \(kind) from \(show(range.lowerBound)) to \(show(range.upperBound)), not \(value.prefix(40))")
                }
                return parsed
            }
            switch (rule, parameter) {
            case (_, "severity"):
                guard let severity = Severity(rawValue: value) else { throw CatalogError(line: lineNumber, message: "severity is info, low, medium, high or critical") }
                rules.severities[rule] = severity
            case (_, "enabled"):
                switch value {
                case "false": rules.disabled.insert(rule)
                case "true": rules.disabled.remove(rule)
                default: throw CatalogError(line: lineNumber, message: "\(rule).enabled is true or false, not \(value.prefix(40))")
                }
            case ("quick-refund", "windowHours"): rules.quickRefundWindow = Int64(try number(Limits.hours) * 3_600_000)
            case ("serial-refunder", "count"): rules.serialRefundCount = Int(try number(Limits.count, whole: true))
            case ("serial-refunder", "windowDays"): rules.serialRefundWindow = Int64(try number(Limits.days) * 86_400_000)
            case ("refund-spike", "factor"): rules.spikeFactor = try number(Limits.factor)
            case ("refund-spike", "minimum"): rules.spikeMinimum = Int(try number(Limits.count, whole: true))
            case ("refund-spike", "trailingDays"): rules.spikeTrailingDays = Int(try number(Limits.trailingDays, whole: true))
            case ("late-refund", "share"): rules.lateRefundShare = try number(0...1)
            case ("high-value", "price"): rules.highValuePrice = Int64(try number(Limits.price, whole: true))
            case ("high-value", let name) where name.hasPrefix("rate.") && name.count == 8
                && name.dropFirst(5).allSatisfy({ $0.isASCII && $0.isLetter }):
                rules.highValueRates[name.dropFirst(5).uppercased()] = Int64(try number(Limits.rate, whole: true))
            case ("consumption-request", "deadlineHours"):
                // (It once changed the flag's text only, while the screens and commands counted Apple's 12 hours.)
                throw CatalogError(
                    line: lineNumber,
                    message: "consumption-request.deadlineHours is not a setting: Apple waits 12 hours for consumption data, and every screen and command counts them (remove the line)")
            default:
                let names = ["enabled", "severity"] + (parameters[rule] ?? [])
                throw CatalogError(line: lineNumber, message: "\(rule) has no parameter \(parameter); it has \(names.joined(separator: ", "))")
            }
        }
        return rules
    }

    /// The parameters of each rule besides `enabled` and `severity`, as a rules file names them.
    public static let parameters: [String: [String]] = [
        "quick-refund": ["windowHours"], "serial-refunder": ["count", "windowDays"], "refund-spike": ["factor", "minimum", "trailingDays"],
        "late-refund": ["share"], "high-value": ["price", "rate.XXX (a currency's code)"],
    ]

    /// The ranges a rules file may set; each fits its field with room to spare.
    enum Limits {
        /// Ten years, in hours.
        static let hours: ClosedRange<Double> = 0...87_600
        /// Ten years, in days.
        static let days: ClosedRange<Double> = 0...3650
        static let trailingDays: ClosedRange<Double> = 1...3650
        static let count: ClosedRange<Double> = 1...1_000_000
        static let factor: ClosedRange<Double> = 0...1_000_000
        /// A trillion units of a currency, in milliunits.
        static let price: ClosedRange<Double> = 0...1e15
        /// Hundredths of a currency's unit to a dollar: from a cent to a hundred million units.
        static let rate: ClosedRange<Double> = 1...1e10
    }
}

private func show(_ value: Double) -> String {
    value.rounded() == value && value.magnitude < 1e18 ? String(Int64(value)) : String(value)
}

/// A refund as the rules see it: the transaction, its customer, and when the ledger learned of it.
public struct RefundFact: Sendable {
    public var transaction: Transaction
    public var customerId: Int64?
    public init(transaction: Transaction, customerId: Int64?) {
        self.transaction = transaction
        self.customerId = customerId
    }
}

/// A notification as the rules see it.
public struct NotificationFact: Sendable {
    public var notification: Notification
    public var seenAt: Timestamp
    public var transactionId: String?
    public var productId: String?
    public var customerId: Int64?
    /// The price of the transaction it is about, when the ledger holds it: what a refund would cost.
    public var price: Int64?
    public var currency: String?
    public init(
        notification: Notification, seenAt: Timestamp, transactionId: String?, productId: String?, customerId: Int64?,
        price: Int64? = nil, currency: String? = nil
    ) {
        self.notification = notification
        self.seenAt = seenAt
        self.transactionId = transactionId
        self.productId = productId
        self.customerId = customerId
        self.price = price
        self.currency = currency
    }
}

/// A refund flag: a rule's finding with a stable id (the same facts always give the same id), and
/// its triage status once stored.
public struct RefundFlag: Hashable, Sendable {
    public var id: String
    public var rule: String
    public var severity: Severity
    public var status: FlagStatus
    public var customerId: Int64?
    public var transactionId: String?
    public var productId: String?
    public var amount: Int64?
    public var currency: String?
    public var at: Timestamp
    public var detail: String
    /// The environment of the refund it is about (a sandbox refund is a test, not a production problem);
    /// nil when the data did not say.
    public var environment: Environment?

    public init(
        id: String, rule: String, severity: Severity, status: FlagStatus = .open, customerId: Int64?, transactionId: String?,
        productId: String?, amount: Int64?, currency: String?, at: Timestamp, detail: String, environment: Environment? = nil
    ) {
        self.id = id
        self.rule = rule
        self.severity = severity
        self.status = status
        self.customerId = customerId
        self.transactionId = transactionId
        self.productId = productId
        self.amount = amount
        self.currency = currency
        self.at = at
        self.detail = detail
        self.environment = environment
    }
}

extension RefundFlag {
    /// How long Apple waits for the consumption data a CONSUMPTION_REQUEST asks for: 12 hours, Apple's and not a
    /// setting (the flag's text, the dashboard's due column and the commands' "left" all count it).
    public static let consumptionAnswerWindow: Int64 = 12 * 3_600_000
}

/// Refund outcome counts for the overview.
public struct RefundOutcomes: Hashable, Sendable {
    public var refunded = 0
    public var declined = 0
    public var reversed = 0
    public var pendingConsumptionRequests = 0
}

extension FlagRules {
    /// Runs every enabled rule over the ledger's refunds and notifications at `now`.
    public func evaluate(refunds: [RefundFact], notifications: [NotificationFact], now: Timestamp) -> [RefundFlag] {
        var evaluation = FlagEvaluation(rules: self, notifications: notifications, now: now)
        evaluation.add(refunds)
        return evaluation.finish().flags
    }

    /// Refund outcomes over the ledger's refunds and notifications.
    public func outcomes(refunds: [RefundFact], notifications: [NotificationFact], now: Timestamp) -> RefundOutcomes {
        var evaluation = FlagEvaluation(rules: self, notifications: notifications, now: now)
        evaluation.add(refunds)
        return evaluation.finish().outcomes
    }
}

/// The rules run over refunds handed over in parts of any size and order (a ledger reads them a page at a
/// time, so its memory does not grow with its refunds): each part is judged as it comes, and what needs them
/// all — a customer's refunds for the serial-refunder rule, a product's refunds per day for spikes — is kept
/// as a few numbers per refund, not the transactions.
public struct FlagEvaluation: Sendable {
    public let rules: FlagRules
    public let now: Timestamp
    let notifications: [NotificationFact]
    /// When a refund of each transaction was last reversed: a refund Apple reversed is void (Revocation.swift).
    let reversals: [String: Timestamp]
    private var findings: [RefundFlag] = []
    private var outcomes = RefundOutcomes()

    /// What the serial-refunder rule needs of a refund.
    struct CustomerRefund: Sendable {
        var revoked: Timestamp
        var transactionId: String
        var productId: String?
        var price: Int64?
        var currency: String?
        var environment: Environment?
    }
    private var byCustomer: [Int64: [CustomerRefund]] = [:]
    /// Spikes are counted per environment: sandbox refunds are tests, and must not make (or hide) a production spike.
    struct ProductEnvironment: Hashable, Sendable {
        var product: String
        var environment: Environment?
    }
    /// Each product's refunds by UTC day, as the instants they were refunded (the spike is raised at the one that made
    /// the day's count an alarm).
    private var byProductDay: [ProductEnvironment: [Int64: [Timestamp]]] = [:]

    public init(rules: FlagRules, notifications: [NotificationFact], now: Timestamp) {
        self.rules = rules
        self.now = now
        self.notifications = notifications
        self.reversals = notifications.refundReversals(at: now)
    }

    private mutating func raise(
        _ rule: String, _ at: Timestamp, _ id: String, customer: Int64?, transactionId: String?, product: String?, amount: Int64?,
        currency: String?, environment: Environment?, _ detail: String
    ) {
        guard !rules.disabled.contains(rule) else { return }
        findings.append(RefundFlag(
            id: "\(rule):\(id)", rule: rule, severity: rules.severities[rule] ?? .medium, customerId: customer,
            transactionId: transactionId, productId: product, amount: amount, currency: currency, at: at, detail: detail,
            environment: environment))
    }

    private mutating func raise(_ rule: String, _ at: Timestamp, _ t: Transaction, customer: Int64?, _ detail: String) {
        raise(rule, at, t.transactionId, customer: customer, transactionId: t.transactionId, product: t.productId, amount: t.price,
              currency: t.currency, environment: t.environment, detail)
    }

    /// A share in thousandths of a percent as a person writes it: 25000 -> "25%", 99999 -> "99.999%".
    public static func percent(_ thousandths: Int64) -> String {
        var fraction = String(thousandths.magnitude % 1000)
        fraction = String(repeating: "0", count: 3 - fraction.count) + fraction
        while fraction.last == "0" { fraction.removeLast() }
        return (thousandths < 0 ? "-" : "") + "\(thousandths.magnitude / 1000)" + (fraction.isEmpty ? "" : "." + fraction) + "%"
    }

    /// Judges a part of the refunds (each refund in exactly one part).
    public mutating func add(_ refunds: [RefundFact]) {
        for fact in refunds {
            let t = fact.transaction
            let revoked: Timestamp
            let share: Int64
            switch t.revocation(reversedAt: reversals[t.transactionId]) {
            case nil: continue
            case .familyRevoke(let at)?:
                // No money moved from this customer: the price is the purchaser's, so the flag carries none.
                raise("family-revoke", at, t.transactionId, customer: fact.customerId, transactionId: t.transactionId,
                      product: t.productId, amount: nil, currency: nil, environment: t.environment, "family sharing access revoked")
                continue
            case .refund(let at, let refunded)?:
                revoked = at
                share = refunded
            }
            outcomes.refunded += 1
            if let customer = fact.customerId {
                byCustomer[customer, default: []].append(
                    CustomerRefund(
                        revoked: revoked, transactionId: t.transactionId, productId: t.productId, price: t.price, currency: t.currency,
                        environment: t.environment))
            }
            if let product = t.productId {
                byProductDay[ProductEnvironment(product: product, environment: t.environment), default: [:]][
                    revoked.utcDay, default: []].append(revoked)
            }
            if let purchase = t.purchaseDate, purchase.distance(to: revoked) <= rules.quickRefundWindow {
                let delay = purchase.distance(to: revoked)
                // (A refund dated before its purchase, which data can hold, is said so rather than "0 s after".)
                let when = "\(FlagRules.elapsed(delay.magnitude)) " + (delay < 0 ? "before its purchase date" : "after purchase")
                raise("quick-refund", revoked, t, customer: fact.customerId, "refunded \(when)")
            }
            if t.revocationReason == .appIssue {
                raise("app-issue", revoked, t, customer: fact.customerId, "refunded because the product misbehaved (revocationReason 1)")
            }
            if share < 100_000 {
                raise("partial-refund", revoked, t, customer: fact.customerId, "partial refund of \(Self.percent(share))")
            }
            if let purchase = t.purchaseDate, let expires = t.expiresDate, expires > purchase {
                let used = Double(purchase.distance(to: revoked)) / Double(purchase.distance(to: expires))
                if used >= rules.lateRefundShare {
                    raise("late-refund", revoked, t, customer: fact.customerId, "refunded after \(Int(min(used, 1) * 100))% of the period was used")
                }
            }
            if let price = t.price, price >= rules.highValueThreshold(currency: t.currency) {
                raise("high-value", revoked, t, customer: fact.customerId, "refund of \(Money.withCurrency(price, currency: t.currency))")
            }
        }
    }

    /// Runs what needs every refund (serial refunders, spikes) and the notification rules: the flags, newest
    /// first, and the outcome counts.
    public mutating func finish() -> (flags: [RefundFlag], outcomes: RefundOutcomes) {
        for (customer, list) in byCustomer {
            let sorted = list.sorted { ($0.revoked, $0.transactionId) < ($1.revoked, $1.transactionId) }
            // After a flag, the next needs the count of refunds after its count-th (those it names as more since
            // among them: they are not left unseen when more follow), so a customer who refunds again months later is
            // flagged again, once per burst.
            var start = 0
            var told = -1
            for end in sorted.indices where end > told {
                start = max(start, told + 1)
                while sorted[start].revoked.distance(to: sorted[end].revoked) > rules.serialRefundWindow { start += 1 }
                if end - start + 1 >= rules.serialRefundCount {
                    let window = sorted[start...end].map(\.transactionId)
                    let last = sorted[end]
                    // The refunds after it within the same window from the first, named too: the flag is raised at the
                    // count-th, and "3 refunds" under a timeline of four in 41 days understated it.
                    let first = sorted[start].revoked
                    let since = sorted[(end + 1)...].prefix { first.distance(to: $0.revoked) <= rules.serialRefundWindow }.map(\.transactionId)
                    let more = since.isEmpty ? "" : "; \(since.count) more since: \(since.joined(separator: ", "))"
                    raise("serial-refunder", last.revoked, "C\(customer):\(window[0])", customer: customer, transactionId: last.transactionId,
                          product: last.productId, amount: last.price, currency: last.currency, environment: last.environment,
                          "\(window.count) refunds within \(rules.serialRefundWindow / 86_400_000) days: \(window.joined(separator: ", "))\(more)")
                    told = end
                }
            }
        }
        // A rules file cannot set these out of range; a caller setting them in code gets the nearest usable value.
        let trailingDays = min(max(rules.spikeTrailingDays, 1), 3650)
        for (key, days) in byProductDay {
            let product = key.product
            // Production keeps the id spikes always had; another environment is named in it, and refunds stating none
            // (a verifyReceipt purchase's) are counted apart as `unstated`, as the dashboard's environments count them
            // (before session 37 they had Production's id: two alarms of one id hid each other).
            let suffix = key.environment.map { $0 == .production ? "" : ":\($0.rawValue.lowercased())" } ?? ":unstated"
            for (day, refunds) in days where refunds.count >= rules.spikeMinimum {
                let count = refunds.count
                let trailing = (1...trailingDays).reduce(0) { $0 + (days[day - Int64($1)]?.count ?? 0) }
                let mean = Double(trailing) / Double(trailingDays)
                let needed = rules.spikeFactor * max(mean, 1.0 / Double(trailingDays))
                if Double(count) >= needed {
                    // Raised at the refund that made the day an alarm (the count-th of them, in time), not at the
                    // day's midnight: `--at` and the dashboard's as-of time before it do not show it yet.
                    let alarming = min(count, max(1, rules.spikeMinimum, Int(needed.rounded(.up))))
                    let at = refunds.sorted()[alarming - 1]
                    let date = at.startOfUTCDay
                    raise("refund-spike", at, "\(product):\(date.iso8601.prefix(10))\(suffix)", customer: nil, transactionId: nil,
                          product: product, amount: nil, currency: nil, environment: key.environment,
                          "\(count) refunds on \(date.iso8601.prefix(10)) against a trailing \(trailingDays)-day mean of \(String(format2(mean)))/day; an alarm from the \(ordinal(alarming)), at \(at.iso8601.split(separator: "T").last ?? "")")
                }
            }
        }
        outcomes.pendingConsumptionRequests = notifications.pendingConsumptionRequests(at: now)
        for fact in notifications {
            let n = fact.notification
            let at = n.signedDate ?? fact.seenAt
            let key = n.notificationUUID ?? "\(fact.transactionId ?? "?"):\(at.millisecondsSince1970)"
            switch n.notificationType {
            case .consumptionRequest:
                let deadline = at.adding(milliseconds: RefundFlag.consumptionAnswerWindow)
                // (The same text whenever the rules run: it is stored and read at other instants, `lookup --at` or the
                // dashboard's as-of time, where "deadline passed" from the import's clock contradicted them.)
                raise("consumption-request", at, key, customer: fact.customerId, transactionId: fact.transactionId, product: fact.productId,
                      amount: fact.price, currency: fact.currency, environment: n.environment,
                      "refund requested; send consumption data by \(deadline.iso8601)")
            case .refundReversed:
                outcomes.reversed += 1
                raise("refund-reversed", at, key, customer: fact.customerId, transactionId: fact.transactionId, product: fact.productId,
                      amount: fact.price, currency: fact.currency, environment: n.environment, "Apple reversed a refund; access reinstated")
            case .refundDeclined:
                outcomes.declined += 1
            default: continue
            }
        }
        let flags = findings.sorted { ($0.at, $0.id) > ($1.at, $1.id) }
        findings = []
        return (flags, outcomes)
    }
}

/// "1st", "2nd", "3rd", "4th", "11th", "21st": the place of a refund among its day's.
private func ordinal(_ n: Int) -> String {
    let suffix = (11...13).contains(n % 100) ? "th" : n % 10 == 1 ? "st" : n % 10 == 2 ? "nd" : n % 10 == 3 ? "rd" : "th"
    return "\(n)\(suffix)"
}

private func format2(_ value: Double) -> String {
    let scaled = (value * 100).rounded()
    return String(Int(scaled) / 100) + "." + String(Int(abs(scaled)) % 100).leftPadded(2)
}

extension String {
    func leftPadded(_ width: Int) -> String { count >= width ? self : String(repeating: "0", count: width - count) + self }
}

extension FlagRules {
    /// A quick refund's delay as a person says it: whole hours from an hour, else minutes, else seconds ("0 h" said
    /// nothing of a refund 50 seconds after purchase).
    /// (A magnitude: negating the most negative distance would trap.)
    static func elapsed(_ milliseconds: UInt64) -> String {
        if milliseconds >= 3_600_000 { return "\(milliseconds / 3_600_000) h" }
        if milliseconds >= 60_000 { return "\(milliseconds / 60_000) min" }
        return "\(milliseconds / 1_000) s"
    }
}
