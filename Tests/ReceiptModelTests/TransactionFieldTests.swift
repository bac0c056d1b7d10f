import Testing

@testable import ReceiptModel

/// `Transaction.fields` is the one list of a transaction's fields: every stored field of Apple's payload is on it,
/// and each entry reads and writes the property it names.
@Suite("the transaction field list")
struct TransactionFieldTests {
    /// A transaction with every field set to a value of its own.
    static let full: Transaction = {
        var t = Transaction(transactionId: "1000000000000001")
        for (index, field) in Transaction.fields.enumerated() where field.merge != .identity {
            let value: FieldValue =
                switch field.kind {
                case .text: .text("v\(index)")
                case .integer, .milliunits: .integer(Int64(index + 1))
                case .date: .date(Timestamp(millisecondsSince1970: 1_700_000_000_000 + Int64(index)))
                case .flag: .flag(true)
                case .json: .json(.object(JSONObject([JSONObject.Member(key: "k", value: .number("\(index)"))])))
                }
            field.assign(&t, value)
        }
        return t
    }()

    @Test("every stored property but provenance and kept extras is a field, named as Apple names it")
    func coversTheStruct() {
        let properties = Set(Mirror(reflecting: Self.full).children.compactMap(\.label))
        let notApple: Set = ["legacy", "extra", "verification", "sources"]
        #expect(properties.subtracting(notApple) == Transaction.fieldNames)
        #expect(Transaction.fieldNames.count == Transaction.fields.count, "a field listed twice")
    }

    @Test("each field reads back what it wrote, into its own property only")
    func roundTrips() {
        for (index, field) in Transaction.fields.enumerated() where field.merge != .identity {
            let value = field.value(Self.full)
            #expect(value != nil, "\(field.name) did not keep its value")
            // Every other field is untouched when this one is cleared.
            var cleared = Self.full
            field.assign(&cleared, nil)
            #expect(field.value(cleared) == nil, "\(field.name)")
            for (other, otherField) in Transaction.fields.enumerated() where other != index {
                #expect(otherField.value(cleared) == otherField.value(Self.full), "clearing \(field.name) changed \(otherField.name)")
            }
        }
    }
}
