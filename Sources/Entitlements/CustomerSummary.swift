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
}

extension CustomerHistory {
    /// Lifetime figures at `instant`; prices are milliunits of their currency, prorated refunds by their percentage.
    public func facts(at instant: Timestamp) -> CustomerFacts {
        var net: [String: Int64] = [:]
        var refunded: [String: Int64] = [:]
        var first: Timestamp?
        var environments = Set<String>()
        var count = 0
        var refunds = 0
        for t in transactions where (t.purchaseDate ?? instant) <= instant {
            count += 1
            if let start = t.purchaseDate ?? firstSeen[t.transactionId] { first = min(first ?? start, start) }
            if let environment = t.environment { environments.insert(environment.rawValue) }
            let isRefund = t.revocationDate.map { $0 <= instant } == true && t.isUpgraded != true
            if isRefund { refunds += 1 }
            guard let price = t.price, let currency = t.currency else { continue }
            let paid = price * Int64(max(1, t.quantity ?? 1))
            net[currency, default: 0] += paid
            if isRefund {
                let amount = paid * (t.revocationPercentage ?? 100_000) / 100_000
                net[currency, default: 0] -= amount
                refunded[currency, default: 0] += amount
            }
        }
        return CustomerFacts(
            netSpend: net, refunded: refunded, firstSeen: first, environments: environments.sorted(), transactionCount: count,
            refundCount: refunds)
    }
}
