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
        if hasSameFields(as: other) {
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
        // The winner is merged into in place: `self`, or `other` put in its place (a transaction's fields are
        // shared until changed, so neither is copied unless the loser adds to it).
        let mySources = sources
        let loser: Transaction
        if otherWins {
            loser = self
            self = other
        } else {
            loser = other
        }
        var conflicts: [String] = []
        let bothVerified = verification == .verified && loser.verification == .verified
        func fill(_ field: TransactionField) {
            guard let lost = field.value(loser) else { return }
            if let kept = field.value(self) {
                if bothVerified && lost != kept { conflicts.append(field.name) }
            } else {
                field.assign(&self, lost)
            }
        }
        for field in Self.fields where field.merge == .fill { fill(field) }
        // A revocation or an upgrade is a later fact: whoever knows of it, it stands unless the
        // winner is the later signed sighting that says otherwise (REFUND_REVERSED clears it).
        if revocationDate == nil && !(otherWins && signedDate != nil && loser.signedDate != nil) {
            // (Set only where something changes: setting a field of fields shared with another copies them.)
            if let date = loser.revocationDate { revocationDate = date }
            if revocationReason == nil, let reason = loser.revocationReason { revocationReason = reason }
            if revocationType == nil, let type = loser.revocationType { revocationType = type }
            if revocationPercentage == nil, let share = loser.revocationPercentage { revocationPercentage = share }
        } else {
            for field in Self.fields where field.merge == .revocation { fill(field) }
        }
        if isUpgraded != true && loser.isUpgraded == true { isUpgraded = true }
        for member in loser.legacy where !legacy.has(member.key) { legacy.members.append(member) }
        for member in loser.extra where !extra.has(member.key) { extra.members.append(member) }
        // This transaction's sources first, then the other's it did not have.
        let otherSources = otherWins ? sources : loser.sources
        sources = mySources
        for source in otherSources where !sources.contains(source) { sources.append(source) }
        return conflicts
    }
}
