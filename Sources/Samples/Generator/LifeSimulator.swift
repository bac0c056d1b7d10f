import ReceiptModel

let dayMs: Int64 = 86_400_000
let hourMs: Int64 = 3_600_000
let minuteMs: Int64 = 60_000

/// The stories the demo README names; customers 0-7 live them when there are enough customers.
public enum SampleStory: String, CaseIterable, Sendable {
    case paidButNothing = "I paid but have nothing (billing retry, no grace period)"
    case serialRefunder = "a serial refunder"
    case familyRevoked = "a family member whose access was revoked"
    case upgradedMidMonth = "a customer who upgraded mid-month"
    case pendingConsumption = "a pending consumption request near its deadline"
    case refundReversed = "a customer whose refund was reversed"
    case gracePeriod = "billing failed, still in the grace period"
    case refundSpike = "a buyer in the refund spike after the bad release"
}

/// Simulates one customer's life from its own random stream.
struct LifeSimulator {
    let from: Int64
    let to: Int64
    /// The bad release day (UTC midnight): its buyers of the spike product refund the next day.
    let releaseDay: Int64
    var rng: SplitMix64
    var life: CustomerLife
    private var sequence = 0
    /// This seed's block of transaction ids (``idBlock(seed:)``).
    private let block: Int64

    /// Data sets of two seeds imported into one ledger must not share ids: a second seed's transaction
    /// 150000000000001, another product of another customer, was merged into the first's. Each seed numbers its
    /// transactions (and account ids) in a block of its own, one of 49 (two seeds may still meet, one time in 49);
    /// the demo's seed keeps block 0, the ids its stories are known by in SampleData/README.md.
    static func idBlock(seed: UInt64) -> Int64 {
        seed == SampleGenerator.Options.seed(SampleGenerator.demoSeed) ? 0 : Int64(1 + seed % 49)
    }

    init(seed: UInt64, index: Int, from: Int64, to: Int64, releaseDay: Int64, formats: [(SampleFormat, Double)] = SampleGenerator.realisticFormats) {
        self.from = from
        self.to = to
        self.releaseDay = releaseDay
        block = Self.idBlock(seed: seed)
        var rng = SplitMix64(seed: seed, stream: UInt64(index))
        let story = index < SampleStory.allCases.count ? SampleStory.allCases[index] : nil
        let environment = story == nil && rng.chance(0.15) ? "Sandbox" : "Production"
        let storefront = rng.pick(Array(zip(SampleCatalog.storefronts, SampleCatalog.storefrontWeights)))
        var token: String?
        var external: String?
        if story != nil || rng.chance(0.55) {
            token = Self.uuid(&rng)
        } else {
            external = "acct-" + (block == 0 ? "" : "\(block)-") + String(index).leftPadded(7)
        }
        var format: SampleFormat = .notificationsV2
        if story == nil {
            format = rng.pick(formats)
        }
        life = CustomerLife(
            index: index, environment: environment, storefront: storefront, token: token, externalId: external,
            format: format, story: story?.rawValue)
        self.rng = rng
    }

    static func uuid(_ rng: inout SplitMix64) -> String {
        let a = rng.next()
        let b = rng.next()
        func hex(_ v: UInt64, _ digits: Int) -> String { String(v, radix: 16).leftPadded(digits) }
        return "\(hex(a >> 32, 8))-\(hex(a >> 16 & 0xFFFF, 4))-4\(hex(a & 0xFFF, 3))-\(hex(0x8000 | (b >> 48 & 0x3FFF), 4))-\(hex(b & 0xFFFF_FFFF_FFFF, 12))"
    }

    // MARK: Ids

    private mutating func nextTransactionId() -> String {
        sequence += 1
        let base: Int64 = life.environment == "Production" ? 150_000_000_000_000 : 250_000_000_000_000
        return String(base + block * 1_000_000_000_000 + Int64(life.index) * 2000 + Int64(sequence))
    }

    private func webOrder(_ transactionId: String) -> String { "9" + transactionId.dropFirst() }

    private mutating func event(_ at: Int64, _ type: String, _ subtype: String?, _ t: Int, renewal: RenewalState?, changed: Bool) {
        guard at < to else { return }
        life.events.append(LifeEvent(at: at, type: type, subtype: subtype, transaction: t, renewal: renewal, renewalChanged: changed, uuid: Self.uuid(&rng)))
    }

    private mutating func segment(_ name: String, _ at: Int64, _ state: String) {
        guard at <= to else { return }
        life.segments[name, default: []].append((at, state))
    }

