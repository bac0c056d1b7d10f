import ReceiptDecoding
import ReceiptModel
import Testing

@Suite("The canonical model")
struct ModelTests {
    @Test("unknown enum values are kept and printed back unchanged")
    func unknownEnums() async throws {
        let json = #"{"transactionId":"1","type":"Future Product","offerType":9,"inAppOwnershipType":"SOMETHING_NEW","revocationType":"REFUND_FUTURE","environment":"Moon"}"#
        let t = try #require(try await decodeText(json).first?.transactions.first)
        #expect(t.type == .unknown("Future Product"))
        #expect(t.offerType == .unknown(9))
        #expect(t.inAppOwnershipType?.rawValue == "SOMETHING_NEW")
        #expect(t.environment?.isKnown == false)
        var writer = JSONWriter()
        writer.transaction(nil, t)
        let out = String(decoding: writer.bytes, as: UTF8.self)
        #expect(out.contains(#""type":"Future Product""#))
        #expect(out.contains(#""offerType":9"#))
        #expect(out.contains(#""revocationType":"REFUND_FUTURE""#))
    }

    @Test("legacy offer flags map to offerType and keep their raw form", arguments: [
        (#""is_trial_period":"true""#, OfferType.introductory, OfferDiscountType?.some(.freeTrial), String?.none),
        (#""is_in_intro_offer_period":"1""#, .introductory, nil, nil),
        (#""promotional_offer_id":"promo1""#, .promotional, nil, "promo1"),
        (#""offer_code_ref_name":"code1""#, .offerCode, nil, "code1"),
    ])
    func legacyOffers(flag: String, offer: OfferType, discount: OfferDiscountType?, identifier: String?) async throws {
        let json = #"{"status":0,"latest_receipt_info":[{"transaction_id":"1",\#(flag)}]}"#
        let t = try #require(try await decodeText(json).first?.transactions.first)
        #expect(t.offerType == offer)
        #expect(t.offerDiscountType == discount)
        #expect(t.offerIdentifier == identifier)
        #expect(!t.legacy.isEmpty)
    }

    @Test("string, number and boolean spellings of the same legacy facts agree", arguments: [
        #""is_upgraded":"true","auto":"1""#, #""is_upgraded":true,"auto":1"#, #""is_upgraded":"True","auto":"true""#,
    ])
    func spellings(_ body: String) async throws {
        let fields = body.replacingOccurrences(of: "\"auto\"", with: "\"auto_renew_status\"")
        let json = #"{"status":0,"latest_receipt_info":[{"transaction_id":1,\#(fields)}],"pending_renewal_info":[{\#(fields)}]}"#
        let record = try #require(try await decodeText(json).first)
        #expect(record.transactions.first?.isUpgraded == true)
        #expect(record.transactions.first?.transactionId == "1")
        #expect(record.renewalInfos.first?.autoRenewStatus == .on)
    }

    @Test("human dates are used only when the _ms field is absent")
    func humanDates() async throws {
        let json = #"{"status":0,"latest_receipt_info":[{"transaction_id":"1","purchase_date":"2021-03-01 07:00:00 Etc/GMT","expires_date":"2021-03-01 07:00:00 Etc/GMT","expires_date_ms":"1614582000123"}]}"#
        let t = try #require(try await decodeText(json).first?.transactions.first)
        #expect(t.purchaseDate == Timestamp.utc(year: 2021, month: 3, day: 1, hour: 7))
        #expect(t.expiresDate?.millisecondsSince1970 == 1_614_582_000_123)
    }

    @Test("merging: a verified sighting wins over an unsigned one; sources unite")
    func merge() {
        var unsigned = Transaction(transactionId: "1")
        unsigned.productId = "old"
        unsigned.quantity = 1
        unsigned.verification = .notApplicable
        unsigned.sources = [Provenance(path: "a", index: 0)]
        var verified = Transaction(transactionId: "1")
        verified.productId = "new"
        verified.verification = .verified
        verified.sources = [Provenance(path: "b", index: 3)]
        var merged = unsigned
        merged.merge(verified, preferOther: false)
        #expect(merged.productId == "new")
        #expect(merged.quantity == 1)
        #expect(merged.verification == .verified)
        #expect(merged.sources.count == 2)
    }

    @Test("two verified sightings that disagree report the conflict")
    func conflict() {
        var a = Transaction(transactionId: "1")
        a.productId = "x"
        a.verification = .verified
        var b = a
        b.productId = "y"
        let conflicts = a.merge(b)
        #expect(conflicts == ["productId"])
    }

    @Test("timestamps print as ISO 8601 UTC and round trip through the civil calendar")
    func timestamps() {
        #expect(Timestamp(millisecondsSince1970: 1_616_411_598_724).iso8601 == "2021-03-22T11:13:18.724Z")
        #expect(Timestamp(millisecondsSince1970: -62_135_769_600_000).iso8601 == "0000-12-30T00:00:00Z")
        #expect(Timestamp.utc(year: 1, month: 1, day: 1).millisecondsSince1970 == -62_135_596_800_000)
        #expect(Timestamp.utc(year: 2024, month: 2, day: 29, hour: 12).iso8601 == "2024-02-29T12:00:00Z")
    }
}
