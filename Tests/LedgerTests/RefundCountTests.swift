import Entitlements
import Foundation
@testable import Ledger
import LedgerQueries
import ReceiptDecoding
import ReceiptModel
import Samples
import Testing

/// The ledger's SQL figures (the customer list's refunds and coverage, the overview's refunds, refunds per day)
/// count what `Revocation` says is a refund that stands: not a family revoke, an upgrade's prorated
/// cancellation, or a refund Apple reversed — whatever order the files arrive in.
@Suite("refund counts in the ledger use the one definition of a refund", .serialized, .ownThreads)
struct RefundCountTests {
    /// The committed demo set (it holds refunds, reversed refunds and a family revoke, a story each), an upgraded
    /// subscription's prorated cancellation, which the generator does not write, and an upgraded transaction Apple
    /// says it refunded (a refund type).
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("SampleData/data").path

    static func inputs() throws -> [(path: String, bytes: [UInt8])] {
        let upgrade = #"{"transactionId":"up-1","originalTransactionId":"up-o","productId":"pro.monthly","type":"Auto-Renewable Subscription","purchaseDate":1740000000000,"expiresDate":1742600000000,"revocationDate":1741000000000,"isUpgraded":true,"environment":"Production"}"#
        let upgradedRefund = #"{"transactionId":"up-2","originalTransactionId":"up-o2","productId":"pro.monthly","type":"Auto-Renewable Subscription","purchaseDate":1740000000000,"expiresDate":1742600000000,"revocationDate":1741000000000,"revocationReason":1,"revocationType":"REFUND_PRORATED","revocationPercentage":50000,"isUpgraded":true,"environment":"Production"}"#
        return try FileManager.default.contentsOfDirectory(atPath: directory).sorted().map { name in
            guard let data = FileManager.default.contents(atPath: directory + "/" + name) else {
                throw Corpus.MissingFile(path: directory + "/" + name)
            }
            return ("data/" + name, [UInt8](data))
        } + [("upgrade.ndjson", Array((upgrade + "\n" + upgradedRefund).utf8))]
    }

    private static let madeDecoder = Result { try testDecoder(extraRoots: [SampleCA.rootDER]) }

    @Test("every customer's refunds, the overview and refunds per day agree with Revocation, in either file order", arguments: Backend.available)
    func agreeWithRevocation(_ backend: Backend) async throws {
        let inputs = try Self.inputs()
        var figures: [[String: Int]] = []
        // Files in order, then reversed: a reversal imported before the refund it voids, or after it.
        for order in [inputs, inputs.reversed()] {
            let ledger = try await backend.ledger()
            for input in order {
                try await importBytes(input.bytes, path: input.path, into: ledger, decoder: try Self.madeDecoder.get(), batchSize: 50)
            }
            figures.append(try await expectRefundsAgree(ledger))
            try await ledger.close()
        }
        #expect(figures[0] == figures[1], "the figures depend on the order the files were imported in")
    }

    @Test("the refund rules read a page of refunds at a time and find exactly what they find over all of them at once", arguments: Backend.available)
    func pagedRules(_ backend: Backend) async throws {
        let ledger = try await backend.ledger()
        for input in try Self.inputs() {
            try await importBytes(input.bytes, path: input.path, into: ledger, decoder: try Self.madeDecoder.get(), batchSize: 200)
        }
        let rules = FlagRules()
        let now = Timestamp.utc(year: 2025, month: 7, day: 1)
        let all = (refunds: try await ledger.refundFacts(), notifications: try await ledger.refundNotificationFacts())
        let whole = rules.evaluate(refunds: all.refunds, notifications: all.notifications, now: now)
        #expect(whole.count > 20 && Set(whole.map(\.rule)).count >= 5, "too few flags to compare: \(whole.count)")
        #expect(all.refunds.count > 7 * 3)
        for pageSize in [1, 7, 2_000] {
            let paged = try await ledger.evaluate(rules: rules, now: now, pageSize: pageSize)
            #expect(paged.flags == whole, "page size \(pageSize)")
            #expect(paged.outcomes == rules.outcomes(refunds: all.refunds, notifications: all.notifications, now: now))
        }
        try await ledger.close()
    }

    /// Two connections to a new ledger holding every input, and the ledger open on the first.
    static func imported(_ backend: Backend) async throws -> (any SQLDatabase, any SQLDatabase, SQLLedger) {
        let (database, other) = try await backend.twoConnections()
        let ledger = try await SQLLedger.open(database, now: testNow)
        for input in try inputs() {
            try await importBytes(input.bytes, path: input.path, into: ledger, decoder: try madeDecoder.get(), batchSize: 200)
        }
        return (database, other, ledger)
    }