    // MARK: Lives

    mutating func run() -> CustomerLife {
        let span = to - from
        switch life.index < SampleStory.allCases.count ? SampleStory.allCases[life.index] : nil {
        case .paidButNothing?:
            let start = to - 5 * dayMs - 4 * 30 * dayMs + 7 * hourMs
            subscription(SampleCatalog.proMonthly, start: start, script: .billingFailure(grace: false, recovers: false, period: 3))
        case .serialRefunder?:
            var at = to - 80 * dayMs + 3 * hourMs
            for _ in 0..<4 {
                oneTime(SampleCatalog.coins500, at: at, refundAfter: rng.int64(6 * hourMs...40 * hourMs), reason: 0, requestFirst: true)
                at += rng.int64(10 * dayMs...20 * dayMs)
            }
            subscription(SampleCatalog.storageMonthly, start: to - 120 * dayMs, script: .plain)
        case .familyRevoked?:
            subscription(SampleCatalog.proYearly, start: to - 200 * dayMs + 2 * hourMs, script: .familyRevoke(at: to - 10 * dayMs), family: true)
        case .upgradedMidMonth?:
            subscription(SampleCatalog.proMonthly, start: to - 75 * dayMs + 9 * hourMs, script: .upgrade(period: 2, share: 0.5))
        case .pendingConsumption?:
            subscription(SampleCatalog.proMonthly, start: to - 50 * dayMs, script: .plain)
            oneTime(SampleCatalog.coins500, at: to - 3 * dayMs, requestAt: to - 10 * hourMs)
        case .refundReversed?:
            oneTime(SampleCatalog.lifetime, at: to - 40 * dayMs + 5 * hourMs, refundAfter: 11 * dayMs, reason: 0, requestFirst: true, reverseAfter: 9 * dayMs)
        case .gracePeriod?:
            subscription(SampleCatalog.storageMonthly, start: to - 3 * dayMs - 60 * dayMs + 11 * hourMs, script: .billingFailure(grace: true, recovers: false, period: 1))
        case .refundSpike?:
            break  // only the spike purchase below
        case nil:
            randomLife(span: span)
        }
        spikeParticipation()
        life.events.sort { ($0.at, $0.uuid) < ($1.at, $1.uuid) }
        return life
    }

    private mutating func randomLife(span: Int64) {
        let latest = max(from + 1, to - dayMs)
        if rng.chance(0.75) {
            let product = rng.pick([(SampleCatalog.proMonthly, 0.7), (SampleCatalog.proYearly, 0.2), (SampleCatalog.proPlusMonthly, 0.1)])
            subscription(product, start: rng.int64(from...latest), script: .random, family: rng.chance(0.05) && life.format.modern)
        }
        if rng.chance(0.3) {
            let product = rng.chance(0.5) ? SampleCatalog.storageWeekly : SampleCatalog.storageMonthly
            subscription(product, start: rng.int64(from...latest), script: .random)
        }
        if rng.chance(0.1) {
            oneTime(SampleCatalog.lifetime, at: rng.int64(from...latest), refundAfter: rng.chance(0.08) ? rng.int64(hourMs...20 * dayMs) : nil, reason: rng.chance(0.3) ? 1 : 0, requestFirst: rng.chance(0.5))
        }
        if rng.chance(0.04) {
            oneTime(SampleCatalog.filters, at: rng.int64(from...latest))
        }
        if rng.chance(0.3) {
            for _ in 0..<rng.int(1...4) {
                let product = rng.chance(0.6) ? SampleCatalog.coins100 : SampleCatalog.coins500
                let at = rng.int64(from...latest)
                if life.format == .notificationsV2 && rng.chance(0.05) {
                    oneTime(product, at: at, requestAt: at + rng.int64(hourMs...48 * hourMs), declined: true)
                } else {
                    oneTime(product, at: at, refundAfter: rng.chance(0.05) ? rng.int64(hourMs...72 * hourMs) : nil, reason: rng.chance(0.4) ? 1 : 0, requestFirst: rng.chance(0.6))
                }
            }
        }
    }

    /// Every 20th customer (and the spike story's) bought the spike product on the bad release day and got a
    /// refund the next day.
    private mutating func spikeParticipation() {
        let story = life.story == SampleStory.refundSpike.rawValue
        guard life.index % 20 == 13 || story, releaseDay > from, releaseDay + 2 * dayMs < to else { return }
        let at = releaseDay + rng.int64(hourMs...20 * hourMs)
        let refund = releaseDay + dayMs + rng.int64(hourMs...22 * hourMs)
        oneTime(SampleCatalog.filters, at: at, refundAfter: refund - at, reason: 1, requestFirst: false)
    }

