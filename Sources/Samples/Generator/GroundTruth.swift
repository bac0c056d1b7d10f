import ReceiptModel

/// What the ledger should conclude about a generated customer: the refund flags DESIGN section 7 defines,
/// with the default rule parameters, over the facts the customer's format carries.
extension CustomerLife {
    /// Refunds that stand in the final data: revoked and not reversed.
    var standingRefunds: [LifeTransaction] {
        transactions.filter { $0.revokedAt != nil && $0.reversedAt == nil }
    }

    /// Refunds that stand at `instant`: revoked by then and not reversed by then.
    func standingRefunds(at instant: Int64) -> [LifeTransaction] {
        transactions.filter { $0.revokedVisible(at: instant) }
    }

    /// Expected flag keys at `instant` (by default the end of the data): the flags the rules raise over what
    /// had happened by then. `rule:transactionId` for refund rules, `rule:notificationUUID` for notification
    /// rules (both are the flag ids), `serial-refunder:<transactionId of the refund that crossed the count>`.
    public func expectedFlags(at instant: Int64 = .max) -> [String] {
        var flags: [String] = []
        var counted: [LifeTransaction] = []
        for t in standingRefunds(at: instant) {
            let revoked = t.revokedAt!
            if t.revocationType == "FAMILY_REVOKE" {
                flags.append("family-revoke:\(t.id)")
                continue
            }
            counted.append(t)
            if revoked - t.purchase <= 48 * hourMs { flags.append("quick-refund:\(t.id)") }
            if t.revocationReason == 1 { flags.append("app-issue:\(t.id)") }
            if let percentage = t.revocationPercentage, percentage < 100_000 { flags.append("partial-refund:\(t.id)") }
            if let expires = t.expires, expires > t.purchase,
                Double(revoked - t.purchase) / Double(expires - t.purchase) >= 0.75
            {
                flags.append("late-refund:\(t.id)")
            }
            // At least 100 dollars' worth in the storefront's currency (FlagRules' rates are the storefronts').
            if format.modern, t.price >= 1_000 * storefront.rateCents { flags.append("high-value:\(t.id)") }
        }
        let sorted = counted.sorted { $0.revokedAt! < $1.revokedAt! }
        var start = 0
        for end in sorted.indices {
            while sorted[end].revokedAt! - sorted[start].revokedAt! > 90 * dayMs { start += 1 }
            if end - start + 1 >= 3 {
                flags.append("serial-refunder:\(sorted[end].id)")
                break
            }
        }
        if format == .notificationsV2 {
            for e in events where e.type == "CONSUMPTION_REQUEST" && e.at <= instant { flags.append("consumption-request:\(e.uuid)") }
            for e in events where e.type == "REFUND_REVERSED" && e.at <= instant { flags.append("refund-reversed:\(e.uuid)") }
        }
        return flags.sorted()
    }

    /// Refunds counted per product and UTC day (for `refund-spike`).
    var refundDays: [(product: String, day: Int64)] {
        standingRefunds.filter { $0.revocationType != "FAMILY_REVOKE" }.map { ($0.product.id, $0.revokedAt! / dayMs) }
    }

    /// The three instants the ground truth answers for: 30% and 70% of the way from the first purchase
    /// to the end of the span, and the end itself.
    public func instants(to: Int64) -> [Int64] {
        let first = transactions.map(\.purchase).min() ?? to
        return [first + (to - first) * 3 / 10, first + (to - first) * 7 / 10, to]
    }
}

/// Refund counts per product per day, and the spikes the `refund-spike` rule must find in them.
struct SpikeCounter {
    var counts: [String: [Int64: Int]] = [:]

    mutating func add(_ days: [(product: String, day: Int64)]) {
        for (product, day) in days { counts[product, default: [:]][day, default: 0] += 1 }
    }

    /// Flag ids `refund-spike:<product>:<yyyy-mm-dd>` with the default parameters (factor 3, minimum 5, 28 days).
    func spikes() -> [String] {
        var out: [String] = []
        for (product, days) in counts {
            for (day, count) in days where count >= 5 {
                let trailing = (1...28).reduce(0) { $0 + (days[day - Int64($1)] ?? 0) }
                let mean = Double(trailing) / 28
                if Double(count) >= 3 * max(mean, 1.0 / 28) {
                    out.append("refund-spike:\(product):\(Timestamp(millisecondsSince1970: day * dayMs).iso8601.prefix(10))")
                }
            }
        }
        return out.sorted()
    }
}
