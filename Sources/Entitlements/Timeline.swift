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
    /// request or a family revoke, which the detail says) turning renewal off; `refunded` is Apple taking the money back. An
    /// upgrade's prorated cancellation is the upgrade, never a refund. A period that begins when Apple's
    /// billing retry succeeds is `billingRecovered`, never a lapse and a resubscribe: the grace period or the
    /// retry between the two periods is told by `gracePeriodStarted` / `billingIssue`, not as a gap.
    public func timeline(upTo instant: Timestamp, catalog: Catalog = Catalog()) -> [TimelineEvent] {
        var events: [TimelineEvent] = []
        var refundedIds = Set<String>()
        /// A revoked transaction's refund or family revoke event (its index in `events`, if added), and whether a
        /// notification has said when the revocation was learned.
        var revocationEvents: [String: Int] = [:]
        var revocationTold = Set<String>()
        /// A notification of a revocation the transaction tells: when it was seen is when the revocation was learned.
        func learned(_ transactionId: String, at seen: Timestamp) {
            guard let index = revocationEvents[transactionId] else { return }
            // Never before the revocation the event tells (a notification of an earlier refund, since reversed).
            let first = revocationTold.insert(transactionId).inserted
            events[index].seenAt = max(first ? seen : min(events[index].seenAt, seen), events[index].at)
        }
        // Recoveries the periods told (subscription, when, index in `events`), so that the notification or
        // renewal info reporting the same recovery adds its sighting to that event instead of a second one.
        var recoveries: [(original: String?, transactionId: String, at: Timestamp, index: Int)] = []
        /// The recovery a period told that a report of one for `original` at `at` is about: the one of the
        /// same transaction, else the latest of the subscription that began at most a minute after `at` and
        /// at most a day before it.
        func told(_ original: String?, _ transactionId: String?, _ at: Timestamp) -> Int? {
            if let transactionId, let same = recoveries.first(where: { $0.transactionId == transactionId }) {
                return same.index
            }
            return recoveries.last { recovery in
                recovery.original == original && original != nil
                    && BillingSignals.isReport(at: at, ofRecoveryAt: recovery.at)
            }?.index
        }
        let billing = BillingSignals(self, upTo: instant)
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
            // An upgrade's prorated cancellation has no revocation: the upgrade tells it. The ledger cannot have
            // learned of a revocation before it happened, though the transaction was first seen before: until a
            // notification of it says when it was learned, no earlier than it happened.
            switch t.revocation {
            case nil: break
            case .familyRevoke(let revoked)?:
                refundedIds.insert(t.transactionId)
                let index = events.count
                add(revoked, max(seenAt(t), revoked), .familyRevoked, t, "family sharing access revoked")
                if events.count > index { revocationEvents[t.transactionId] = index }
            case .refund(let revoked, let share)?:
                refundedIds.insert(t.transactionId)
                var detail = "Apple refunded it"
                if let reason = t.revocationReason { detail += reason == .appIssue ? ": app issue" : ": other reason" }
                if share < 100_000 { detail += " (partial, \(share / 1000)%)" }
                let index = events.count
                add(revoked, max(seenAt(t), revoked), .refunded, t, detail)
                if events.count > index { revocationEvents[t.transactionId] = index }
            }
        }
        /// A period bought with a free trial or an offer, said after what the event says (a resubscription that
        /// began a trial read as a plain one, and the trialConverted after it came from nowhere).
        func offerNote(_ t: Transaction) -> String {
            if t.offerDiscountType == .freeTrial { return ", with a free trial until \(t.expiresDate?.iso8601 ?? "?")" }
            let kind: String
            switch t.offerType {
            case .promotional?: kind = "promotional offer"
            case .offerCode?: kind = "offer code"
            case .winBack?: kind = "win-back offer"
            default: return ""
            }
            return ", with \(kind) \(t.offerIdentifier ?? "?")"
        }
        // By entitlement name: a dictionary's own order differs from one instance to the next.
        for (_, chain) in chains.sorted(by: { $0.key < $1.key }) {
            var previous: Transaction?
            for t in chain {
                let seen = seenAt(t)
                // An upgraded period covered the customer until the one that replaced it began: it is told like
                // any period, and the replacement is told against it (an upgrade, not a lapse).
                defer { previous = t }
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
                // The prior period ended early when it was revoked before its expiry; it lapsed when the next
                // one began more than a minute after it expired. Without both dates there is no gap to tell.
                let revokedEnd = prior.revocation.flatMap { revocation in
                    prior.expiresDate.map { revocation.date < $0 } == true ? revocation.date : nil
                }
                let expiredEnd = prior.expiresDate.flatMap { expires in
                    t.purchaseDate.map { expires.distance(to: $0) > 60_000 } == true ? expires : nil
                }
                if revokedEnd == nil, expiredEnd != nil, let start = t.purchaseDate,
                    billing.recovered(from: prior, by: t, at: start)
                {
                    let product = prior.productId != t.productId ? " as \(t.productId ?? "?")" : ""
                    recoveries.append((prior.originalTransactionId, t.transactionId, start, events.count))
                    let until = t.expiresDate?.iso8601 ?? "?"
                    add(start, seen, .billingRecovered, t, "billing recovered; renewed\(product) until \(until)")
                } else if let end = revokedEnd ?? expiredEnd {
                    if revokedEnd == nil { add(end, seen, .expired, prior, "period ended") }
                    let gapLength = max(0, t.purchaseDate.map { end.distance(to: $0) } ?? 0)
                    add(end, seen, .lapsed, prior, "no subscription for \(describeDuration(gapLength))")
                    add(t.purchaseDate, seen, .resubscribed, t, "subscribed again to \(t.productId ?? "?")\(offerNote(t))")
                } else if prior.productId != t.productId {
                    let kind = change(from: prior, to: t, catalog: catalog)
                    add(t.purchaseDate, seen, kind, t, "\(prior.productId ?? "?") -> \(t.productId ?? "?")\(offerNote(t))")
                } else if prior.offerDiscountType == .freeTrial && t.offerDiscountType != .freeTrial {
                    add(t.purchaseDate, seen, .trialConverted, t, "trial converted to paid\(offerNote(t))")
                } else {
                    add(t.purchaseDate, seen, .renewed, t, "renewed until \(t.expiresDate?.iso8601 ?? "?")\(offerNote(t))")
                }
            }
            if let last = previous, let expires = last.expiresDate, expires <= instant,
                last.revocation == nil
            {
                add(expires, seenAt(last), .expired, last, "period ended")
            }
        }

        // What turns renewal off that is not the customer's choice, per subscription: a refund asked for or given (a
        // consumption request, a refund notification, a refunded period; the App Store turns renewal off after a
        // refund request, Apple's documentation of AUTO_RENEW_DISABLED says), and family sharing revoked (the
        // purchaser stopped sharing: the member's renewal ends with it). Renewal turned off within a day after one of
        // the same subscription is that; another subscription's (a consumable's request, say) says nothing of this one.
        var notTheirChoice: [String: [(at: Timestamp, revoke: Bool)]] = [:]
        for t in transactions {
            guard let revocation = t.revocation, revocation.date <= instant, let original = t.originalTransactionId else { continue }
            notTheirChoice[original, default: []].append((revocation.date, !revocation.isRefund))
        }
        for seen in notifications where eventTime(seen) <= instant {
            let n = seen.notification
            guard [.consumptionRequest, .refund, .cancel, .revoke].contains(n.notificationType),
                let original = n.originalTransactionId ?? transactions.first(where: { $0.transactionId == seen.transactionId })?.originalTransactionId
            else { continue }
            notTheirChoice[original, default: []].append((eventTime(seen), n.notificationType == .revoke))
        }
        // What stops renewal that is Apple's doing or the subscription's end, not the customer turning it off, per
        // subscription: Apple's billing retry ending without a recovery (a renewal info out of retry with renewal off,
        // or with expiration intent 2 once the period has ended), and a period that ended for a price increase not
        // consented to (intent 3), a product no longer for sale (4) or a reason Apple does not give (5); V2 says the
        // same with EXPIRED and its subtype. V1 tells the end of a billing retry as DID_CHANGE_RENEWAL_STATUS with
        // renewal off, which read as the customer's choice: its receipt's renewal info says otherwise.
        var stops: [String: [(at: Timestamp, detail: String)]] = [:]
        func covered(_ original: String, at: Timestamp) -> Bool {
            transactions.contains { t in
                t.originalTransactionId == original && (t.purchaseDate ?? at) <= at && (t.expiresDate.map { $0 > at } ?? false)
            }
        }
        func stopWords(_ intent: ExpirationIntent?) -> String? {
            switch intent {
            // (A retry that ended with renewal off and no intent may be the customer turning it off meanwhile: not
            // told as Apple's without the intent that says billing.)
            case nil: nil
            case .customerCancelled?: nil
            case .billingError?: "Apple stopped renewal: billing retry ended"
            case .priceIncreaseDeclined?: "renewal stopped: the customer did not consent to the price increase"
            case .productUnavailable?: "Apple stopped renewal: the product is no longer for sale"
            case let other?: "renewal stopped by Apple (expiration intent \(other.rawValue)), not by the customer"
            }
        }
        do {
            var retrying: [String: Bool] = [:]
            for seen in renewals where seen.seenAt <= instant {
                let info = seen.info
                guard let original = info.originalTransactionId else { continue }
                let retry = info.isInBillingRetryPeriod == true
                defer { retrying[original] = retry }
                guard !retry, info.autoRenewStatus == .off else { continue }
                let retryEnded = retrying[original] == true
                // An intent while a period still runs is left from an earlier end: renewal off now is the customer's.
                guard retryEnded || !covered(original, at: seen.seenAt),
                    let words = stopWords(info.expirationIntent)
                else { continue }
                stops[original, default: []].append((seen.seenAt, words))
            }
            for seen in notifications where eventTime(seen) <= instant && seen.notification.notificationType == .expired {
                let n = seen.notification
                guard let original = n.originalTransactionId ?? transactions.first(where: { $0.transactionId == seen.transactionId })?.originalTransactionId
                else { continue }
                let intent: ExpirationIntent
                switch n.subtype {
                case .billingRetry?: intent = .billingError
                case .priceIncrease?: intent = .priceIncreaseDeclined
                case NotificationSubtype(rawValue: "PRODUCT_NOT_FOR_SALE")?: intent = .productUnavailable
                default: continue
                }
                stops[original, default: []].append((eventTime(seen), stopWords(intent)!))
            }
        }
        /// What stopped renewal of `original` within a minute of `at`, when it was not the customer.
        func stopped(_ original: String?, at: Timestamp) -> String? {
            guard let original else { return nil }
            return stops[original]?.filter { $0.at.distance(to: at).magnitude <= 60_000 }.min { $0.at.distance(to: at).magnitude < $1.at.distance(to: at).magnitude }?.detail
        }

        /// Why renewal of `original` turned off at `at`, when a refund request or a family revoke came before it (no
        /// earlier than `since`): the latest one's words; nil when neither did.
        func offBecause(_ original: String?, at: Timestamp, since: Timestamp, likely: Bool = false) -> String? {
            guard let original, let cause = notTheirChoice[original]?.filter({ $0.at <= at && $0.at >= since }).max(by: { $0.at < $1.at })
            else { return nil }
            switch (cause.revoke, likely) {
            case (false, false): return "renewal turned off by Apple after a refund request, not by the customer"
            case (true, false): return "renewal turned off as family sharing was revoked, not by the customer"
            case (false, true): return "renewal turned off, after a refund request (the App Store turns it off then)"
            case (true, true): return "renewal turned off, after family sharing was revoked (which turns it off)"
            }
        }

        // Notifications: what Apple told us, at the time it happened.
        for seen in notifications where eventTime(seen) <= instant {
            let n = seen.notification
            let at = eventTime(seen)
            let product = seen.productId
            let transaction = transactions.first { $0.transactionId == seen.transactionId }
            func note(_ kind: EventKind, _ detail: String) {
                events.append(TimelineEvent(at: at, seenAt: seen.seenAt, kind: kind, productId: product ?? transaction?.productId, transactionId: seen.transactionId, detail: detail))
            }
            let original = n.originalTransactionId ?? transaction?.originalTransactionId
            switch (n.notificationType, n.subtype) {
            case (.didChangeRenewalStatus, let subtype):
                let off = subtype == .autoRenewDisabled || (n.version == "1" && n.autoRenewStatus == false)
                let on = subtype == .autoRenewEnabled || (n.version == "1" && n.autoRenewStatus == true)
                if off, subtype != .autoRenewDisabled, let stop = stopped(original, at: at) {
                    // Not the customer's: the subscription ended (no transaction: the period's own end has that one).
                    add(at, seen.seenAt, .expired, nil, stop, product: product ?? transaction?.productId)
                } else if off {
                    note(
                        .autoRenewDisabled,
                        offBecause(original, at: at, since: at.adding(milliseconds: -86_400_000)) ?? "the customer turned renewal off")
                } else if on {
                    note(.autoRenewEnabled, "the customer turned renewal back on")
                }
            case (.didFailToRenew, let subtype):
                note(subtype == .gracePeriod ? .gracePeriodStarted : .billingIssue,
                     subtype == .gracePeriod ? "billing failed; grace period started" : "billing failed; Apple is retrying")
            case (.didRenew, .billingRecovery?), (.didRecover, _):
                if let told = told(original, seen.transactionId, at) {
                    events[told].seenAt = min(events[told].seenAt, seen.seenAt)
                    continue
                }
                note(.billingRecovered, "billing recovered")
            case (.refund, _), (.cancel, _):
                if let id = seen.transactionId, refundedIds.contains(id) {
                    learned(id, at: seen.seenAt)
                    continue
                }
                note(.refunded, n.notificationType == .cancel ? "Apple customer support cancelled it: refunded" : "Apple refunded it")
            case (.refundDeclined, _): note(.refundDeclined, "Apple declined the refund request")
            case (.refundReversed, _): note(.refundReversed, "Apple reversed the refund: access reinstated")
            case (.revoke, _):
                if let id = seen.transactionId, refundedIds.contains(id) {
                    learned(id, at: seen.seenAt)
                    continue
                }
                note(.familyRevoked, "family sharing access revoked")
            case (.consumptionRequest, _):
                note(.consumptionRequested, "the customer asked for a refund; consumption data due by \(at.adding(milliseconds: RefundFlag.consumptionAnswerWindow).iso8601)")
            case (.expired, _):
                if let stop = stopped(original, at: at) {
                    add(at, seen.seenAt, .expired, nil, stop, product: product ?? transaction?.productId)
                }
            case (.priceIncrease, let subtype):
                note(.priceIncrease, subtype == .accepted ? "price increase accepted" : "price increase announced")
            case (.renewalExtended, _): note(.renewalExtended, "Apple extended the renewal date")
            case (.interactiveRenewal, _):
                // Apple sends it for an upgrade, downgrade or crossgrade bought in the App Store too: the change the
                // transactions tell is the event (a "resubscribed" beside an upgrade read as a lapse that never was).
                let changes: Set<EventKind> = [.subscribed, .resubscribed, .upgraded, .downgraded, .crossgraded]
                if let told = events.lastIndex(where: { e in
                    guard changes.contains(e.kind) else { return false }
                    if let id = seen.transactionId, e.transactionId == id { return true }
                    let sameSubscription = original != nil
                        && transactions.first { $0.transactionId == e.transactionId }?.originalTransactionId == original
                    return sameSubscription && e.at.distance(to: at).magnitude <= 60_000
                }) {
                    events[told].seenAt = min(events[told].seenAt, seen.seenAt)
                    continue
                }
                note(.resubscribed, "resubscribed from the App Store")
            default: continue
            }
        }
        // Renewal infos: changes of auto-renew and billing state as Apple reported them.
        var lastExpiry: [String: Timestamp] = [:]
        for t in transactions where (t.purchaseDate ?? instant) <= instant {
            guard let original = t.originalTransactionId, let expires = t.expiresDate else { continue }
            lastExpiry[original] = max(lastExpiry[original] ?? expires, expires)
        }
        var lastStatus: [String: AutoRenewStatus] = [:]
        var lastSeen: [String: Timestamp] = [:]
        var inRetry: [String: Bool] = [:]
        for seen in renewals where seen.seenAt <= instant {
            let info = seen.info
            let key = info.originalTransactionId ?? "?"
            let product = info.productId ?? info.autoRenewProductId
            defer { lastSeen[key] = seen.seenAt }
            let stop = info.autoRenewStatus == .off ? stopped(info.originalTransactionId, at: seen.seenAt) : nil
            if let stop, lastStatus[key] == .on || (inRetry[key] == true && info.isInBillingRetryPeriod != true) {
                // Apple ended it (billing retry over, product gone) or the customer left a price increase unanswered:
                // the subscription expired; renewal was not turned off by the customer.
                add(seen.seenAt, seen.seenAt, .expired, nil, stop, product: product)
            } else if let status = info.autoRenewStatus, let before = lastStatus[key], before != status {
                // Worded as the notification says it: not the customer's choice within a day after a refund request or
                // a family revoke. A report says when it was learned, not when renewal turned off: one longer ago, but
                // since the last report, is what likely turned it off, said as likely.
                let original = info.originalTransactionId
                let off =
                    offBecause(original, at: seen.seenAt, since: seen.seenAt.adding(milliseconds: -86_400_000))
                    ?? offBecause(original, at: seen.seenAt, since: lastSeen[key] ?? seen.seenAt, likely: true)
                    ?? "the customer turned renewal off"
                add(seen.seenAt, seen.seenAt, status == .on ? .autoRenewEnabled : .autoRenewDisabled, nil,
                    status == .on ? "the customer turned renewal back on" : off, product: product)
            } else if let status = info.autoRenewStatus, lastStatus[key] == nil, status == .off,
                info.isInBillingRetryPeriod == true || lastExpiry[key].map({ $0 > seen.seenAt }) ?? true
            {
                // The first report, renewal off, while a period runs (or Apple retries billing, grace period or not):
                // it will not renew. A first report after the last period ended says nothing the expiry does not, and
                // has no date of its own (a verifyReceipt's renewal info is seen when imported: it read as renewal
                // turned off months after the expiry).
                add(seen.seenAt, seen.seenAt, .autoRenewDisabled, nil, "renewal is off", product: product)
            }
            if let status = info.autoRenewStatus { lastStatus[key] = status }
            let retry = info.isInBillingRetryPeriod == true
            if retry && inRetry[key] != true {
                if let grace = info.gracePeriodExpiresDate {
                    add(seen.seenAt, seen.seenAt, .gracePeriodStarted, nil, "grace period until \(grace.iso8601) (billing failed)", product: product)
                } else {
                    add(seen.seenAt, seen.seenAt, .billingIssue, nil, "billing failed; Apple is retrying", product: product)
                }
            } else if !retry && inRetry[key] == true {
                // Out of retry with renewal off or an expiration intent: Apple (or the customer) gave up; no recovery.
                let ended = info.autoRenewStatus == .off || info.expirationIntent != nil
                if let told = told(info.originalTransactionId, nil, seen.seenAt) {
                    events[told].seenAt = min(events[told].seenAt, seen.seenAt)
                } else if !ended {
                    add(seen.seenAt, seen.seenAt, .billingRecovered, nil, "billing recovered", product: product)
                }
            }
            inRetry[key] = retry
        }

        return Self.sayingWhatKeepsAccess(Self.oneEnd(dedupe(events))).sorted(by: timelineOrder)
    }

    /// A subscription that Apple ended when its period ended (a price increase not consented to, a product no
    /// longer for sale) is one `expired` event: the period's own, saying why, not a second one beside it.
    static func oneEnd(_ events: [TimelineEvent]) -> [TimelineEvent] {
        var out = events
        var dropped = Set<Int>()
        for index in out.indices where out[index].kind == .expired && out[index].transactionId == nil {
            let stop = out[index]
            guard let period = out.indices.first(where: { other in
                out[other].kind == .expired && out[other].transactionId != nil && !dropped.contains(other)
                    && (out[other].productId == stop.productId || stop.productId == nil)
                    && out[other].at.distance(to: stop.at).magnitude <= 60_000
            }) else { continue }
            out[period].detail = stop.detail
            out[period].seenAt = min(out[period].seenAt, max(stop.seenAt, out[period].at))
            dropped.insert(index)
        }
        return out.indices.filter { !dropped.contains($0) }.map { out[$0] }
    }

    /// A period that ended into a grace period or a billing retry of the same product (reported within a day of
    /// its end) says so: "expired" alone reads as access lost, which a grace period keeps. (Said of that time: "grace
    /// keeps access" stayed on the event after the grace period had ended.)
    static func sayingWhatKeepsAccess(_ events: [TimelineEvent]) -> [TimelineEvent] {
        let day: Int64 = 86_400_000
        var out = events
        // A period's end (an end told without a transaction is Apple stopping renewal, not a period ending).
        for index in out.indices where out[index].kind == .expired && out[index].transactionId != nil {
            let end = out[index]
            let after = events.first { e in
                (e.kind == .gracePeriodStarted || e.kind == .billingIssue) && e.productId == end.productId && end.productId != nil
                    && end.at.distance(to: e.at).magnitude <= day
            }
            guard let after else { continue }
            out[index].detail =
                after.kind == .gracePeriodStarted
                ? "paid period ended; a grace period began" : "paid period ended; Apple began retrying the payment"
        }
        return out
    }

    private func change(from prior: Transaction, to t: Transaction, catalog: Catalog) -> EventKind {
        if let old = catalog.tier(prior.productId), let new = catalog.tier(t.productId) {
            return new > old ? .upgraded : new < old ? .downgraded : .crossgraded
        }
        // An upgrade takes effect at once and supersedes the old period (Apple marks that one upgraded); a downgrade
        // or crossgrade waits for renewal.
        guard let purchase = t.purchaseDate else { return .crossgraded }
        if prior.isUpgraded == true, (prior.expiresDate ?? purchase) > purchase { return .upgraded }
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

/// What a history says about billing trouble, per subscription (originalTransactionId), in time order: the
/// facts that decide whether a period began because Apple's billing retry succeeded.
struct BillingSignals {
    enum Signal {
        /// Billing failed and Apple is retrying (DID_FAIL_TO_RENEW, or a renewal info in billing retry).
        case retrying
        /// No longer retrying for a reason other than a recovery, or never was (EXPIRED, a renewal info out of retry).
        case notRetrying
        /// Apple recovered the billing (DID_RENEW/BILLING_RECOVERY, DID_RECOVER); the period it carried, if any.
        case recovered(transactionId: String?)
    }

    /// Per subscription: when, and what.
    private var signals: [String: [(at: Timestamp, signal: Signal)]] = [:]

    /// The signals of `history` known by `instant`: notifications at their event time, renewal infos when seen.
    init(_ history: CustomerHistory, upTo instant: Timestamp) {
        var originals: [String: String] = [:]
        for t in history.transactions {
            if let original = t.originalTransactionId { originals[t.transactionId] = original }
        }
        for seen in history.notifications {
            let n = seen.notification
            let at = history.eventTime(seen)
            guard at <= instant,
                let original = n.originalTransactionId ?? seen.transactionId.flatMap({ originals[$0] })
            else { continue }
            switch (n.notificationType, n.subtype) {
            case (.didFailToRenew, _): signals[original, default: []].append((at, .retrying))
            case (.expired, _): signals[original, default: []].append((at, .notRetrying))
            case (.didRenew, .billingRecovery?), (.didRecover, _):
                // The transaction it carried, unless that is not one of the history's periods.
                let carried = seen.transactionId.flatMap { originals[$0] == nil ? nil : $0 }
                signals[original, default: []].append((at, .recovered(transactionId: carried)))
            default: break
            }
        }
        // Notifications first: a renewal info seen at the same instant as its notification says more.
        for seen in history.renewals where seen.seenAt <= instant {
            guard let original = seen.info.originalTransactionId, let retry = seen.info.isInBillingRetryPeriod else {
                continue
            }
            signals[original, default: []].append((seen.seenAt, retry ? .retrying : .notRetrying))
        }
        for key in signals.keys {
            // Stable: signals at the same instant keep the order above.
            signals[key] = signals[key]!.enumerated().sorted { ($0.element.at, $0.offset) < ($1.element.at, $1.offset) }
                .map(\.element)
        }
    }

    /// Whether `next`, beginning at `start` after `prior` expired, is the period Apple's billing retry of
    /// `prior` recovered. It must continue the same subscription; then either Apple says so (a recovery
    /// carrying `next`, or one for the subscription within a day of `start`), or the last billing fact
    /// between `prior`'s start and a minute before `start` (the recovery's own renewal info is at `start`)
    /// is that Apple was retrying.
    func recovered(from prior: Transaction, by next: Transaction, at start: Timestamp) -> Bool {
        guard let original = prior.originalTransactionId, next.originalTransactionId == original else { return false }
        let from = prior.purchaseDate ?? Timestamp(millisecondsSince1970: .min)
        let until = start.adding(milliseconds: -60_000)
        var retrying = false
        for (at, signal) in signals[original] ?? [] {
            if case .recovered(let transactionId) = signal,
                transactionId.map({ $0 == next.transactionId }) ?? Self.isReport(at: at, ofRecoveryAt: start)
            {
                return true
            }
            guard at > from, at < until else { continue }
            switch signal {
            case .retrying: retrying = true
            case .notRetrying: retrying = false
            case .recovered: break
            }
        }
        return retrying
    }

    /// Whether a report at `at` that names no period can be of a recovery at `recovery`: signed at most a
    /// minute before it and at most a day after (sandbox periods last minutes, so nearer ones come first).
    static func isReport(at: Timestamp, ofRecoveryAt recovery: Timestamp) -> Bool {
        at >= recovery.adding(milliseconds: -60_000) && at <= recovery.adding(milliseconds: 86_400_000)
    }
}