    @Test("a version 3 ledger, which counted every revocation, is recounted when this build opens it", arguments: Backend.available)
    func migrationFromVersion3(_ backend: Backend) async throws {
        let (database, other, ledger) = try await Self.imported(backend)
        let expected = try await expectRefundsAgree(ledger)
        // Back to what version 3 wrote: no revocation_kind, every revocation counted as a refund.
        try await database.write { c in
            try undoMigrationV4(c)
            for id in try c.query("SELECT customer_id FROM customer_stats", []).compactMap({ $0[0].int }) {
                try c.execute(
                    """
                    UPDATE customer_stats SET refunds = (SELECT COUNT(t.revocation_date) FROM customer_ids ci
                        JOIN transactions t ON COALESCE(t.original_transaction_id, t.transaction_id) = ci.value
                        WHERE ci.kind = 'originalTransactionId' AND ci.customer_id = ?) WHERE customer_id = ?
                    """, [.int(id), .int(id)])
            }
        }
        let upgraded = try await SQLLedger.open(other, now: testNow)
        #expect(try await expectRefundsAgree(upgraded) == expected)
        try await expectFiguresAgree(upgraded)
        try await upgraded.close()
        try await ledger.close()
    }

    @Test("a ledger written before an upgraded transaction's refund type counted is recounted when this build opens it", arguments: Backend.available)
    func migrationOfUpgradedRefunds(_ backend: Backend) async throws {
        let (database, other, ledger) = try await Self.imported(backend)
        let expected = try await expectRefundsAgree(ledger)
        let production = try await ledger.overview(environment: .production).refundedTransactions
        let kind = "SELECT revocation_kind FROM transactions WHERE transaction_id = 'up-2'"
        #expect(try await database.read { c in try c.scalar(kind)?.text } == "refund")
        // Back to what version 11 wrote: the upgraded transaction's refund an upgrade's cancellation, counted nowhere.
        try await database.write { c in
            try c.execute("UPDATE transactions SET revocation_kind = 'upgrade' WHERE transaction_id = 'up-2'")
            try c.execute(
                "UPDATE ledger_counters SET value = value - 1 WHERE name IN ('refunded_transactions', 'refunded_transactions@Production')")
            try StatsWriter.recountAll(c)
            try c.execute("DELETE FROM ledger_migrations WHERE id = 'v12-upgraded-refunds'")
            try c.execute("UPDATE ledger_meta SET value = '11' WHERE key = 'schema_version'")
        }
        #expect(try await ledger.overview().refundedTransactions == expected[""].map { $0 - 1 })
        #expect(try await ledger.overview(environment: .production).refundedTransactions == production - 1)
        let upgraded = try await SQLLedger.open(other, now: testNow)
        #expect(try await other.read { c in try c.scalar(kind)?.text } == "refund")
        #expect(try await expectRefundsAgree(upgraded) == expected)
        #expect(try await upgraded.overview(environment: .production).refundedTransactions == production)
        try await upgraded.close()
        try await ledger.close()
    }

