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

    @Test("an amount is written with its currency's minor unit, rounded half away from zero", arguments: [
        (9990, "USD", "9.99"), (9995, "USD", "10.00"), (-9995, "EUR", "-10.00"), (4, "USD", "0.00"), (-4, "USD", "0.00"),
        (990_000, "JPY", "990"), (990_500, "jpy", "991"), (-1_500, "KWD", "-1.500"), (1_234, "BHD", "1.234"),
        (5, nil, "0.01"), (Int64.min, "USD", "-9223372036854775.81"), (Int64.max, "KRW", "9223372036854776"),
    ] as [(Int64, String?, String)])
    func money(milliunits: Int64, currency: String?, expected: String) {
        #expect(Money.format(milliunits, currency: currency) == expected)
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

    @Test("an identical sighting only adds its sources, in order, once each; a sighting differing in one field still merges by field")
    func identicalSightingUnitesSources() {
        var first = Transaction(transactionId: "7")
        first.productId = "pro.monthly"
        first.expiresDate = Timestamp(millisecondsSince1970: 5000)
        first.sources = [Provenance(path: "a.ndjson", index: 0)]
        var second = first
        second.sources = [Provenance(path: "b.ndjson", index: 3), Provenance(path: "a.ndjson", index: 0)]
        var merged = first
        #expect(merged.merge(second).isEmpty)
        #expect(merged.sources == [Provenance(path: "a.ndjson", index: 0), Provenance(path: "b.ndjson", index: 3)])
        #expect(merged.productId == "pro.monthly")

        // Not identical: the winner (the other, by default) keeps its value and fills what it lacks.
        var third = second
        third.productId = nil
        third.currency = "EUR"
        merged.merge(third)
        #expect(merged.productId == "pro.monthly" && merged.currency == "EUR")
        #expect(merged.sources.count == 2)
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

@Suite("Timestamp arithmetic on any 64-bit value")
struct TimestampArithmeticTests {
    @Test("adding holds at the last or first instant instead of wrapping")
    func addingSaturates() {
        #expect(Timestamp(millisecondsSince1970: .max - 5).adding(milliseconds: 12 * 3_600_000).millisecondsSince1970 == .max)
        #expect(Timestamp(millisecondsSince1970: .min + 5).adding(milliseconds: -10).millisecondsSince1970 == .min)
        #expect(Timestamp(millisecondsSince1970: 1000).adding(milliseconds: -1500).millisecondsSince1970 == -500)
    }

    @Test("distance is other minus self, held at Int64's bounds")
    func distanceSaturates() {
        let early = Timestamp(millisecondsSince1970: .min)
        let late = Timestamp(millisecondsSince1970: .max)
        #expect(early.distance(to: late) == .max)
        #expect(late.distance(to: early) == .min)
        #expect(Timestamp(millisecondsSince1970: 10).distance(to: Timestamp(millisecondsSince1970: 4)) == -6)
    }

    @Test("the extreme instants print without trapping", arguments: [Int64.min, Int64.max, -1, -86_400_000])
    func extremesPrint(ms: Int64) {
        let text = Timestamp(millisecondsSince1970: ms).iso8601
        #expect(text.hasSuffix("Z"))
        if ms == -1 { #expect(text == "1969-12-31T23:59:59.999Z") }
        if ms == -86_400_000 { #expect(text == "1969-12-31T00:00:00Z") }
    }
}
