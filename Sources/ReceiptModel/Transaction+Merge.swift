extension Transaction {
    /// Merges another sighting of the same transaction into this one (DESIGN section 3).
    ///
    /// The sighting that wins is the verified one, then the one with the later `signedDate`, then
    /// `other` when `preferOther` (for example `latest_receipt_info` over a stale `in_app`); the loser
    /// only fills fields the winner lacks. Sources are united.
    /// - Returns: the names of fields where two verified sightings disagree, so a caller can show them.
    @discardableResult
    public mutating func merge(_ other: Transaction, preferOther: Bool = true) -> [String] {
        precondition(other.transactionId == transactionId, "merging different transactions")
        let otherWins: Bool
        if other.verification.trustRank != verification.trustRank {
            otherWins = other.verification.trustRank > verification.trustRank
        } else if let mine = signedDate, let theirs = other.signedDate, mine != theirs {
            otherWins = theirs > mine
        } else {
            otherWins = preferOther
        }
        var winner = otherWins ? other : self
        let loser = otherWins ? self : other
        var conflicts: [String] = []
        let bothVerified = verification == .verified && other.verification == .verified
        func fill<T: Equatable>(_ field: WritableKeyPath<Transaction, T?>, _ name: String) {
            if winner[keyPath: field] == nil {
                winner[keyPath: field] = loser[keyPath: field]
            } else if bothVerified, let lost = loser[keyPath: field], lost != winner[keyPath: field] {
                conflicts.append(name)
            }
        }
        fill(\.originalTransactionId, "originalTransactionId")
        fill(\.webOrderLineItemId, "webOrderLineItemId")
        fill(\.bundleId, "bundleId")
        fill(\.productId, "productId")
        fill(\.subscriptionGroupIdentifier, "subscriptionGroupIdentifier")
        fill(\.purchaseDate, "purchaseDate")
        fill(\.originalPurchaseDate, "originalPurchaseDate")
        fill(\.expiresDate, "expiresDate")
        fill(\.quantity, "quantity")
        fill(\.type, "type")
        fill(\.appAccountToken, "appAccountToken")
        fill(\.inAppOwnershipType, "inAppOwnershipType")
        fill(\.signedDate, "signedDate")
        fill(\.offerType, "offerType")
        fill(\.offerIdentifier, "offerIdentifier")
        fill(\.environment, "environment")
        fill(\.storefront, "storefront")
        fill(\.storefrontId, "storefrontId")
        fill(\.transactionReason, "transactionReason")
        fill(\.price, "price")
        fill(\.currency, "currency")
        fill(\.offerDiscountType, "offerDiscountType")
        fill(\.appTransactionId, "appTransactionId")
        fill(\.offerPeriod, "offerPeriod")
        fill(\.advancedCommerceInfo, "advancedCommerceInfo")
        // A revocation or an upgrade is a later fact: whoever knows of it, it stands unless the
        // winner is the later signed sighting that says otherwise (REFUND_REVERSED clears it).
        if winner.revocationDate == nil && !(otherWins && winner.signedDate != nil && loser.signedDate != nil) {
            winner.revocationDate = loser.revocationDate
            winner.revocationReason = winner.revocationReason ?? loser.revocationReason
            winner.revocationType = winner.revocationType ?? loser.revocationType
            winner.revocationPercentage = winner.revocationPercentage ?? loser.revocationPercentage
        } else {
            fill(\.revocationDate, "revocationDate")
            fill(\.revocationReason, "revocationReason")
            fill(\.revocationType, "revocationType")
            fill(\.revocationPercentage, "revocationPercentage")
        }
        if winner.isUpgraded != true && loser.isUpgraded == true { winner.isUpgraded = true }
        for member in loser.legacy where !winner.legacy.has(member.key) { winner.legacy.members.append(member) }
        for member in loser.extra where !winner.extra.has(member.key) { winner.extra.members.append(member) }
        var sources = otherWins ? loser.sources : winner.sources
        for source in (otherWins ? winner.sources : loser.sources) where !sources.contains(source) {
            sources.append(source)
        }
        winner.sources = sources
        self = winner
        return conflicts
    }
}