    // MARK: One-time purchases

    private mutating func oneTime(
        _ product: SampleProduct, at: Int64, refundAfter: Int64? = nil, reason: Int = 0, requestFirst: Bool = false,
        reverseAfter: Int64? = nil, requestAt: Int64? = nil, declined: Bool = false
    ) {
        guard at < to else { return }
        let id = nextTransactionId()
        var t = LifeTransaction(
            id: id, original: id, webOrder: nil, product: product, purchase: at, originalPurchase: at, expires: nil,
            price: life.storefront.price(product.usdPrice), reason: "PURCHASE")
        let v2 = life.format == .notificationsV2
        let index = life.transactions.count
        life.transactions.append(t)
        event(at, "ONE_TIME_CHARGE", nil, index, renewal: nil, changed: false)
        if let name = product.entitlement { segment(name, at, "owned") }
        if let requestAt, v2 {
            event(requestAt, "CONSUMPTION_REQUEST", nil, index, renewal: nil, changed: false)
            if declined { event(requestAt + rng.int64(hourMs...30 * hourMs), "REFUND_DECLINED", nil, index, renewal: nil, changed: false) }
        }
        guard let refundAfter, at + refundAfter < to else { return }
        let refundAt = at + refundAfter
        if v2 && requestFirst {
            event(max(at + minuteMs, refundAt - rng.int64(hourMs...10 * hourMs)), "CONSUMPTION_REQUEST", nil, index, renewal: nil, changed: false)
        }
        t.revokedAt = refundAt
        t.revocationReason = reason
        if life.format.modern { t.revocationType = "REFUND_FULL" }
        event(refundAt, "REFUND", nil, index, renewal: nil, changed: false)
        if let reverseAfter, v2, refundAt + reverseAfter < to {
            t.reversedAt = refundAt + reverseAfter
            event(refundAt + reverseAfter, "REFUND_REVERSED", nil, index, renewal: nil, changed: false)
        }
        life.transactions[index] = t
        if let name = product.entitlement {
            // Revoked from the refund until a reversal gives it back.
            segment(name, refundAt, "revoked")
            if let reversed = t.reversedAt { segment(name, reversed, "owned") }
        }
    }

    // MARK: Subscriptions

    enum Script {
        case random, plain
        case billingFailure(grace: Bool, recovers: Bool, period: Int)
        case familyRevoke(at: Int64)
        case upgrade(period: Int, share: Double)
    }

