import ReceiptModel

/// The kinds of timeline event, exactly DESIGN section 7's words.
public enum EventKind: String, Hashable, Sendable, CaseIterable {
    case purchase, subscribed, trialStarted, offerRedeemed, renewed, trialConverted, upgraded, downgraded, crossgraded
    case autoRenewDisabled, autoRenewEnabled, billingIssue, gracePeriodStarted, billingRecovered, expired, lapsed
    case resubscribed, refunded, refundDeclined, refundReversed, familyRevoked, consumptionRequested, priceIncrease
    case renewalExtended
}

/// One event of a customer's history: when it took effect, when the ledger learned of it, and what it was.
public struct TimelineEvent: Hashable, Sendable {
    public var at: Timestamp
    public var seenAt: Timestamp
    public var kind: EventKind
    public var productId: String?
    public var transactionId: String?
    public var detail: String

    public init(at: Timestamp, seenAt: Timestamp, kind: EventKind, productId: String?, transactionId: String?, detail: String) {
        self.at = at
        self.seenAt = seenAt
        self.kind = kind
        self.productId = productId
        self.transactionId = transactionId
        self.detail = detail
    }

    /// Whether `seenAt` should be shown: it differs from `at` by more than a minute.
    public var learnedLate: Bool { at.distance(to: seenAt) > 60_000 }
}

