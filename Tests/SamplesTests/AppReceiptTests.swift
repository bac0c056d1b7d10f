import Entitlements
import Foundation
import ReceiptDecoding
import ReceiptModel
import Testing
import X509

@testable import ReceiptDeskCLI
@testable import Samples

@Suite("generated app receipts (PKCS#7)", .ownThreads)
struct AppReceiptTests {
    static let receiptsFile = "data/app-receipts.ndjson"

    /// The receipt lines of a generated set with, for each, the customer (ground truth line) it belongs to.
    static func receipts(_ directory: String) throws -> [(line: [UInt8], truth: [String: Any])] {
        let text = try Data(contentsOf: URL(fileURLWithPath: directory + "/" + receiptsFile))
        let lines = text.split(separator: 0x0A).map { [UInt8]($0) }
        let truths = try SampleSupport.objects(directory + "/ground-truth.ndjson").filter {
            $0["appReceiptCreated"] != nil
        }
        try #require(
            lines.count == truths.count,
            "\(lines.count) receipts, \(truths.count) customers with one in the ground truth")
        return Array(zip(lines, truths)).map { (line: $0.0, truth: $0.1) }
    }

    static func decoder(receiptRoots: [[UInt8]]) throws -> RecordDecoder {
        let roots = try receiptRoots.map { try Certificate(derEncoded: $0) }
        return RecordDecoder(
            verifier: JWSVerifier(policy: VerificationPolicy(trustRoots: roots)), receiptRoots: receiptRoots,
            now: SampleGenerator.defaultTo)
    }

    @Test(
        "every app receipt decodes, verifies against the sample root, and restates its customer's purchases as they stood"
    )
    func decodeAndVerify() async throws {
        let (directory, summary) = try SampleSupport.generate("receipts", customers: 400, seed: 42)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let receipts = try Self.receipts(directory)
        #expect(summary.appReceipts == receipts.count)
        // About 0.3 of one-time buyers and 0.06 of the other subscribers: dozens in 400 customers.
        #expect(receipts.count >= 25 && receipts.count <= 120, "\(receipts.count) receipts")
        let decoder = try Self.decoder(receiptRoots: [SampleCA.rootDER])
        let generator = SampleGenerator(.init(customers: 400, seed: 42))
        var kinds = Set<String>()
        var cancelled = 0
        var subscriptionPeriods = 0
        for (n, (line, truth)) in receipts.enumerated() {
            let text = String(decoding: line, as: UTF8.self)
            #expect(text.hasPrefix(#"{"transactionReceipt":"MII"#))
            let record = await decoder.decode(line, provenance: Provenance(path: Self.receiptsFile, index: n))
            try #require(record.isOK, "receipt \(n): \(record.error.map { "\($0)" } ?? "")")
            #expect(record.kind == .appReceipt)
            #expect(record.verification == .verified)
            let life = generator.life((truth["index"] as! NSNumber).intValue)
            let created = (truth["appReceiptCreated"] as! NSNumber).int64Value
            let receipt = try #require(record.receipt)
            #expect(receipt.bundleId == SampleCatalog.bundleId)
            #expect(receipt.receiptCreationDate?.millisecondsSince1970 == created)
            #expect(receipt.receiptType == (life.environment == "Production" ? "Production" : "ProductionSandbox"))
            #expect(receipt.opaqueValue != nil && receipt.sha1Hash != nil)
            #expect(receipt.inAppCount == record.transactions.count)
            #expect(!record.transactions.isEmpty)
            for t in record.transactions {
                let expected = try #require(
                    life.transactions.first { $0.id == t.transactionId }, "receipt \(n) invents \(t.transactionId)")
                kinds.insert(expected.product.typeName)
                #expect(expected.purchase <= created)
                #expect(t.productId == expected.product.id)
                #expect(t.originalTransactionId == expected.original)
                #expect(t.purchaseDate?.millisecondsSince1970 == expected.purchase)
                #expect(t.originalPurchaseDate?.millisecondsSince1970 == expected.originalPurchase)
                #expect(t.expiresDate?.millisecondsSince1970 == expected.expires)
                #expect(t.webOrderLineItemId == expected.webOrder)
                #expect(t.type?.rawValue == expected.product.typeName)
                #expect(t.environment?.rawValue == life.environment)
                #expect(t.quantity == 1)
                let revoked = expected.revokedVisible(at: created) ? expected.revokedAt : nil
                #expect(t.revocationDate?.millisecondsSince1970 == revoked)
                if revoked != nil { cancelled += 1 }
                if expected.product.kind == .subscription { subscriptionPeriods += 1 }
                switch (expected.offerType, expected.offerDiscount) {
                case (1?, _): #expect(t.offerType == .introductory)
                case (2?, _): #expect(t.offerType == .promotional && t.offerIdentifier == expected.offerId)
                default: #expect(t.offerType == nil)
                }
            }
            // Every subscription period and non-consumable bought by then is in it; of consumables only the one just bought.
            let held = Set(record.transactions.map(\.transactionId))
            let missing = life.transactions.filter {
                $0.purchase <= created && $0.product.kind != .consumable && !held.contains($0.id)
                    && !($0.revocationType == "FAMILY_REVOKE" && $0.revokedVisible(at: created))
            }
            #expect(missing.isEmpty, "receipt \(n) lacks \(missing.map(\.id))")
            #expect(record.transactions.count { $0.type == .consumable } <= 1)
        }
        #expect(kinds == ["Auto-Renewable Subscription", "Non-Consumable", "Consumable"])
        #expect(cancelled > 0)
        #expect(subscriptionPeriods > receipts.count)
    }

    @Test(
        "a receipt's purchases merge with the same purchases from every other file without a conflict between verified sightings"
    )
    func noConflicts() async throws {
        let (directory, _) = try SampleSupport.generate("receipts-conflicts", customers: 150, seed: 21)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let decoder = try Self.decoder(receiptRoots: [SampleCA.rootDER])
        var known: [String: Transaction] = [:]
        for file in SampleGenerator.dataFiles where file != Self.receiptsFile {
            let text = try Data(contentsOf: URL(fileURLWithPath: directory + "/" + file))
            for (n, line) in text.split(separator: 0x0A).enumerated() {
                let record = await decoder.decode([UInt8](line), provenance: Provenance(path: file, index: n))
                try #require(record.isOK, "\(file)#\(n): \(record.error.map { "\($0)" } ?? "")")
                for t in record.transactions {
                    if known[t.transactionId] == nil {
                        known[t.transactionId] = t
                    } else {
                        known[t.transactionId]!.merge(t)
                    }
                }
            }
        }
        var merged = 0
        var againstVerified = 0
        for (n, (line, _)) in try Self.receipts(directory).enumerated() {
            let record = await decoder.decode(line, provenance: Provenance(path: Self.receiptsFile, index: n))
            for t in record.transactions {
                var other = try #require(known[t.transactionId], "\(t.transactionId) is only in the receipt")
                if other.verification == .verified { againstVerified += 1 }
                let before = other
                let conflicts = other.merge(t)
                #expect(conflicts.isEmpty, "\(t.transactionId): \(conflicts)")
                #expect(other.purchaseDate == before.purchaseDate && other.expiresDate == before.expiresDate)
                #expect(other.revocationDate == before.revocationDate && other.productId == before.productId)
                merged += 1
            }
        }
        #expect(merged > 20)
        #expect(againstVerified > 10)
    }

    @Test("without the sample root (Apple's roots only, as outside demo mode) every app receipt fails verification")
    func failWithoutTestRoot() async throws {
        let (directory, _) = try SampleSupport.generate("receipts-apple", customers: 200, seed: 5)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let receipts = try Self.receipts(directory)
        try #require(receipts.count > 5)
        // What `receiptdesk decode` and `import` use without --trust-root.
        let appleOnly = RecordDecoder(
            verifier: JWSVerifier(
                policy: VerificationPolicy(trustRoots: [try Certificate(derEncoded: AppleRoots.rootCAG3DER)])),
            receiptRoots: [AppleRoots.incRootDER], now: SampleGenerator.defaultTo)
        for (n, (line, _)) in receipts.enumerated() {
            let record = await appleOnly.decode(line, provenance: Provenance(path: Self.receiptsFile, index: n))
            #expect(!record.isOK)
            #expect(record.kind == .appReceipt)
            #expect(record.verification == .failed)
            #expect(record.error?.code == "signatureInvalid")
        }
    }

    @Test("the signature covers the payload: one changed byte in the receipt fails verification")
    func tamperedPayload() async throws {
        let (directory, _) = try SampleSupport.generate("receipts-tamper", customers: 60, seed: 11)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (line, _) = try #require(try Self.receipts(directory).first)
        let text = String(decoding: line, as: UTF8.self)
        let base64 = String(text.dropFirst(#"{"transactionReceipt":""#.count).dropLast(2))
        var der = [UInt8](try #require(Data(base64Encoded: base64)))
        // The bundle id sits in the payload: change one of its letters.
        let bundle = Array(SampleCatalog.bundleId.utf8)
        let at = try #require((0...(der.count - bundle.count)).first { Array(der[$0..<($0 + bundle.count)]) == bundle })
        der[at] = UInt8(ascii: "C")
        let decoder = try Self.decoder(receiptRoots: [SampleCA.rootDER])
        let tampered = #"{"transactionReceipt":""# + Data(der).base64EncodedString() + #""}"#
        let record = await decoder.decode(Array(tampered.utf8), provenance: Provenance(path: "tampered", index: 0))
        #expect(record.verification == .failed)
        #expect(record.error?.code == "signatureInvalid")
        let intact = await decoder.decode(line, provenance: Provenance(path: "intact", index: 0))
        #expect(intact.verification == .verified)
    }

    @Test(
        "importing the app receipts adds no transaction, no customer and no revocation: they restate what the other files hold"
    )
    func receiptsOnlyMerge() async throws {
        let (directory, _) = try SampleSupport.generate("receipts-merge", customers: 600, seed: 8)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let without = SampleSupport.temporaryDirectory("receipts-merge-without")
        defer { try? FileManager.default.removeItem(atPath: without) }
        try FileManager.default.copyItem(atPath: directory, toPath: without)
        // The same set with the receipts left out of the manifest.
        let manifestPath = without + "/manifest.json"
        let manifest = try String(contentsOfFile: manifestPath, encoding: .utf8)
        try #require(manifest.contains(#","data/app-receipts.ndjson""#))
        try manifest.replacingOccurrences(of: #","data/app-receipts.ndjson""#, with: "").write(
            toFile: manifestPath, atomically: true, encoding: .utf8)
        let (withLedger, now) = try await SampleSupport.ledger(for: directory)
        let (withoutLedger, _) = try await SampleSupport.ledger(for: without)
        let a = try await withLedger.overview()
        let b = try await withoutLedger.overview()
        let receiptCount = try Self.receipts(directory).count
        try #require(receiptCount > 30)
        #expect(a.rawRecords == b.rawRecords + receiptCount)
        #expect(a.rejectedRecords == 0)
        #expect(a.transactions == b.transactions)
        #expect(a.customers == b.customers)
        #expect(a.refundedTransactions == b.refundedTransactions)
        #expect(a.openFlags == b.openFlags)
        let catalog = try Catalog.parse(csv: SampleCatalog.catalogCSV)
        var compared = 0
        for (_, truth) in try Self.receipts(directory) {
            guard let id = truth["customer"] as? String,
                let one = try await withLedger.customerId(matching: id),
                let other = try await withoutLedger.customerId(matching: id)
            else {
                Issue.record("no customer \(truth["customer"] ?? "?") in one of the ledgers")
                continue
            }
            let withHistory = try await withLedger.customerRecords(one).history
            let withoutHistory = try await withoutLedger.customerRecords(other).history
            // Every entitlement, consumables' included: a legacy consumable has no type, the receipt's (1707) says
            // Consumable, and neither makes it an entitlement, so the receipt changes nothing.
            func states(_ history: CustomerHistory, _ instant: Timestamp) -> [String] {
                history.entitlements(at: instant, catalog: catalog).map { "\($0.name)=\($0.state.rawValue)" }.sorted()
            }
            for instant in (truth["instants"] as! [[String: Any]]).map({
                Timestamp(millisecondsSince1970: ($0["at"] as! NSNumber).int64Value)
            }) + [now] {
                let x = states(withHistory, instant)
                let y = states(withoutHistory, instant)
                #expect(x == y, "\(id) at \(instant): \(x) with the receipt, \(y) without")
                compared += 1
            }
        }
        #expect(compared > 100)
        try await withLedger.close()
        try await withoutLedger.close()
    }
}
