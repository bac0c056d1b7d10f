import Entitlements
import Foundation
@testable import Ledger
import ReceiptDecoding
import ReceiptModel
import Testing

/// The read side at scale (customer_stats, ledger_counters, cursors), on every backend: each figure is
/// checked against a ground truth the test keeps itself, and against a recount from the ledger's rows.
extension LedgerConformanceTests {
    @Test("paging a filtered, sorted customer list visits every match once, in order, with its total", arguments: Backend.available)
    func customerPaging(_ backend: Backend) async throws {
        let ledger = try await backend.ledger()
        var world = World()
        try await world.build(into: ledger)
        try await expectFiguresAgree(ledger)
        let truth = try await world.customers(in: ledger)
        #expect(truth.count == (try await ledger.overview()).customers)
        #expect(truth.count < world.people.count)  // some people merged

        // Every summary on the unfiltered list is the ground truth's.
        for row in try await pageAll(ledger, CustomerQuery(limit: 100)).rows {
            let expected = try #require(truth[row.id])
            #expect(row.transactionCount == expected.transactions.count, "C\(row.id)")
            #expect(row.refunds == expected.refunds, "C\(row.id)")
            #expect(row.lastPurchase?.millisecondsSince1970 == expected.lastPurchase, "C\(row.id)")
            #expect(row.latestExpiry?.millisecondsSince1970 == expected.latestExpiry, "C\(row.id)")
            #expect(row.liveExpiry?.millisecondsSince1970 == expected.liveExpiry, "C\(row.id)")
            #expect(row.environments == expected.environments.sorted(), "C\(row.id)")
            #expect(row.openFlags == expected.openFlags, "C\(row.id)")
            #expect(Set(row.identifiers.map(\.value)) == expected.identifiers, "C\(row.id)")
        }

        // Day 8 of the purchases' 22: customers covered then, those whose first purchase came later (not covered
        // then, though their access stands past it), and those whose access ended before it.
        let activeAt = World.base.adding(milliseconds: 8 * World.day)
        // (And day 25, after every purchase: there the latest live expiry alone decides, the fast way.)
        let afterAll = World.base.adding(milliseconds: 25 * World.day)
        var combinations = 0
        for sort in CustomerSort.allCases {
            for environment in EnvironmentFilter.allCases {
                for active in [nil, activeAt, afterAll] {
                    for flagged in [false, true] {
                        for filter in [nil, "o-1", "tok-"] {
                            let query = CustomerQuery(
                                filter: filter, environment: environment, activeAt: active, withOpenFlags: flagged, sort: sort, limit: 7)
                            let exact = try await filter.asyncMap { try await ledger.customerId(matching: $0) } ?? nil
                            let expected = truth.values.filter { customer in
                                (environment.stored.map { customer.environments.contains($0) } ?? true)
                                    && (active.map { at in customer.covered(at: at.millisecondsSince1970) } ?? true)
                                    && (!flagged || customer.openFlags > 0)
                                    && (filter.map { f in customer.id == exact || customer.identifiers.contains { $0.hasPrefix(f) } } ?? true)
                            }
                            .sorted { a, b in
                                let (ka, kb) = (a.key(sort), b.key(sort))
                                return sort == .id ? a.id < b.id : (ka != kb ? ka > kb : a.id < b.id)
                            }
                            .map(\.id)
                            let label = "\(sort) \(environment) active=\(active != nil) flagged=\(flagged) filter=\(filter ?? "-")"
                            let paged = try await pageAll(ledger, query)
                            #expect(paged.rows.map(\.id) == expected, "\(label)")
                            #expect(paged.totals == [expected.count], "\(label)")
                            // From the end backward (G, then scrolling up): the same list, page by page.
                            var backward: [Int64] = []
                            var before: CustomerQuery? = CustomerQuery(
                                filter: filter, environment: environment, activeAt: active, withOpenFlags: flagged, sort: sort, direction: .backward,
                                limit: 7)
                            while let q = before, backward.count <= expected.count {
                                let page = try await ledger.customers(q)
                                #expect(page.rows.count == 7 || page.previous == nil, "backward \(label): a short page before the start")
                                #expect((q.after == nil) == (page.next == nil), "backward \(label): next")
                                backward = page.rows.map(\.id) + backward
                                before = page.previous.map { var next = q; next.after = $0; return next }
                            }
                            #expect(backward == expected, "backward \(label)")
                            if let filter {
                                // The same filter taken as dense above one identifier (walked, its count a lower
                                // bound) lists the same customers in the same order; its count never exceeds theirs.
                                let inRange = truth.values.reduce(0) { $0 + $1.identifiers.count { $0.hasPrefix(filter) } }
                                let dense = try await pageAll(ledger, query, denseFilter: 1, countLimit: 1_000)
                                #expect(dense.rows.map(\.id) == expected, "dense \(label)")
                                #expect(dense.lowerBounds == [inRange > 1], "dense \(label): \(inRange) identifiers")
                                #expect(dense.totals.allSatisfy { $0 <= expected.count }, "dense \(label): \(dense.totals)")
                                #expect(dense.totals.first ?? 0 >= min(expected.count, query.limit + 1), "dense \(label): \(dense.totals)")
                            } else if !query.isUnfiltered && active == nil && !flagged {
                                // One environment alone: its running count, exact however small the count limit.
                                let counted = try await pageAll(ledger, query, denseFilter: 1_000, countLimit: 3)
                                #expect(counted.rows.map(\.id) == expected, "environment \(label)")
                                #expect(counted.totals == [expected.count] && counted.lowerBounds == [false], "environment \(label)")
                            } else if !query.isUnfiltered {
                                // Counted only up to a limit: the same customers, the count exact up to it, "N+" above.
                                let capped = try await pageAll(ledger, query, denseFilter: 1_000, countLimit: 3)
                                #expect(capped.rows.map(\.id) == expected, "capped \(label)")
                                #expect(capped.lowerBounds == [expected.count > 3], "capped \(label)")
                                #expect(
                                    capped.totals.first == (expected.count > 3 ? min(expected.count, query.limit + 1) : expected.count),
                                    "capped \(label): \(capped.totals)")
                                #expect(capped.totals.allSatisfy { $0 <= expected.count }, "capped \(label): \(capped.totals)")
                            }
                            if !expected.isEmpty { combinations += 1 }
                        }
                    }
                }
            }
        }
        #expect(combinations > 50)  // the data exercises nearly every combination, not just empty lists
        try await ledger.close()
    }

    @Test("paging flags with a cursor visits every match once, newest first", arguments: Backend.available)
    func flagPaging(_ backend: Backend) async throws {
        let ledger = try await backend.ledger()
        var flags: [RefundFlag] = []
        for i in 0..<41 {
            flags.append(
                RefundFlag(
                    id: String(format: "flag-%03d", (i * 17) % 41), rule: ["quick-refund", "app-issue", "high-value"][i % 3],
                    severity: [.low, .medium, .high, .critical][i % 4], customerId: Int64(i % 4 + 1), transactionId: "t\(i)",
                    productId: i % 7 == 0 ? "spiky" : "p", amount: 100, currency: "USD",
                    at: testNow.adding(milliseconds: Int64(i % 5) * 3_600_000),
                    detail: "flag \(i)"))
        }
        try await ledger.saveFlags(flags, now: testNow)
        var status: [String: FlagStatus] = Dictionary(uniqueKeysWithValues: flags.map { ($0.id, .open) })
        for flag in flags.enumerated() where flag.offset % 3 == 0 {
            _ = try await ledger.triage(flagId: flag.element.id, action: .ack, operatorName: "ana", note: nil, now: testNow)
            status[flag.element.id] = .acknowledged
        }
        // Who moved each flag last: the acknowledged ones' entries, the first resolved since by bo; none for the rest.
        let first = flags[0].id
        _ = try await ledger.triage(flagId: first, action: .resolve, operatorName: "bo", note: "done", now: testNow)
        let latest = try await ledger.latestTriage(flagIds: flags.map(\.id) + ["no-such-flag"])
        #expect(Set(latest.keys) == Set(flags.enumerated().filter { $0.offset % 3 == 0 }.map(\.element.id)))
        #expect(latest[first]?.operatorName == "bo" && latest[first]?.action == .resolve && latest[first]?.note == "done")
        #expect(latest[flags[3].id]?.operatorName == "ana" && latest[flags[3].id]?.action == .ack)
        #expect(try await ledger.latestTriage(flagIds: []).isEmpty)
        _ = try await ledger.triage(flagId: first, action: .reopen, operatorName: "bo", note: nil, now: testNow)
        _ = try await ledger.triage(flagId: first, action: .ack, operatorName: "ana", note: nil, now: testNow)
        let since = testNow.adding(milliseconds: 2 * 3_600_000)
        let queries: [FlagQuery] = [
            FlagQuery(limit: 4), FlagQuery(status: .open, limit: 3), FlagQuery(status: .acknowledged, limit: 5),
            FlagQuery(rule: "app-issue", limit: 2), FlagQuery(since: since, limit: 3), FlagQuery(customerId: 2, limit: 3),
            FlagQuery(status: .open, rule: "app-issue", since: since, limit: 1), FlagQuery(limit: 41), FlagQuery(limit: 100),
            FlagQuery(productId: "spiky", limit: 2), FlagQuery(status: .open, productId: "spiky", limit: 1),
            FlagQuery(severity: .critical, limit: 3), FlagQuery(status: .open, severity: .high, limit: 2),
            FlagQuery(limit: 3, until: since), FlagQuery(status: .open, rule: "app-issue", limit: 2, until: since),
        ]
        for query in queries {
            let expected = flags.filter { flag in
                (query.status.map { status[flag.id] == $0 } ?? true) && (query.rule.map { flag.rule == $0 } ?? true)
                    && (query.since.map { flag.at >= $0 } ?? true) && (query.until.map { flag.at <= $0 } ?? true)
                    && (query.customerId.map { flag.customerId == $0 } ?? true)
                    && (query.productId.map { flag.productId == $0 } ?? true) && (query.severity.map { flag.severity == $0 } ?? true)
            }
            .sorted { ($0.at.millisecondsSince1970, $1.id) > ($1.at.millisecondsSince1970, $0.id) }
            var seen: [RefundFlag] = []
            var page = query
            for _ in 0..<100 {
                let rows = try await ledger.flags(page)
                #expect(rows.count <= query.limit)
                seen += rows
                guard rows.count == query.limit, let last = rows.last else { break }
                page.after = FlagCursor(after: last)
            }
            #expect(seen.map(\.id) == expected.map(\.id), "\(query)")
            // Counted, the cursor and the limit aside, it is every flag the pages held.
            #expect(try await ledger.flagCount(query) == expected.count, "\(query)")
            #expect(!expected.isEmpty, "\(query) matches nothing, so it tests nothing")
            #expect(seen.allSatisfy { status[$0.id] == $0.status })
        }
        let counts = try await ledger.flagCounts()
        for severity in [Severity.low, .medium, .high, .critical] {
            for state in [FlagStatus.open, .acknowledged] {
                let expected = flags.filter { $0.severity == severity && status[$0.id] == state }.count
                let found = counts.first { $0.severity == severity && $0.status == state }?.count ?? 0
                #expect(found == expected, "\(severity) \(state)")
            }
        }
        #expect(try await ledger.overview().openFlags == status.values.filter { $0 == .open }.count)
        try await ledger.close()
    }

    @Test("the queue's text filter finds every flag whose id, rule, product, customer or detail holds it, in either case, paged and counted", arguments: Backend.available)
    func flagText(_ backend: Backend) async throws {
        let ledger = try await backend.ledger()
        func flag(_ id: String, _ rule: String, product: String?, customer: Int64?, minutes: Int64, _ detail: String) -> RefundFlag {
            RefundFlag(
                id: id, rule: rule, severity: .high, customerId: customer, transactionId: id, productId: product, amount: 990,
                currency: "USD", at: testNow.adding(milliseconds: minutes * 60_000), detail: detail)
        }
        let a = flag("quick-refund:t1", "quick-refund", product: "Pro.Monthly", customer: 96, minutes: 5, "refunded 3 min after purchase at 2025-07-01T02:00:00Z")
        let b = flag("app-issue:t2", "app-issue", product: "coins_500", customer: 12, minutes: 4, "reason 1: 100% broken")
        let c = flag("high-value:t3", "high-value", product: nil, customer: nil, minutes: 3, "119.99 USD refund on 2025-07-02T10:30:15.123Z")
        let d = flag("serial-refunder:c960", "serial-refunder", product: nil, customer: 960, minutes: 2, "4 refunds")
        let e = flag("app-issue:t5", "app-issue", product: "p", customer: 5, minutes: 1, #"reason: see C:\logs"#)
        // Letters other than A-Z as typed (SQLite's LIKE folds only those; PostgreSQL is asked to fold the same).
        let f = flag("app-issue:t6", "app-issue", product: "p", customer: 6, minutes: 0, "reason: Ünïcode!")
        try await ledger.saveFlags([a, b, c, d, e, f], now: testNow)
        let cases: [(text: String, expected: [RefundFlag])] = [
            ("pro.MONTHLY", [a]), ("C96", [a, d]), ("c12", [b]), ("100%", [b]), ("%", [b]), ("_", [b]), (#"\"#, [e]),
            ("2025-07-01 02:00", [a]), ("2025-07-01T02:00", [a]), ("2025-07-02 10:30:15.123", [c]), ("REFUND", [a, c, d]),
            ("APP-issue", [b, e, f]), ("no such text", []), ("!", [f]), ("Ünïcode", [f]), ("ünïcode", []),
        ]
        for (text, expected) in cases {
            #expect(try await ledger.flags(FlagQuery(text: text)).map(\.id) == expected.map(\.id), "\(text)")
            #expect(try await ledger.flagCount(FlagQuery(text: text)) == expected.count, "\(text)")
            // The dashboard's preview of the loaded flags matches as the ledger does.
            #expect([a, b, c, d, e, f].filter { FlagText.matches($0, FlagText.needles(text)) }.map(\.id) == expected.map(\.id), "\(text)")
        }
        // With the other filters, and a page at a time either way.
        #expect(try await ledger.flags(FlagQuery(rule: "high-value", text: "refund")).map(\.id) == [c.id])
        var forward: [String] = []
        var query: FlagQuery? = FlagQuery(limit: 1, text: "refund")
        while let page = query {
            let rows = try await ledger.flags(page)
            forward += rows.map(\.id)
            query = rows.count == page.limit ? rows.last.map { last in var next = page; next.after = FlagCursor(after: last); return next } : nil
        }
        #expect(forward == [a, c, d].map(\.id))
        var backward: [String] = []
        query = FlagQuery(direction: .backward, limit: 2, text: "refund")
        while let page = query {
            let rows = try await ledger.flags(page)
            backward = rows.map(\.id) + backward
            query = rows.count == page.limit ? rows.first.map { first in var next = page; next.after = FlagCursor(after: first); return next } : nil
        }
        #expect(backward == [a, c, d].map(\.id))
        try await ledger.close()
    }

    @Test("overview counters and customer figures equal a recount after imports, merges, links, flags and triage", arguments: Backend.available)
    func countersMatchRecount(_ backend: Backend) async throws {
        let ledger = try await backend.ledger()
        try await expectFiguresAgree(ledger)
        // The corpus: every input kind, rejections, duplicates, notifications, renewal infos.
        for file in try Corpus.files.prefix(40) { try await importFile(file, into: ledger) }
        try await expectFiguresAgree(ledger)
        var world = World()
        try await world.build(into: ledger, checkEachStep: true)
        // A refund arriving later for a stored transaction, and the same file again: nothing new.
        let refund = #"{"transactionId":"t-4-0","originalTransactionId":"o-4","productId":"pro.monthly","purchaseDate":1000,"revocationDate":5000,"environment":"Production"}"#
        try await importText(refund, path: "late-refund.ndjson", into: ledger)
        try await importText(refund, path: "late-refund.ndjson", into: ledger)
        try await expectFiguresAgree(ledger)
        for file in try Corpus.files.prefix(40) { try await importFile(file, into: ledger) }
        try await expectFiguresAgree(ledger)
        try await ledger.close()
    }

    @Test("a customer's triage log, and the queue's flags' latest entries, are read by their indexes, never by reading the whole log", arguments: Backend.available)
    func triageLogPlan(_ backend: Backend) async throws {
        let ledger = try await backend.ledger()
        let (sql, arguments) = Queries.triageLogSQL(flagId: nil, customerId: 1)
        // The queue's read of its flags' latest entries, with a list of one.
        let latest = Queries.latestTriageSQL.replacingOccurrences(of: SQLDialect.inListMarker, with: "IN (?)")
        let plans = try await ledger.database.read { c in
            try [(sql, arguments), (latest, [SQLValue.text("f1")])].map { try queryPlan(c, $0, $1) }
        }
        for text in plans {
            #expect(!text.contains("Seq Scan on triage_log") && !text.contains("SCAN triage_log"), "\(text)")
            #expect(text.contains("triage_log_flag"), "\(text)")
        }
        #expect(plans[0].contains("triage_log_customer"), "\(plans[0])")
        try await ledger.close()
    }

    @Test("the overview's refund series and past-deadline count are read from their indexes, the series without sorting its refunds", arguments: Backend.available)
    func overviewPlans(_ backend: Backend) async throws {
        let ledger = try await backend.ledger()
        let first = Timestamp.utc(year: 2025, month: 3, day: 1).millisecondsSince1970
        let plans = try await ledger.database.read { c in
            let deadline = Queries.flagFilters(FlagQuery(status: .open, rule: "consumption-request", until: testNow), id: nil, dialect: c.dialect)
            let statements: [(String, [SQLValue])] = [
                Queries.refundSeriesSQL(c.dialect, days: 90, first: first, until: first + 90 * World.day - 1, productId: nil, environment: .all),
                Queries.refundSeriesSQL(c.dialect, days: 90, first: first, until: first + 90 * World.day - 1, productId: "p", environment: .all),
                ("SELECT COUNT(*) FROM flags WHERE " + deadline.conditions.joined(separator: " AND "), deadline.arguments),
            ]
            return try statements.map { try queryPlan(c, $0, $1) }
        }
        // (PostgreSQL's planner may read an empty table's every refund through either partial index.)
        #expect(plans[0].contains(backend.isPostgres ? "refund_day" : "transactions_refund_day"), "\(plans[0])")
        #expect(plans[1].contains("transactions_product_refund_day"), "\(plans[1])")
        #expect(plans[2].contains("flags_rule_status"), "\(plans[2])")
        for plan in plans { #expect(!plan.contains("Seq Scan"), "\(plan)") }
        if !backend.isPostgres {
            for plan in plans.prefix(2) { #expect(!plan.contains("TEMP B-TREE") && !plan.contains("SCAN transactions"), "\(plan)") }
            #expect(plans[2].contains("COVERING INDEX"), "\(plans[2])")
        }
        try await ledger.close()
    }

    @Test("a refund series as of an instant counts its own day's refunds up to the instant only", arguments: Backend.available)
    func refundSeriesUntilInstant(_ backend: Backend) async throws {
        let ledger = try await backend.ledger()
        let day = 20_000 * World.day
        // Refunds at 01:00 and 23:00 of one day, and one the day before.
        let lines = [(day - 3_600_000, "a"), (day + 3_600_000, "b"), (day + 23 * 3_600_000, "c")].map { at, id in
            #"{"transactionId":"\#(id)","originalTransactionId":"\#(id)","productId":"p","purchaseDate":\#(at - World.day),"revocationDate":\#(at)}"#
        }
        try await importText(lines.joined(separator: "\n"), path: "day.ndjson", into: ledger)
        for (hour, counts) in [(0, [1, 0]), (2, [1, 1]), (23, [1, 2])] as [(Int64, [Int])] {
            let series = try await ledger.refundsPerDay(days: 2, endingAt: Timestamp(millisecondsSince1970: day + hour * 3_600_000), productId: nil)
            #expect(series.counts == counts, "at \(hour):00 on \(backend)")
        }
        try await ledger.close()
    }

    @Test("a refund series ending at either end of time counts what it can and does not overflow", arguments: Backend.available)
    func refundSeriesAtTheEnds(_ backend: Backend) async throws {
        let ledger = try await backend.ledger()
        let last = Queries.lastSeriesInstant
        let lines = [
            #"{"transactionId":"late","originalTransactionId":"late","productId":"a","purchaseDate":\#(last - 10 * World.day),"revocationDate":\#(last - 5)}"#,
            #"{"transactionId":"early","originalTransactionId":"early","productId":"a","purchaseDate":0,"revocationDate":\#(World.day + 1)}"#,
        ]
        try await importText(lines.joined(separator: "\n"), path: "ends.ndjson", into: ledger)
        for end in [Int64.max, last] {
            let series = try await ledger.refundsPerDay(days: 3, endingAt: Timestamp(millisecondsSince1970: end), productId: nil)
            #expect(series.counts == [0, 0, 1], "\(end)")
            #expect(series.firstDay.millisecondsSince1970 == last + 1 - 3 * World.day)
        }
        let early = try await ledger.refundsPerDay(days: 5, endingAt: Timestamp(millisecondsSince1970: 3 * World.day), productId: nil)
        #expect(early.counts == [0, 0, 1, 0, 0] && early.firstDay.millisecondsSince1970 == -World.day)
        let least = try await ledger.refundsPerDay(days: 2, endingAt: Timestamp(millisecondsSince1970: .min), productId: nil)
        #expect(least.counts == [0, 0] && least.firstDay.millisecondsSince1970 == Queries.firstSeriesInstant - World.day)
        try await ledger.close()
    }

    @Test("the change token moves after every kind of write, also seen from another connection, and not after reads", arguments: Backend.available)
    func changeToken(_ backend: Backend) async throws {
        let (database, other) = try await backend.twoConnections()
        let ledger = try await SQLLedger.open(database, now: testNow)
        let watcher = try await SQLLedger.open(other, now: testNow, readOnly: true)
        var last = try await watcher.changeToken()
        func expectChange(_ what: String) async throws {
            let token = try await watcher.changeToken()
            #expect(token != last, "no change after \(what)")
            #expect(try await ledger.changeToken() == token)
            last = token
        }
        func expectNoChange(_ what: String) async throws {
            #expect(try await watcher.changeToken() == last, "changed by \(what)")
        }
        let lines = (0..<4).map { #"{"transactionId":"c\#($0)","originalTransactionId":"oc\#($0)","productId":"p","purchaseDate":\#($0)}"# }
        let bytes = Array(lines.joined(separator: "\n").utf8)
        var splitter = RecordSplitter()
        let pieces = splitter.feed(bytes) + splitter.finish()
        let info = SourceInfo(path: "c.ndjson", sha256: CanonicalJSON.sha256Hex(bytes), size: Int64(bytes.count))
        guard case .started(let sourceId, nil) = try await ledger.beginSource(info, now: testNow) else {
            Issue.record("expected a new source")
            return
        }
        try await expectChange("beginning a source")
        let importer = Importer(ledger: ledger, decoder: try testDecoder())
        _ = try await ledger.importBatch(sourceId: sourceId, await importer.decode(pieces, path: "c.ndjson"), now: testNow)
        try await expectChange("an import batch")
        _ = try await ledger.completeSource(sourceId, now: testNow)
        try await expectChange("completing a source")
        #expect(try await ledger.beginSource(info, now: testNow) == .alreadyImported(ImportCounts(read: 4, duplicate: 4)))
        try await expectNoChange("recognising a finished source")

        _ = try await watcher.overview()
        _ = try await watcher.customers(CustomerQuery(sort: .refunds))
        _ = try await watcher.flags(FlagQuery())
        _ = try await watcher.flagCounts()
        _ = try await watcher.refundsPerDay(days: 30, endingAt: testNow, productId: nil)
        _ = try await watcher.sources(after: nil, limit: 10)
        _ = try await watcher.rejectedRecords(after: nil, limit: 10)
        _ = try await watcher.customerRecords(try #require(try await watcher.customerId(matching: "oc1")))
        _ = try await watcher.triageLog(flagId: nil, customerId: 1)
        try await expectNoChange("reads")

        try await ledger.linkExternal("account-1", kind: .originalTransactionId, value: "oc1", now: testNow)
        try await expectChange("linking an external id")
        try await ledger.linkExternal("account-1", kind: .originalTransactionId, value: "oc2", now: testNow)
        try await expectChange("a link that merges two customers")
        let flag = RefundFlag(
            id: "quick-refund:c1", rule: "quick-refund", severity: .high, customerId: 1, transactionId: "c1", productId: "p",
            amount: 1, currency: "USD", at: testNow, detail: "d")
        try await ledger.saveFlags([flag], now: testNow)
        try await expectChange("saving flags")
        try await ledger.saveFlags([flag], now: testNow.adding(milliseconds: 86_400_000))
        try await expectNoChange("saving the same flags again (every import refreshes them)")
        var changed = flag
        changed.detail = "d, and more"
        try await ledger.saveFlags([changed], now: testNow)
        try await expectChange("a flag's detail changed")
        changed.currency = "EUR"
        try await ledger.saveFlags([changed], now: testNow)
        try await expectChange("a flag's currency changed")
        #expect(try await watcher.flags(FlagQuery(limit: 10)).first { $0.id == flag.id }?.currency == "EUR")
        _ = try await ledger.triage(flagId: flag.id, action: .ack, operatorName: "ana", note: nil, now: testNow)
        try await expectChange("triage")
        try await ledger.noteCustomer(1, operatorName: "ana", note: "called", now: testNow)
        try await expectChange("a customer note")
        // The customer's log holds their flags' triage too (entries that name the flag, not the customer).
        _ = try await ledger.triage(flagId: flag.id, action: .resolve, operatorName: "bo", note: "refund explained", now: testNow)
        try await expectChange("a resolve with a note")
        let log = try await watcher.triageLog(flagId: nil, customerId: 1)
        #expect(log.map(\.note) == [nil, "called", "refund explained"])
        #expect(log.map(\.flagId) == [flag.id, nil, flag.id])
        try await ledger.setReadOnly(true)
        try await expectChange("setting the ledger read-only")
        try await ledger.setReadOnly(false)
        try await expectChange("lifting the read-only setting")
        try await watcher.close()
        try await ledger.close()
    }

    @Test("refunds per day count each refund once on its UTC day, overall, per product and per environment", arguments: Backend.available)
    func refundsPerDay(_ backend: Backend) async throws {
        let ledger = try await backend.ledger()
        let day = World.day
        let first = Timestamp.utc(year: 2025, month: 3, day: 1).millisecondsSince1970
        // (transaction, product, revocation date or nil, environment)
        let refunds: [(String, String, Int64?, String)] = [
            ("r1", "a", first, "Production"),  // the window's first instant
            ("r2", "b", first + day - 1, "Sandbox"),  // the first day's last millisecond
            ("r3", "a", first + day + 12 * 3_600_000, "Production"),
            ("r4", "a", first + day + 13 * 3_600_000, "Sandbox"),
            ("r5", "b", first + day + 14 * 3_600_000, "Production"),
            ("r6", "a", first + 9 * day + day - 1, "Production"),  // the last day's last millisecond
            ("r7", "a", first + 10 * day, "Production"),  // after the window
            ("r8", "b", first - 1, "Production"),  // before the window
            ("r9", "a", nil, "Production"),  // not refunded
            ("r10", "b", first + 4 * day, "Sandbox"),
        ]
        let lines = refunds.map { id, product, revoked, environment in
            #"{"transactionId":"\#(id)","originalTransactionId":"o\#(id)","productId":"\#(product)","purchaseDate":\#(first - 30 * day)\#(revoked.map { #","revocationDate":\#($0)"# } ?? ""),"environment":"\#(environment)"}"#
        }
        try await importText(lines.joined(separator: "\n"), path: "refunds.ndjson", into: ledger)
        // The same refund seen again in another source is still one refund.
        try await importText(lines[2], path: "again.ndjson", into: ledger)
        // (As of the last day's last millisecond: the series counts refunds up to its instant.)
        let end = Timestamp(millisecondsSince1970: first + 9 * day + day - 1)
        let all = try await ledger.refundsPerDay(days: 10, endingAt: end, productId: nil)
        #expect(all.firstDay.millisecondsSince1970 == first)
        #expect(all.counts == [2, 3, 0, 0, 1, 0, 0, 0, 0, 1])
        #expect(try await ledger.refundsPerDay(days: 10, endingAt: end, productId: "a").counts == [1, 2, 0, 0, 0, 0, 0, 0, 0, 1])
        #expect(try await ledger.refundsPerDay(days: 10, endingAt: end, productId: "b").counts == [1, 1, 0, 0, 1, 0, 0, 0, 0, 0])
        #expect(try await ledger.refundsPerDay(days: 10, endingAt: end, productId: "none").counts == Array(repeating: 0, count: 10))
        #expect(
            try await ledger.refundsPerDay(days: 10, endingAt: end, productId: nil, environment: .production).counts
                == [1, 2, 0, 0, 0, 0, 0, 0, 0, 1])
        #expect(
            try await ledger.refundsPerDay(days: 10, endingAt: end, productId: nil, environment: .sandbox).counts
                == [1, 1, 0, 0, 1, 0, 0, 0, 0, 0])
        #expect(
            try await ledger.refundsPerDay(days: 10, endingAt: end, productId: "b", environment: .sandbox).counts
                == [1, 0, 0, 0, 1, 0, 0, 0, 0, 0])
        let one = try await ledger.refundsPerDay(days: 1, endingAt: Timestamp(millisecondsSince1970: first + 10 * day), productId: nil)
        #expect(one.counts == [1] && one.firstDay.millisecondsSince1970 == first + 10 * day)
        #expect(try await ledger.overview().refundedTransactions == 9)
        try await ledger.close()
    }

    @Test("a version 1 ledger opened by this build fills its figures from the rows it holds", arguments: Backend.available)
    func migrationFromVersion1(_ backend: Backend) async throws {
        let (database, other) = try await backend.twoConnections()
        let ledger = try await SQLLedger.open(database, now: testNow)
        for file in try Corpus.files.prefix(25) { try await importFile(file, into: ledger) }
        var world = World()
        try await world.build(into: ledger)
        let overview = try await ledger.overview()
        var lists: [[CustomerSummary]] = []
        for sort in CustomerSort.allCases { lists.append(try await pageAll(ledger, CustomerQuery(sort: sort, limit: 100)).rows) }
        let flagged = try await pageAll(ledger, CustomerQuery(environment: .sandbox, withOpenFlags: true, sort: .refunds, limit: 3)).rows

        // Back to the version 1 schema: what a ledger written by the previous release holds (the version 1
        // tables are written the same way by both).
        try await database.write { c in
            let extra =
                c.dialect == .postgres
                ? [
                    "DROP INDEX customer_ids_value_bytes", "ALTER TABLE triage_log DROP CONSTRAINT triage_log_action",
                    "ALTER TABLE triage_log DROP CONSTRAINT triage_log_statuses", "DROP TRIGGER IF EXISTS triage_log_no_truncate ON triage_log",
                ] : ["DROP TRIGGER triage_log_known_values"]
            // Version 4, then 3, then 2 undone.
            try undoMigrationV4(c)
            for statement in [
                "DROP INDEX flags_environment_at", "ALTER TABLE flags DROP COLUMN environment",
                "DROP TABLE customer_stats", "DROP TABLE ledger_counters", "DROP INDEX transactions_revoked",
                "DROP INDEX flags_customer", "DROP INDEX flags_at", "DROP INDEX flags_severity",
                "DELETE FROM ledger_migrations WHERE id IN ('v2-read-side', 'v3-flag-environment', 'v4-revocation-kind', 'v5-environment-counters', 'v6-covering-sort-indexes')",
                "UPDATE ledger_meta SET value = '1' WHERE key = 'schema_version'",
            ] + extra {
                try c.execute(statement)
            }
        }
        await #expect(throws: LedgerError.self) { _ = try await SQLLedger.open(other, now: testNow, readOnly: true) }
        let upgraded = try await SQLLedger.open(other, now: testNow)
        #expect(try await other.read { c in try c.scalar("SELECT value FROM ledger_meta WHERE key = 'schema_version'")?.text } == String(Schema.version))
        for index in ["flags_product_at", "flags_severity_at", "flags_rule_status"] {
            #expect(try await other.read { c in try indexExists(c, index) }, "\(index)")
        }
        #expect(try await upgraded.overview() == overview)
        for (index, sort) in CustomerSort.allCases.enumerated() {
            #expect(try await pageAll(upgraded, CustomerQuery(sort: sort, limit: 100)).rows == lists[index], "\(sort)")
        }
        #expect(try await pageAll(upgraded, CustomerQuery(environment: .sandbox, withOpenFlags: true, sort: .refunds, limit: 3)).rows == flagged)
        try await expectFiguresAgree(upgraded)
        try await upgraded.close()
        try await ledger.close()
    }

    @Test("covered at an earlier instant: a purchase known by its transaction id alone (no original) counts", arguments: Backend.available)
    func coveredWithoutOriginal(_ backend: Backend) async throws {
        let ledger = try await backend.ledger()
        let day = World.day
        let base = World.base.millisecondsSince1970
        // One customer, two purchases without an original transaction id, linked by their token: the first covers
        // day 10, the second was bought on day 20 (after day 10, so day 10 is looked at purchase by purchase).
        // Another customer bought on day 40: every instant below is before the ledger's latest activity.
        let lines = [
            #"{"transactionId":"solo-1","productId":"lite","purchaseDate":\#(base),"expiresDate":\#(base + 15 * day),"environment":"Production","appAccountToken":"tok-solo"}"#,
            #"{"transactionId":"solo-2","productId":"lite","purchaseDate":\#(base + 20 * day),"expiresDate":\#(base + 30 * day),"environment":"Production","appAccountToken":"tok-solo"}"#,
            #"{"transactionId":"late-1","originalTransactionId":"late-1","productId":"lite","purchaseDate":\#(base + 40 * day),"expiresDate":\#(base + 70 * day),"environment":"Production"}"#,
        ]
        _ = try await importBytes(Array(lines.joined(separator: "\n").utf8), path: "solo.ndjson", into: ledger)
        let solo = try #require(try await ledger.customerId(matching: "solo-1"))
        #expect(try await ledger.customerId(matching: "solo-2") == solo)
        func covered(onDay d: Int64) async throws -> [Int64] {
            try await pageAll(ledger, CustomerQuery(activeAt: Timestamp(millisecondsSince1970: base + d * day), limit: 10)).rows.map(\.id)
        }
        #expect(try await covered(onDay: 10) == [solo])  // by solo-1, bought before day 20's purchase
        #expect(try await covered(onDay: 17).isEmpty)  // between the two
        #expect(try await covered(onDay: 25) == [solo])  // by solo-2
        #expect(try await covered(onDay: 45) != [solo])  // the late customer only
        try await ledger.close()
    }
}

// MARK: Ground truth

/// A few hundred people's purchases, built from records, with merges, late refunds, links, flags and triage;
/// the test's own account of what the ledger should say about each.
struct World {
    static let day: Int64 = 86_400_000
    static let base = Timestamp.utc(year: 2025, month: 6, day: 1)
    static let products = ["pro.monthly", "pro.yearly", "lite"]

    struct Purchase {
        var id: String
        var original: String
        var product: String
        var purchase: Int64
        var expires: Int64?
        var revoked: Int64?
        var environment: String
        var token: String?

        var json: String {
            var fields = [
                #""transactionId":"\#(id)""#, #""originalTransactionId":"\#(original)""#, #""productId":"\#(product)""#,
                #""purchaseDate":\#(purchase)"#, #""environment":"\#(environment)""#,
            ]
            if let expires { fields.append(#""expiresDate":\#(expires)"#) }
            if let revoked { fields.append(#""revocationDate":\#(revoked)"#) }
            if let token { fields.append(#""appAccountToken":"\#(token)""#) }
            return "{" + fields.joined(separator: ",") + "}"
        }
    }

    /// Purchases by person (person i's original transaction id is `o-i`).
    var people: [[Purchase]] = []
    /// Tokens and external ids by person, beyond `o-i`.
    var extraIdentifiers: [Int: Set<String>] = [:]
    /// Flags by person, with their status.
    var flags: [(person: Int, flag: RefundFlag, status: FlagStatus)] = []

    static let count = 260

    mutating func build(into ledger: SQLLedger, checkEachStep: Bool = false) async throws {
        let base = Self.base.millisecondsSince1970
        let day = Self.day
        people = (0..<Self.count).map { i in
            (0..<(1 + i % 4)).map { j in
                // Few distinct dates and refund counts: ties the keyset must page through.
                let purchase = base + Int64((i * 7 + j * 13) % 20) * day
                let environment = i % 5 == 0 || (i % 7 == 0 && j == 0) ? "Sandbox" : "Production"
                return Purchase(
                    id: "t-\(i)-\(j)", original: "o-\(i)", product: Self.products[(i + j) % 3], purchase: purchase,
                    expires: i % 6 == 5 ? nil : purchase + 30 * day, revoked: (i + j) % 6 == 0 ? purchase + Int64(i % 3 + 1) * 3_600_000 : nil,
                    environment: environment, token: i % 17 == 3 && j == 0 ? "tok-\(i)" : nil)
            }
        }
        for i in people.indices where i % 17 == 3 { extraIdentifiers[i, default: []].insert("tok-\(i)") }
        let firstFile = people.flatMap { $0 }.map(\.json).joined(separator: "\n")
        try await importBytes(Array(firstFile.utf8), path: "world-1.ndjson", into: ledger, batchSize: 50)
        if checkEachStep { try await expectFiguresAgree(ledger) }

        // Later: new purchases for some people, refunds of stored purchases, and tokens that merge two people.
        var later: [Purchase] = []
        for i in people.indices {
            if i % 11 == 0, people[i][0].revoked == nil {
                people[i][0].revoked = people[i][0].purchase + 3 * 3_600_000
                later.append(people[i][0])
            }
            if i % 8 == 1 {
                let purchase = Purchase(
                    id: "t-\(i)-late", original: "o-\(i)", product: "lite", purchase: base + Int64(20 + i % 3) * day,
                    expires: base + Int64(50 + i % 3) * day, revoked: nil, environment: i % 3 == 0 ? "Sandbox" : "Production")
                people[i].append(purchase)
                later.append(purchase)
            }
            if i % 17 == 3, i + 1 < people.count {
                // Person i+1's purchase carries person i's token: they are one customer.
                let purchase = Purchase(
                    id: "t-\(i + 1)-merge", original: "o-\(i + 1)", product: "pro.monthly", purchase: base + 3 * day,
                    expires: base + 33 * day, revoked: nil, environment: "Production", token: "tok-\(i)")
                people[i + 1].append(purchase)
                extraIdentifiers[i + 1, default: []].insert("tok-\(i)")
                later.append(purchase)
            }
        }
        try await importBytes(
            Array(later.map(\.json).joined(separator: "\n").utf8), path: "world-2.ndjson", into: ledger, batchSize: 7)
        if checkEachStep { try await expectFiguresAgree(ledger) }

        // An operator's mapping ties two more people together.
        try await ledger.linkExternal("account-77", kind: .originalTransactionId, value: "o-40", now: testNow)
        try await ledger.linkExternal("account-77", kind: .originalTransactionId, value: "o-41", now: testNow)
        extraIdentifiers[40, default: []].insert("account-77")
        if checkEachStep { try await expectFiguresAgree(ledger) }

        // Flags on some people (saved before some of the merges above would matter), some acknowledged.
        var saved: [RefundFlag] = []
        for i in people.indices where i % 9 == 0 || i % 13 == 4 {
            let customer = try #require(try await ledger.customerId(matching: "o-\(i)"))
            for k in 0..<(i % 13 == 4 ? 2 : 1) {
                let flag = RefundFlag(
                    id: "quick-refund:t-\(i)-\(k)", rule: "quick-refund", severity: k == 0 ? .high : .medium, customerId: customer,
                    transactionId: "t-\(i)-\(k)", productId: "pro.monthly", amount: 999, currency: "USD",
                    at: Self.base.adding(milliseconds: Int64(i % 5) * 3_600_000), detail: "refunded soon after purchase")
                saved.append(flag)
                flags.append((i, flag, .open))
            }
        }
        try await ledger.saveFlags(saved, now: testNow)
        if checkEachStep { try await expectFiguresAgree(ledger) }
        for index in flags.indices where flags[index].person % 18 == 0 {
            _ = try await ledger.triage(flagId: flags[index].flag.id, action: .ack, operatorName: "ana", note: nil, now: testNow)
            flags[index].status = .acknowledged
        }
        // Found again by the rules: statuses are kept, nothing opens twice.
        try await ledger.saveFlags(saved, now: testNow)
        if checkEachStep { try await expectFiguresAgree(ledger) }
    }

    struct Customer {
        var id: Int64
        var transactions: [Purchase] = []
        var identifiers: Set<String> = []
        var openFlags = 0

        var refunds: Int { transactions.filter { $0.revoked != nil }.count }
        var lastPurchase: Int64? { transactions.map(\.purchase).max() }
        var latestExpiry: Int64? { transactions.compactMap(\.expires).max() }
        var liveExpiry: Int64? { transactions.filter { $0.revoked == nil }.compactMap(\.expires).max() }
        /// Whether a purchase not refunded covers `at`: bought by then, expiring after.
        func covered(at: Int64) -> Bool {
            transactions.contains { $0.revoked == nil && $0.purchase <= at && ($0.expires ?? .min) > at }
        }
        var environments: Set<String> { Set(transactions.map(\.environment)) }

        func key(_ sort: CustomerSort) -> Int64 {
            switch sort {
            case .id: id
            case .lastActivity: lastPurchase ?? 0
            case .refunds: Int64(refunds)
            }
        }
    }

    /// The ground truth by the ledger's customer ids (people joined by a shared id are one customer).
    func customers(in ledger: SQLLedger) async throws -> [Int64: Customer] {
        var out: [Int64: Customer] = [:]
        var personToCustomer: [Int: Int64] = [:]
        for i in people.indices {
            let id = try #require(try await ledger.customerId(matching: "o-\(i)"))
            personToCustomer[i] = id
            out[id, default: Customer(id: id)].transactions += people[i]
            out[id, default: Customer(id: id)].identifiers.formUnion(["o-\(i)"] + (extraIdentifiers[i] ?? []))
        }
        for entry in flags where entry.status == .open {
            let id = try #require(personToCustomer[entry.person], "person \(entry.person) has a flag but no customer")
            out[id, default: Customer(id: id)].openFlags += 1
        }
        return out
    }
}

// MARK: Helpers

/// Pages through a customer query to its end.
func pageAll(
    _ ledger: SQLLedger, _ query: CustomerQuery, denseFilter: Int = Queries.denseFilterIdentifiers,
    countLimit: Int = Queries.customerCountLimit
) async throws
    -> (rows: [CustomerSummary], totals: [Int], lowerBounds: Set<Bool>)
{
    var rows: [CustomerSummary] = []
    var totals: [Int] = []
    var lowerBounds = Set<Bool>()
    var query = query
    for pageNumber in 0..<10_000 {
        let page = try await ledger.customers(query, denseFilter: denseFilter, countLimit: countLimit)
        if !totals.contains(page.total) { totals.append(page.total) }
        lowerBounds.insert(page.totalIsLowerBound)
        // A page is never empty unless nothing matches at all.
        #expect(!page.rows.isEmpty || (pageNumber == 0 && page.total == 0), "empty page \(pageNumber) of \(query)")
        #expect(page.rows.count <= query.limit)
        rows += page.rows
        guard let next = page.next else { break }
        #expect(page.rows.count == query.limit, "a short page before the end")
        query.after = next
    }
    return (rows, totals, lowerBounds)
}

/// The overview equals a `COUNT(*)` of each table, and every customer's kept figures equal a recount of its rows.
func expectFiguresAgree(_ ledger: SQLLedger, sourceLocation: SourceLocation = #_sourceLocation) async throws {
    let overview = try await ledger.overview()
    let counted = try await ledger.database.read { c in
        func count(_ sql: String) throws -> Int { Int(try c.scalar(sql)?.int ?? 0) }
        return LedgerOverview(
            transactions: try count("SELECT COUNT(*) FROM transactions"),
            customers: try count("SELECT COUNT(*) FROM customers WHERE merged_into IS NULL"),
            sources: try count("SELECT COUNT(*) FROM sources"),
            rawRecords: try count("SELECT COUNT(*) FROM raw_records"),
            rejectedRecords: try count("SELECT COUNT(*) FROM raw_records WHERE status = 'rejected'"),
            refundedTransactions: try count("SELECT COUNT(*) FROM transactions WHERE revocation_kind = 'refund'"),
            openFlags: try count("SELECT COUNT(*) FROM flags WHERE status = 'open'"),
            renewalInfos: try count("SELECT COUNT(*) FROM renewal_infos"),
            notifications: try count("SELECT COUNT(*) FROM notifications"),
            lastImport: try c.scalar("SELECT MAX(COALESCE(completed_at, started_at)) FROM sources")?.int
                .map(Timestamp.init(millisecondsSince1970:)))
    }
    #expect(overview == counted, sourceLocation: sourceLocation)
    // Each environment's figures: its customers, transactions, refunds and open flags; records and sources are of all.
    for environment in [EnvironmentFilter.production, .sandbox] {
        let stored = environment.stored!
        let (kept, expected) = try await (ledger.overview(environment: environment), ledger.database.read { c in
            func count(_ sql: String) throws -> Int { Int(try c.scalar(sql, [.text(stored)])?.int ?? 0) }
            let survivors = try c.query("SELECT id FROM customers WHERE merged_into IS NULL", []).compactMap { $0[0].int }
            var expected = counted
            expected.customers = try StatsWriter.recountStats(c, survivors).values.filter { $0.environments.contains(stored) }.count
            expected.transactions = try count("SELECT COUNT(*) FROM transactions WHERE environment = ?")
            expected.refundedTransactions = try count("SELECT COUNT(*) FROM transactions WHERE environment = ? AND revocation_kind = 'refund'")
            expected.openFlags = try count("SELECT COUNT(*) FROM flags WHERE environment = ? AND status = 'open'")
            return expected
        })
        #expect(kept == expected, "\(environment)", sourceLocation: sourceLocation)
    }
    let (kept, recounted, survivors, statsRows) = try await ledger.database.read { c in
        let survivors = try c.query("SELECT id FROM customers WHERE merged_into IS NULL ORDER BY id", []).compactMap { $0[0].int }
        let statsRows = try c.query("SELECT customer_id FROM customer_stats ORDER BY customer_id", []).compactMap { $0[0].int }
        let kept = try StatsWriter.load(c, survivors)
        let recounted = try StatsWriter.recountStats(c, survivors)
        return (kept, recounted, survivors, statsRows)
    }
    #expect(statsRows == survivors, "one customer_stats row per surviving customer", sourceLocation: sourceLocation)
    var wrong: [Int64] = []
    for id in survivors where kept[id] != (recounted[id] ?? CustomerStats()) { wrong.append(id) }
    #expect(wrong.isEmpty, "customer_stats differs from a recount for \(wrong.prefix(10).map { "C\($0)" })", sourceLocation: sourceLocation)
    // Each finished source's reconciliation, as stored, against its records.
    let sources = try await ledger.database.read { c in
        try c.query(
            """
            SELECT s.id, s.records_read, s.imported, s.duplicates, s.rejected,
              (SELECT COUNT(*) FROM raw_records r WHERE r.source_id = s.id),
              (SELECT COUNT(*) FROM raw_records r WHERE r.source_id = s.id AND r.status = 'imported'),
              (SELECT COUNT(*) FROM raw_records r WHERE r.source_id = s.id AND r.status = 'duplicate'),
              (SELECT COUNT(*) FROM raw_records r WHERE r.source_id = s.id AND r.status = 'rejected')
            FROM sources s WHERE s.completed_at IS NOT NULL
            """, [])
    }
    for row in sources {
        #expect(row[1...4].map(\.int) == row[5...8].map(\.int), "source \(row[0]): stored \(row[1...4]) vs its records", sourceLocation: sourceLocation)
    }
}

extension Optional {
    func asyncMap<U>(_ transform: (Wrapped) async throws -> U) async rethrows -> U? {
        guard let self else { return nil }
        return try await transform(self)
    }
}

extension CustomerQuery {
    /// No condition at all: the whole list, counted by the ledger's running total.
    var isUnfiltered: Bool { (filter ?? "").isEmpty && environment == .all && activeAt == nil && !withOpenFlags }
}
