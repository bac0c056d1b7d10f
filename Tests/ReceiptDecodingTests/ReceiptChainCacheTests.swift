import Foundation
import ReceiptDecoding
import ReceiptModel
import Testing
import X509

@testable import Samples

/// App receipts whose certificate chain was validated before take its verdict from the decoder's cache; these tests
/// hold that verdict to the one a decoder that never saw the chain gives, record for record.
@Suite("app receipt chain cache: a cached chain gives the verdict a fresh validation gives")
struct ReceiptChainCacheTests {
    /// What a person sees of a record's verification: the words, the error's code and sentence, the warnings.
    struct Verdict: Equatable, CustomStringConvertible {
        var isOK: Bool
        var verification: Verification
        var code: String?
        var message: String?
        var warnings: [String]
        var transactions: Int

        init(_ record: DecodedRecord) {
            isOK = record.isOK
            verification = record.verification
            code = record.error?.code
            message = record.error?.message
            warnings = record.warnings
            transactions = record.transactions.count
        }

        var description: String {
            "\(verification) \(code ?? "-"): \(message ?? "-") warnings \(warnings) transactions \(transactions)"
        }
    }

    /// The sample chain (``SampleCA``) is valid from 2020-01-01T00:00:00Z to 2045-01-01T00:00:00Z, both inclusive.
    static let notBefore: Int64 = 1_577_836_800_000
    static let notAfter: Int64 = 2_366_841_600_000
    /// The instant the cache is warmed at: well inside the sample chain's validity.
    static let warmCreated: Int64 = 1_740_816_000_000  // 2025-03-01

    /// A PKCS#7 app receipt (DER) signed by the sample chain's leaf, as the generator writes them, created at
    /// `created` (attribute 12 empty, meaning absent, when nil), with one purchase.
    static func receipt(created: Int64?, bundleId: String = "com.example.cache") -> [UInt8] {
        SignedReceiptEnvelope(signer: DeterministicES256(privateKey: SampleCA.leafKey)).sign(payload(created: created, bundleId: bundleId))
    }

    /// The receipt's payload, unsigned (the attributes' SET).
    static func payload(created: Int64?, bundleId: String = "com.example.cache") -> [UInt8] {
        let purchase = InAppPurchaseReceipt(
            productId: "lifetime.unlock", transactionId: "4100000\(created.map { $0 % 100_000 } ?? 0)",
            purchaseDate: created ?? warmCreated, originalTransactionId: "4100000000",
            originalPurchaseDate: created ?? warmCreated, productType: .nonConsumable)
        return Samples.ReceiptAttribute.derSet([
            .utf8(0, "Production"), .integer(1, 1_234_567), .utf8(2, bundleId), .utf8(3, "7"),
            .octets(4, [1, 2, 3, 4], version: 2), .octets(5, Array(repeating: 9, count: 20)), .date(12, created),
            .utf8(19, "1.0"), purchase.attribute,
        ])
    }

    /// Another test root: the sample chain does not chain to it.
    static let otherRoot: [UInt8] = { (try? TestCA(.init(seed: "receipt-cache-other-root")).rootDER) ?? [] }()

    enum Roots: String, Sendable {
        /// Apple's roots and the sample root.
        case sample
        /// Apple's roots and an unrelated test root: the wrong root for the sample chain.
        case other
        /// Apple's roots only.
        case appleOnly

