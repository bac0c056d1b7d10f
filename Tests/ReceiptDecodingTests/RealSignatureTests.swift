import Foundation
import ReceiptModel
import Testing
@testable import ReceiptDecoding

@Suite("Real signed data and receipts from the corpus")
struct RealSignatureTests {
    @Test("Apple-signed V2 notification and renewal info verify against Apple Root CA - G3 at their signedDate")
    func appleSigned() async throws {
        let notification = try #require(try await decodeCorpus("aporat__store-receipt-validator/test-notification-signed-payload.json").first)
        #expect(notification.verification == .verified)
        #expect(notification.notification?.notificationType == .test)
        #expect(notification.notification?.bundleId == "com.Abilities")
        let renewal = try #require(try await decodeCorpus("awa__go-iap/EXTRACTED_validator_test.go_L326_sandbox-renewal-info.jws").first)
        #expect(renewal.verification == .verified)
        #expect(renewal.renewalInfos.first?.originalTransactionId == "2000000335310644")
        #expect(renewal.renewalInfos.first?.autoRenewProductId == "co.ringalarm.swtich.quarterly2")
    }

    @Test("--environment and --bundle-id hold for a V2 notification (its environment is in data) and a signed PKCS#7 receipt")
    func policyOnNotificationsAndReceipts() async throws {
        let notification = "aporat__store-receipt-validator/test-notification-signed-payload.json"
        let production = try makeDecoder(environment: .production)
        let wrong = try #require(try await decodeCorpus(notification, decoder: production).first)
        #expect(wrong.error?.code == "wrongEnvironment" && wrong.error?.message == "signed for Sandbox, expected Production")
        #expect(try await decodeCorpus(notification, decoder: makeDecoder(environment: .sandbox)).first?.isOK == true)
        #expect(try await decodeCorpus(notification, decoder: makeDecoder(bundleId: "com.other")).first?.error?.code == "wrongBundle")
        #expect(try await decodeCorpus(notification, decoder: makeDecoder(bundleId: "com.Abilities")).first?.isOK == true)

        let receipt = "tikhop__TPInAppReceipt/receipt-production"
        let sandbox = try #require(try await decodeCorpus(receipt, decoder: makeDecoder(environment: .sandbox)).first)
        #expect(sandbox.error?.code == "wrongEnvironment" && sandbox.error?.message == "signed for Production, expected Sandbox")
        #expect(try await decodeCorpus(receipt, decoder: makeDecoder(environment: .production)).first?.isOK == true)
        let other = try #require(try await decodeCorpus(receipt, decoder: makeDecoder(bundleId: "com.other")).first)
        #expect(other.error?.code == "wrongBundle" && other.error?.message == "signed for bundle org.getpure.pure-iphone, expected com.other")
        #expect(try await decodeCorpus(receipt, decoder: makeDecoder(bundleId: "org.getpure.pure-iphone")).first?.isOK == true)
        // Not verified, nothing to hold it to: the policy is about what the signature vouches for.
        #expect(try await decodeCorpus(receipt, decoder: makeDecoder(verify: false, environment: .sandbox)).first?.isOK == true)
    }

    @Test("judged at today's date instead, the expired Apple leaf is refused")
    func appleSignedNow() async throws {
        let decoder = try makeDecoder(validationTime: .at(testNow))
        let record = try #require(try await decodeCorpus("aporat__store-receipt-validator/test-notification-signed-payload.json", decoder: decoder).first)
        #expect(record.error?.code == "certificateExpired")
        // A PKCS#7 receipt too (--verify-now judged only JWS at now): its Apple certificates are no longer valid then.
        let receipt = "IdeasOnCanvas__AppReceiptValidator/grandUnifiedExpiredAppleCert_receipt.b64"
        #expect(try await decodeCorpus(receipt).first?.verification == .verified)
        let now = try #require(try await decodeCorpus(receipt, decoder: decoder).first)
        #expect(now.verification == .failed && now.error?.message.contains("at \(testNow.iso8601)") == true, "\(String(describing: now.error))")
    }