extension CustomerHistory {
    /// The customer's history up to `instant`, oldest first (DESIGN section 7).
    ///
    /// A refund is never called an opt-out: `autoRenewDisabled` is the customer (or Apple, after a refund
    /// request, which the detail says) turning renewal off; `refunded` is Apple taking the money back. An
    /// upgrade's prorated cancellation is the upgrade, never a refund.
    public func timeline(upTo instant: Timestamp, catalog: Catalog = Catalog()) -> [TimelineEvent] {
        var events: [TimelineEvent] = []
        var refundedIds = Set<String>()
        func add(_ at: Timestamp?, _ seen: Timestamp, _ kind: EventKind, _ t: Transaction?, _ detail: String, product: String? = nil) {
            guard let at, at <= instant else { return }
            events.append(TimelineEvent(at: at, seenAt: seen, kind: kind, productId: product ?? t?.productId, transactionId: t?.transactionId, detail: detail))
        }

        // Transactions, per entitlement: purchases, starts, renewals, changes, gaps, refunds.
        var chains: [String: [Transaction]] = [:]
        for t in transactions where (t.purchaseDate ?? instant) <= instant {
            let type = catalog.type(of: t)
            if type == .autoRenewableSubscription, let name = entitlement(of: t, catalog: catalog) {
                chains[name, default: []].append(t)
            } else {
                add(t.purchaseDate, seenAt(t), .purchase, t, "bought \(t.productId ?? "?")" + (type == .consumable ? " (consumable)" : ""))
            }
            // An upgrade's prorated cancellation has no revocation: the upgrade tells it.
            switch t.revocation {
            case nil: break
            case .familyRevoke(let revoked)?:
                refundedIds.insert(t.transactionId)
                add(revoked, seenAt(t), .familyRevoked, t, "family sharing access revoked")
            case .refund(let revoked, let share)?:
                refundedIds.insert(t.transactionId)
                var detail = "Apple refunded it"
                if let reason = t.revocationReason { detail += reason == .appIssue ? ": app issue" : ": other reason" }
                if share < 100_000 { detail += " (partial, \(share / 1000)%)" }
                add(revoked, seenAt(t), .refunded, t, detail)
            }
        }
        // By entitlement name: a dictionary's own order differs from one instance to the next.
        for (_, chain) in chains.sorted(by: { $0.key < $1.key }) {
            var previous: Transaction?
            for t in chain {
                let seen = seenAt(t)
                defer { if t.isUpgraded != true || previous == nil { previous = t } }
                guard let prior = previous else {
                    if t.offerDiscountType == .freeTrial {
                        add(t.purchaseDate, seen, .trialStarted, t, "free trial until \(t.expiresDate?.iso8601 ?? "?")")
                    } else if t.offerType == .promotional || t.offerType == .offerCode || t.offerType == .winBack {
                        add(t.purchaseDate, seen, .offerRedeemed, t, "subscribed with offer \(t.offerIdentifier ?? "?")")
                    } else {
                        add(t.purchaseDate, seen, .subscribed, t, "subscribed to \(t.productId ?? "?")")
                    }
                    continue
                }
                if t.isUpgraded == true {
                    // A superseded period: the transaction that replaced it tells the story.
                    continue
                }
                // The prior period ended early when it was revoked before its expiry; it lapsed when the next
                // one began more than a minute after it expired. Without both dates there is no gap to tell.
                let revokedEnd = prior.revocation.flatMap { revocation in
                    prior.expiresDate.map { revocation.date < $0 } == true ? revocation.date : nil
                }
                let expiredEnd = prior.expiresDate.flatMap { expires in
                    t.purchaseDate.map { expires.distance(to: $0) > 60_000 } == true ? expires : nil
                }
                if let end = revokedEnd ?? expiredEnd {
                    if revokedEnd == nil { add(end, seen, .expired, prior, "period ended") }
                    let gapLength = max(0, t.purchaseDate.map { end.distance(to: $0) } ?? 0)
                    add(end, seen, .lapsed, prior, "no subscription for \(describeDuration(gapLength))")
                    add(t.purchaseDate, seen, .resubscribed, t, "subscribed again to \(t.productId ?? "?")")
                } else if prior.productId != t.productId {
                    let kind = change(from: prior, to: t, catalog: catalog)
                    add(t.purchaseDate, seen, kind, t, "\(prior.productId ?? "?") -> \(t.productId ?? "?")")
                } else if prior.offerDiscountType == .freeTrial && t.offerDiscountType != .freeTrial {
                    add(t.purchaseDate, seen, .trialConverted, t, "trial converted to paid")
                } else {
                    add(t.purchaseDate, seen, .renewed, t, "renewed until \(t.expiresDate?.iso8601 ?? "?")")
                }
            }
            if let last = previous, let expires = last.expiresDate, expires <= instant,
                last.revocation == nil
            {
                add(expires, seenAt(last), .expired, last, "period ended")
            }
        }

        // Notifications: what Apple told us, at the time it happened.
        var refundRequestAt: Timestamp?
        for seen in notifications where eventTime(seen) <= instant {
            let n = seen.notification
            let at = eventTime(seen)
            let product = seen.productId
            let transaction = transactions.first { $0.transactionId == seen.transactionId }
            func note(_ kind: EventKind, _ detail: String) {
                events.append(TimelineEvent(at: at, seenAt: seen.seenAt, kind: kind, productId: product ?? transaction?.productId, transactionId: seen.transactionId, detail: detail))
            }
            switch (n.notificationType, n.subtype) {
            case (.didChangeRenewalStatus, let subtype):
                let off = subtype == .autoRenewDisabled || (n.version == "1" && n.autoRenewStatus == false)
                let on = subtype == .autoRenewEnabled || (n.version == "1" && n.autoRenewStatus == true)
                if off {
                    if let request = refundRequestAt, request.distance(to: at) <= 86_400_000 {
                        note(.autoRenewDisabled, "renewal turned off by Apple after a refund request, not by the customer")
                    } else {
                        note(.autoRenewDisabled, "the customer turned renewal off")
                    }
                } else if on {
                    note(.autoRenewEnabled, "the customer turned renewal back on")
                }
            case (.didFailToRenew, let subtype):
                note(subtype == .gracePeriod ? .gracePeriodStarted : .billingIssue,
                     subtype == .gracePeriod ? "billing failed; grace period started" : "billing failed; Apple is retrying")
            case (.didRenew, .billingRecovery?), (.didRecover, _):
                note(.billingRecovered, "billing recovered")
            case (.refund, _), (.cancel, _):
                if let id = seen.transactionId, refundedIds.contains(id) { continue }
                note(.refunded, n.notificationType == .cancel ? "Apple customer support cancelled it: refunded" : "Apple refunded it")
            case (.refundDeclined, _): note(.refundDeclined, "Apple declined the refund request")
            case (.refundReversed, _): note(.refundReversed, "Apple reversed the refund: access reinstated")
            case (.revoke, _): if !(seen.transactionId.map(refundedIds.contains) ?? false) { note(.familyRevoked, "family sharing access revoked") }
            case (.consumptionRequest, _):
                refundRequestAt = at
                note(.consumptionRequested, "the customer asked for a refund; consumption data due by \(at.adding(milliseconds: 12 * 3_600_000).iso8601)")
            case (.priceIncrease, let subtype):
                note(.priceIncrease, subtype == .accepted ? "price increase accepted" : "price increase announced")
            case (.renewalExtended, _): note(.renewalExtended, "Apple extended the renewal date")
            case (.interactiveRenewal, _): note(.resubscribed, "resubscribed from the App Store")
            default: continue
            }
        }
        // Renewal infos: changes of auto-renew and billing state as Apple reported them.
        var lastStatus: [String: AutoRenewStatus] = [:]
        var inRetry: [String: Bool] = [:]
        for seen in renewals where seen.seenAt <= instant {
            let info = seen.info
            let key = info.originalTransactionId ?? "?"
            let product = info.productId ?? info.autoRenewProductId
            if let status = info.autoRenewStatus, let before = lastStatus[key], before != status {
                add(seen.seenAt, seen.seenAt, status == .on ? .autoRenewEnabled : .autoRenewDisabled, nil,
                    status == .on ? "renewal turned back on" : "renewal turned off", product: product)
            } else if let status = info.autoRenewStatus, lastStatus[key] == nil, status == .off {
                add(seen.seenAt, seen.seenAt, .autoRenewDisabled, nil, "renewal is off", product: product)
            }
            if let status = info.autoRenewStatus { lastStatus[key] = status }
            let retry = info.isInBillingRetryPeriod == true
            if retry && inRetry[key] != true {
                if let grace = info.gracePeriodExpiresDate {
                    add(seen.seenAt, seen.seenAt, .gracePeriodStarted, nil, "billing failed; grace period until \(grace.iso8601)", product: product)
                } else {
                    add(seen.seenAt, seen.seenAt, .billingIssue, nil, "billing failed; Apple is retrying", product: product)
                }
            } else if !retry && inRetry[key] == true {
                add(seen.seenAt, seen.seenAt, .billingRecovered, nil, "billing recovered", product: product)
            }
            inRetry[key] = retry
        }

        return dedupe(events).sorted(by: timelineOrder)
    }

