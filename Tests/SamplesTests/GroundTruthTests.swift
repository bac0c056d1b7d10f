import Entitlements
import Foundation
import Ledger
import ReceiptDecoding
import ReceiptModel
import Samples
import Testing

@testable import ReceiptDeskCLI

@Suite("the generator's ground truth", .ownThreads)
struct GroundTruthTests {
    /// Flag keys as the ground truth writes them: the flag id, but `serial-refunder:<transactionId>` (the
    /// ledger's id names its own customer number). Spikes are checked over the whole ledger, not per customer.
    static func keys(_ flags: [RefundFlag]) -> Set<String> {
        Set(flags.filter { $0.rule != "refund-spike" }.map { $0.rule == "serial-refunder" ? "serial-refunder:\($0.transactionId ?? "?")" : $0.id })
    }

    /// The flags the rules raise over what a customer's records say had happened by `instant`: refunds that
    /// took effect by then and notifications signed by then, judged at that instant (as the ledger does at its now).
    static func flags(_ records: CustomerRecords, at instant: Timestamp) -> Set<String> {
        let refunds = records.transactions.filter { $0.revocationDate.map { $0 <= instant } ?? false }
            .map { RefundFact(transaction: $0, customerId: records.id) }
        let notifications = records.notifications.filter { ($0.notification.signedDate ?? $0.seenAt) <= instant }.map {
            NotificationFact(notification: $0.notification, seenAt: $0.seenAt, transactionId: $0.transactionId, productId: nil, customerId: records.id)
        }
        return keys(FlagRules().evaluate(refunds: refunds, notifications: notifications, now: instant))
    }

    @Test("every record imports with no rejection, and entitlements and flags agree exactly with the ground truth at three instants")
    func groundTruth() async throws {
        let (directory, summary) = try SampleSupport.generate("truth", customers: 2000, seed: 42)
        #expect(summary.customers == 2000)
        #expect(summary.records > 4000)
        let (ledger, _) = try await SampleSupport.ledger(for: directory)
        defer { Task { try? await ledger.close() } }
        let overview = try await ledger.overview()
        #expect(overview.rejectedRecords == 0)
        let catalog = try Catalog.parse(csv: SampleCatalog.catalogCSV)
        // The same catalog without its consumables: an untyped legacy consumable is then in no catalog, and must
        // still not be guessed into an entitlement.
        let withoutConsumables = Catalog(catalog.products.values.filter { $0.type != .consumable })
        #expect(withoutConsumables.products.count < catalog.products.count)
        let truths = try SampleSupport.objects(directory + "/ground-truth.ndjson")
        var mismatches: [String] = []
        var checkedStates = 0
        var checkedFlags = 0
        var flagsChangeBetweenInstants = 0
        var assumedOwned = 0
        var consumablesBought = Set<String>()
        var statesSeen = Set<String>()
        var formats = Set<String>()
        for truth in truths.dropLast() {
            let id = truth["customer"] as! String
            let format = truth["format"] as! String
            formats.insert(format)
            // A customer who bought nothing left no record: nothing to find.
            guard truth["originalTransactionId"] != nil else { continue }
            guard let customer = try await ledger.customerId(matching: id) else {
                mismatches.append("\(id): no customer")
                continue
            }
            let records = try await ledger.customerRecords(customer)
            let history = records.history
            consumablesBought.formUnion(records.transactions.compactMap(\.productId).filter { $0.hasPrefix("coins.") }.map { "\($0) \(format)" })
            var previousFlags: Set<String>?
            for instant in truth["instants"] as! [[String: Any]] {
                let at = Timestamp(millisecondsSince1970: (instant["at"] as! NSNumber).int64Value)
                let expected = instant["entitlements"] as! [String: String]
                var got: [String: String] = [:]
                for e in history.entitlements(at: at, catalog: catalog) { got[e.name] = e.state.rawValue }
                for (name, state) in expected {
                    checkedStates += 1
                    statesSeen.insert(state)
                    if got[name] != state {
                        mismatches.append("\(id) (\(format)) at \(at): \(name) is \(got[name] ?? "absent"), expected \(state)")
                    }
                }
                // Exact: no entitlement the generator did not mean (a consumable is none, in every format).
                for name in got.keys where expected[name] == nil {
                    mismatches.append("\(id) (\(format)) at \(at): unexpected entitlement \(name) \(got[name]!)")
                }
                // Without them, an untyped legacy consumable (no type, no expiry, not listed) is taken for a
                // non-consumable and says so; every other entitlement is the same.
                var unlisted: [String: String] = [:]
                for e in history.entitlements(at: at, catalog: withoutConsumables) {
                    if e.productId?.hasPrefix("coins.") == true {
                        // Read as a non-consumable (owned once bought, revoked when refunded), saying so when owned.
                        if e.state == .owned && e.reason.contains("taken for a non-consumable") { assumedOwned += 1 }
                        continue
                    }
                    unlisted[e.name] = e.state.rawValue
                }
                if unlisted != got {
                    mismatches.append("\(id) (\(format)) at \(at): without the consumables in the catalog \(unlisted.sorted { $0.key < $1.key }), with them \(got.sorted { $0.key < $1.key })")
                }
                let expectedFlags = Set(instant["flags"] as! [String])
                let gotFlags = Self.flags(records, at: at)
                checkedFlags += expectedFlags.count
                if gotFlags != expectedFlags {
                    mismatches.append("\(id) (\(format)) flags at \(at): missing \(expectedFlags.subtracting(gotFlags).sorted()), unexpected \(gotFlags.subtracting(expectedFlags).sorted())")
                }
                if let previousFlags, previousFlags != expectedFlags { flagsChangeBetweenInstants += 1 }
                previousFlags = expectedFlags
            }
            // At the end of the data, the flags the ledger stored are the ground truth's too.
            let expectedFlags = Set(truth["flags"] as! [String])
            if expectedFlags != previousFlags { mismatches.append("\(id): the end's flags are not the last instant's") }
            let gotFlags = Self.keys(try await ledger.flags(FlagQuery(customerId: records.id, limit: 1000)))
            checkedFlags += expectedFlags.count
            if gotFlags != expectedFlags {
                mismatches.append("\(id) (\(format)) ledger flags: missing \(expectedFlags.subtracting(gotFlags).sorted()), unexpected \(gotFlags.subtracting(expectedFlags).sorted())")
            }
        }
        let spikes = (truths.last!["spikes"] as! [String])
        // The generator's spike story is in production; sandbox refunds are counted apart (a tester's day of
        // refunds is its own spike, never part of production's).
        let gotSpikes = try await ledger.flags(FlagQuery(rule: "refund-spike", environment: .production, limit: 1000)).map(\.id)
        #expect(Set(gotSpikes) == Set(spikes))
        #expect(spikes.count == 1)
        #expect(assumedOwned > 0, "no untyped legacy consumable was read without the catalog")
        #expect(mismatches.isEmpty, "\(mismatches.count) mismatches over \(checkedStates) states:\n\(mismatches.prefix(40).joined(separator: "\n"))")
        #expect(checkedStates > 4000)
        #expect(checkedFlags > 100)
        // The instants are worth checking apart: some customers' flags differ from one instant to the next.
        #expect(flagsChangeBetweenInstants > 20)
        // Consumables were bought in every format, legacy (untyped) ones included, and none was an entitlement.
        #expect(consumablesBought.isSuperset(of: SampleFormat.allCases.map { "coins.100 \($0.rawValue)" }))
        #expect(formats == Set(SampleFormat.allCases.map(\.rawValue)))
        #expect(statesSeen.isSuperset(of: ["active", "gracePeriod", "billingRetry", "expired", "revoked", "owned", "none"]))
    }

