import Foundation
import ReceiptDecoding
import ReceiptModel
import Testing
import X509

@testable import Samples

@Suite("the sample generator", .ownThreads)
struct GeneratorTests {
    @Test("the same arguments give byte-identical output; another seed gives other data")
    func determinism() throws {
        let (first, _) = try SampleSupport.generate("det-a", customers: 150, seed: 99)
        let (second, _) = try SampleSupport.generate("det-b", customers: 150, seed: 99)
        let (other, _) = try SampleSupport.generate("det-c", customers: 150, seed: 100)
        let names = SampleGenerator.dataFiles + ["customers.csv", "catalog.csv", "ground-truth.ndjson", "manifest.json", "test-root.pem"]
        for name in names {
            let a = try Data(contentsOf: URL(fileURLWithPath: first + "/" + name))
            let b = try Data(contentsOf: URL(fileURLWithPath: second + "/" + name))
            #expect(a == b, "\(name) differs between two runs")
        }
        let a = try Data(contentsOf: URL(fileURLWithPath: first + "/data/notifications-v2.ndjson"))
        let c = try Data(contentsOf: URL(fileURLWithPath: other + "/data/notifications-v2.ndjson"))
        #expect(a.count > 100_000)
        #expect(a != c)
        // The app receipts are in the comparison above (a data file): signatures included, they are the same bytes.
        #expect(SampleGenerator.dataFiles.contains("data/app-receipts.ndjson"))
        let receipts = try Data(contentsOf: URL(fileURLWithPath: first + "/data/app-receipts.ndjson"))
        let otherReceipts = try Data(contentsOf: URL(fileURLWithPath: other + "/data/app-receipts.ndjson"))
        #expect(receipts.count > 20_000)
        #expect(receipts != otherReceipts)
    }

    @Test("two seeds number their transactions and accounts apart (one ledger may hold both); the demo's seed keeps its ids")
    func seedsApart() {
        func ids(_ options: SampleGenerator.Options) -> (transactions: Set<String>, accounts: Set<String>) {
            let generator = SampleGenerator(options)
            var transactions = Set<String>()
            var accounts = Set<String>()
            for index in 0..<60 {
                let life = generator.life(index)
                transactions.formUnion(life.transactions.map(\.id))
                if let external = life.externalId { accounts.insert(external) }
            }
            return (transactions, accounts)
        }
        let one = ids(.init(customers: 60, seed: 1))
        let seven = ids(.init(customers: 60, seed: 7))
        #expect(!one.transactions.isEmpty && !one.accounts.isEmpty)
        #expect(one.transactions.isDisjoint(with: seven.transactions))
        #expect(one.accounts.isDisjoint(with: seven.accounts))
        // SampleData/README.md names the demo's stories by these ids.
        let demo = SampleGenerator(.init(customers: 200, seedText: SampleGenerator.demoSeed))
        #expect(demo.life(0).firstOriginalTransactionId == "150000000000001")
        #expect(demo.life(0).externalId == nil || demo.life(0).externalId?.hasPrefix("acct-000") == true)
    }

    @Test("a customer's life depends only on the seed and its index")
    func lifeIsPure() {
        let generator = SampleGenerator(.init(customers: 10, seed: 5))
        let a = generator.life(123)
        let b = generator.life(123)
        #expect(a.lookupId == b.lookupId)
        #expect(a.expectedFlags() == b.expectedFlags())
        #expect(a.expectedStates(at: SampleGenerator.defaultTo.millisecondsSince1970) == b.expectedStates(at: SampleGenerator.defaultTo.millisecondsSince1970))
        #expect(generator.life(124).lookupId != a.lookupId)
    }

    @Test("deterministic ES256 signatures are stable and verify against the sample root")
    func signatures() async throws {
        let jws = SampleJWS()
        let payload = #"{"transactionId":"1","originalTransactionId":"1","bundleId":"b","productId":"p","purchaseDate":1740816000000,"signedDate":1740816000000,"environment":"Production","type":"Consumable"}"#
        let signed = jws.sign(payload)
        #expect(signed == jws.sign(payload))
        let roots = [try Certificate(derEncoded: SampleCA.rootDER)]
        let decoder = RecordDecoder(verifier: JWSVerifier(policy: VerificationPolicy(trustRoots: roots)), now: SampleGenerator.defaultTo)
        for n in 0..<40 {
            let text = jws.sign(payload.replacingOccurrences(of: #""1","bundleId""#, with: #""\#(n)","bundleId""#))
            let record = await decoder.decode(Array(text.utf8), provenance: Provenance(path: "t", index: n))
            #expect(record.isOK, "\(record.error.map { "\($0)" } ?? "")")
            #expect(record.verification == .verified)
        }
        // A flipped signature bit is caught: the signatures are checked, not just parsed.
        var bytes = Array(signed.utf8)
        bytes[bytes.count - 5] = bytes[bytes.count - 5] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        let forged = await decoder.decode(bytes, provenance: Provenance(path: "t", index: 99))
        #expect(!forged.isOK)
    }

    @Test("nothing generated can pass for Apple's: the root says TEST, and without it verification fails")
    func notApple() async throws {
        let root = try Certificate(derEncoded: SampleCA.rootDER)
        #expect(root.subject.description.contains("TEST Root CA"))
        #expect(root.subject.description.contains("NOT Apple"))
        #expect(SampleCA.rootDER != AppleRoots.rootCAG3DER)
        let (directory, _) = try SampleSupport.generate("apple", customers: 20, seed: 3)
        let text = String(decoding: try Data(contentsOf: URL(fileURLWithPath: directory + "/data/notifications-v2.ndjson")), as: UTF8.self)
        let appleOnly = RecordDecoder(
            verifier: JWSVerifier(policy: VerificationPolicy(trustRoots: [try Certificate(derEncoded: AppleRoots.rootCAG3DER)])),
            now: SampleGenerator.defaultTo)
        var rejected = 0
        let lines = text.split(separator: "\n").prefix(30)
        for (index, line) in lines.enumerated() {
            let record = await appleOnly.decode(Array(line.utf8), provenance: Provenance(path: "v2", index: index))
            if !record.isOK && record.verification == .failed { rejected += 1 }
        }
        #expect(lines.count > 10)
        #expect(rejected == lines.count)
    }

    @Test("prices are in milliunits of the storefront's currency")
    func prices() {
        let usa = SampleCatalog.storefronts[0]
        let japan = SampleCatalog.storefronts.first { $0.code == "JPN" }!
        #expect(usa.price(9_990) == 9_990)
        #expect(japan.price(9_990) == 1_500_000)
        #expect(SampleCatalog.storefronts.first { $0.code == "GBR" }!.price(9_990) == 7_990)
    }
}