    private mutating func subscription(_ first: SampleProduct, start: Int64, script: Script, family: Bool = false) {
        guard start < to else { return }
        let name = first.entitlement!
        let original = nextTransactionId()
        var product = first
        var nextProduct = first
        var t = start
        var period = 0
        var autoRenew = true
        var resubscribed = false
        var recovered = false
        let random: Bool
        if case .random = script { random = true } else { random = false }
        // Offer on the first period.
        var offer: (type: Int, id: String?, discount: String?, days: Int64?, share: Int64)? = nil
        if random {
            offer = rng.pick([
                (nil, 0.45), ((1, nil, "FREE_TRIAL", 7, 0), 0.3), ((1, nil, "PAY_AS_YOU_GO", nil, 50), 0.1),
                ((3, "SPRING25", "PAY_AS_YOU_GO", nil, 75), 0.08), ((2, "comeback.half", "PAY_AS_YOU_GO", nil, 50), 0.07),
            ])
        } else if case .upgrade = script {
            offer = (1, nil, "FREE_TRIAL", 7, 0)
        }
        var renewal = RenewalState(
            original: original, product: product.id, autoRenewProduct: product.id, autoRenew: true, retry: false, grace: nil,
            intent: nil, renewalDate: nil, recentStart: start, renewalPrice: life.storefront.price(product.usdPrice))
        var firstType = "SUBSCRIBED"
        var firstSubtype: String? = "INITIAL_BUY"
        while t < to && period < 400 {
            // One period.
            let duration = (offer?.days ?? product.durationDays!) * dayMs
            let id = period == 0 && !resubscribed ? original : nextTransactionId()
            let announced = period == 0 || resubscribed || recovered
            let reason = announced && firstSubtype != "BILLING_RECOVERY" ? "PURCHASE" : "RENEWAL"
            var transaction = LifeTransaction(
                id: id, original: original, webOrder: webOrder(id), product: product, purchase: t, originalPurchase: start,
                expires: t + duration, price: life.storefront.price(product.usdPrice * (offer?.share ?? 100) / 100),
                reason: reason, familyShared: family)
            if let offer {
                transaction.offerType = offer.type
                transaction.offerId = offer.id
                transaction.offerDiscount = offer.discount
                transaction.offerPeriod = offer.days.map { "P\($0)D" } ?? "P1M"
            }
            offer = nil
            let index = life.transactions.count
            life.transactions.append(transaction)
            product = nextProduct
            renewal.product = transaction.product.id
            renewal.autoRenewProduct = nextProduct.id
            renewal.retry = false
            renewal.grace = nil
            renewal.intent = nil
            renewal.renewalDate = transaction.expires
            renewal.renewalPrice = life.storefront.price(nextProduct.usdPrice)
            if announced {
                event(t, firstType, firstSubtype, index, renewal: renewal, changed: true)
            } else {
                event(t, "DID_RENEW", nil, index, renewal: renewal, changed: false)
            }
            segment(name, t, "active")
            resubscribed = false
            recovered = false
            let end = t + duration
            // What happens during the period.
            var happening = "none"
            if random {
                happening = rng.pick([
                    ("none", 0.8), ("off", 0.07), ("refund", 0.03), ("upgrade", transaction.product.id == "pro.monthly" ? 0.03 : 0),
                    ("downgrade", transaction.product.id == "pro.plus.monthly" ? 0.05 : 0), ("crossgrade", 0.02),
                    ("familyRevoke", family ? 0.05 : 0),
                ])
            } else if case .upgrade(let when, _) = script, when == period {
                happening = "upgrade"
            } else if case .familyRevoke(let at) = script, at >= t, at < end {
                happening = "familyRevoke"
            }
            // A free period has nothing to refund: its customer simply does not ask.
            if happening == "refund" && transaction.price == 0 { happening = "none" }
            switch happening {
            case "off":
                let at = t + rng.int64(dayMs...max(dayMs, duration - dayMs))
                autoRenew = false
                renewal.autoRenew = false
                event(at, "DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED", index, renewal: renewal, changed: true)
                if rng.chance(0.3) {
                    let back = at + rng.int64(hourMs...max(hourMs, (end - at) / 2))
                    if back < end {
                        autoRenew = true
                        renewal.autoRenew = true
                        event(back, "DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_ENABLED", index, renewal: renewal, changed: true)
                    }
                }
            case "refund":
                let r = t + duration * rng.int64(5...95) / 100
                if r < to { refundPeriod(index, at: r, renewal: &renewal, autoRenew: &autoRenew) }
            case "familyRevoke":
                var at = t + duration * rng.int64(10...90) / 100
                if case .familyRevoke(let fixed) = script { at = fixed }
                if at < to {
                    life.transactions[index].revokedAt = at
                    life.transactions[index].revocationType = "FAMILY_REVOKE"
                    autoRenew = false
                    renewal.autoRenew = false
                    event(at, "REVOKE", nil, index, renewal: renewal, changed: true)
                    segment(name, at, "revoked")
                    return
                }
            case "upgrade":
                var share = Double(rng.int64(20...80)) / 100
                if case .upgrade(_, let fixed) = script { share = fixed }
                let u = t + Int64(Double(duration) * share)
                if u < to {
                    life.transactions[index].upgradedAt = u
                    product = SampleCatalog.proPlusMonthly
                    nextProduct = product
                    t = u
                    period += 1
                    firstType = "DID_CHANGE_RENEWAL_PREF"
                    firstSubtype = "UPGRADE"
                    recovered = true  // the next period is announced by the change, not as a renewal
                    continue
                }
            case "downgrade", "crossgrade":
                let at = t + duration * rng.int64(10...90) / 100
                nextProduct = happening == "downgrade" ? SampleCatalog.proMonthly
                    : (product.group == SampleCatalog.proGroup
                        ? (product.id == "pro.yearly" ? SampleCatalog.proMonthly : SampleCatalog.proYearly)
                        : (product.id == "storage.weekly" ? SampleCatalog.storageMonthly : SampleCatalog.storageWeekly))
                if product.id == "pro.plus.monthly" && happening == "crossgrade" { nextProduct = product }
                renewal.autoRenewProduct = nextProduct.id
                renewal.renewalPrice = life.storefront.price(nextProduct.usdPrice)
                event(at, "DID_CHANGE_RENEWAL_PREF", happening == "downgrade" ? "DOWNGRADE" : nil, index, renewal: renewal, changed: true)
                product = nextProduct
            default:
                break
            }
            if life.transactions[index].revokedAt != nil {
                // A refunded period ends the subscription; it stays revoked.
                return
            }
            if end >= to {
                // A period ending exactly at the end of the span: nothing after it is in the data, so it has ended.
                if end == to { segment(name, end, "expired") }
                return
            }
            // At the end of the period.
            var fails = false
            var grace = false
            var recovers = false
            if case .billingFailure(let g, let r, let when) = script, when == period {
                fails = true
                grace = g
                recovers = r
            } else if random, autoRenew, rng.chance(0.07) {
                fails = true
                grace = rng.chance(0.5)
                recovers = rng.chance(0.55)
            }
            if !autoRenew {
                renewal.intent = 1
                event(end, "EXPIRED", "VOLUNTARY", index, renewal: renewal, changed: true)
                segment(name, end, "expired")
                guard random, rng.chance(0.35) else { return }
                t = end + rng.int64(3 * dayMs...60 * dayMs)
                if t >= to { return }
                autoRenew = true
                renewal.autoRenew = true
                renewal.recentStart = t
                resubscribed = true
                firstType = "SUBSCRIBED"
                firstSubtype = "RESUBSCRIBE"
                if rng.chance(0.4) { offer = (4, "winback.first.month", "PAY_AS_YOU_GO", nil, 50) }
                period += 1
                continue
            }
            if fails {
                let graceLength = (product.durationDays! <= 7 ? 6 : 16) * dayMs
                renewal.retry = true
                renewal.intent = 2
                renewal.grace = grace ? end + graceLength : nil
                event(end, "DID_FAIL_TO_RENEW", grace ? "GRACE_PERIOD" : nil, index, renewal: renewal, changed: true)
                segment(name, end, grace ? "gracePeriod" : "billingRetry")
                if grace { segment(name, end + graceLength, "billingRetry") }
                if recovers {
                    t = end + rng.int64(hourMs...40 * dayMs)
                    if t >= to { return }
                    firstType = "DID_RENEW"
                    firstSubtype = "BILLING_RECOVERY"
                    recovered = true
                    period += 1
                    continue
                }
                let gaveUp = end + 60 * dayMs
                renewal.retry = false
                renewal.grace = nil
                renewal.autoRenew = false
                event(gaveUp, "EXPIRED", "BILLING_RETRY", index, renewal: renewal, changed: true)
                segment(name, gaveUp, "expired")
                return
            }
            t = end
            period += 1
        }
    }