    @Test("the stories are where the README says: billing retry, grace period, family revoke, reversal, pending consumption request")
    func stories() async throws {
        let (directory, summary) = try SampleSupport.generate("stories", customers: 40, seed: 7)
        let (ledger, now) = try await SampleSupport.ledger(for: directory)
        defer { Task { try? await ledger.close() } }
        let catalog = try Catalog.parse(csv: SampleCatalog.catalogCSV)
        let ids = Dictionary(summary.stories.map { ($0.story, $0.id) }, uniquingKeysWith: { a, _ in a })
        func state(_ story: SampleStory, _ name: String) async throws -> EntitlementState? {
            let id = try #require(ids[story.rawValue])
            let customer = try #require(try await ledger.customerId(matching: id))
            return try await ledger.customerRecords(customer).history.entitlements(at: now, catalog: catalog).first { $0.name == name }?.state
        }
        #expect(try await state(.paidButNothing, "pro") == .billingRetry)
        #expect(try await state(.gracePeriod, "storage") == .gracePeriod)
        #expect(try await state(.familyRevoked, "pro") == .revoked)
        #expect(try await state(.upgradedMidMonth, "pro") == .active)
        #expect(try await state(.refundReversed, "lifetime") == .owned)
        let flags = try await ledger.flags(FlagQuery(limit: 1000))
        #expect(flags.contains { $0.rule == "serial-refunder" })
        #expect(flags.contains { $0.rule == "family-revoke" })
        #expect(flags.contains { $0.rule == "refund-reversed" })
        let pending = flags.filter { $0.rule == "consumption-request" && $0.at.adding(milliseconds: 12 * 3_600_000) > now }
        #expect(pending.count == 1)
        // A consumption request and a reversal carry the price of the transaction they are about (the ledger holds it).
        #expect(pending.allSatisfy { $0.amount != nil && $0.currency != nil }, "\(pending)")
        #expect(flags.filter { $0.rule == "refund-reversed" }.allSatisfy { $0.amount != nil && $0.currency != nil })
        let upgraded = try #require(try await ledger.customerId(matching: ids[SampleStory.upgradedMidMonth.rawValue]!))
        let timeline = try await ledger.customerRecords(upgraded).history.timeline(upTo: now, catalog: catalog)
        #expect(timeline.contains { $0.kind == .upgraded })
    }
}
