import ReceiptModel

/// What a customer has for one entitlement at one instant (DESIGN section 6).
public enum EntitlementState: String, Hashable, Sendable, CaseIterable {
    /// A paid or trial period covers the instant and was not revoked.
    case active
    /// Billing failed, but Apple's grace period still grants access.
    case gracePeriod
    /// Billing failed, no grace: no access while Apple retries.
    case billingRetry
    /// The last period ended.
    case expired
    /// Refunded, or family access revoked.
    case revoked
    /// A non-consumable bought and not revoked.
    case owned
    /// Nothing was ever bought for it.
    case none

    /// What a person reads for the state, on the dashboard and in `lookup`'s text ("BILLING RETRY"; never
    /// "cancelled", which means two things). The JSON keeps DESIGN's words, the raw values.
    public var label: String {
        switch self {
        case .active: "ACTIVE"
        case .gracePeriod: "GRACE PERIOD"
        case .billingRetry: "BILLING RETRY"
        case .expired: "EXPIRED"
        case .revoked: "REVOKED"
        case .owned: "OWNED"
        case .none: "NONE"
        }
    }

    /// Whether the state grants access.
    public var grantsAccess: Bool { self == .active || self == .gracePeriod || self == .owned }
}

/// One entitlement's state, with the transaction that decided it and why.
public struct Entitlement: Hashable, Sendable {
    public var name: String
    public var state: EntitlementState
    public var productId: String?
    public var expiresDate: Timestamp?
    /// Whether the subscription will renew, when renewal info is known.
    public var willRenew: Bool?
    public var autoRenewProductId: String?
    /// The transaction that decided the state.
    public var transactionId: String?
    /// Why it expired (Apple's expirationIntent), when known.
    public var expirationIntent: ExpirationIntent?
    public var gracePeriodExpiresDate: Timestamp?
    public var revocationDate: Timestamp?
    public var revocationReason: RevocationReason?
    public var revocationType: RevocationType?
    /// A sentence for people: why this state.
    public var reason: String

    public init(name: String, state: EntitlementState, reason: String) {
        self.name = name
        self.state = state
        self.reason = reason
    }
}

extension Entitlement {
    /// What is said of renewal, when known, by `lookup` and the dashboard alike: "renews" of a period that runs; during
    /// a grace period or billing retry "renewal on" ("renews" there read as a promise: the payment is failing); of one that ended (or was
    /// revoked) only that renewal was on when last reported ("EXPIRED ... renews" read as a contradiction). Off is the
    /// customer's choice unless Apple says what stopped it: "renewal off" after billing failed read as the customer
    /// turning renewal off (DESIGN section 7: never blur the two). Of a revoked one, renewal off with no intent is
    /// Apple's doing after the refund or the family's revocation (the timeline says so), and the reason says what
    /// ended it: nothing more is said.
    public var renewalWords: String? {
        guard let willRenew else { return nil }
        if state == .revoked, !willRenew, expirationIntent == nil { return nil }
        if willRenew {
            switch state {
            case .active: return "renews"
            // (The why says the billing failed and Apple retries; at 80 columns a longer note was cut to nothing.)
            case .gracePeriod, .billingRetry: return "renewal on"
            default: return "renewal was on"
            }
        }
        switch expirationIntent {
        case .billingError: return "renewal stopped: billing failed"
        case .productUnavailable: return "renewal stopped: product unavailable"
        case .priceIncreaseDeclined: return "renewal stopped: price increase not consented to"
        case .other: return "renewal stopped by Apple, not by the customer"
        case .unknown(let intent): return "renewal stopped (expiration intent \(intent))"
        case .customerCancelled, nil: return "renewal off"
        }
    }
}

extension CustomerHistory {
    /// The state of every entitlement at `instant`; `now` is always a parameter, never read.
    /// - Parameter known: entitlement names to report even when nothing was bought (`none`).
    public func entitlements(at instant: Timestamp, catalog: Catalog = Catalog(), known: [String] = []) -> [Entitlement] {
        var byName: [String: [Transaction]] = [:]
        for t in transactions {
            guard let name = entitlement(of: t, catalog: catalog) else { continue }
            byName[name, default: []].append(t)
        }
        var names = Set(byName.keys)
        names.formUnion(known)
        let renewalOnly = renewalsWithoutTransactions(at: instant, catalog: catalog)
        for e in renewalOnly where byName[e.name] == nil { names.remove(e.name) }
        var found = names.sorted().map { name in
            let group = byName[name] ?? []
            guard !group.isEmpty else { return Entitlement(name: name, state: .none, reason: "nothing bought for it") }
            return state(of: name, group, at: instant, catalog: catalog)
        }
        found += renewalOnly.filter { byName[$0.name] == nil }
        return found.sorted { $0.name < $1.name }
    }