        func decoder() throws -> RecordDecoder {
            switch self {
            case .sample: try makeDecoder(extraRoots: [SampleCA.rootDER])
            case .other: try makeDecoder(extraRoots: [ReceiptChainCacheTests.otherRoot])
            case .appleOnly: try makeDecoder()
            }
        }
    }

    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var created: Int64?
        var roots: Roots = .sample
        /// The verdict when it is not a rounding question at a certificate's edge (those only have to agree).
        var expected: Verification?
        var testDescription: String { "\(name), \(roots.rawValue) roots" }
    }

    static let cases: [Case] = [
        Case(name: "valid, the instant the cache was warmed at", created: warmCreated, expected: .verified),
        Case(name: "valid, another instant", created: 1_767_225_600_123, expected: .verified),
        Case(name: "no creation date: judged at the decoder's now, with a warning", created: nil, expected: .verified),
        Case(name: "created before notBefore", created: 1_559_347_200_000, expected: .failed),
        Case(name: "created after notAfter", created: 2_398_377_600_000, expected: .failed),
        Case(name: "a second before notBefore", created: notBefore - 1000, expected: .failed),
        Case(name: "just under half a second before notBefore", created: notBefore - 499),
        Case(name: "half a second before notBefore", created: notBefore - 500),
        Case(name: "a millisecond before notBefore", created: notBefore - 1),
        Case(name: "at notBefore", created: notBefore, expected: .verified),
        Case(name: "a millisecond after notBefore", created: notBefore + 1, expected: .verified),
        Case(name: "a second after notBefore", created: notBefore + 1000, expected: .verified),
        Case(name: "a millisecond before notAfter", created: notAfter - 1, expected: .verified),
        Case(name: "at notAfter", created: notAfter, expected: .verified),
        Case(name: "a millisecond after notAfter", created: notAfter + 1),
        Case(name: "just under half a second after notAfter", created: notAfter + 499),
        Case(name: "half a second after notAfter", created: notAfter + 500),
        Case(name: "a second after notAfter", created: notAfter + 1000, expected: .failed),
        Case(name: "valid dates, wrong root", created: warmCreated, roots: .other, expected: .failed),
        Case(name: "valid dates, Apple's roots only", created: warmCreated, roots: .appleOnly, expected: .failed),
        Case(name: "expired, wrong root", created: 2_398_377_600_000, roots: .other, expected: .failed),
    ]

    static func verdict(_ der: [UInt8], _ decoder: RecordDecoder) async -> Verdict {
        Verdict(await decoder.decode(der, provenance: Provenance(path: "receipt", index: 0)))
    }

    @Test("a decoder that has validated the chain gives the verdict a fresh decoder gives", arguments: cases)
    func cachedMatchesFresh(_ c: Case) async throws {
        let receipt = Self.receipt(created: c.created)
        let fresh = await Self.verdict(receipt, try c.roots.decoder())
        if let expected = c.expected { #expect(fresh.verification == expected, "\(fresh)") }

        let warmed = try c.roots.decoder()
        let warm = await Self.verdict(Self.receipt(created: Self.warmCreated, bundleId: "com.example.warm"), warmed)
        #expect(warm.verification == (c.roots == .sample ? .verified : .failed))
        #expect(warmed.receiptChainValidations == 1)
        let cached = await Self.verdict(receipt, warmed)
        #expect(cached == fresh)
        // Cached only what validated, and reused only inside the chain's validity: a verified record well inside it
        // costs no second validation; anything else is validated afresh.
        let inside = c.created.map { $0 >= Self.notBefore + 1000 && $0 <= Self.notAfter } ?? true
        #expect(warmed.receiptChainValidations == (c.roots == .sample && inside ? 1 : 2))
        // And asked again, the answer is still the same.
        #expect(await Self.verdict(receipt, warmed) == fresh)
    }

    @Test("with the chain cached, a receipt whose payload was altered still fails its signature check")
    func tamperedWithCachedChain() async throws {
        var der = Self.receipt(created: 1_750_000_000_000)
        let bundle = Array("com.example.cache".utf8)
        let at = try #require((0...(der.count - bundle.count)).first { Array(der[$0..<($0 + bundle.count)]) == bundle })
        der[at] = UInt8(ascii: "C")
        let fresh = await Self.verdict(der, try Roots.sample.decoder())
        #expect(fresh.verification == .failed)
        #expect(fresh.code == "signatureInvalid")

        let decoder = try Roots.sample.decoder()
        #expect(await Self.verdict(Self.receipt(created: Self.warmCreated), decoder).verification == .verified)
        let cached = await Self.verdict(der, decoder)
        #expect(cached == fresh)
        #expect(decoder.receiptChainValidations == 1, "the chain came from the cache; the signature was still checked")
        // The untouched receipt still verifies from the same cache.
        #expect(await Self.verdict(Self.receipt(created: 1_750_000_000_000), decoder).verification == .verified)
        #expect(decoder.receiptChainValidations == 1)
    }

    @Test("a chain validated against one set of roots is not trusted by a decoder with other roots")
    func rootsAreNotShared() async throws {
        let receipt = Self.receipt(created: Self.warmCreated)
        let trusting = try Roots.sample.decoder()
        #expect(await Self.verdict(receipt, trusting).verification == .verified)
        let other = try Roots.other.decoder()
        let verdict = await Self.verdict(receipt, other)
        #expect(verdict.verification == .failed)
        #expect(verdict.code == "signatureInvalid")
        #expect(verdict.message?.contains("does not chain to a trusted root") == true, "\(verdict)")
    }

    @Test("a chain that fails says whether it reached a trusted root (then which certificate is not valid at that instant) or ends under another CA (then --trust-root is named)")
    func chainFailureSaysWhy() async throws {
        let expired = await Self.verdict(Self.receipt(created: 2_398_377_600_000), try Roots.sample.decoder())
        #expect(expired.verification == .failed)
        let expiredText = try #require(expired.message)
        #expect(expiredText.contains("it reaches the trusted root C=US,O=ReceiptDesk Test (not Apple)"), "\(expiredText)")
        #expect(expiredText.contains("is valid only from 20"), "\(expiredText)")
        #expect(!expiredText.contains("--trust-root"), "\(expiredText)")

        let foreign = await Self.verdict(Self.receipt(created: Self.warmCreated), try Roots.other.decoder())
        #expect(foreign.verification == .failed)
        let foreignText = try #require(foreign.message)
        // (The sample envelope carries its root: the chain ends at it.)
        #expect(
            foreignText.contains("the chain ends at the self-signed C=US,O=ReceiptDesk Test (not Apple),OU=TEST DATA ONLY - NOT APPLE,CN=ReceiptDesk TEST Root CA"),
            "\(foreignText)")
        #expect(foreignText.contains("which is no trusted root; a test CA's root is trusted with --trust-root FILE"), "\(foreignText)")
    }

    @Test("an envelope that lacks the intermediate says the chain ends at a certificate whose issuer it does not carry")
    func envelopeMissingIntermediate() async throws {
        var envelope = SignedReceiptEnvelope(signer: DeterministicES256(privateKey: SampleCA.leafKey))
        envelope.certificates = [SampleCA.leafDER, SampleCA.rootDER]
        let verdict = await Self.verdict(envelope.sign(Self.payload(created: Self.warmCreated)), try Roots.sample.decoder())
        #expect(verdict.verification == .failed)
        let text = try #require(verdict.message)
        let intermediate = try Certificate(derEncoded: SampleCA.intermediateDER)
        #expect(
            text.contains("the chain ends at a certificate issued by \(intermediate.subject), which is neither in the envelope nor a trusted root"),
            "\(text)")
        #expect(!text.contains("reaches the trusted root"), "\(text)")
        // With the intermediate the same payload verifies.
        #expect(await Self.verdict(Self.receipt(created: Self.warmCreated), try Roots.sample.decoder()).verification == .verified)
    }

    @Test("receipts decoded at once on several threads share one validation and get the fresh verdicts")
    func concurrent() async throws {
        let decoder = try Roots.sample.decoder()
        let instants = (0..<24).map { Self.warmCreated + Int64($0) * 86_400_000 }
        let verdicts = await withTaskGroup(of: (Int, Verdict).self) { group in
            for (index, instant) in instants.enumerated() {
                group.addTask { (index, await Self.verdict(Self.receipt(created: instant), decoder)) }
            }
            var out: [Int: Verdict] = [:]
            for await (index, verdict) in group { out[index] = verdict }
            return out
        }
        for (index, instant) in instants.enumerated() {
            let fresh = await Self.verdict(Self.receipt(created: instant), try Roots.sample.decoder())
            #expect(fresh.verification == .verified)
            #expect(verdicts[index] == fresh)
        }
        let validations = decoder.receiptChainValidations
        #expect(validations >= 1 && validations <= instants.count)
        _ = await Self.verdict(Self.receipt(created: Self.warmCreated + 1), decoder)
        #expect(decoder.receiptChainValidations == validations)
    }

    /// Real Apple receipts from the corpus (SOURCES.md) whose envelopes carry byte-identical certificates.
    static let realPairs: [(String, String)] = [
        ("tikhop__TPInAppReceipt/receipt-production", "IdeasOnCanvas__AppReceiptValidator/mindnode_mac_sha256_receipt"),
        (
            "tikhop__TPInAppReceipt/receipt-sandbox-g5",
            "namecare__app-store-server-library-rust/xcode-app-receipt-legacy"
        ),
        ("tikhop__TPInAppReceipt/receipt-sandbox-legacy", "RevenueCat__purchases-ios/base64encodedreceiptsample1.txt"),
    ]

    @Test(
        "real Apple receipts on one chain: the second takes the chain from the cache and gets the fresh verdict",
        arguments: realPairs)
    func realReceipts(first: String, second: String) async throws {
        let decoder = try makeDecoder()
        let warm = try #require(try await decodeCorpus(first, decoder: decoder).first)
        #expect(warm.verification == .verified)
        #expect(decoder.receiptChainValidations == 1)
        let cached = Verdict(try #require(try await decodeCorpus(second, decoder: decoder).first))
        let fresh = Verdict(try #require(try await decodeCorpus(second, decoder: makeDecoder()).first))
        #expect(fresh.verification == .verified)
        #expect(cached == fresh)
        #expect(decoder.receiptChainValidations == 1)
    }

    @Test("a real receipt altered after its chain was cached fails as it does uncached")
    func realTampered() async throws {
        let decoder = try makeDecoder()
        let legacy = "tikhop__TPInAppReceipt/receipt-sandbox-legacy"
        let warm = try #require(try await decodeCorpus(legacy, decoder: decoder).first)
        #expect(warm.verification == .verified)
        let text = try Corpus.bytes("RevenueCat__purchases-ios/base64encodedreceiptsample1.txt").filter { $0 > 0x20 }
        var der = Array(try #require(Data(base64Encoded: Data(text)), "the corpus receipt is base64"))
        let needle = Array("com.revenuecat.sampleapp".utf8)
        let at = try #require((0...(der.count - needle.count)).first { Array(der[$0..<($0 + needle.count)]) == needle })
        der[at] = UInt8(ascii: "C")
        let cached = await Self.verdict(der, decoder)
        let fresh = await Self.verdict(der, try makeDecoder())
        #expect(fresh.code == "signatureInvalid")
        #expect(cached == fresh)
        #expect(decoder.receiptChainValidations == 1)
    }
}