    @Test("Apple's test-CA mock data verifies only with testCA.der trusted")
    func mockSignedData() async throws {
        let testCA = try Corpus.bytes("apple__app-store-server-library-swift/certs/testCA.der")
        let trusting = try makeDecoder(extraRoots: [testCA])
        for file in ["testNotification", "transactionInfo", "renewalInfo"] {
            let path = "apple__app-store-server-library-swift/mock_signed_data/\(file)"
            let record = try #require(try await decodeCorpus(path, decoder: trusting).first)
            #expect(record.isOK, "\(file): \(record.error?.description ?? "")")
            #expect(record.verification == .verified, "\(file)")
            let untrusted = try #require(try await decodeCorpus(path).first)
            #expect(untrusted.error?.code == "chainInvalid", "\(file)")
            // Apple's test CA names only a place; the message says whose chain it is and how to trust it.
            let message = untrusted.error?.message ?? ""
            #expect(message.contains("the intermediate's issuer is L=Cupertino,ST=California,C=US"), "\(message)")
            #expect(message.contains("--trust-root FILE"), "\(message)")
        }
    }

    struct ReceiptCase: CustomTestStringConvertible, Sendable {
        let file: String
        let entries: Int
        let distinct: Int
        let verification: Verification
        let bundle: String
        var testDescription: String { file }
    }

    static let receipts: [ReceiptCase] = [
        .init(file: "tikhop__TPInAppReceipt/receipt-production", entries: 4, distinct: 4, verification: .verified, bundle: "org.getpure.pure-iphone"),
        .init(file: "tikhop__TPInAppReceipt/receipt-sandbox-g5", entries: 2, distinct: 2, verification: .verified, bundle: "dev.bonzer.weeka.app"),
        .init(file: "tikhop__TPInAppReceipt/receipt-sandbox-legacy", entries: 187, distinct: 187, verification: .verified, bundle: "com.nutcall.alert"),
        .init(file: "tikhop__TPInAppReceipt/receipt-xcode", entries: 1, distinct: 1, verification: .unsigned, bundle: "net.zachariadis.cyclemaps"),
        .init(file: "RevenueCat__purchases-ios/base64encodedreceiptsample1.txt", entries: 9, distinct: 9, verification: .verified, bundle: "com.revenuecat.sampleapp"),
        .init(file: "apple__app-store-server-library-swift/xcode/xcode-app-receipt-empty", entries: 0, distinct: 0, verification: .unsigned, bundle: "com.example.naturelab.backyardbirds.example"),
        .init(file: "apple__app-store-server-library-swift/xcode/xcode-app-receipt-with-transaction", entries: 1, distinct: 1, verification: .unsigned, bundle: "com.example.naturelab.backyardbirds.example"),
        .init(file: "namecare__app-store-server-library-rust/xcode-app-receipt-legacy", entries: 1, distinct: 1, verification: .verified, bundle: "com.XMCodey.apple.ClipTrace"),
        .init(file: "imdhemy__laravel-in-app-purchases/iOS-receipt.json", entries: 42, distinct: 42, verification: .verified, bundle: "com.twigano.fashion"),
        .init(file: "imdhemy__laravel-in-app-purchases/product-receipt.json", entries: 61, distinct: 61, verification: .verified, bundle: "com.twigano.fashion"),
        .init(file: "IdeasOnCanvas__AppReceiptValidator/mindnode_mac_sha256_receipt", entries: 3, distinct: 3, verification: .verified, bundle: "com.ideasoncanvas.mindnode.macos"),
        .init(file: "IdeasOnCanvas__AppReceiptValidator/grandUnifiedExpiredAppleCert_receipt.b64", entries: 7, distinct: 7, verification: .verified, bundle: "com.mbaasy.ios.demo"),
        .init(file: "IdeasOnCanvas__AppReceiptValidator/purchasing_experiments_sandbox_receipt.b64", entries: 2, distinct: 2, verification: .verified, bundle: "com.hannesoid.PurchasingExperiments"),
    ]

    @Test("every PKCS#7 receipt in the corpus parses, with its entry count and signature result", arguments: receipts)
    func receipt(_ c: ReceiptCase) async throws {
        let record = try #require(try await decodeCorpus(c.file).first)
        #expect(record.kind == .appReceipt)
        #expect(record.isOK, "\(record.error?.description ?? "")")
        #expect(record.receipt?.inAppCount == c.entries)
        #expect(record.transactions.count == c.distinct)
        #expect(record.verification == c.verification)
        #expect(record.receipt?.bundleId == c.bundle)
        #expect(record.transactions.allSatisfy { $0.purchaseDate != nil && $0.productId != nil })
    }