    /// A subscription the ledger knows only by its renewal info (Apple's signed renewal info sent alone, say): no
    /// transaction of it, so no access can be said, but what the info says is (renewal on or off, to what product).
    private func renewalsWithoutTransactions(at instant: Timestamp, catalog: Catalog) -> [Entitlement] {
        let originals = Set(transactions.map { $0.originalTransactionId ?? $0.transactionId })
        var latest: [String: SeenRenewal] = [:]
        for seen in renewals where seen.seenAt <= instant {
            guard let original = seen.info.originalTransactionId, !originals.contains(original) else { continue }
            latest[original] = seen
        }
        return latest.keys.sorted().map { original in
            let seen = latest[original]!
            let info = seen.info
            let product = info.autoRenewProductId ?? info.productId
            let name = product.flatMap { catalog.products[$0]?.entitlement } ?? product ?? "subscription \(original)"
            let renewal = info.autoRenewStatus.map { $0 == .on ? "renewal on" : "renewal off" } ?? "renewal not said"
            var e = Entitlement(
                name: name, state: .none,
                reason: "renewal info only, seen \(seen.seenAt.iso8601): \(renewal)"
                    + "\(info.autoRenewProductId.map { ", renewing to \($0)" } ?? ""); no transaction of subscription \(original) is known")
            e.productId = info.productId ?? info.autoRenewProductId
            e.willRenew = info.autoRenewStatus.map { $0 == .on }
            e.autoRenewProductId = info.autoRenewProductId
            e.expirationIntent = info.expirationIntent
            return e
        }
    }

    private func revoked(_ t: Transaction, at instant: Timestamp) -> Bool { revocation(of: t, at: instant) != nil }

    private func state(of name: String, _ group: [Transaction], at instant: Timestamp, catalog: Catalog) -> Entitlement {
        let started = group.filter { ($0.purchaseDate ?? instant) <= instant }
        guard let latest = started.last else {
            var e = Entitlement(name: name, state: .none, reason: "first purchase is after this instant")
            e.productId = group.first?.productId
            return e
        }
        switch catalog.type(of: latest) {
        case .nonConsumable:
            let live = started.filter { !revoked($0, at: instant) }
            if let owned = live.last {
                let assumed = catalog.assumesType(of: owned) ? " (no type in the data: taken for a non-consumable; a catalog says what it is)" : ""
                // A refund Apple reversed is said, so that the owned item is not read as never refunded; the reversal
                // first (cut at a narrow screen's edge, "refunded 2025-06-…" read as a refund that stood).
                var reversed = ""
                if let refund = owned.revocation, refund.isRefund, refund.date <= instant,
                    let reversal = refundReversal(of: owned.transactionId, at: instant)
                {
                    reversed = "; refund reversed \(reversal.iso8601) (refunded \(refund.date.iso8601))"
                }
                var e = base(name, .owned, owned, "bought \(owned.purchaseDate?.iso8601 ?? "?")\(reversed)\(assumed)")
                e.expiresDate = nil
                return e
            }
            return revokedEntitlement(name, latest)
        case .nonRenewingSubscription:
            let duration = latest.productId.flatMap { catalog.products[$0]?.durationMilliseconds }
            let end = latest.expiresDate ?? duration.map { (latest.purchaseDate ?? instant).adding(milliseconds: $0) }
            if revoked(latest, at: instant) { return revokedEntitlement(name, latest) }
            if let end, end > instant {
                var e = base(name, .active, latest, "non-renewing period until \(end.iso8601)")
                e.expiresDate = end
                return e
            }
            var e = base(name, end == nil ? .owned : .expired, latest, end == nil ? "bought; no duration known" : "period ended \(end!.iso8601)")
            e.expiresDate = end
            return e
        default:
            return subscription(name, started, at: instant)
        }
    }