    /// Refunds a subscription period at `at`; Apple turns renewal off after the refund request.
    private mutating func refundPeriod(_ index: Int, at r: Int64, renewal: inout RenewalState, autoRenew: inout Bool) {
        let name = life.transactions[index].product.entitlement!
        let v2 = life.format == .notificationsV2
        if v2 && rng.chance(0.5) {
            event(max(life.transactions[index].purchase + minuteMs, r - rng.int64(hourMs...11 * hourMs)), "CONSUMPTION_REQUEST", nil, index, renewal: nil, changed: false)
        }
        var t = life.transactions[index]
        t.revokedAt = r
        t.revocationReason = rng.chance(0.3) ? 1 : 0
        if life.format.modern {
            if rng.chance(0.3) {
                t.revocationType = "REFUND_PRORATED"
                t.revocationPercentage = rng.int64(20...90) * 1000
            } else {
                t.revocationType = "REFUND_FULL"
            }
        }
        event(r, "REFUND", nil, index, renewal: nil, changed: false)
        autoRenew = false
        renewal.autoRenew = false
        event(r + minuteMs, "DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED", index, renewal: renewal, changed: true)
        if v2 && rng.chance(0.1) {
            let back = r + rng.int64(2 * dayMs...15 * dayMs)
            if back < to {
                t.reversedAt = back
                event(back, "REFUND_REVERSED", nil, index, renewal: nil, changed: false)
            }
        }
        life.transactions[index] = t
        segment(name, r, "revoked")
        if let back = t.reversedAt, let expires = t.expires {
            // Reinstated: the period runs out with renewal off.
            if back < expires {
                segment(name, back, "active")
                segment(name, expires, "expired")
            } else {
                segment(name, back, "expired")
            }
        }
    }
}

extension String {
    func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