    @Test("receipt details: trial flag, consumable type, offer id, empty attributes meaning absent")
    func receiptDetails() async throws {
        let product = try #require(try await decodeCorpus("imdhemy__laravel-in-app-purchases/product-receipt.json").first)
        let consumables = product.transactions.filter { $0.type == .consumable }
        #expect(consumables.map(\.productId) == ["boost"])
        #expect(consumables.first?.expiresDate == nil)
        #expect(consumables.first?.webOrderLineItemId == nil)
        let legacy = try #require(try await decodeCorpus("tikhop__TPInAppReceipt/receipt-sandbox-legacy").first)
        #expect(legacy.transactions.filter { $0.offerDiscountType == .freeTrial }.count == 1)
        #expect(Set(legacy.transactions.compactMap(\.originalTransactionId)).count == 1)
        let production = try #require(try await decodeCorpus("tikhop__TPInAppReceipt/receipt-production").first)
        #expect(production.transactions.filter { $0.offerIdentifier == "org.getpure.pure.Month.Offer.3M.PayToGo" }.count == 2)
        #expect(production.transactions.allSatisfy { $0.environment == .production })
        let xcode = try #require(try await decodeCorpus("tikhop__TPInAppReceipt/receipt-xcode").first)
        #expect(xcode.receipt?.expirationDate == Timestamp.utc(year: 4001, month: 1, day: 1))
        #expect(xcode.transactions.first?.transactionId == "0")
        let mindnode = try #require(try await decodeCorpus("IdeasOnCanvas__AppReceiptValidator/mindnode_mac_sha256_receipt").first)
        #expect(mindnode.transactions.filter { $0.type == .nonConsumable }.count == 2)
    }

    @Test("Xcode receipts verify once the StoreKit test certificate is trusted")
    func xcodeTrusted() async throws {
        let storeKit = try Corpus.bytes("tikhop__TPInAppReceipt/StoreKitTestCertificate.cer")
        let record = try #require(try await decodeCorpus("tikhop__TPInAppReceipt/receipt-xcode", decoder: makeDecoder(extraRoots: [storeKit])).first)
        #expect(record.verification == .verified)
    }

    @Test("a receipt whose payload was altered fails its signature check and is rejected")
    func tamperedReceipt() async throws {
        let text = try Corpus.bytes("RevenueCat__purchases-ios/base64encodedreceiptsample1.txt").filter { $0 > 0x20 }
        var der = Array(try #require(Data(base64Encoded: Data(text)), "the corpus receipt is base64"))
        // Change one character of the bundle id inside the signed payload.
        let needle = Array("com.revenuecat.sampleapp".utf8)
        let at = try #require((0...(der.count - needle.count)).first { Array(der[$0..<($0 + needle.count)]) == needle })
        der[at] = UInt8(ascii: "C")
        let record = try await makeDecoder().decode(der, provenance: Provenance(path: "tampered", index: 0))
        #expect(record.error?.code == "signatureInvalid")
        #expect(record.verification == .failed)
        let skipped = try await makeDecoder(verify: false).decode(der, provenance: Provenance(path: "tampered", index: 0))
        #expect(skipped.verification == .skipped)
        #expect(skipped.receipt?.bundleId == "Com.revenuecat.sampleapp")
    }

    @Test("RFC 3339 receipt dates with and without fractions or a colon in the offset", arguments: [
        ("2020-07-22T18:33:15Z", Int64(1_595_442_795_000)),
        ("2020-07-22T18:33:15.250Z", 1_595_442_795_250),
        ("2020-07-22T19:33:15+0100", 1_595_442_795_000),
        ("2020-07-22T19:33:15+01:00", 1_595_442_795_000),
        ("2020-07-22T13:33:15.5-05:00", 1_595_442_795_500),
    ])
    func rfc3339(text: String, ms: Int64) {
        #expect(RFC3339.parse(text)?.millisecondsSince1970 == ms)
    }
}
