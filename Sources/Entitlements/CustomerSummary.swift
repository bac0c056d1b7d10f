import ReceiptModel

/// What a customer is worth and since when: spend net of refunds per currency, first seen, environments.
public struct CustomerFacts: Hashable, Sendable {
    /// Money paid, per currency, in milliunits (refunds already taken out).
    public var netSpend: [String: Int64]
    /// Money refunded, per currency, in milliunits.
    public var refunded: [String: Int64]
    /// The first purchase or first sighting, whichever is earlier.
    public var firstSeen: Timestamp?
    /// Environments the customer's data came from.
    public var environments: [String]
    public var transactionCount: Int
    public var refundCount: Int
    /// Transactions with no price or no currency (verifyReceipt's carry none): counted, but not in ``netSpend``.
    public var unpricedCount = 0
    /// Purchases a family member shared with the customer (`inAppOwnershipType` FAMILY_SHARED): the purchaser paid,
    /// so they are counted, but not in ``netSpend`` or ``refunded``.
    public var sharedCount = 0
    /// Currencies whose totals do not fit in 64-bit milliunits: left out of ``netSpend`` and ``refunded``
    /// rather than shown wrong, each with a sentence in ``warnings``.
    public var unrepresentableCurrencies: [String] = []
    /// What a person should know about these figures (totals that could not be computed).
    public var warnings: [String] = []
}

extension CustomerHistory {
    /// Lifetime figures at `instant`; prices are milliunits of their currency, prorated refunds by their percentage.
    /// A refund counts when it is one by ``Transaction/revocation`` and is in force at `instant` (not reversed);
    /// a family revoke moved no money and an upgrade's prorated cancellation is the upgrade. A purchase shared by a
    /// family member is no spend of this customer's: the purchaser paid.
    ///
    /// Every product and sum is checked: a currency whose figures overflow 64 bits is reported in
    /// ``CustomerFacts/unrepresentableCurrencies`` instead of wrapping or trapping.
    public func facts(at instant: Timestamp) -> CustomerFacts {
        var net: [String: Int64] = [:]
        var refunded: [String: Int64] = [:]
        var overflowed: [String: String] = [:]
        var first: Timestamp?
        var environments = Set<String>()
        var count = 0
        var refunds = 0
        var unpriced = 0
        var shared = 0
        // A customer known by a renewal info alone is known since then, in its environment.
        for seen in renewals where seen.seenAt <= instant {
            first = min(first ?? seen.seenAt, seen.seenAt)
            if let environment = seen.info.environment { environments.insert(environment.rawValue) }
        }
        for t in transactions where (t.purchaseDate ?? instant) <= instant {
            count += 1
            if let start = t.purchaseDate ?? firstSeen[t.transactionId] { first = min(first ?? start, start) }
            if let environment = t.environment { environments.insert(environment.rawValue) }
            let refundedShare = revocation(of: t, at: instant)?.refundedShare
            if refundedShare != nil { refunds += 1 }
            if t.inAppOwnershipType == .familyShared {
                shared += 1
                continue
            }
            guard let price = t.price, let currency = t.currency else {
                unpriced += 1
                continue
            }
            guard overflowed[currency] == nil else { continue }
            let quantity = Int64(max(1, t.quantity ?? 1))
            guard let paid = checked(price.multipliedReportingOverflow(by: quantity)),
                let total = checked(net[currency, default: 0].addingReportingOverflow(paid))
            else {
                overflowed[currency] = "\(currency) figures do not fit in 64-bit milliunits (transaction \(t.transactionId): price \(price) x \(quantity)); \(currency) is left out of the totals"
                continue
            }
            net[currency] = total
            if let share = refundedShare {
                // paid x share / 100 000 in full width: the quotient is at most |paid|, so it always fits.
                let product = paid.multipliedFullWidth(by: share)
                let amount = Int64(100_000).dividingFullWidth(product).quotient
                guard let netAfter = checked(total.subtractingReportingOverflow(amount)),
                    let refundedAfter = checked(refunded[currency, default: 0].addingReportingOverflow(amount))
                else {
                    overflowed[currency] = "\(currency) figures do not fit in 64-bit milliunits (refund of transaction \(t.transactionId)); \(currency) is left out of the totals"
                    continue
                }
                net[currency] = netAfter
                refunded[currency] = refundedAfter
            }
        }
        for currency in overflowed.keys {
            net[currency] = nil
            refunded[currency] = nil
        }
        var facts = CustomerFacts(
            netSpend: net, refunded: refunded, firstSeen: first, environments: environments.sorted(), transactionCount: count,
            refundCount: refunds)
        facts.unpricedCount = unpriced
        facts.sharedCount = shared
        facts.unrepresentableCurrencies = overflowed.keys.sorted()
        facts.warnings = facts.unrepresentableCurrencies.compactMap { overflowed[$0] }
        return facts
    }
}

/// The value of a `...ReportingOverflow` operation, or `nil` when it overflowed.
func checked(_ result: (partialValue: Int64, overflow: Bool)) -> Int64? {
    result.overflow ? nil : result.partialValue
}
