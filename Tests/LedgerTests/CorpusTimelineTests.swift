import Entitlements
import Foundation
import Ledger
import ReceiptModel
import Testing

/// Real data through the whole core: import, customer, entitlements and timeline a person would agree with.
@Suite("Timelines of real corpus data", .ownThreads)
struct CorpusTimelineTests {
    func history(_ file: String, customer id: String) async throws -> CustomerHistory {
        let ledger = try await Backend.sqlite.ledger()
        _ = try await importFile(Corpus.root.appendingPathComponent(file).path, into: ledger)
        let customer = try #require(try await ledger.customerId(matching: id))
        let history = try await ledger.customerRecords(customer).history
        try await ledger.close()
        return history
    }

    func counts(_ events: [TimelineEvent]) -> [EventKind: Int] {
        events.reduce(into: [:]) { $0[$1.kind, default: 0] += 1 }
    }

    @Test("laravel's V1 notification: 54 periods, 4 upgraded, renewal turned off by the customer")
    func laravel() async throws {
        let h = try await history("imdhemy__laravel-in-app-purchases/appstore-server-notification.json", customer: "1000000723811158")
        #expect(h.transactions.count == 54)
        #expect(h.transactions.filter { $0.isUpgraded == true }.count == 4)
        let at = Timestamp.utc(year: 2026, month: 1, day: 1)
        let timeline = h.timeline(upTo: at)
        #expect(timeline.count == 80)
        #expect(counts(timeline) == [.subscribed: 1, .renewed: 34, .expired: 15, .lapsed: 14, .resubscribed: 14, .upgraded: 1, .autoRenewDisabled: 1])
        #expect(!timeline.contains { $0.kind == .refunded })
        #expect(timeline == timeline.sorted { $0.at < $1.at } || zip(timeline, timeline.dropFirst()).allSatisfy { $0.at <= $1.at })
        let disabled = try #require(timeline.first { $0.kind == .autoRenewDisabled })
        #expect(disabled.detail == "the customer turned renewal off")
        let entitlements = h.entitlements(at: at)
        #expect(entitlements.map(\.state) == [.expired])
        #expect(entitlements.first?.expirationIntent == .customerCancelled)
        #expect(entitlements.first?.willRenew == false)
        // On the day before it ended, the customer had it.
        #expect(h.entitlements(at: Timestamp(millisecondsSince1970: 1_606_292_900_000)).first?.state == .active)
    }

    @Test("TPInAppReceipt's 187-entry sandbox receipt: one subscription across three products")
    func sandboxLegacyReceipt() async throws {
        let h = try await history("tikhop__TPInAppReceipt/receipt-sandbox-legacy", customer: "1000000603177571")
        #expect(h.transactions.count == 187)
        let timeline = h.timeline(upTo: Timestamp.utc(year: 2026, month: 1, day: 1))
        #expect(timeline.count == 276)
        #expect(counts(timeline) == [.subscribed: 1, .renewed: 136, .crossgraded: 5, .expired: 45, .lapsed: 44, .resubscribed: 44, .trialConverted: 1])
        #expect(h.entitlements(at: Timestamp.utc(year: 2026, month: 1, day: 1)).map(\.state) == [.expired])
    }
}
