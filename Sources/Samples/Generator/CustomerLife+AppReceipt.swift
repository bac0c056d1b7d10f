/// The moment a customer's app sent its app receipt to the server, and what the receipt held then.
struct AppReceiptPlan {
    /// The receipt's creation date (attribute 12): a little after the purchase that made the app send it.
    var createdAt: Int64
    /// Indices into the life's transactions of the purchases in the receipt, in purchase order.
    var transactions: [Int]
    /// identifierForVendor's 16 bytes, which the receipt's SHA-1 hash covers.
    var deviceIdentifier: [UInt8]
    var opaqueValue: [UInt8]
}

extension CustomerLife {
    /// Of the customers who bought a one-time product (non-consumable or consumable), the share whose app
    /// sent its receipt after the last such purchase.
    static let oneTimeReceiptShare = 0.3
    /// Of the other customers with a subscription, the share whose app sent its receipt after the latest period began.
    static let subscriberReceiptShare = 0.06

    /// The app receipt this customer's app sent, if it sent one (at most one per customer).
    ///
    /// The choice comes from a random stream of its own (seed, index), so the lives and every other file
    /// are the same with or without receipts. The receipt holds what Apple's would at its creation date:
    /// every subscription period and non-consumable bought by then, the consumable just bought (Apple drops a
    /// consumable once the app finishes its transaction), cancellation dates of refunds in force then, and
    /// no family-shared purchase whose sharing was revoked by then. It restates purchases the customer's
    /// other records carry, with the same ids and times, so it imports as a merge, never a new purchase.
    func appReceiptPlan(seed: UInt64, to: Int64) -> AppReceiptPlan? {
        var rng = SplitMix64(seed: seed ^ 0x6170_7052_6563_6569, stream: UInt64(index))
        let oneTimeChosen = rng.chance(Self.oneTimeReceiptShare)
        let subscriberChosen = rng.chance(Self.subscriberReceiptShare)
        let draw = rng.next()
        let deviceIdentifier = Self.bytes(&rng, 16)
        let opaqueValue = Self.bytes(&rng, 16)
        func latest(_ kinds: Set<SampleProduct.Kind>) -> LifeTransaction? {
            transactions.filter { kinds.contains($0.product.kind) }.max { $0.purchase < $1.purchase }
        }
        var trigger: (transaction: LifeTransaction, createdAt: Int64)?
        if oneTimeChosen, let t = latest([.consumable, .nonConsumable]) {
            // The app posts the receipt as soon as StoreKit reports the purchase: seconds to two minutes.
            trigger = (t, t.purchase + 3_000 + Int64(draw % 117_000))
        } else if subscriberChosen, let t = latest([.subscription]) {
            // The next launch after a renewal: a minute to two days.
            trigger = (t, t.purchase + minuteMs + Int64(draw % UInt64(2 * dayMs)))
        }
        guard let (bought, after) = trigger else { return nil }
        let createdAt = max(bought.purchase, min(after, to - 1_000))
        var included: [Int] = []
        for (i, t) in transactions.enumerated() where t.purchase <= createdAt {
            switch t.product.kind {
            case .consumable:
                guard t.id == bought.id else { continue }
            case .subscription, .nonConsumable:
                if t.revocationType == "FAMILY_REVOKE" && t.revokedVisible(at: createdAt) { continue }
            }
            included.append(i)
        }
        guard !included.isEmpty else { return nil }
        included.sort { (transactions[$0].purchase, $0) < (transactions[$1].purchase, $1) }
        return AppReceiptPlan(
            createdAt: createdAt, transactions: included, deviceIdentifier: deviceIdentifier, opaqueValue: opaqueValue)
    }

    private static func bytes(_ rng: inout SplitMix64, _ count: Int) -> [UInt8] {
        var out: [UInt8] = []
        while out.count < count {
            let word = rng.next()
            for shift in stride(from: 0, to: 64, by: 8) where out.count < count {
                out.append(UInt8(truncatingIfNeeded: word >> UInt64(shift)))
            }
        }
        return out
    }
}
