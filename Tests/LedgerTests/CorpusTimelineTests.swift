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

    /// What a timeline must count, worked out from the transactions alone (not from the timeline's output):
    /// every transaction starts a period (one upgraded away covered the customer until its replacement began);
    /// a period that began more than a minute after
    /// the one before it expired is a gap — one expiry, one lapse, one resubscription — and a change of product
    /// without a gap is a change of plan; the last period expires if it ended before `at`.
    /// - Returns: the number of changes of plan.
    @discardableResult
    func expectShape(_ h: CustomerHistory, _ timeline: [TimelineEvent], at: Timestamp, sourceLocation: SourceLocation = #_sourceLocation) -> Int {
        let periods = h.transactions.filter { $0.purchaseDate != nil }
            .sorted { ($0.purchaseDate!, $0.transactionId) < ($1.purchaseDate!, $1.transactionId) }
        var gaps = 0
        var changes = 0
        for (prior, t) in zip(periods, periods.dropFirst()) {
            if let expires = prior.expiresDate, expires.distance(to: t.purchaseDate!) > 60_000 {
                gaps += 1
            } else if prior.productId != t.productId {
                changes += 1
            }
        }
        let c = counts(timeline)
        let starts: [EventKind] = [.subscribed, .renewed, .resubscribed, .crossgraded, .downgraded, .trialConverted, .upgraded]
        #expect(starts.reduce(0) { $0 + (c[$1] ?? 0) } == periods.count, "a period started per transaction", sourceLocation: sourceLocation)
        #expect(c[.subscribed] == 1, sourceLocation: sourceLocation)
        #expect(gaps > 0, "the data has lapses", sourceLocation: sourceLocation)
        #expect(c[.lapsed] ?? 0 == gaps, "one lapse per gap", sourceLocation: sourceLocation)
        #expect(c[.resubscribed] ?? 0 == gaps, "one resubscription per gap", sourceLocation: sourceLocation)
        let lastEnded = (periods.last?.expiresDate).map { $0 < at } ?? false
        #expect(c[.expired] ?? 0 == gaps + (lastEnded ? 1 : 0), sourceLocation: sourceLocation)
        let planChanges: [EventKind] = [.upgraded, .downgraded, .crossgraded]
        #expect(planChanges.reduce(0) { $0 + (c[$1] ?? 0) } == changes, "one change of plan per change of product", sourceLocation: sourceLocation)
        return changes
    }

    @Test("laravel's V1 notification: 54 periods, 4 upgraded, renewal turned off by the customer")
    func laravel() async throws {
        let h = try await history("imdhemy__laravel-in-app-purchases/appstore-server-notification.json", customer: "1000000723811158")
        #expect(h.transactions.count == 54)
        #expect(h.transactions.filter { $0.isUpgraded == true }.count == 4)
        let at = Timestamp.utc(year: 2026, month: 1, day: 1)
        let timeline = h.timeline(upTo: at)
        expectShape(h, timeline, at: at)
        // Four upgrades: each upgraded year_premium period was replaced minutes later by month_premium, which covered
        // the customer from then on (no lapse between them); the customer turning renewal off: the notification's
        // own facts.
        #expect(counts(timeline)[.upgraded] == 4)
        for upgraded in h.transactions where upgraded.isUpgraded == true {
            let next = try #require(timeline.first { $0.at > upgraded.purchaseDate! && $0.at < upgraded.expiresDate! })
            #expect(next.kind == .upgraded && next.productId == "month_premium", "\(upgraded.transactionId): \(next)")
        }
        #expect(counts(timeline)[.autoRenewDisabled] == 1)
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
        let at = Timestamp.utc(year: 2026, month: 1, day: 1)
        let timeline = h.timeline(upTo: at)
        // Three products in one subscription group: changes of product without a gap are crossgrades (the
        // receipt has no catalog tiers); the first period was a free trial that converted.
        #expect(Set(h.transactions.map(\.productId)).count == 3)
        #expect(expectShape(h, timeline, at: at) == counts(timeline)[.crossgraded])
        #expect(counts(timeline)[.trialConverted] == 1)
        #expect(h.entitlements(at: Timestamp.utc(year: 2026, month: 1, day: 1)).map(\.state) == [.expired])
    }
}
