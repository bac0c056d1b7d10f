import Testing

@testable import ReceiptModel

/// A transaction's fields are shared between copies until one changes (copy on write): these check that it still
/// behaves as a value, whichever copy changes and however (a field, its kept JSON, its sources, a merge).
@Suite("a transaction is a value")
struct TransactionValueTests {
    static let full = TransactionFieldTests.full
    static let first = Provenance(path: "a.ndjson", index: 1, location: "in_app[0]")
    static let second = Provenance(path: "b.ndjson", index: 7, location: "latest_receipt_info[2]")

    @Test("changing one field of a copy leaves the original and other copies as they were")
    func copiesAreIndependent() {
        for field in Transaction.fields where field.merge != .identity {
            let original = Self.full
            let other = original
            var copy = original
            field.assign(&copy, nil)
            #expect(field.value(copy) == nil, "\(field.name)")
            #expect(field.value(original) != nil, "clearing \(field.name) in a copy cleared the original")
            #expect(original == other && original == Self.full, "\(field.name)")
        }
        var copy = Self.full
        copy.legacy.append("is_trial_period", .string("true"))
        copy.extra.append("newField", .number("1"))
        copy.sources.append(Self.first)
        copy.transactionId = "2000000000000002"
        #expect(Self.full.legacy.isEmpty && Self.full.extra.isEmpty && Self.full.sources.isEmpty)
        #expect(Self.full.transactionId == "1000000000000001")
        #expect(copy.legacy["is_trial_period"] == .string("true") && copy.extra["newField"] == .number("1"))
    }

    @Test("equality and hashing count every field and the sources")
    func equality() {
        let a = Self.full
        var sameFields = a
        sameFields.sources = [Self.first]
        var otherProduct = a
        otherProduct.productId = "another.product"
        var rebuilt = Transaction(transactionId: a.transactionId)
        for field in Transaction.fields { field.assign(&rebuilt, field.value(a)) }

        #expect(rebuilt == a && rebuilt.hashValue == a.hashValue, "equal fields held apart are equal")
        #expect(sameFields != a && sameFields.hasSameFields(as: a))
        #expect(otherProduct != a && !otherProduct.hasSameFields(as: a))
        #expect(Set([a, rebuilt, sameFields, otherProduct]).count == 3)
    }

    @Test("a merge changes only the transaction merged into: not the sighting given, nor earlier copies", arguments: [true, false])
    func mergeLeavesOthersAlone(otherWins: Bool) {
        var mine = Transaction(transactionId: "1000000000000001")
        mine.productId = "mine.product"
        mine.webOrderLineItemId = "950000000000001"
        mine.signedDate = Timestamp(millisecondsSince1970: otherWins ? 1_000 : 2_000)
        mine.legacy.append("is_trial_period", .string("false"))
        mine.sources = [Self.first]
        var theirs = Transaction(transactionId: "1000000000000001")
        theirs.productId = "their.product"
        theirs.appAccountToken = "69797ade-9bc0-4a28-8100-b4c426c09b90"
        theirs.signedDate = Timestamp(millisecondsSince1970: otherWins ? 2_000 : 1_000)
        theirs.revocationDate = Timestamp(millisecondsSince1970: 1_500)
        theirs.extra.append("newField", .number("1"))
        theirs.sources = [Self.second]
        let mineBefore = mine
        let theirsBefore = theirs

        mine.merge(theirs, preferOther: true)

        #expect(theirs == theirsBefore, "the sighting merged in changed")
        #expect(mineBefore.productId == "mine.product" && mineBefore.appAccountToken == nil && mineBefore.sources == [Self.first])
        // The later signed sighting wins its fields; the other fills what it lacks.
        #expect(mine.productId == (otherWins ? "their.product" : "mine.product"))
        #expect(mine.webOrderLineItemId == "950000000000001")
        #expect(mine.appAccountToken == "69797ade-9bc0-4a28-8100-b4c426c09b90")
        #expect(mine.legacy["is_trial_period"] == .string("false") && mine.extra["newField"] == .number("1"))
        // A revocation either sighting knows of stands.
        #expect(mine.revocationDate == Timestamp(millisecondsSince1970: 1_500))
        #expect(mine.sources == [Self.first, Self.second], "this transaction's sources first, then the other's")
    }

    @Test("a transaction's mirror lists each stored field by name")
    func mirror() {
        let labels = Mirror(reflecting: Self.full).children.compactMap(\.label)
        #expect(labels.count == Set(labels).count)
        #expect(Set(labels) == Transaction.fieldNames.union(["legacy", "extra", "verification", "sources"]))
    }
}