    private func change(from prior: Transaction, to t: Transaction, catalog: Catalog) -> EventKind {
        if let old = catalog.tier(prior.productId), let new = catalog.tier(t.productId) {
            return new > old ? .upgraded : new < old ? .downgraded : .crossgraded
        }
        // An upgrade takes effect at once and supersedes the old period; a downgrade waits for renewal.
        guard let purchase = t.purchaseDate else { return .crossgraded }
        if transactions.contains(where: { $0.isUpgraded == true && $0.originalTransactionId == t.originalTransactionId && ($0.expiresDate ?? purchase) > purchase }) {
            return .upgraded
        }
        return .crossgraded
    }

    /// One event per kind and transaction (or, without one, per kind, product and minute): the first
    /// sighting's detail and the earliest `seenAt` of them all.
    private func dedupe(_ events: [TimelineEvent]) -> [TimelineEvent] {
        var seen: [String: Int] = [:]
        var out: [TimelineEvent] = []
        for event in events {
            // Renewal-state changes are told by renewal infos and notifications alike: one per minute.
            let stateChange: Set<EventKind> = [.autoRenewDisabled, .autoRenewEnabled, .billingIssue, .gracePeriodStarted, .billingRecovered]
            let key: String
            if let transactionId = event.transactionId, !stateChange.contains(event.kind) {
                key = "\(event.kind.rawValue)|\(transactionId)"
            } else {
                key = "\(event.kind.rawValue)|\(event.at.millisecondsSince1970 / 60_000)"
            }
            if let index = seen[key] {
                out[index].seenAt = min(out[index].seenAt, event.seenAt)
            } else {
                seen[key] = out.count
                out.append(event)
            }
        }
        return out
    }

    /// Oldest first, then by kind in DESIGN's order; ties broken by every other field, so that the same
    /// history always gives the same timeline, byte for byte.
    private func timelineOrder(_ a: TimelineEvent, _ b: TimelineEvent) -> Bool {
        if a.at != b.at { return a.at < b.at }
        if a.kind != b.kind { return order(a.kind) < order(b.kind) }
        if a.productId != b.productId { return (a.productId ?? "") < (b.productId ?? "") }
        if a.transactionId != b.transactionId { return (a.transactionId ?? "") < (b.transactionId ?? "") }
        if a.detail != b.detail { return a.detail < b.detail }
        return a.seenAt < b.seenAt
    }

    private func order(_ kind: EventKind) -> Int { EventKind.allCases.firstIndex(of: kind) ?? 0 }
}

/// `42 s`, `5 min`, `3 h`, `8 days`.
func describeDuration(_ milliseconds: Int64) -> String {
    let seconds = milliseconds / 1000
    if seconds < 60 { return "\(seconds) s" }
    if seconds < 3600 { return "\(seconds / 60) min" }
    if seconds < 86_400 { return "\(seconds / 3600) h" }
    let days = seconds / 86_400
    return "\(days) day\(days == 1 ? "" : "s")"
}
