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
        // The common case (the same transaction in `in_app` and `latest_receipt_info`, or in the next response
        // of the same customer): an identical sighting, where the field-by-field merge below would keep every
        // value and only unite the sources.
        var sameSighting = other
        sameSighting.sources = sources
        if sameSighting == self {
            for source in other.sources where !sources.contains(source) { sources.append(source) }
            return []
        }
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
        func fill(_ field: TransactionField) {
            guard let lost = field.value(loser) else { return }
            if let kept = field.value(winner) {
                if bothVerified && lost != kept { conflicts.append(field.name) }
            } else {
                field.assign(&winner, lost)
            }
        }
        for field in Self.fields where field.merge == .fill { fill(field) }
        // A revocation or an upgrade is a later fact: whoever knows of it, it stands unless the
        // winner is the later signed sighting that says otherwise (REFUND_REVERSED clears it).
        if winner.revocationDate == nil && !(otherWins && winner.signedDate != nil && loser.signedDate != nil) {
            winner.revocationDate = loser.revocationDate
            winner.revocationReason = winner.revocationReason ?? loser.revocationReason
            winner.revocationType = winner.revocationType ?? loser.revocationType
            winner.revocationPercentage = winner.revocationPercentage ?? loser.revocationPercentage
        } else {
            for field in Self.fields where field.merge == .revocation { fill(field) }
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