    @Test("refunds per day as of an instant count the refunds that stood then: one Apple reversed later counts until its reversal", arguments: Backend.available)
    func seriesAsOfInstant(_ backend: Backend) async throws {
        let (_, _, ledger) = try await Self.imported(backend)
        var histories: [(transactions: [Transaction], history: CustomerHistory)] = []
        for row in try await pageAll(ledger, CustomerQuery(limit: 500)).rows {
            let records = try await ledger.customerRecords(row.id)
            histories.append((records.transactions, records.history))
        }
        let reversed = try await ledger.database.read { c in
            try c.query("SELECT product_id, revocation_date FROM transactions WHERE revocation_kind = 'reversed' ORDER BY revocation_date", [])
        }
        #expect(!reversed.isEmpty, "the demo data has no reversed refund to travel to")
        // A minute after each reversed refund (before its reversal), a week and 20 days after it (the demo's is
        // reversed 9 days after), and now.
        var instants = reversed.flatMap { row in [60_000, 7 * World.day, 20 * World.day].map { (row[1].int ?? 0) + $0 } }
        instants.append(testNow.millisecondsSince1970)
        var countedReversed = 0
        for instant in instants.map(Timestamp.init) {
            for product in [nil] + reversed.map({ $0[0].text }) {
                let series = try await ledger.refundsPerDay(days: 30, endingAt: instant, productId: product)
                var expected = Array(repeating: 0, count: 30)
                for (transactions, history) in histories {
                    for t in transactions where product == nil || t.productId == product {
                        guard case .refund(let at, _)? = history.revocation(of: t, at: instant) else { continue }
                        let index = Int((at.millisecondsSince1970 - series.firstDay.millisecondsSince1970) / World.day)
                        guard expected.indices.contains(index), at.millisecondsSince1970 >= series.firstDay.millisecondsSince1970 else { continue }
                        expected[index] += 1
                        if t.revocation(reversedAt: history.refundReversal(of: t.transactionId, at: testNow)) == nil { countedReversed += 1 }
                    }
                }
                #expect(series.counts == expected, "as of \(instant.iso8601), product \(product ?? "any") on \(backend)")
                // Each day's bar down to its transactions: the refunds the dashboard lists on Enter.
                guard product == nil else { continue }
                let production = try await ledger.refundsPerDay(days: 30, endingAt: instant, productId: nil, environment: .production)
                for (index, count) in series.counts.enumerated() where count > 0 {
                    let day = series.firstDay.adding(milliseconds: Int64(index) * World.day)
                    let listed = try await ledger.refunds(onDayOf: day.adding(milliseconds: 5), until: instant, environment: .all, limit: 1000)
                    #expect(listed.count == count, "\(day.iso8601) as of \(instant.iso8601) on \(backend)")
                    #expect(listed.allSatisfy { $0.refundedAt >= day && $0.refundedAt <= instant }, "\(listed)")
                    #expect(listed.map(\.refundedAt) == listed.map(\.refundedAt).sorted())
                    let inProduction = try await ledger.refunds(onDayOf: day, until: instant, environment: .production, limit: 1000)
                    #expect(inProduction.count == production.counts[index] && inProduction.allSatisfy { $0.environment == "Production" })
                    let limited = try await ledger.refunds(onDayOf: day, until: instant, environment: .all, limit: 1)
                    #expect(limited.map(\.transactionId) == Array(listed.prefix(1).map(\.transactionId)))
                }
            }
        }
        #expect(countedReversed > 0, "no instant had a refund reversed later")
        try await ledger.close()
    }

    /// Checks the ledger's figures against `CustomerHistory.revocation(of:at:)` over each customer's records, and
    /// that the data holds every kind of revocation; returns the figures: refunds per customer (by its smallest
    /// identifier, as ids depend on import order) and the total (under "").
    @discardableResult
    func expectRefundsAgree(_ ledger: SQLLedger, sourceLocation: SourceLocation = #_sourceLocation) async throws -> [String: Int] {
        let end = Timestamp(millisecondsSince1970: Int64.max / 4)
        let kinds = try await ledger.database.read { c in
            try c.query("SELECT revocation_kind, COUNT(*) FROM transactions WHERE revocation_date IS NOT NULL GROUP BY revocation_kind", [])
        }
        let byKind = Dictionary(uniqueKeysWithValues: kinds.map { ($0[0].text ?? "NULL", $0[1].int ?? 0) })
        for kind in RevocationKind.allCases {
            #expect((byKind[kind.rawValue] ?? 0) > 0, "the data has no revocation of kind \(kind): \(byKind)", sourceLocation: sourceLocation)
        }
        #expect(byKind["NULL"] == nil, "a revoked transaction without a kind", sourceLocation: sourceLocation)

        var perCustomer: [String: Int] = [:]
        var total = 0
        var earliest = Int64.max
        var wrong: [String] = []
        for row in try await pageAll(ledger, CustomerQuery(limit: 500)).rows {
            let records = try await ledger.customerRecords(row.id)
            let history = records.history
            let refunds = records.transactions.filter { history.revocation(of: $0, at: end)?.isRefund == true }
            for t in refunds { earliest = min(earliest, t.revocationDate?.millisecondsSince1970 ?? earliest) }
            if row.refunds != refunds.count { wrong.append("C\(row.id): \(row.refunds), expected \(refunds.count)") }
            perCustomer[row.identifiers.map(\.value).min() ?? "C\(row.id)"] = refunds.count
            total += refunds.count
        }
        #expect(wrong.isEmpty, "refunds on the customer list: \(wrong.prefix(5))", sourceLocation: sourceLocation)
        #expect(total > 0, sourceLocation: sourceLocation)
        #expect(try await ledger.overview().refundedTransactions == total, sourceLocation: sourceLocation)
        let days = Int((testNow.millisecondsSince1970 - earliest) / World.day) + 2
        let series = try await ledger.refundsPerDay(days: days, endingAt: testNow, productId: nil)
        #expect(series.counts.reduce(0, +) == total, "refunds per day", sourceLocation: sourceLocation)
        try await expectFiguresAgree(ledger, sourceLocation: sourceLocation)
        perCustomer[""] = total
        return perCustomer
    }
}
