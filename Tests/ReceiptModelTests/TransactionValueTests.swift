import Testing

@testable import ReceiptModel

/// A transaction's fields are shared between copies until one changes (copy on write): these check that it still
/// behaves as a value, whichever copy changes and however (a field, its kept JSON, its sources, a merge).
@Suite("a transaction is a value")
struct TransactionValueTests {
    static let first = Provenance(path: "a.ndjson", index: 1, location: "in_app[0]")
    static let second = Provenance(path: "b.ndjson", index: 7, location: "latest_receipt_info[2]")

    /// A transaction with every field, kept JSON and sources set, built afresh at each call: comparisons with it
    /// compare values, never two holders of the same shared fields.
    static func full() -> Transaction {
        var t = Transaction(transactionId: "1000000000000001")
        for field in Transaction.fields { field.assign(&t, field.value(TransactionFieldTests.full)) }
        t.legacy.append("is_trial_period", .string("false"))
        t.extra.append("newField", .number("1"))
        t.verification = .verified
        t.sources = [first]
        return t
    }

    @Test("a transaction's own stored properties are its shared fields and its sources only")
    func layout() {
        // A stored property added beside them would be missed by ==, hashing and the mirror: add it to Fields.
        #expect(MemoryLayout<Transaction>.size == MemoryLayout<Transaction.Storage>.size + MemoryLayout<[Provenance]>.size)
    }

    @Test("changing one field of a copy leaves the original and other copies as they were")
    func copiesAreIndependent() {
        for field in Transaction.fields where field.merge != .identity {
            let original = Self.full()
            let other = original
            var copy = original
            field.assign(&copy, nil)
            #expect(field.value(copy) == nil, "\(field.name)")
            #expect(field.value(original) != nil, "clearing \(field.name) in a copy cleared the original")
            #expect(original == Self.full() && other == Self.full(), "\(field.name)")
        }
        let original = Self.full()
        var copy = original
        copy.legacy.append("is_in_intro_offer_period", .string("true"))
        copy.extra.members.removeAll()
        copy.verification = .failed
        copy.sources.append(Self.second)
        copy.transactionId = "2000000000000002"
        #expect(original == Self.full())
        #expect(original.legacy.members.count == 1 && original.extra["newField"] == .number("1"))
        #expect(original.verification == .verified && original.sources == [Self.first])
        #expect(original.transactionId == "1000000000000001")
        #expect(copy.legacy["is_in_intro_offer_period"] == .string("true") && copy.extra.isEmpty)
    }

    @Test("equality and hashing count every field, the kept JSON, the verification and the sources")
    func equality() {
        let a = Self.full()
        #expect(a == Self.full() && a.hashValue == Self.full().hashValue, "equal values held apart are equal")
        var changes: [(String, Transaction)] = []
        for field in Transaction.fields {
            var t = Self.full()
            field.assign(&t, nil)
            if field.merge == .identity { t.transactionId = "another" }
            changes.append((field.name, t))
        }
        var t = Self.full()
        t.legacy.members.removeAll()
        changes.append(("legacy", t))
        t = Self.full()
        t.extra.append("other", .null)
        changes.append(("extra", t))
        t = Self.full()
        t.verification = .skipped
        changes.append(("verification", t))
        for (name, changed) in changes {
            #expect(changed != a && !changed.hasSameFields(as: a), "\(name)")
        }
        var sameFields = a
        sameFields.sources = [Self.second]
        #expect(sameFields != a && sameFields.hasSameFields(as: a))
        #expect(Set([a, Self.full(), sameFields] + changes.map(\.1)).count == changes.count + 2)
    }

    @Test("a merge changes only the transaction merged into: not the sighting given, nor earlier copies", arguments: [true, false])
    func mergeLeavesOthersAlone(otherWins: Bool) {
        func mine() -> Transaction {
            var t = Transaction(transactionId: "1000000000000001")
            t.productId = "mine.product"
            t.webOrderLineItemId = "950000000000001"
            t.signedDate = Timestamp(millisecondsSince1970: otherWins ? 1_000 : 2_000)
            t.legacy.append("is_trial_period", .string("false"))
            t.sources = [Self.first]
            return t
        }
        func theirs() -> Transaction {
            var t = Transaction(transactionId: "1000000000000001")
            t.productId = "their.product"
            t.appAccountToken = "69797ade-9bc0-4a28-8100-b4c426c09b90"
            t.signedDate = Timestamp(millisecondsSince1970: otherWins ? 2_000 : 1_000)
            t.revocationDate = Timestamp(millisecondsSince1970: 1_500)
            t.extra.append("newField", .number("1"))
            t.sources = [Self.second]
            return t
        }
        var merged = mine()
        let mineBefore = merged
        let given = theirs()
        let givenCopy = given

        merged.merge(given, preferOther: true)

        // Compared with values built afresh, not with copies that share their fields.
        #expect(given == theirs() && givenCopy == theirs(), "the sighting merged in changed")
        #expect(given.webOrderLineItemId == nil && given.legacy.isEmpty && given.sources == [Self.second])
        #expect(mineBefore == mine(), "a copy taken before the merge changed")
        // The later signed sighting wins its fields; the other fills what it lacks.
        #expect(merged.productId == (otherWins ? "their.product" : "mine.product"))
        #expect(merged.webOrderLineItemId == "950000000000001")
        #expect(merged.appAccountToken == "69797ade-9bc0-4a28-8100-b4c426c09b90")
        #expect(merged.legacy["is_trial_period"] == .string("false") && merged.extra["newField"] == .number("1"))
        // A revocation either sighting knows of stands.
        #expect(merged.revocationDate == Timestamp(millisecondsSince1970: 1_500))
        #expect(merged.sources == [Self.first, Self.second], "this transaction's sources first, then the other's")
    }

    @Test("a transaction's mirror lists each stored field by name")
    func mirror() {
        let labels = Mirror(reflecting: Self.full()).children.compactMap(\.label)
        #expect(labels.count == Set(labels).count)
        #expect(Set(labels) == Transaction.fieldNames.union(["legacy", "extra", "verification", "sources"]))
    }
}