    private func subscription(_ name: String, _ started: [Transaction], at instant: Timestamp) -> Entitlement {
        // An upgraded transaction is superseded by the one that replaced it, from the moment that one started:
        // before it, the upgraded period is what covered the customer (legacy and Server API data carry the
        // flag already, whenever it is read).
        let live = started.filter { t in
            guard t.isUpgraded == true else { return true }
            return !started.contains { other in
                other.isUpgraded != true && other.transactionId != t.transactionId
                    && other.originalTransactionId == t.originalTransactionId
                    && (other.purchaseDate ?? instant) >= (t.purchaseDate ?? instant)
            }
        }
        let candidates = live.isEmpty ? started : live
        let latest = candidates.max { (end($0), start($0)) < (end($1), start($1)) }!
        // A renewal info seen before the latest period was bought again after a lapse says nothing of it: renewal was
        // on when it was bought, whatever the info said ("turned renewal off" on 25 November is not why a subscription
        // bought again on 29 November ended). A renewal is charged up to a day before its period begins, and the info
        // signed with it holds (DID_RENEW): only one older than that day is stale without a lapse.
        let began = start(latest)
        let previousEnd = candidates.filter { start($0) < began }.map(end).max()
        let boughtAgain = previousEnd.map { $0.distance(to: began) > 60_000 } ?? true
        let renewal = seenRenewal(original: latest.originalTransactionId, at: instant).flatMap { seen -> RenewalInfo? in
            guard seen.seenAt < began else { return seen.info }
            let stale = boughtAgain || seen.seenAt.distance(to: began) > 86_400_000
            return stale ? nil : seen.info
        }
        func decorate(_ e: inout Entitlement) {
            if let renewal {
                e.willRenew = renewal.autoRenewStatus.map { $0 == .on }
                e.autoRenewProductId = renewal.autoRenewProductId
            }
        }
        if let covering = candidates.last(where: {
            ($0.purchaseDate ?? instant) <= instant && ($0.expiresDate.map { $0 > instant } ?? false)
        }) {
            if revoked(covering, at: instant) {
                var e = revokedEntitlement(name, covering)
                decorate(&e)
                return e
            }
            var e = base(name, .active, covering, covering.offerDiscountType == .freeTrial ? "in a free trial until \(covering.expiresDate!.iso8601)" : "paid through \(covering.expiresDate!.iso8601)")
            decorate(&e)
            return e
        }
        if revoked(latest, at: instant) {
            var e = revokedEntitlement(name, latest)
            decorate(&e)
            return e
        }
        // Apple's table: billing retry with grace -> entitled until the grace period ends; without -> not entitled.
        // Apple retries a failed renewal for up to 60 days; past them the subscription has expired (billing error).
        let retriesEnd = end(latest).adding(milliseconds: Self.billingRetryDays * 86_400_000)
        if let renewal, renewal.isInBillingRetryPeriod == true, retriesEnd <= instant {
            var e = base(name, .expired, latest, "expired \(latest.expiresDate?.iso8601 ?? "?"): billing failed, and Apple's retries (60 days) ended \(retriesEnd.iso8601)")
            e.expirationIntent = renewal.expirationIntent
            decorate(&e)
            e.willRenew = false
            return e
        }
        if let renewal, renewal.isInBillingRetryPeriod == true {
            if let grace = renewal.gracePeriodExpiresDate, grace > instant {
                var e = base(name, .gracePeriod, latest, "grace period until \(grace.iso8601) (billing failed)")
                e.gracePeriodExpiresDate = grace
                decorate(&e)
                return e
            }
            var e = base(name, .billingRetry, latest, "billing failed; Apple is retrying, no access meanwhile")
            e.gracePeriodExpiresDate = renewal.gracePeriodExpiresDate
            decorate(&e)
            return e
        }
        var e = base(name, .expired, latest, "expired \(latest.expiresDate?.iso8601 ?? "?")")
        if let renewal {
            e.expirationIntent = renewal.expirationIntent
            if let intent = renewal.expirationIntent { e.reason += ": " + Self.describe(intent) }
        }
        decorate(&e)
        return e
    }

    private func base(_ name: String, _ state: EntitlementState, _ t: Transaction, _ reason: String) -> Entitlement {
        var e = Entitlement(name: name, state: state, reason: reason)
        e.productId = t.productId
        e.expiresDate = t.expiresDate
        e.transactionId = t.transactionId
        return e
    }

    private func revokedEntitlement(_ name: String, _ t: Transaction) -> Entitlement {
        let family = t.revocation.map { !$0.isRefund } ?? false
        var e = base(name, .revoked, t, family ? "family sharing access revoked \(t.revocationDate?.iso8601 ?? "")" : "refunded \(t.revocationDate?.iso8601 ?? "")")
        if !family, let reason = t.revocationReason { e.reason += reason == .appIssue ? " (app issue)" : " (other reason)" }
        e.revocationDate = t.revocationDate
        e.revocationReason = t.revocationReason
        e.revocationType = t.revocationType
        return e
    }

    /// How long Apple retries a failed renewal: "up to 60 days" (App Store Server API, billing retry).
    static let billingRetryDays: Int64 = 60

    static func describe(_ intent: ExpirationIntent) -> String {
        switch intent {
        case .customerCancelled: "the customer turned renewal off"
        case .billingError: "billing error"
        case .priceIncreaseDeclined: "the customer declined a price increase"
        case .productUnavailable: "the product was not available"
        case .other: "other reason"
        case .unknown(let raw): "reason \(raw)"
        }
    }
}

private func start(_ t: Transaction) -> Timestamp { t.purchaseDate ?? Timestamp(millisecondsSince1970: 0) }
private func end(_ t: Transaction) -> Timestamp { t.expiresDate ?? start(t) }
