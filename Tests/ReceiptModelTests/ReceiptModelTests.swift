import ReceiptModel
import Testing

@Suite("Value types of the canonical model")
struct ReceiptModelTests {
    @Test("Apple's enums map known raw values to cases and keep unknown ones", arguments: [
        ("Auto-Renewable Subscription", true), ("Non-Consumable", true), ("Time Machine Pass", false),
    ])
    func productTypes(raw: String, known: Bool) {
        let type = ProductType(rawValue: raw)
        #expect(type.rawValue == raw)
        #expect(type.isKnown == known)
        #expect(type.description == raw)
    }

    @Test("integer enums keep unknown values too")
    func intEnums() {
        #expect(OfferType(rawValue: 3) == .offerCode)
        #expect(OfferType(rawValue: 42) == .unknown(42))
        #expect(ExpirationIntent(rawValue: 2) == .billingError)
        #expect(RevocationReason(rawValue: 1) == .appIssue)
    }

    @Test("V1's PROD and any case of an environment name are understood")
    func legacyEnvironments() {
        #expect(Environment(legacy: "PROD") == .production)
        #expect(Environment(legacy: "sandbox") == .sandbox)
        #expect(Environment(legacy: "Staging") == .unknown("Staging"))
        #expect(Environment.xcode.isUnsignedByDesign && !Environment.production.isUnsignedByDesign)
    }

    @Test("a later signedDate wins a merge between sightings of equal trust")
    func laterSignedDateWins() {
        var early = Transaction(transactionId: "1")
        early.signedDate = Timestamp(millisecondsSince1970: 1000)
        early.expiresDate = Timestamp(millisecondsSince1970: 5000)
        early.verification = .verified
        var late = early
        late.signedDate = Timestamp(millisecondsSince1970: 2000)
        late.expiresDate = Timestamp(millisecondsSince1970: 9000)
        var merged = late
        merged.merge(early)
        #expect(merged.expiresDate?.millisecondsSince1970 == 9000)
        merged = early
        merged.merge(late, preferOther: false)
        #expect(merged.expiresDate?.millisecondsSince1970 == 9000)
    }

    @Test("provenance names the record and the place inside it")
    func provenance() {
        let p = Provenance(path: "in.ndjson", index: 4, byteOffset: 120)
        #expect(p.description == "in.ndjson#4")
        #expect(p.at("in_app[2]").description == "in.ndjson#4 in_app[2]")
        #expect(p.at("data").at("signedTransactionInfo").location == "data.signedTransactionInfo")
    }

    @Test("JSON objects keep member order and find members by name")
    func jsonObject() {
        var object = JSONObject()
        object.append("b", .number("1"))
        object.append("a", .string("x"))
        #expect(object.members.map(\.key) == ["b", "a"])
        #expect(object["a"] == .string("x"))
        #expect(object["missing"] == nil)
        #expect(JSONValue.object(object)["b"] == .number("1"))
    }
}
