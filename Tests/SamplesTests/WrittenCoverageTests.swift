import Foundation
import ReceiptDecoding
import ReceiptModel
import Testing
import X509

@testable import Samples

/// What the written files carry, read back with the real decoder: a feature issue 9 asks for that vanishes
/// from the output (an emitter that stops writing a field, a notification type no longer sent) fails here,
/// even when the simulated lives (``CoverageTests``) still have it.
@Suite("what the written files carry", .ownThreads)
struct WrittenCoverageTests {
    /// Features found in the written records, each as `kind: feature` (the record kind that carried it) and as
    /// `feature` alone, with how many times.
    struct Tally {
        var counts: [String: Int] = [:]
        var storefronts: [String: Set<String>] = [:]
        var currencies: [String: Set<String>] = [:]
        var rejected: [String] = []
        var badPrices: [String] = []

        mutating func add(_ kind: RecordKind, _ feature: String) {
            counts["\(kind.rawValue): \(feature)", default: 0] += 1
            counts[feature, default: 0] += 1
        }

        func has(_ feature: String) -> Bool { (counts[feature] ?? 0) > 0 }
    }

    static let customers = 2_000
    static let seed: UInt64 = 42

    /// Decodes every line of every data file (verifying against the sample root) and tallies what it carries.
    static func tally(_ directory: String) async throws -> Tally {
        let roots = [try Certificate(derEncoded: SampleCA.rootDER)]
        let decoder = RecordDecoder(
            verifier: JWSVerifier(policy: VerificationPolicy(trustRoots: roots)), receiptRoots: [SampleCA.rootDER],
            now: SampleGenerator.defaultTo)
        var tally = Tally()
        // Free trials by transaction id (to their subscription) and each subscription's period starts: a trial
        // converted when its subscription has another period.
        var trials: [String: String] = [:]
        var periodsByOriginal: [String: [Timestamp]] = [:]
        for file in SampleGenerator.dataFiles {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: directory + "/" + file))
            for (index, line) in bytes.split(separator: 0x0A).enumerated() {
                let record = await decoder.decode([UInt8](line), provenance: Provenance(path: file, index: index))
                guard record.isOK else {
                    tally.rejected.append("\(file)#\(index): \(record.error.map { "\($0)" } ?? "?")")
                    continue
                }
                let kind = record.kind
                tally.add(kind, "records")
                if record.verification == .verified { tally.add(kind, "verified") }
                if let n = record.notification {
                    tally.add(kind, "notification \(n.notificationType.rawValue)" + (n.subtype.map { "/\($0.rawValue)" } ?? ""))
                    if let environment = n.environment { tally.add(kind, "environment \(environment.rawValue)") }
                }
                if let receipt = record.receipt, let type = receipt.receiptType { tally.add(kind, "receipt type \(type)") }
                for t in record.transactions {
                    if let environment = t.environment { tally.add(kind, "environment \(environment.rawValue)") }
                    if let type = t.type { tally.add(kind, "type \(type.rawValue)") }
                    if t.appAccountToken != nil { tally.add(kind, "appAccountToken") }
                    if let group = t.subscriptionGroupIdentifier { tally.add(kind, "subscription group \(group)") }
                    switch (t.offerType, t.offerDiscountType, t.offerIdentifier) {
                    case (.introductory?, .freeTrial?, _): tally.add(kind, "free trial")
                    case (.introductory?, _, _): tally.add(kind, "intro offer")
                    case (.promotional?, _, _?): tally.add(kind, "promotional offer with its id")
                    case (.offerCode?, _, _?): tally.add(kind, "offer code with its id")
                    case (.winBack?, _, _?): tally.add(kind, "win-back offer with its id")
                    default: break
                    }
                    if t.offerDiscountType == .freeTrial, let original = t.originalTransactionId { trials[t.transactionId] = original }
                    if let original = t.originalTransactionId, let start = t.purchaseDate {
                        periodsByOriginal[original, default: []].append(start)
                    }
                    if let storefront = t.storefront { tally.storefronts[kind.rawValue, default: []].insert(storefront) }
                    if let currency = t.currency { tally.currencies[kind.rawValue, default: []].insert(currency) }
                    // Milliunits of a real price: $9.99 is 9990, never a digit below the cent; a trial is free.
                    if let price = t.price, price < 0 || price % 10 != 0 { tally.badPrices.append("\(t.transactionId): \(price)") }
                    if t.inAppOwnershipType == .familyShared { tally.add(kind, "family shared") }
                    if t.isUpgraded == true { tally.add(kind, "upgraded") }
                    if t.revocationDate != nil {
                        switch t.revocationType {
                        case .familyRevoke?: tally.add(kind, "family revoke")
                        case .refundProrated?:
                            if let share = t.revocationPercentage, share > 0, share < 100_000 { tally.add(kind, "partial refund with revocationPercentage") }
                        case .refundFull?: tally.add(kind, "full refund")
                        default: tally.add(kind, "refund (legacy)")
                        }
                        if t.revocationReason == .other { tally.add(kind, "refund reason 0") }
                        if t.revocationReason == .appIssue { tally.add(kind, "refund reason 1") }
                    }
                }
                for r in record.renewalInfos {
                    if r.isInBillingRetryPeriod == true {
                        tally.add(kind, r.gracePeriodExpiresDate != nil ? "billing retry with grace period" : "billing retry without grace period")
                    }
                    if r.autoRenewStatus == .off { tally.add(kind, "renewal off") }
                    if let product = r.productId, let next = r.autoRenewProductId, product != next { tally.add(kind, "renewal to another product") }
                }
            }
        }
        for original in Set(trials.values) {
            let starts = Set(periodsByOriginal[original] ?? [])
            tally.counts[starts.count > 1 ? "free trial converted" : "free trial not converted", default: 0] += 1
        }
        return tally
    }

    /// `kind: feature` for each kind.
    static func each(_ kinds: [RecordKind], _ features: [String]) -> [String] {
        kinds.flatMap { kind in features.map { "\(kind.rawValue): \($0)" } }
    }

    static let signed: [RecordKind] = [.notificationV2, .serverAPIResponse]
    static let legacy: [RecordKind] = [.verifyReceipt, .notificationV1]

    /// Every feature of issue 9 item 1 that the written records must carry, where the format can carry it.
    static let required: [String] =
        // Every input kind, every record verified where it is signed.
        each(signed + legacy + [.appReceipt], ["records", "environment Production", "environment Sandbox"])
        + each(signed + [.appReceipt], ["verified"])
        + ["appReceipt: receipt type Production", "appReceipt: receipt type ProductionSandbox"]
        // appAccountTokens (an app receipt has no field for one).
        + each(signed + legacy, ["appAccountToken"])
        // Offers: legacy fields can say trial, intro, promotional and offer code; only JWS can say win-back.
        + each(signed, ["free trial", "intro offer", "promotional offer with its id", "offer code with its id", "win-back offer with its id"])
        + each(legacy, ["free trial", "intro offer", "promotional offer with its id", "offer code with its id"])
        + ["free trial converted", "free trial not converted"]
        // Products of every type, typed where the format types them.
        + each(signed + [.appReceipt], ["type Auto-Renewable Subscription", "type Non-Consumable", "type Consumable"])
        // Every V2 notification type and subtype a life sends.
        + each([.notificationV2], [
            "notification SUBSCRIBED/INITIAL_BUY", "notification SUBSCRIBED/RESUBSCRIBE", "notification DID_RENEW",
            "notification DID_RENEW/BILLING_RECOVERY", "notification DID_CHANGE_RENEWAL_PREF/UPGRADE",
            "notification DID_CHANGE_RENEWAL_PREF/DOWNGRADE", "notification DID_CHANGE_RENEWAL_PREF",
            "notification DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED", "notification DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_ENABLED",
            "notification DID_FAIL_TO_RENEW/GRACE_PERIOD", "notification DID_FAIL_TO_RENEW", "notification EXPIRED/VOLUNTARY",
            "notification EXPIRED/BILLING_RETRY", "notification REFUND", "notification REFUND_DECLINED",
            "notification REFUND_REVERSED", "notification CONSUMPTION_REQUEST", "notification REVOKE", "notification ONE_TIME_CHARGE",
        ])
        // And the V1 types they become.
        + each([.notificationV1], [
            "notification INITIAL_BUY", "notification INTERACTIVE_RENEWAL", "notification DID_RENEW", "notification DID_RECOVER",
            "notification DID_CHANGE_RENEWAL_STATUS", "notification DID_CHANGE_RENEWAL_PREF", "notification DID_FAIL_TO_RENEW",
            "notification REFUND",
        ])
        // Renewal state: billing retry with and without grace, renewal off, a pending change of product.
        + each(signed + legacy, ["billing retry with grace period", "billing retry without grace period", "renewal off", "renewal to another product"])
        // Both subscription groups.
        + each(signed, ["subscription group \(SampleCatalog.proGroup)", "subscription group \(SampleCatalog.storageGroup)"])
        // Upgrades as the transactions say them: a V2 upgrade notification carries the new period, so only the
        // transaction history and legacy receipts restate the old one as upgraded.
        + each([.serverAPIResponse] + legacy, ["upgraded"])
        // Family sharing and its revocation.
        + each([.notificationV2], ["family shared", "family revoke"])
        // Refunds: Apple's reason mix everywhere, full and partial (with revocationPercentage) where JWS says so.
        + each(signed + legacy, ["refund reason 0", "refund reason 1"])
        + each([.notificationV2], ["full refund", "partial refund with revocationPercentage"])
        + ["serverAPIResponse: full refund", "partial refund with revocationPercentage"]

    @Test("2,000 customers' written files carry every feature issue 9 names, in the formats that can carry it")
    func writtenFilesCarryEveryFeature() async throws {
        let (directory, _) = try SampleSupport.generate("written-coverage", customers: Self.customers, seed: Self.seed)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let tally = try await Self.tally(directory)
        #expect(tally.rejected.isEmpty, "\(tally.rejected.count) rejected: \(tally.rejected.prefix(5))")
        let missing = Self.required.filter { !tally.has($0) }
        #expect(missing.isEmpty, "the written files carry no \(missing)\nfound: \(tally.counts.keys.sorted())")
        // Several storefronts and currencies, in both signed formats; prices in milliunits.
        for kind in Self.signed {
            #expect((tally.storefronts[kind.rawValue] ?? []).count >= 4, "\(kind) storefronts: \(tally.storefronts[kind.rawValue] ?? [])")
            #expect((tally.currencies[kind.rawValue] ?? []).count >= 4, "\(kind) currencies: \(tally.currencies[kind.rawValue] ?? [])")
        }
        #expect(tally.badPrices.isEmpty, "prices not in milliunits: \(tally.badPrices.prefix(5))")
        // The customers.csv mapping for customers without a token.
        let mapping = try String(contentsOfFile: directory + "/customers.csv", encoding: .utf8).split(separator: "\n")
        #expect(mapping.first == "customer_id,kind,value")
        #expect(mapping.dropFirst().count > 100)
        #expect(mapping.dropFirst().allSatisfy { $0.hasPrefix("acct-") && $0.contains(",originalTransactionId,") })
    }
}
