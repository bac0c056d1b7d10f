import Entitlements
import Foundation
import LedgerQueries
import ReceiptModel
import Testing

@testable import DeskUI

/// Render snapshots of every screen as plain text files in `Snapshots/`, at 60x20, 80x24 and 120x40.
/// `RECORD_SNAPSHOTS=1 swift test --filter SnapshotTests` records them anew; review the diff before committing.
@Suite("Render snapshots")
struct SnapshotTests {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Snapshots")

    static let cases: [(String, ScreenID, Int, Int)] = ScreenID.allCases.flatMap { screen in
        [(60, 20), (80, 24), (120, 40)].map { ("\(screen.title.lowercased())-\($0.0)x\($0.1)", screen, $0.0, $0.1) }
    }

    /// A customer's coverage strips at `instant`, one cell a day from day -60 (the first purchase of the tests that
    /// call it).
    static func dailyStrips(_ records: CustomerRecords, at instant: Timestamp) throws -> [CoverageStrip] {
        let view = CustomerView(detail: CustomerDetail(records: records, flags: [], log: []), at: instant, catalog: Catalog())
        let groups = coverageGroups(records, view: view, catalog: Catalog())
        let width = Int((instant.millisecondsSince1970 - Fixture.at(-60).millisecondsSince1970) / Fixture.day)
        return try #require(coverageStrips(records, view: view, groups: groups, width: width)).strips
    }

    @Test("every screen at 60x20, 80x24 and 120x40", arguments: cases)
    func snapshot(name: String, screen: ScreenID, width: Int, height: Int) throws {
        var state = Fixture.state(width: width, height: height, screen: screen)
        if screen == .transaction { _ = reduce(&state, .transactionLoaded(Fixture.records.transactions[4], id: "2005")) }
        state.screen = screen
        try match(state, name: name)
    }

    @Test("help overlay, prompt with completions, the raw-bytes view, too small, ASCII lines")
    func overlays() throws {
        var help = Fixture.state(screen: .refunds)
        _ = reduce(&help, .key(.char("?")))
        try match(help, name: "help-refunds-80x24")

        var prompt = Fixture.state(screen: .customers)
        _ = reduce(&prompt, .key(.char(":")))
        _ = reduce(&prompt, .key(.char("c")))
        try match(prompt, name: "prompt-80x24")

        var raw = Fixture.state(screen: .imports)
        raw.importsPane = 1
        _ = reduce(&raw, .rawLoaded(id: 9, bytes: Array("{\"p\":\"\u{1B}[2J\u{1B}]52;c;aGk=\u{07}\"}".utf8) + [0xFF, 0x0A]))
        try match(raw, name: "raw-80x24")

        try match(Fixture.state(width: 50, height: 12), name: "too-small-50x12")
        // Narrower than its lines, the notice wraps at words: the size needed is still said whole.
        let tiny = renderedLines(Fixture.state(width: 20, height: 5)).map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(tiny.contains("20x5") && tiny.contains("least 60x16"), "\(tiny)")
        // Too low for both, the size needed alone.
        let low = renderedLines(Fixture.state(width: 12, height: 3)).map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(low == ["ReceiptDesk", "needs at", "least 60x16"], "\(low)")

        for width in [60, 80] {
            var transactions = Fixture.state(width: width, height: 20, screen: .customer)
            transactions.customerPane = 2
            try match(transactions, name: "customer-transactions-\(width)x20")
        }

        var ascii = Fixture.state(screen: .customer)
        ascii.ascii = true
        try match(ascii, name: "customer-ascii-80x24")
    }

    @Test("drawn in ASCII, every screen's own text is ASCII: arrows named in words in help and footers, … as dots")
    func asciiScreens() {
        for screen in ScreenID.allCases {
            for help in [false, true] {
                var state = Fixture.state(width: 120, height: 40, screen: screen)
                state.ascii = true
                state.showHelp = help
                var buffer = ScreenBuffer(width: 0, height: 0)
                render(state, theme: .builtin, into: &buffer)
                // (The fixture's data holds Japanese and emoji, which the backend draws as `?`; the screens' own
                // punctuation, arrows, lines, blocks and shapes must not be among what it draws so.)
                var strange = Set<String>()
                for scalar in buffer.text.unicodeScalars {
                    let v = scalar.value
                    if v == 0xB7 || (0x2000...0x206F).contains(v) || (0x2190...0x21FF).contains(v) || (0x2500...0x25FF).contains(v) {
                        strange.insert(String(scalar))
                    }
                }
                #expect(strange.isEmpty, "\(screen) help=\(help): \(strange.sorted())")
            }
        }
        var prompt = Fixture.state(screen: .customers)
        prompt.ascii = true
        _ = reduce(&prompt, .key(.char("/")))
        var buffer = ScreenBuffer(width: 0, height: 0)
        render(prompt, theme: .builtin, into: &buffer)
        #expect(buffer.text.contains("Left Right ^A ^E move"), "\(buffer.text)")
        #expect(Key.up.label(ascii: true) == "Up" && Key.up.label == "↑")
    }

    @Test("the overview's open flags by severity add up to its tile, every severity shown, bars to scale")
    func severities() throws {
        var state = Fixture.state(width: 100, height: 30)
        state.overview?.flagCounts = [
            FlagCount(severity: .critical, status: .open, count: 2), FlagCount(severity: .high, status: .open, count: 40),
            FlagCount(severity: .medium, status: .open, count: 20), FlagCount(severity: .medium, status: .resolved, count: 90),
            FlagCount(severity: .info, status: .open, count: 1),
        ]
        var buffer = ScreenBuffer(width: 0, height: 0)
        render(state, theme: .builtin, into: &buffer)
        let lines = buffer.text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        // The tiles' numbers line: customers, transactions, refunds 30d, open flags, rejected.
        let tiles = lines[2].split(separator: " ").map(String.init)
        #expect(tiles[3] == "63")
        func line(_ severity: String) throws -> (count: Int, bar: Int) {
            let found = try #require(lines.first { $0.dropFirst(50).hasPrefix(" \(severity) ") }, "\(severity) not shown")
            let parts = found.dropFirst(50).split(separator: " ")
            return (Int(parts[1])!, found.filter { $0 == "█" }.count)
        }
        let counts = try ["critical", "high", "medium", "low", "info"].map(line)
        #expect(counts.map(\.count) == [2, 40, 20, 0, 1])
        #expect(counts.map(\.count).reduce(0, +) == 63)
        // 100 columns: half 50, bars from column 68 to 98; the largest fills 31, the rest to scale, 1 at least.
        #expect(counts.map(\.bar) == [2, 31, 16, 0, 1])
    }

    @Test("no cell ever holds a control character, whatever the data")
    func noControlCharacters() {
        for screen in ScreenID.allCases {
            var state = Fixture.state(width: 100, height: 30, screen: screen)
            _ = reduce(&state, .transactionLoaded(Fixture.records.transactions[4], id: "2005"))
            state.screen = screen
            var buffer = ScreenBuffer(width: 0, height: 0)
            render(state, theme: .builtin, into: &buffer)
            let bad = buffer.cells.filter { cell in cell.text.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F || (0x80..<0xA0).contains($0.value) || (0x202A...0x202E).contains($0.value) } }
            #expect(bad.isEmpty, "\(screen): \(bad.map(\.text))")
        }
    }

    @Test("a trail too long for the header gives up its oldest crumbs, never the current screen's name")
    func breadcrumbs() {
        func header(width: Int, _ history: [ScreenID], _ screen: ScreenID) -> String {
            var state = Fixture.state(width: width, height: 24, screen: screen)
            state.history = history.map { Visit(screen: $0) }
            var buffer = ScreenBuffer(width: 0, height: 0)
            render(state, theme: .builtin, into: &buffer)
            return buffer.line(0)
        }
        // Wide: the two screens before the current one, an ellipsis for the older.
        let wide = header(width: 120, [.overview, .customers, .refunds], .imports)
        #expect(wide.hasPrefix(" ReceiptDesk › … › Customers › Refunds › Imports "), "\(wide)")
        // 80 columns with the DEMO, environment and clock badges: the oldest crumb goes, an ellipsis says so.
        let narrow = header(width: 80, [.overview, .customers, .refunds], .imports)
        #expect(narrow.hasPrefix(" ReceiptDesk › … › Refunds › Imports "), "\(narrow)")
        // Narrower still: only the current screen, whole.
        let tight = header(width: 60, [.overview, .customers, .refunds], .imports)
        #expect(tight.hasPrefix(" Imports "), "\(tight)")
        // A short trail that fits is left alone.
        #expect(header(width: 80, [.overview], .customers).hasPrefix(" ReceiptDesk › Overview › Customers "))
    }

    @Test("a table too narrow for its columns cuts times and names, never an id column")
    func idColumnsKeepWidth() throws {
        let p = Painter(buffer: ScreenBuffer(width: 80, height: 1), theme: .builtin, glyphs: .unicode)
        let columns = [Column("id", 16, keepsWidth: true), Column("name", 12, flex: true), Column("at", 16), Column("n", 9, right: true)]
        let widths = p.layout(columns, width: 40)
        #expect(widths[0] == 16)
        #expect(widths.reduce(0, +) + columns.count - 1 == 40)
        // Below three cells for every other column the id gives way too, from the right.
        #expect(p.layout(columns, width: 20).reduce(0, +) + columns.count - 1 == 20)

        // The customer screen's transactions at 80 columns: the 16 cells of an Apple transaction id stay whole,
        // so the env column starts at 17.
        var state = Fixture.state(width: 80, height: 24, screen: .customer)
        state.customerPane = 2
        let lines = renderedLines(state)
        let headerIndex = try #require(lines.firstIndex { $0.hasPrefix("transaction ") })
        let header = lines[headerIndex]
        #expect(header.dropFirst(17).hasPrefix("env "), "\(header)")
        // No room for the purchase minute: its day, whole, under "purchased".
        let purchased = try #require(header.range(of: "purchased")).lowerBound.utf16Offset(in: header)
        // (An ASCII row, so that characters are cells.)
        let row = try #require(lines.dropFirst(headerIndex + 1).first { $0.allSatisfy(\.isASCII) && $0.hasPrefix("20") })
        let cell = row.dropFirst(purchased).prefix(16)
        #expect(cell.prefix(10).wholeMatch(of: #/\d{4}-\d{2}-\d{2}/#) != nil && !cell.contains("…"), "\(row)")

        // A verifyReceipt transaction carries no signature by design: said whole in the status column's ten cells
        // (its verification's name, notApplicable, was cut), and a failed check stands out.
        var records = Fixture.records
        records.transactions[5].verification = .notApplicable
        records.transactions[4].verification = .failed
        _ = reduce(&state, .customerLoaded(CustomerDetail(records: records, flags: [], log: [])))
        state.customerPane = 2
        let statuses = renderedLines(state).compactMap { line in line.hasPrefix("200") ? line.split(separator: " ").last : nil }
        #expect(statuses.prefix(2) == ["JSON", "failed"], "\(statuses)")
        #expect(renderedLines(state).contains { $0.hasPrefix("2006 ") && $0.hasSuffix("plain JSON") }, "\(renderedLines(state))")

        // A partial refund and a family revoke are said whole ("refunded 35%", "family revoked": the column was ten
        // cells), at 80 columns too; a price with its currency, whole where there is room for the price.
        records.transactions[3].revocationPercentage = 35_000
        records.transactions[2].revocationDate = Fixture.at(-20)
        records.transactions[2].revocationType = .familyRevoke
        records.transactions[2].price = 119_990
        records.transactions[2].currency = "AUD"
        for width in [80, 100, 200] {
            state.width = width
            _ = reduce(&state, .customerLoaded(CustomerDetail(records: records, flags: [], log: [])))
            state.customerPane = 2
            let rows = renderedLines(state).filter { $0.hasPrefix("200") }.map { $0.trimmingCharacters(in: .whitespaces) }
            #expect(rows.contains { $0.hasPrefix("2004 ") && $0.hasSuffix(" refunded 35%") }, "\(width): \(rows)")
            #expect(rows.contains { $0.hasPrefix("2003 ") && $0.hasSuffix(" family revoked") }, "\(width): \(rows)")
            if width > 80 { #expect(rows.contains { $0.hasPrefix("2003 ") && $0.contains(" 119.99 AUD ") }, "\(width): \(rows)") }
        }
    }

    @Test("periods shorter than a strip's cell (a sandbox's five-minute months) cover the cells they fall in")
    func shortPeriodsOnTheStrip() throws {
        var state = Fixture.state(width: 80, height: 24, screen: .customer)
        let minutes: Int64 = 5 * 60_000
        // Ten five-minute periods, one every three days up to the day before now.
        let periods = (0..<10).map { n -> Transaction in
            var t = Fixture.transaction("50\(n)", product: "pro.monthly", purchased: -28 + Int64(n) * 3, expires: nil)
            t.type = .autoRenewableSubscription
            t.subscriptionGroupIdentifier = "G1"
            t.expiresDate = t.purchaseDate!.adding(milliseconds: minutes)
            return t
        }
        _ = reduce(&state, .customerLoaded(CustomerDetail(records: Fixture.customer(periods), flags: [], log: [])))
        let strip = try #require(renderedLines(state).last { $0.hasPrefix(" group G1 ") })
        #expect(strip.filter { $0 == "█" }.count == 10, "\(renderedLines(state).joined(separator: "\n"))")
    }

    @Test("Imports at 60 columns: the rejected record's code whole, the import's time whole")
    func importsNarrow() throws {
        var state = Fixture.state(width: 60, height: 20, screen: .imports)
        state.rejected[0].code = "legacyTransactionReceipt"
        let lines = renderedLines(state)
        #expect(lines.contains { $0.contains(" legacyTransactionReceipt ") }, "\(lines.joined(separator: "\n"))")
        #expect(lines.contains { $0.contains(" 2025-02-28 08:00 ") }, "\(lines.joined(separator: "\n"))")
    }

    @Test("Imports: a list whose every row fits in less than half the screen gives the rest to the other")
    func importsSplitByContent() throws {
        // Five sources, nothing rejected, at 60x16: every source shown (half each hid the fifth over empty lines).
        var state = Fixture.state(width: 60, height: 16, screen: .imports)
        let source = state.sources[0]
        let sources = (1...5).map { n in
            var s = source
            s.id = Int64(n)
            s.path = "exports/2025-0\(n).ndjson"
            return s
        }
        _ = reduce(&state, .importsLoaded(sources: sources, rejected: []))
        var lines = renderedLines(state)
        for n in 1...5 { #expect(lines.contains { $0.contains("2025-0\(n).ndjson") }, "source \(n):\n\(lines.joined(separator: "\n"))") }
        #expect(lines.contains { $0.hasPrefix(" none: every record was imported") })
        // j through them all: the window follows to the fifth with the first still in view.
        for _ in 0..<4 { _ = reduce(&state, .key(.char("j"))) }
        lines = renderedLines(state)
        #expect(lines.contains { $0.contains("2025-01.ndjson") } && lines.contains { $0.contains("2025-05.ndjson") }, "\(lines.joined(separator: "\n"))")
        // PgDn pages by the sources' rows as drawn, 9 of 12 at 60x16 (the screen's 10 jumped past one never shown).
        let twelve = (1...12).map { n in
            var s = source
            s.id = Int64(n)
            return s
        }
        _ = reduce(&state, .importsLoaded(sources: twelve, rejected: []))
        state.importPositions[0] = ListPosition()
        _ = reduce(&state, .key(.pageDown))
        #expect(state.importPositions[0].selected == 9 && importsSplit(state).sources == 10)
        // One source and six rejected records: the rejected list has the room, each record and the reason line.
        let rejected = (0..<6).map { n in
            var r = Fixture.state().rejected[0]
            r.id = Int64(n + 1)
            r.index = 100 + n
            return r
        }
        _ = reduce(&state, .importsLoaded(sources: [source], rejected: rejected))
        state.importsPane = 1
        for _ in 0..<5 { _ = reduce(&state, .key(.char("j"))) }
        lines = renderedLines(state)
        for n in 0..<6 { #expect(lines.contains { $0.contains("#\(100 + n) ") }, "record \(n):\n\(lines.joined(separator: "\n"))") }
        #expect(lines[13].hasPrefix(" notANumber: purchase_date_ms"), "\(lines.joined(separator: "\n"))")
        // A list with more pages to read keeps its half.
        state.importsMore = [true, false]
        lines = renderedLines(state)
        #expect(!lines.contains { $0.contains("#100 ") }, "\(lines.joined(separator: "\n"))")
    }

    @Test("at 60 columns the customer header keeps the environment, saying 'net unknown' short when no price is known")
    func narrowHeaderWithoutPrices() throws {
        var state = Fixture.state(width: 60, height: 20, screen: .customer)
        var t = Fixture.transaction("6001", product: "pro.monthly", purchased: -10, expires: 20)
        t.price = nil
        t.currency = nil
        t.environment = .sandbox
        _ = reduce(&state, .customerLoaded(CustomerDetail(records: Fixture.customer([t]), flags: [], log: [])))
        #expect(renderedLines(state).contains { $0.hasPrefix(" Sandbox  1 tx  0 refunded  net unknown ") }, "\(renderedLines(state).joined(separator: "\n"))")
        state.width = 100
        #expect(renderedLines(state).contains { $0.contains("Sandbox  1 tx  0 refunded  net unknown (no prices in the data)") })
    }

    @Test("a period restored under another transaction id: the header counts the transactions listed and the purchases they are")
    func restoredCounts() throws {
        var state = Fixture.state(width: 100, height: 24, screen: .customer)
        var bought = Fixture.transaction("4001", product: "pro.monthly", purchased: -10, expires: 20)
        bought.webOrderLineItemId = "w1"
        var restored = Fixture.transaction("4002", product: "pro.monthly", purchased: -10, expires: 20)
        restored.webOrderLineItemId = "w1"
        _ = reduce(&state, .customerLoaded(CustomerDetail(records: Fixture.customer([bought, restored]), flags: [], log: [])))
        #expect(renderedLines(state).contains { $0.contains("  2 txs, 1 purchase  0 refunded") }, "\(renderedLines(state).joined(separator: "\n"))")
        _ = reduce(&state, .customerLoaded(CustomerDetail(records: Fixture.customer([bought]), flags: [], log: [])))
        #expect(renderedLines(state).contains { $0.contains("  1 tx  0 refunded") })
    }

    @Test("dotted product ids too long for their column keep their end: one app's week and month stay told apart")
    func dottedIdsKeepTheirEnd() throws {
        var state = Fixture.state(width: 80, height: 24, screen: .customer)
        let week = Fixture.transaction("3001", product: "org.getpure.pure-iphone.subscription.week", purchased: -20, expires: -13)
        let month = Fixture.transaction("3002", product: "org.getpure.pure-iphone.subscription.month", purchased: -10, expires: 20, original: "3002")
        var records = Fixture.customer([week, month])
        // Each its own entitlement: no group.
        records.transactions = records.transactions.map { t in
            var t = t
            t.subscriptionGroupIdentifier = nil
            return t
        }
        _ = reduce(&state, .customerLoaded(CustomerDetail(records: records, flags: [], log: [])))
        let lines = renderedLines(state)
        #expect(lines.contains { $0.hasPrefix(" …") && $0.contains("ption.week ") }, "\(lines.joined(separator: "\n"))")
        #expect(lines.contains { $0.hasPrefix(" …") && $0.contains("tion.month ") }, "\(lines.joined(separator: "\n"))")
        // The timeline's product column too (its detail keeps the whole id on the last line).
        #expect(lines.contains { $0.hasPrefix("2025-02-16 08:00 expired") && $0.contains(" …ubscription.week ") }, "\(lines.joined(separator: "\n"))")
        #expect(!lines.contains { $0.hasPrefix(" org.getpure") }, "cut at the end, the two read alike")
    }

    @Test("the customer's flags pane: every status, and the selected flag's detail, last triage and id on the last line")
    func customerFlagsPane() throws {
        var state = Fixture.state(width: 80, height: 24, screen: .customer)
        var flags = Array(Fixture.flags.prefix(2))
        flags[1].status = .resolved
        let log = [
            TriageEntry(
                flagId: "app-issue:2004", customerId: nil, at: Fixture.at(-2), operatorName: "bo", action: .resolve,
                note: "refund stands, app fixed in 2.1", fromStatus: .open, toStatus: .resolved)
        ]
        _ = reduce(&state, .customerLoaded(CustomerDetail(records: Fixture.records, flags: flags, log: log)))
        state.customerPane = 3
        state.customerPositions[3].selected = 1
        try match(state, name: "customer-flags-80x24")
        let lines = renderedLines(state)
        #expect(lines.contains { $0.contains("app-issue") && $0.contains("resolved") })
        #expect(lines.contains { $0.contains("resolved 2025-02-27 08:00 by bo: refund stands, app fixed in 2.1") })
        // Travelled to before they were raised: the flags are the ledger's now, and the title counts those after.
        _ = reduce(&state, .instantParsed(Fixture.at(-28)))
        #expect(renderedLines(state).contains { $0.contains("Flags (2 flags, 1 open; 2 raised after 2025-02-01 08:00)") })
        // The header's open flags are the ledger's now too, and say so.
        #expect(renderedLines(state).contains { $0.contains(" 1 open flag now ") }, "\(renderedLines(state).joined(separator: "\n"))")
    }

    @Test("the queue says who last moved a flag and their note: on the selected line, and in a column from 120 columns")
    func queueLastTriage() throws {
        let entry = TriageEntry(
            flagId: "quick-refund:2004", customerId: nil, at: Fixture.at(-1), operatorName: "bo", action: .ack, note: "asked the bank",
            fromStatus: .open, toStatus: .acknowledged)
        for width in [80, 120] {
            var state = Fixture.state(width: width, height: 24, screen: .refunds)
            _ = reduce(&state, .flagsLoaded(Fixture.flags, next: nil, append: false))
            _ = reduce(&state, .flagTriageLoaded(["quick-refund:2004": entry]))
            let lines = renderedLines(state)
            if width < 120 {
                // On a line of its own under the detail, whole at 80 columns.
                let who = try #require(lines.firstIndex { $0.hasPrefix(" acknowledged 2025-02-28 08:00 by bo: asked the bank") }, "\(lines)")
                #expect(lines[who - 1].hasPrefix(" refunded 24 h after purchase  id quick-refund:2004"), "\(lines[who - 1])")
            } else {
                #expect(lines.contains { $0.contains("refunded 24 h after purchase  acknowledged 2025-02-28 08:00 by bo") }, "\(lines)")
            }
            #expect(lines.contains { $0.contains("last triage") } == (width >= 120), "\(width)")
            #expect(lines.contains { $0.contains("quick-refund") && $0.contains(" 24h bo: asked the bank ") } == (width >= 120), "\(lines)")
            // Under time travel to before the entry, it is later than the instant shown.
            var before = state
            _ = reduce(&before, .instantParsed(Fixture.at(-2)))
            #expect(renderedLines(before).contains { $0.contains(" later bo: asked the bank ") } == (width >= 120))
            // A queue read again from its start forgets what it knew of the flags before.
            _ = reduce(&state, .flagsLoaded(Fixture.flags, next: nil, append: false))
            #expect(state.flagTriage.isEmpty)
        }
    }

    @Test("the queue's title says of how many: the query's total, its / filter's as the ledger read it, or while one is typed the flags loaded")
    func queueTitleTotal() throws {
        var state = Fixture.state(width: 120, height: 24, screen: .refunds)
        _ = reduce(&state, .flagsLoaded(Fixture.flags, next: FlagCursor(after: Fixture.flags[2]), append: false))
        _ = reduce(&state, .flagTotalLoaded(533))
        #expect(renderedLines(state).contains { $0.contains("3 shown of 533 ") }, "\(renderedLines(state))")
        _ = reduce(&state, .key(.char("/")))
        for c in "quick" { _ = reduce(&state, .key(.char(c))) }
        #expect(renderedLines(state).contains { $0.contains("1 shown of 3 loaded (Enter searches the queue)  filter \"quick\"") }, "\(renderedLines(state))")
        _ = reduce(&state, .key(.enter))
        var found = Fixture.flags[0]
        found.id = "quick-refund:1"
        _ = reduce(&state, .flagsLoaded(Array(repeating: found, count: 200), next: FlagCursor(after: found), append: false, filter: "quick"))
        _ = reduce(&state, .flagTotalLoaded(250))
        #expect(renderedLines(state).contains { $0.contains("200 shown of 250  filter \"quick\"") }, "\(renderedLines(state))")
    }

    @Test("the queue's severity and customer columns are as wide as the widest shown, and the product has the rest")
    func queueColumnsFitFlags() throws {
        var state = Fixture.state(width: 80, height: 24, screen: .refunds)
        var flags = Fixture.flags
        flags[0].severity = .critical
        flags[1].customerId = 2_256_070
        _ = reduce(&state, .flagsLoaded(flags, next: nil, append: false))
        let lines = renderedLines(state)
        #expect(lines.contains { $0.hasPrefix("  critical quick-refund ") }, "\(lines.joined(separator: "\n"))")
        #expect(lines.contains { $0.contains(" C2256070 ") })
        // Without them, the cells go to the product.
        _ = reduce(&state, .flagsLoaded(Fixture.flags, next: nil, append: false))
        #expect(renderedLines(state).contains { $0.hasPrefix("  high   quick-refund        C42  -    pro.monthly ") })
    }

    @Test("at 60 columns the flag queue keeps each amount with its currency and gives the rule the severity's cells")
    func narrowQueue() throws {
        var state = Fixture.state(width: 60, height: 20, screen: .refunds)
        var flags = Fixture.flags
        flags[0].severity = .critical
        flags[0].amount = 119_990
        _ = reduce(&state, .flagsLoaded(flags, next: nil, append: false))
        let lines = renderedLines(state)
        let header = try #require(lines.first { $0.contains("rule") })
        #expect(header.hasPrefix("  sev  rule "), "\(header)")
        #expect(lines.contains { $0.hasPrefix("  crit quick-r") && $0.contains(" 119.99 USD ") }, "\(lines.joined(separator: "\n"))")
        #expect(lines.contains { $0.hasPrefix("  med  app-iss") && $0.contains(" 9.99 USD ") })
        // The worst severity in the colour of the worst, not plain text.
        #expect(severityCell(flags[0]).role == "status.danger" && severityCell(flags[0], short: true).text == "crit")
    }

    @Test("the overview's chart covers the last 90 days from 104 columns, else the last 30 (the tile's window), not what the width holds")
    func chartWindow() throws {
        for (width, title, cells) in [(60, "last 30 days", 30), (80, "last 30 days", 60), (104, "last 90 days", 90), (140, "last 90 days", 90)] {
            let lines = renderedLines(Fixture.state(width: width, height: 24, screen: .overview))
            let index = try #require(lines.firstIndex { $0.contains("Refunds per day") })
            #expect(lines[index].contains(title), "\(lines[index])")
            let chart = lines[index + 1]
            #expect(chart.dropFirst().prefix { $0 != " " }.count == cells, "\(width): \(chart)")
        }
    }

    @Test("a sparkline in one row or several: zero on the baseline, any count above it, the largest to the top; no count traps")
    func sparklineRows() {
        func drawn(_ values: [Int], height: Int, glyphs: Glyphs = .unicode) -> [String] {
            var p = Painter(buffer: ScreenBuffer(width: values.count, height: height), theme: .builtin, glyphs: glyphs)
            p.sparkline(values, x: 0, y: 0, width: values.count, height: height)
            return (0..<height).map { p.buffer.line($0) }
        }
        // One row as before: 3 of 7 is three steps of seven, exactly.
        #expect(drawn([0, 1, 3, 7], height: 1) == ["▁▂▄█"])
        // Four rows: 31 steps; 1 of 11 is two of them, 11 fills every row.
        #expect(drawn([0, 1, 11], height: 4) == ["  █", "  █", "  █", "▁▃█"])
        #expect(drawn([0, 1, 11], height: 4, glyphs: .ascii) == ["  #", "  #", "  #", " -#"])
        // Two rows: 15 steps; half the largest fills the bottom row, the row above holds the other eight.
        #expect(drawn([0, 6, 12], height: 2) == ["  █", "▁██"])
        #expect(drawn([Int.max, Int.max / 2, -1], height: 3) == ["█  ", "█▄ ", "██▁"])
    }

    @Test("the footer says what q does (quit on the top screen, back elsewhere); a customer without flags shows no triage keys")
    func footerSaysWhatKeysDo() {
        var state = Fixture.state(width: 120, height: 24, screen: .customer)
        #expect(renderedLines(state).last?.contains(" q quit ") == true)
        #expect(renderedLines(state).last?.contains(" a ack r resolve ") == true)
        state.history = [Visit(screen: .overview)]
        _ = reduce(&state, .customerLoaded(CustomerDetail(records: Fixture.records, flags: [], log: [])))
        let footer = renderedLines(state).last ?? ""
        #expect(footer.contains(" q back ") && !footer.contains(" a ack") && !footer.contains(" r resolve"), "\(footer)")
    }

    @Test("a family member's header: nothing paid, the purchase shared by family, and the flag's rule beside it at 120 columns")
    func sharedByFamily() {
        var shared = Fixture.transaction("9001", product: "pro.monthly", purchased: -10, expires: 20, original: "9000")
        shared.inAppOwnershipType = .familyShared
        var state = Fixture.state(width: 120, height: 24, screen: .customer)
        let records = CustomerRecords(
            id: 9, identifiers: [], transactions: [shared], firstSeen: ["9001": Fixture.at(-10)], renewalInfos: [], notifications: [])
        var flag = Fixture.flags[0]
        flag.rule = "family-revoke"
        _ = reduce(&state, .customerLoaded(CustomerDetail(records: records, flags: [flag], log: [])))
        let header = renderedLines(state)[2]
        #expect(header.contains("net none (shared by family)") && header.contains("1 open flag: family-revoke"), "\(header)")
    }

    @Test("help too tall for the terminal scrolls with j/k to its last key; any other key closes it")
    func helpScrolls() throws {
        var state = Fixture.state(width: 60, height: 16, screen: .customers)
        _ = reduce(&state, .key(.char("?")))
        let first = renderedLines(state)
        #expect(first.contains { $0.contains("j/k scroll, any other key closes") }, "\(first)")
        #expect(first.contains { $0.contains("more keys: j shows them") })
        // The last key's line as the help draws it: its keys, padded to its column's widest, then what it does.
        let binding = try #require(helpLayout(state).bindings.last)
        let keys = binding.keys.prefix(2).map(\.label).joined(separator: " ")
        func showsLast(_ lines: [String]) -> Bool {
            lines.contains { line in
                guard let k = line.range(of: keys + " "), let h = line.range(of: binding.help, range: k.upperBound..<line.endIndex) else { return false }
                return line[k.upperBound..<h.lowerBound].allSatisfy { $0 == " " }
            }
        }
        #expect(!showsLast(first))
        for _ in 0..<40 { _ = reduce(&state, .key(.char("j"))) }
        let end = renderedLines(state)
        #expect(showsLast(end) && !end.contains { $0.contains("more keys") }, "\(end)")
        #expect(state.showHelp)
        _ = reduce(&state, .key(.char("k")))
        #expect(state.showHelp && state.helpTop > 0)
        _ = reduce(&state, .key(.char("x")))
        #expect(!state.showHelp)
        _ = reduce(&state, .key(.char("?")))
        #expect(state.helpTop == 0, "help opens at its first key again")
    }

    @Test("the help's second column stays where it is as j/k scroll the help", arguments: [80, 100])
    func helpColumnsStayPut(width: Int) throws {
        var state = Fixture.state(width: width, height: 16, screen: .customers)
        _ = reduce(&state, .key(.char("?")))
        let layout = helpLayout(state)
        try #require(layout.columns == 2 && layout.bindings.count > layout.rows * 2, "the help scrolls at \(width)x16")
        func label(_ binding: KeyBinding) -> String { binding.keys.prefix(2).map(\.label).joined(separator: " ") }
        var starts: [Int] = []
        for top in 0...(layout.bindings.count - layout.rows * 2) {
            #expect(state.helpTop == top)
            let lines = renderedLines(state)
            // The first row of keys: the first column's key and description, then the second column's key.
            let first = layout.bindings[top], second = layout.bindings[top + layout.rows]
            let row = try #require(lines.first { $0.contains(label(first) + " ") && $0.contains(first.help.prefix(8)) }, "\(label(first)) \(first.help) \(lines.joined(separator: "\n"))")
            let at = try #require(row.range(of: " " + label(second) + " ", options: .backwards), "\(row)")
            starts.append(row.distance(from: row.startIndex, to: at.lowerBound))
            _ = reduce(&state, .key(.char("j")))
        }
        #expect(Set(starts).count == 1, "the second column moved: \(starts)")
    }

    @Test("at 60 columns the help's commands wrap onto as many lines as they need, :q last", arguments: [16, 24])
    func helpCommandsAt60(height: Int) throws {
        var state = Fixture.state(width: 60, height: height, screen: .customers)
        _ = reduce(&state, .key(.char("?")))
        let lines = renderedLines(state)
        let text = lines.joined(separator: "\n")
        for command in [":customer ID", ":theme NAME", ":env all|production|sandbox", ":at DATE|now", ":export csv FILE", ":mouse on|off", ":q"] {
            #expect(text.contains("  " + command), "\(command) in\n\(text)")
        }
        #expect(!lines.contains { $0.contains(":mouse on|…") })
    }

    @Test("a scroll hint over a section title cuts the title where it starts and says so; the timeline's keeps its Tab key")
    func hintOverTitle() throws {
        var p = Painter(buffer: ScreenBuffer(width: 40, height: 6), theme: .builtin, glyphs: .unicode)
        p.section("A title long enough to run under the hint", x: 0, y: 0, width: 40)
        p.table(x: 0, y: 1, width: 40, height: 3, columns: [Column("n", 5)], rows: 9, position: ListPosition()) { row, _ in
            TableCell("\(row)")
        }
        #expect(p.buffer.line(0) == "─ A title long enough to run unde… 1/9 ─", "\(p.buffer.line(0))")

        var state = Fixture.state(width: 60, height: 16, screen: .customer)
        state.customerPane = 1
        let title = try #require(renderedLines(state).first { $0.contains("Timeline") })
        #expect(title.contains("Timeline (7 events)  Tab: transactions ") && title.hasSuffix(" 7/7 ─"), "\(title)")
    }

    @Test("at 60 columns the coverage legend starts at the line's start and names every kind the strips show")
    func coverageLegendAt60() throws {
        let wide = try #require(renderedLines(Fixture.state(width: 80, height: 24, screen: .customer)).first { $0.contains(" … ") })
        #expect(wide.hasPrefix("                    2024-11-26 … 2025-03-01   "), "\(wide)")
        let narrow = try #require(renderedLines(Fixture.state(width: 60, height: 20, screen: .customer)).first { $0.contains(" … ") })
        #expect(narrow.hasPrefix(" 2024-11-26 … 2025-03-01  "), "\(narrow)")
        #expect(narrow.trimmingCharacters(in: .whitespaces).hasSuffix("█ paid  ▒ trial  x refund"), "\(narrow)")
    }

    @Test("an entitlement's line says of renewal what lookup says: of an ended one too, and a billing retry is no \"renews\"")
    func renewalSaidAsLookupSays() throws {
        func line(_ state: EntitlementState, willRenew: Bool?, intent: ExpirationIntent? = nil) -> String {
            var e = Entitlement(name: "pro", state: state, reason: "why")
            e.willRenew = willRenew
            e.expirationIntent = intent
            return entitlementLine(e)
        }
        #expect(line(.active, willRenew: true) == "pro: why; renews")
        #expect(line(.active, willRenew: false) == "pro: why; renewal off")
        #expect(line(.billingRetry, willRenew: true) == "pro: why; renewal on")
        #expect(line(.gracePeriod, willRenew: true) == "pro: why; renewal on")
        // Ended: the customer's choice said (the dashboard said nothing of it, lookup "renewal off"), or Apple's.
        #expect(line(.expired, willRenew: false) == "pro: why; renewal off")
        #expect(line(.expired, willRenew: false, intent: .billingError) == "pro: why; renewal stopped: billing failed")
        #expect(line(.expired, willRenew: true) == "pro: why; renewal was on")
        #expect(line(.revoked, willRenew: false) == "pro: why")
        #expect(line(.expired, willRenew: nil) == "pro: why")
    }

    @Test("without colour the coverage strip's blocks are never in reverse video, which draws a full block as blank")
    func coverageVisibleWithoutColour() throws {
        let state = Fixture.state(width: 80, height: 24, screen: .customer)
        for theme in [Theme.builtin.adapted(to: .none), Theme.builtin.adapted(to: .ansi8)] {
            var buffer = ScreenBuffer(width: 0, height: 0)
            render(state, theme: theme, into: &buffer)
            let blocks = buffer.cells.filter { ["█", "▓", "▒"].contains($0.text) }
            #expect(blocks.count > 20, "the fixture's strip is drawn")
            #expect(!blocks.contains { $0.style.attributes.contains(.reverse) })
        }
    }

    @Test("the timeline keeps each event's minute whole at 60 columns; the event, product and detail give the room")
    func timelineMinuteKept() throws {
        var state = Fixture.state(width: 60, height: 20, screen: .customer)
        state.customerPane = 1
        let lines = renderedLines(state)
        let headerIndex = try #require(lines.firstIndex { $0.hasPrefix("at ") })
        let rows = lines.dropFirst(headerIndex + 1).prefix { $0.hasPrefix("20") }
        #expect(!rows.isEmpty)
        for row in rows {
            #expect(row.prefix(17).wholeMatch(of: #/\d{4}-\d{2}-\d{2} \d{2}:\d{2} /#) != nil, "\(row)")
        }
    }

    @Test("the selected event's detail too long for the last line takes the rows the events leave empty")
    func timelineDetailWraps() throws {
        var state = Fixture.state(width: 60, height: 30, screen: .customer)
        state.customerPane = 1
        let index = 1
        state.customerView?.timeline[index].detail = "the customer asked for a refund; consumption data due by 2025-07-01 02:00"
        state.customerPositions[1].selected = index
        let e = try #require(state.customerView?.timeline[index])
        let whole = Sanitize.text(timelineDetail(e) + (e.transactionId.map { "  (transaction \($0))" } ?? ""))
        #expect(DisplayWidth.of(whole) > 58, "\(whole)")
        let lines = renderedLines(state)
        // The lines under the last event, up to the next pane's title (the transactions fit under it here) or the keys.
        let lastEvent = try #require(lines.lastIndex { $0.prefix(17).wholeMatch(of: #/\d{4}-\d{2}-\d{2} \d{2}:\d{2} /#) != nil })
        let end = lines[(lastEvent + 1)...].firstIndex { $0.hasPrefix("─") || $0.contains("Enter") } ?? lines.count
        let shown = lines[(lastEvent + 1)..<end].map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        #expect(shown.joined(separator: " ").contains(whole.split(separator: " ").prefix(12).joined(separator: " ")), "\(lines.joined(separator: "\n"))")
        #expect(shown.count >= 2, "\(lines.joined(separator: "\n"))")
    }

    @Test("a count of one is said in the singular: the customer list's title, the overview's import health")
    func singularCounts() throws {
        var state = Fixture.state(width: 80, height: 24, screen: .customers)
        state.customerPage.rows = Array(state.customerPage.rows.prefix(1))
        state.customerPage.total = 1
        var buffer = ScreenBuffer(width: 0, height: 0)
        render(state, theme: .builtin, into: &buffer)
        #expect(buffer.line(1).hasPrefix("─ 1 customer  sorted by"), "\(buffer.line(1))")
        state.screen = .overview
        state.overview?.counts.sources = 1
        state.overview?.counts.rawRecords = 1
        render(state, theme: .builtin, into: &buffer)
        #expect(buffer.text.contains("1 source, 1 record"), "\(buffer.text)")
    }

    @Test("a customer whose timeline, transactions and flags all fit is shown whole, Tab moving the focus, not the panes; shorter, the pane Tab chose and the others that fit")
    func customerPanesTogether() {
        var state = Fixture.state(width: 120, height: 40, screen: .customer)
        func titles(_ lines: [String]) -> [Int: String] {
            Dictionary(uniqueKeysWithValues: lines.enumerated().compactMap { index, line in
                ["─ Timeline", "─ Transactions", "─ Flags"].first { line.hasPrefix($0) }.map { (index, $0) }
            })
        }
        let together = renderedLines(state)
        let placed = titles(together)
        #expect(placed.values.sorted() == ["─ Flags", "─ Timeline", "─ Transactions"], "\(together.joined(separator: "\n"))")
        // Every row of each: the first transaction and the last flag are there.
        #expect(together.contains { $0.hasPrefix("2001 ") } && together.contains { $0.hasPrefix("medium app-issue") }, "\(together.joined(separator: "\n"))")
        for pane in [2, 3, 0, 1] {
            _ = reduce(&state, .key(.tab))
            #expect(state.customerPane == pane)
            let lines = renderedLines(state)
            #expect(titles(lines) == placed, "pane \(pane): \(lines.joined(separator: "\n"))")
            // Where Tab goes and what the triage keys act on, said by the pane in focus only.
            let flagsTitle = lines.first { $0.hasPrefix("─ Flags") } ?? ""
            #expect(flagsTitle.contains(pane == 3 ? "a r o: this flag" : "a r o: every flag"), "\(flagsTitle)")
            #expect(lines.contains { $0.contains("Tab: flags") } == (pane == 2))
        }
        // Only the pane in focus shows a selected row (out of focus, the triage keys act on every flag of the customer).
        func selectedRows(_ state: AppState) -> [String] {
            var buffer = ScreenBuffer(width: 0, height: 0)
            render(state, theme: .builtin, into: &buffer)
            return (0..<buffer.height).filter { y in
                (0..<buffer.width).contains { x in !buffer[x, y].style.attributes.isDisjoint(with: [.reverse, .underline]) }
            }.map { buffer.line($0) }.filter { line in
                // (The header, the key line and the tables' headers are drawn reversed too.)
                ![" Enter", " ReceiptDesk", "at ", "transaction ", "sev "].contains { line.hasPrefix($0) }
            }
        }
        for (pane, row) in [(1, "2025-02-19 08:00"), (2, "2006 "), (3, "high   quick-refund")] {
            state.customerPane = pane
            let selected = selectedRows(state)
            #expect(selected.count == 1 && selected.first?.hasPrefix(row) == true, "pane \(pane): \(selected)")
        }
        // A long detail on the selected event moves no pane, whichever event is selected.
        state.customerPane = 1
        state.customerView?.timeline[3].detail = String(repeating: "a detail too long for one line ", count: 8)
        let steady = titles(renderedLines(state))
        for key in [Key.char("j"), .char("j"), .char("j"), .char("k")] {
            _ = reduce(&state, .key(key))
            #expect(titles(renderedLines(state)) == steady, "after \(key), event \(state.customerPositions[1].selected)")
        }
        // Too short for all of it: the pane Tab chose, and the others in their order while every row of each fits.
        var shorter = Fixture.state(width: 120, height: 30, screen: .customer)
        for (pane, panes) in [(1, ["─ Timeline", "─ Transactions"]), (2, ["─ Timeline", "─ Transactions"]), (3, ["─ Timeline", "─ Flags"])] {
            shorter.customerPane = pane
            let lines = renderedLines(shorter)
            #expect(titles(lines).sorted { $0.key < $1.key }.map(\.value) == panes, "pane \(pane): \(lines.joined(separator: "\n"))")
        }
        // Shorter still, the pane Tab chose, alone, as before.
        var short = Fixture.state(width: 120, height: 18, screen: .customer)
        for pane in [1, 2, 3] {
            short.customerPane = pane
            let shown = titles(renderedLines(short)).values.sorted()
            #expect(shown == [["─ Timeline"], ["─ Transactions"], ["─ Flags"]][pane - 1], "pane \(pane): \(shown)")
        }
    }

    @Test("at 60 columns an entitlement's why keeps whether it renews: its instant's seconds and milliseconds give way first")
    func renewalKeptOverSeconds() throws {
        var active = Fixture.transaction("5001", product: "pro.monthly", purchased: -20, expires: 10, original: "5000")
        active.expiresDate = active.expiresDate?.adding(milliseconds: 25_860)
        var info = RenewalInfo()
        info.originalTransactionId = "5000"
        info.autoRenewStatus = .on
        let records = CustomerRecords(
            id: 5, identifiers: [], transactions: [active], firstSeen: ["5001": Fixture.at(-20)],
            renewalInfos: [(info: info, seenAt: Fixture.at(-20))], notifications: [])
        for (width, shown) in [(60, "paid through 2025-03-11 08:00; renews"), (100, "paid through 2025-03-11 08:00:25.860; renews")] {
            var state = Fixture.state(width: width, height: 20, screen: .customer)
            _ = reduce(&state, .customerLoaded(CustomerDetail(records: records, flags: [], log: [])))
            let lines = renderedLines(state)
            #expect(lines.contains { $0.hasSuffix(shown) || $0.contains(shown + " ") }, "\(lines.joined(separator: "\n"))")
        }
        // With the entitlements in focus, the selected one's why whole on the line under the timeline.
        var state = Fixture.state(width: 60, height: 20, screen: .customer)
        _ = reduce(&state, .customerLoaded(CustomerDetail(records: records, flags: [], log: [])))
        state.customerPane = 0
        #expect(renderedLines(state).contains { $0.hasPrefix(" group G1: paid through 2025-03-11 08:00:25.860; renews") })
    }

    @Test("a sighting that does not name its product's subscription group (an in_app entry) is in the group the others name: one strip")
    func coverageGroupFromOtherSightings() throws {
        var named = Fixture.transaction("9002", product: "storage.monthly", purchased: -30, expires: 0, original: "9000")
        named.subscriptionGroupIdentifier = "G2"
        var unnamed = Fixture.transaction("9001", product: "storage.monthly", purchased: -60, expires: -30, original: "9000")
        unnamed.subscriptionGroupIdentifier = nil
        let strips = try Self.dailyStrips(Fixture.customer([unnamed, named]), at: Fixture.now)
        #expect(strips.count == 1, "\(strips.map(\.name))")
        #expect(strips.first?.cells[0..<60].allSatisfy { $0 == .paid } == true, "\(strips.first?.cells ?? [])")
    }

    @Test("the coverage strip: no billing retry follows a refunded period, upgraded or not; one not upgraded is marked refunded")
    func coverageRefundThenRetry() throws {
        for upgraded in [false, true] {
            var refunded = Fixture.transaction("9001", product: "pro.monthly", purchased: -60, expires: -30, original: "9000")
            refunded.revocationDate = Fixture.at(-40)
            refunded.revocationReason = .appIssue
            if upgraded {
                refunded.isUpgraded = true
                refunded.revocationType = .refundFull
            }
            // A renewal info seen after the period's end says billing is being retried (Apple's own sample data does).
            let records = Fixture.customer([refunded], renewals: [(Fixture.renewal(original: "9000", retry: true), Fixture.at(-29))])
            let strip = try #require(try Self.dailyStrips(records, at: Fixture.now).first)
            // Days -60...0: paid to day -40, refunded to the period's end, then a gap. (An upgraded period covers the
            // days to its upgrade, its revocation, and no more: the one it was upgraded to covers the rest, and a refund
            // mark there would sit over that one's paid days.)
            #expect(strip.cells[0..<20].allSatisfy { $0 == .paid }, "\(strip.cells)")
            if !upgraded {
                #expect(strip.cells[21..<30].allSatisfy { $0 == .refund }, "\(strip.cells)")
            }
            #expect(strip.cells[31...].allSatisfy { $0 == .gap }, "upgraded \(upgraded): \(strip.cells)")
        }
    }

    @Test("the coverage strip: an upgraded period is paid until the upgrade, with or without a revocation date (legacy data has none)")
    func coverageUpgradedPaidUntilUpgrade() throws {
        for revoked in [false, true] {
            var lite = Fixture.transaction("8001", product: "lite.monthly", purchased: -60, expires: -30, original: "8000")
            lite.isUpgraded = true
            if revoked { lite.revocationDate = Fixture.at(-45) }
            let pro = Fixture.transaction("8002", product: "pro.monthly", purchased: -45, expires: 15, original: "8000")
            let strip = try #require(try Self.dailyStrips(Fixture.customer([lite, pro]), at: Fixture.now).first)
            // Days -60...0 paid without a break: the lite period to day -45, then pro's.
            #expect(strip.cells.count == 60 && strip.cells.allSatisfy { $0 == .paid }, "revoked \(revoked): \(strip.cells)")
        }
    }

    @Test("the coverage strip: a family revoke ends access (it showed paid to the period's end); a retry since recovered stays a retry at any instant")
    func coverageRevokeAndRetry() throws {
        var shared = Fixture.transaction("6001", product: "pro.monthly", purchased: -30, expires: 30, original: "6000")
        shared.revocationDate = Fixture.at(-10)
        shared.revocationType = .familyRevoke
        var first = Fixture.transaction("7001", product: "storage.monthly", purchased: -60, expires: -30, original: "7000")
        first.subscriptionGroupIdentifier = "G2"
        var recovered = Fixture.transaction("7002", product: "storage.monthly", purchased: -20, expires: 10, original: "7000")
        recovered.subscriptionGroupIdentifier = "G2"
        let retrying = Fixture.renewal(original: "7000", retry: true)
        let records = Fixture.customer(
            [first, shared, recovered], renewals: [(retrying, Fixture.at(-30)), (Fixture.renewal(original: "7000", retry: false), Fixture.at(-20))])
        func strips(at instant: Timestamp) throws -> [CoverageStrip] { try Self.dailyStrips(records, at: instant) }
        let now = try strips(at: Fixture.now)
        // In the order first bought: storage (day -60), then pro (day -30).
        #expect(now.count == 2)
        let storage = now[0]
        let pro = now[1]
        #expect(storage.cells[30..<40].allSatisfy { $0 == .retry }, "\(storage.cells[30..<40])")
        #expect(pro.cells[30..<50].allSatisfy { $0 == .paid } && pro.cells[50...].allSatisfy { $0 == .revoked }, "\(pro.cells)")
        // Asked about a day inside the retry, the same days read the same.
        let then = try strips(at: Fixture.at(-25))
        #expect(then.first?.cells[30..<35].allSatisfy { $0 == .retry } == true, "\(then.first?.cells ?? [])")

        // A retry of an earlier period says nothing of a later lapse: a gap after the period that followed it.
        var lapsed = records
        lapsed.transactions = [first, recovered]
        lapsed.renewalInfos = [(info: retrying, seenAt: Fixture.at(-30))]
        let view = CustomerView(detail: CustomerDetail(records: lapsed, flags: [], log: []), at: Fixture.at(12), catalog: Catalog())
        let strip = try #require(
            coverageStrips(lapsed, view: view, groups: coverageGroups(lapsed, view: view, catalog: Catalog()), width: 72)?.strips.first)
        // Days -60...12, a cell each: retrying from day -30 to -20, paid to day 10, then lapsed (the latest renewal
        // info says retry, but of the earlier period: it was seen before the last expiry).
        #expect(strip.cells[30..<40].allSatisfy { $0 == .retry } && strip.cells[70...].allSatisfy { $0 == .gap }, "\(strip.cells)")

        // A retry Apple gave up on (no recovery): a retry on the days it ran, then a gap, at any instant after; a retry
        // nobody ended draws no longer than Apple retries, 60 days.
        var givenUp = records
        givenUp.transactions = [first]
        givenUp.renewalInfos = [(info: retrying, seenAt: Fixture.at(-30)), (info: Fixture.renewal(original: "7000", retry: false), seenAt: Fixture.at(-10))]
        let ended = try #require(try Self.dailyStrips(givenUp, at: Fixture.now).first)
        #expect(ended.cells[30..<50].allSatisfy { $0 == .retry } && ended.cells[51...].allSatisfy { $0 == .gap }, "\(ended.cells)")
        givenUp.renewalInfos = [(info: retrying, seenAt: Fixture.at(-30))]
        let view90 = CustomerView(detail: CustomerDetail(records: givenUp, flags: [], log: []), at: Fixture.at(40), catalog: Catalog())
        let forever = try #require(
            coverageStrips(givenUp, view: view90, groups: coverageGroups(givenUp, view: view90, catalog: Catalog()), width: 100)?.strips.first)
        // Days -60...40: retrying days -30 to 30, then a gap.
        #expect(forever.cells[30..<90].allSatisfy { $0 == .retry } && forever.cells[91...].allSatisfy { $0 == .gap }, "\(forever.cells)")

        // A strip that ends long before the instant (nothing bought since) says so under it.
        let old = Fixture.transaction("8001", product: "pro.monthly", purchased: -300, expires: -270, original: "8000")
        var state = Fixture.state(width: 80, height: 24, screen: .customer)
        _ = reduce(
            &state,
            .customerLoaded(
                CustomerDetail(
                    records: CustomerRecords(
                        id: 8, identifiers: [], transactions: [old], firstSeen: ["8001": old.purchaseDate!], renewalInfos: [], notifications: []),
                    flags: [], log: [])))
        #expect(renderedLines(state).contains { $0.contains("2024-05-05 … 2024-06-11 (coverage ended)") }, "\(renderedLines(state))")
    }

    @Test("the coverage strip shows a grace period as grace, also one since recovered from; a group not yet bought is blank, not a gap")
    func coverageGrace() throws {
        let first = Fixture.transaction("3001", product: "pro.monthly", purchased: -60, expires: -30, original: "3000")
        let recovered = Fixture.transaction("3002", product: "pro.monthly", purchased: -20, expires: 10, original: "3000")
        var storage = Fixture.transaction("4001", product: "storage.monthly", purchased: -10, expires: 20, original: "4000")
        storage.subscriptionGroupIdentifier = "G2"
        let failing = Fixture.renewal(original: "3000", retry: true, grace: Fixture.at(-14))
        let records = Fixture.customer(
            [first, recovered, storage], renewals: [(failing, Fixture.at(-30)), (Fixture.renewal(original: "3000", retry: false), Fixture.at(-20))])
        func strips(at instant: Timestamp) throws -> [CoverageStrip] { try Self.dailyStrips(records, at: instant) }
        let now = try strips(at: Fixture.now)
        #expect(now.count == 2)
        #expect(now[0].cells[0..<30].allSatisfy { $0 == .paid })
        #expect(now[0].cells[30..<40].allSatisfy { $0 == .grace }, "\(now[0].cells[30..<40])")
        #expect(now[0].cells[40...].allSatisfy { $0 == .paid })
        #expect(now[1].cells[0..<50].allSatisfy { $0 == nil } && now[1].cells[50...].allSatisfy { $0 == .paid })
        // Inside the grace period: what was known then (the recovery and the second group were not yet).
        let then = try strips(at: Fixture.at(-25))
        #expect(then.count == 1)
        #expect(then[0].cells[30...].allSatisfy { $0 == .grace }, "\(then[0].cells[30...])")
    }

    @Test("a transaction's field too long for the last line is shown whole on up to four, the list giving up its rows")
    func longFieldWhole() throws {
        var long = Fixture.records.transactions[1]
        long.productId = "p" + String(repeating: "L", count: 300) + "END"
        var state = transactionScreen(long, width: 100, height: 30)
        let index = try #require(transactionFields(long).firstIndex { $0.key == "productId" })
        state.transactionScroll = ListPosition(selected: index, top: 0)
        let lines = renderedLines(state)
        #expect(lines.contains { $0.contains("LLLEND") }, "\(lines)")
        // The selected row is still shown in the list above.
        #expect(lines.contains { $0.hasPrefix("productId") || $0.contains(" productId ") || $0.contains("productId  ") }, "\(lines)")
        // A short one keeps the one line.
        state.transactionScroll = ListPosition(selected: 0, top: 0)
        #expect(renderedLines(state)[state.height - 3].contains("transactionId: \(long.transactionId)"), "\(renderedLines(state))")
    }

    @Test("titles speak as the rest of the screen does: a transaction's verification in words, now to the minute")
    func titlesInWords() throws {
        var plain = Fixture.records.transactions[1]
        plain.verification = .notApplicable
        let state = transactionScreen(plain, width: 100, height: 30)
        #expect(renderedLines(state).contains { $0.contains("Transaction \(plain.transactionId)  plain JSON") }, "\(renderedLines(state))")
        // Over a ledger now is the wall clock's, seconds and milliseconds and all: the title says its minute.
        var customer = Fixture.state(width: 100, height: 30, screen: .customer)
        customer.now = Fixture.now.adding(milliseconds: 30_505)
        let detail = try #require(customer.customer)
        _ = reduce(&customer, .customerLoaded(CustomerDetail(records: detail.records, flags: detail.flags, log: detail.log)))
        #expect(renderedLines(customer).contains { $0.contains("Entitlements as of \(Format.minute(customer.now)) ") }, "\(renderedLines(customer))")
    }

    @Test("counts too wide for their column widen it rather than be cut: a figure cut with an ellipsis reads as another")
    func countsWiden() throws {
        var customers = Fixture.state(width: 100, height: 30, screen: .customers)
        customers.customerPage.rows[0].transactionCount = 40_000
        #expect(renderedLines(customers).contains { $0.contains(" 40,000 ") }, "\(renderedLines(customers))")
        var imports = Fixture.state(width: 100, height: 30, screen: .imports)
        imports.rejected[0].size = 4_688_924
        imports.sources[0].counts = ImportCounts(read: 1_000_000, imported: 999_000, duplicate: 900, rejected: 100)
        let lines = renderedLines(imports)
        #expect(lines.contains { $0.contains("4,688,924") }, "\(lines)")
        #expect(lines.contains { $0.contains("1,000,000") && $0.contains("999,000") }, "\(lines)")
    }

    @Test("a grace period's end shows on its entitlement's row at 60 columns, the narrowest the dashboard draws")
    func graceEndAtSixtyColumns() throws {
        let lapsed = Fixture.transaction("5001", product: "storage.monthly", purchased: -32, expires: -2, original: "5000")
        let records = Fixture.customer([lapsed], renewals: [(Fixture.renewal(original: "5000", retry: true, grace: Fixture.at(12)), Fixture.at(-2))])
        for (width, height) in [(60, 16), (80, 24)] {
            var state = Fixture.state(width: width, height: height, screen: .customer)
            _ = reduce(&state, .customerLoaded(CustomerDetail(records: records, flags: [], log: [])))
            let lines = renderedLines(state)
            let row = try #require(lines.first { $0.contains("GRACE PERIOD") }, "\(lines)")
            // (The last line holds the selected entitlement's why whole where there is room: the row must say it itself.)
            #expect(row.contains("until \(Format.day(Fixture.at(12)))"), "\(width)x\(height): \(row)")
        }
    }

    @Test("the overview shorter than 24 rows keeps the pending consumption request, the count past deadline and the import health")
    func shortOverview() throws {
        for (width, height) in [(80, 20), (80, 22), (60, 16), (60, 20)] {
            var state = Fixture.state(width: width, height: height, screen: .overview)
            var missed = Fixture.flags[2]
            missed.id = "consumption-request:78"
            missed.at = Fixture.at(-2)
            state.overview?.consumptionRequests.append(missed)
            state.overview?.flagCounts += [
                FlagCount(severity: .critical, status: .open, count: 1), FlagCount(severity: .info, status: .open, count: 4),
            ]
            var buffer = ScreenBuffer(width: 0, height: 0)
            render(state, theme: .builtin, into: &buffer)
            let text = buffer.text
            #expect(text.contains("11h left  C7"), "\(width)x\(height):\n\(text)")
            #expect(text.contains(width > 60 ? "1 past deadline, in the queue (5)" : "1 past deadline: queue (5)"), "\(width)x\(height):\n\(text)")
            #expect(text.contains("critical 1") || text.contains("crit:1"), "\(width)x\(height):\n\(text)")
            // Every severity with open flags is counted, on a row of its own or on the last row's rest.
            #expect(text.contains("info     4") || text.contains("info 4") || text.contains("info:4"), "\(width)x\(height):\n\(text)")
            if height <= 16 { #expect(text.contains("crit:1 high:1 med:2 info:4"), "\(text)") }
            if width <= 60 {
                // Titles and labels whole at 60 columns.
                #expect(text.contains("─ Consumption requests ─") && text.contains(" txs ") && text.contains(" refund 30d "), "\(text)")
            }
            #expect(text.contains("12 sources"), "\(width)x\(height):\n\(text)")
            if height >= 20 { #expect(text.contains("3 rejected, on Imports (6)"), "\(width)x\(height):\n\(text)") }
        }
    }

    @Test("the Imports list, newest first, shows when each source was first imported: a later retry does not put it out of order")
    func importsInOrder() throws {
        var state = Fixture.state(width: 120, height: 40, screen: .imports)
        let counts = ImportCounts(read: 1, imported: 1)
        let sources = [
            SourceSummary(id: 3, path: "later.ndjson", sha256: "c", size: 1, startedAt: Fixture.at(-2), completedAt: Fixture.at(-2), counts: counts),
            // Imported first, its rejected records retried yesterday (with a --trust-root): its completion moved.
            SourceSummary(id: 2, path: "first.ndjson", sha256: "b", size: 1, startedAt: Fixture.at(-3), completedAt: Fixture.at(-1), counts: counts),
        ]
        _ = reduce(&state, .importsLoaded(sources: sources, rejected: []))
        let lines = renderedLines(state)
        let later = try #require(lines.first { $0.contains("later.ndjson") })
        let first = try #require(lines.first { $0.contains("first.ndjson") })
        #expect(later.contains(Format.minute(Fixture.at(-2))) && first.contains(Format.minute(Fixture.at(-3))), "\(later)\n\(first)")
        #expect(lines.contains { $0.contains("first imported") })
    }

    @Test("an unfinished source on the Imports screen says so, with what its committed batches hold")
    func unfinishedSource() throws {
        var state = Fixture.state(width: 120, height: 40, screen: .imports)
        let source = SourceSummary(
            id: 9, path: "cut.ndjson", sha256: "ab", size: 10, startedAt: Fixture.at(-1), completedAt: nil,
            counts: ImportCounts(read: 2200, imported: 2200))
        _ = reduce(&state, .importsLoaded(sources: [source], rejected: []))
        let row = try #require(renderedLines(state).first { $0.contains("cut.ndjson") })
        #expect(row.contains("unfinished") && row.contains("2,200"), "\(row)")
    }

    @Test("a customer list not read yet (the ledger unavailable) gives no count, which would read as none")
    func customersUnread() throws {
        var state = Fixture.state(width: 80, height: 24, screen: .customers)
        state.customerPage = CustomerPage(rows: [], next: nil, total: 0)
        state.unavailable = "cannot reach the PostgreSQL ledger: no server is listening there"
        let lines = renderedLines(state)
        #expect(lines.contains { $0.hasPrefix("─ Customers  sorted by") } && !lines.contains { $0.contains("0 customers") }, "\(lines)")
        state.unavailable = nil
        #expect(renderedLines(state).contains { $0.hasPrefix("─ 0 customers  sorted by") })
    }

    @Test("a flag queue not read yet (the ledger unavailable) gives no count, not '0 shown of 988'")
    func queueUnread() throws {
        var state = Fixture.state(width: 120, height: 30, screen: .refunds)
        state.flags = []
        state.flagTotal = 988
        state.unavailable = "cannot reach the PostgreSQL ledger: no server is listening there"
        let lines = renderedLines(state)
        #expect(lines.contains { $0.hasPrefix("─ Refund flags: open ─") } && !lines.contains { $0.contains("shown") }, "\(lines)")
        state.unavailable = nil
        #expect(renderedLines(state).contains { $0.hasPrefix("─ Refund flags: open  0 shown of 988") }, "\(renderedLines(state))")
    }

    @Test("Imports opened during an outage says it was not read (not 'none'), and the retrying line says since when")
    func importsUnread() throws {
        var state = Fixture.state(width: 200, height: 40, screen: .imports)
        (state.sources, state.rejected) = ([], [])
        _ = reduce(&state, .failed("cannot reach the PostgreSQL ledger: no server is listening there", unavailable: true))
        #expect(state.unavailableSince == state.now)
        let lines = renderedLines(state)
        #expect(!lines.contains { $0.contains("none: every record was imported") }, "\(lines)")
        #expect(lines.filter { $0.contains("the ledger is unavailable: this screen is read again when it answers") }.count == 2, "\(lines)")
        // No counts for lists not read (the Overview's, read before, are of then).
        #expect(lines.contains { $0.hasPrefix("─ Sources (newest first)") } && lines.contains { $0.hasPrefix("─ Rejected records; Enter") }, "\(lines)")
        let since = String(Format.minute(state.now).suffix(5))
        #expect(
            lines.contains {
                $0.hasPrefix("ledger unavailable, retrying: cannot reach the PostgreSQL ledger: no server is listening there (the screen is as read before \(since))")
            },
            "\(lines)")
        _ = reduce(&state, .recovered(now: nil))
        #expect(state.unavailableSince == nil)
        #expect(renderedLines(state).contains { $0.contains("none: every record was imported or a duplicate") })
    }

    @Test("during an outage each screen says when it was read: the Overview read at the start is not as of the queue read since")
    func outageSaysWhenRead() throws {
        var state = Fixture.state(width: 200, height: 30, screen: .overview)
        _ = reduce(&state, .overviewLoaded(try #require(state.overview)))
        let start = String(Format.minute(state.now).suffix(5))
        _ = reduce(&state, .clockAdvanced(state.now.adding(milliseconds: 7 * 60_000)))
        _ = reduce(&state, .key(.char("5")))
        _ = reduce(&state, .flagsLoaded(Fixture.flags, next: nil, append: false))
        let later = String(Format.minute(state.now).suffix(5))
        #expect(start != later)
        _ = reduce(&state, .failed("cannot reach the PostgreSQL ledger: no server is listening there", unavailable: true))
        #expect(renderedLines(state).contains { $0.contains("(the screen is as read at \(later))") }, "\(renderedLines(state).joined(separator: "\n"))")
        _ = reduce(&state, .key(.char("1")))
        #expect(renderedLines(state).contains { $0.contains("(the screen is as read at \(start))") }, "\(renderedLines(state).joined(separator: "\n"))")
    }

    @Test("a screen whose read failed (a timeout behind a lock) says it was not read, not that the ledger holds nothing; a read that answers ends it")
    func readFailedNotEmpty() throws {
        let timeout = "the PostgreSQL ledger at postgres://boss@/ledger did not answer within 15 s (read timeout)"
        // The queue, never read: not "no flags open here".
        var state = Fixture.state(width: 120, height: 30, screen: .refunds)
        state.flags = []
        _ = reduce(&state, .readFailed(timeout))
        var lines = renderedLines(state)
        #expect(lines.contains { $0.contains("not read: \(timeout)") }, "\(lines.joined(separator: "\n"))")
        #expect(!lines.contains { $0.contains("no flags") } && !lines.contains { $0.contains(" 0 shown") }, "\(lines.joined(separator: "\n"))")
        // Imports, never read: not "nothing imported yet", and no count from the Overview over it.
        state.screen = .imports
        (state.sources, state.rejected) = ([], [])
        lines = renderedLines(state)
        #expect(lines.filter { $0.contains("not read: ") }.count == 2 && !lines.contains { $0.contains("nothing imported yet") }, "\(lines.joined(separator: "\n"))")
        #expect(lines.contains { $0.hasPrefix("─ Sources (newest first)") }, "\(lines.joined(separator: "\n"))")
        // Read again and answered: the lists say what they hold, and the failure's line goes with it.
        #expect(state.message?.text == timeout)
        _ = reduce(&state, .importsLoaded(sources: [], rejected: []))
        lines = renderedLines(state)
        #expect(lines.contains { $0.contains("nothing imported yet") } && state.message == nil && state.readFailed == nil, "\(lines.joined(separator: "\n"))")
        // Another message said since stays.
        _ = reduce(&state, .readFailed(timeout))
        state.message = StatusMessage("1 flag acknowledged")
        _ = reduce(&state, .importsLoaded(sources: [], rejected: []))
        #expect(state.message?.text == "1 flag acknowledged")
    }

    @Test("the overview's count past deadline is the ledger's count, not what the newest requests in its list hold")
    func pastDeadlineCounted() throws {
        var state = Fixture.state(width: 120, height: 40, screen: .overview)
        state.overview?.consumptionPastDeadline = 317
        #expect(renderedLines(state).contains { $0.contains("317 past deadline, in the queue (5)") }, "\(renderedLines(state))")
    }

    @Test("the flag queue as of an instant before a flag was raised: no age, no deadline (not a negative age)")
    func queueBeforeFlag() throws {
        var state = Fixture.state(width: 80, height: 24, screen: .refunds)
        state.asOf = Fixture.at(-1)
        let row = try #require(renderedLines(state).first { $0.contains("consumption-req") })
        #expect(!row.contains("-1h") && row.trimmingCharacters(in: .whitespaces).hasSuffix("EUR    -"), "\(row)")
    }

    @Test("the customer's net says what it leaves out: transactions without a price, or that no price is known")
    func netSaysWhatIsMissing() throws {
        func header(_ transactions: (inout [Transaction]) -> Void) throws -> String {
            var state = Fixture.state(width: 120, height: 40, screen: .customer)
            var detail = try #require(state.customer)
            transactions(&detail.records.transactions)
            state.customer = nil
            _ = reduce(&state, .customerLoaded(detail))
            return try #require(renderedLines(state).first { $0.contains(" net ") })
        }
        #expect(try header { $0[1].price = nil }.contains("net 29.97 USD + 1 unpriced"))
        #expect(try header { for i in $0.indices { $0[i].price = nil } }.contains("net unknown (no prices in the data)"))
        // Before the first purchase (time travel), nothing was spent: not "unknown".
        var state = Fixture.state(width: 120, height: 40, screen: .customer)
        let first = try #require(state.customer?.records.transactions.compactMap(\.purchaseDate).min())
        _ = reduce(&state, .instantParsed(first.adding(milliseconds: -1)))
        let before = try #require(renderedLines(state).first { $0.contains(" net ") })
        #expect(before.contains("0 txs  0 refunded  net none"), "\(before)")
    }

    @Test("a source whose counts do not add up to what was read says so in its sum column")
    func sourceSum() throws {
        var state = Fixture.state(width: 80, height: 24, screen: .imports)
        state.sources.append(
            SourceSummary(
                id: 2, path: "exports/2025-03.ndjson", sha256: "cd", size: 10, startedAt: Fixture.at(-1), completedAt: Fixture.at(-1),
                counts: ImportCounts(read: 10, imported: 8, duplicate: 1, rejected: 0)))
        let lines = renderedLines(state)
        #expect(try #require(lines.first { $0.hasPrefix("exports/2025-02") }).trimmingCharacters(in: .whitespaces).hasSuffix(" ok"))
        #expect(try #require(lines.first { $0.hasPrefix("exports/2025-03") }).trimmingCharacters(in: .whitespaces).hasSuffix(" bad"))
    }

    @Test("the overview under time travel says which figures moved to the instant and which are the ledger's now")
    func overviewAsOf() throws {
        var state = Fixture.state(width: 80, height: 24, screen: .overview)
        var buffer = ScreenBuffer(width: 0, height: 0)
        render(state, theme: .builtin, into: &buffer)
        #expect(buffer.line(4).trimmingCharacters(in: .whitespaces).isEmpty)
        state.asOf = Fixture.at(-30)
        render(state, theme: .builtin, into: &buffer)
        #expect(buffer.line(4).hasPrefix(" refunds as of 2025-01-30; counts and flags are the ledger's now"), "\(buffer.line(4))")
    }

    @Test("the transaction's selected field shows whole on the last line; a long source keeps its file, record and place")
    func selectedFieldLine() throws {
        var t = Fixture.records.transactions[4]
        let directory = String(repeating: "/exports/by-month", count: 5)
        t.sources = [Provenance(path: directory + "/notifications-v2.ndjson", index: 20, location: "data.signedTransactionInfo")]
        var state = transactionScreen(t, width: 80, height: 24)
        _ = reduce(&state, .key(.char("G")))
        var buffer = ScreenBuffer(width: 0, height: 0)
        render(state, theme: .builtin, into: &buffer)
        let line = buffer.line(21).trimmingCharacters(in: .whitespaces)
        #expect(line.hasPrefix("…") && line.hasSuffix("/notifications-v2.ndjson#20 data.signedTransactionInfo"), "\(line)")
        #expect(DisplayWidth.of(line) == 78)
        // Its row in the table keeps the end too: sources differ by record and place, not by directory.
        let row = try #require((0..<buffer.height).map(buffer.line).first { $0.hasPrefix("source[0]") })
        #expect(row.trimmingCharacters(in: .whitespaces).hasSuffix("#20 data.signedTransactionInfo"), "\(row)")
        #expect(row.dropFirst(29).hasPrefix("…"), "\(row)")
    }

    @Test("the selected flag's detail shows whole on the last line at 80 columns, its instant as the screen's, its long V2 id after it")
    func selectedFlagLine() throws {
        var state = Fixture.state(width: 80, height: 24, screen: .refunds)
        let id = "consumption-request:a7d2e135-75aa-4969-b5d4-69ad5588fd02"
        let detail = "refund requested; send consumption data by 2025-07-01T02:00:00Z"
        let flag = RefundFlag(
            id: id, rule: "consumption-request", severity: .high, customerId: 5, transactionId: "8001", productId: "coins.500",
            amount: nil, currency: nil, at: Fixture.now, detail: detail)
        _ = reduce(&state, .flagsLoaded([flag], next: nil, append: false))
        var buffer = ScreenBuffer(width: 0, height: 0)
        render(state, theme: .builtin, into: &buffer)
        let line = buffer.line(21).trimmingCharacters(in: .whitespaces)
        #expect(line.hasPrefix("refund requested; send consumption data by 2025-07-01 02:00  id consumption-"), "\(line)")
    }

    @Test("a sandbox spike or consumption request says sbx on the overview of every environment, not on one environment's")
    func sandboxMarked() throws {
        var state = Fixture.state(width: 80, height: 24, screen: .overview)
        let production = try #require(state.overview?.spikes.first)
        var sandbox = production
        sandbox.id += ":sandbox"
        sandbox.environment = .sandbox
        state.overview?.spikes = [production, sandbox]
        var request = try #require(state.overview?.consumptionRequests.first)
        request.environment = .sandbox
        request.customerId = 5
        request.productId = "coins.500"
        state.overview?.consumptionRequests = [request]
        var buffer = ScreenBuffer(width: 0, height: 0)
        func lines() -> [String] {
            render(state, theme: .builtin, into: &buffer)
            return (0..<buffer.height).map(buffer.line)
        }
        var shown = lines()
        #expect(shown.contains { $0.hasPrefix(" 2025-02-20 pro.monthly  40 refunds") }, "\(shown)")
        #expect(shown.contains { $0.hasPrefix(" 2025-02-20 pro.monthly sbx  40 refund") }, "\(shown)")
        #expect(shown.contains { $0.contains("left  C5 coins.500 sbx") }, "\(shown)")
        state.environment = .sandbox
        shown = lines()
        #expect(!shown.contains { $0.contains(" sbx") }, "\(shown)")
    }

    @Test("the selected spike alarm's detail shows whole under the lists, with one spike or a full list, only while its pane has focus")
    func selectedSpikeLine() throws {
        var state = Fixture.state(width: 80, height: 24, screen: .overview)
        let detail = "10 refunds on 2025-05-17 against a trailing 28-day mean of 0.36/day"
        state.overview?.spikes[0].detail = detail
        var buffer = ScreenBuffer(width: 0, height: 0)
        func lines() -> [String] {
            render(state, theme: .builtin, into: &buffer)
            return (0..<buffer.height).map(buffer.line)
        }
        // Right under the lists, before the next section's title.
        var shown = lines()
        var row = try #require(shown.firstIndex { $0.hasPrefix("─ Consumption requests") })
        #expect(shown[row - 1].trimmingCharacters(in: .whitespaces) == detail)
        // A busy day: more spikes than the pane holds; the selected one (the last) is described.
        let spike = try #require(state.overview?.spikes.first)
        state.overview?.spikes = (1...12).map { n in
            var s = spike
            s.id += ":\(n)"
            s.detail = "\(n) refunds on 2025-05-17 against a trailing 28-day mean of 0.36/day"
            return s
        }
        _ = reduce(&state, .key(.char("G")))
        shown = lines()
        row = try #require(shown.firstIndex { $0.hasPrefix("─ Consumption requests") })
        #expect(shown[row - 1].trimmingCharacters(in: .whitespaces) == "12 refunds on 2025-05-17 against a trailing 28-day mean of 0.36/day")
        // The severities pane focused: Enter there opens every product's queue, so no spike is described.
        _ = reduce(&state, .key(.tab))
        shown = lines()
        #expect(!shown.contains { $0.contains("refunds on 2025-05-17 against") })
    }

    @Test("a rejected record's raw view says where it came from and why, then scrolls through its bytes; other keys close it")
    func rawViewScrolls() throws {
        var state = Fixture.state(width: 80, height: 24, screen: .imports)
        state.importsPane = 1
        let bytes = Array(String(repeating: "0123456789", count: 300).utf8)  // 3,000 bytes: 42 lines of 72 cells
        _ = reduce(&state, .rawLoaded(id: 9, bytes: bytes))
        var buffer = ScreenBuffer(width: 0, height: 0)
        render(state, theme: .builtin, into: &buffer)
        var lines = (0..<buffer.height).map(buffer.line)
        // The overlay's inside starts at row 3, column 4; 18 rows of it.
        let inside = { (row: Int) in String(lines[row].dropFirst(4).prefix(72)).trimmingCharacters(in: .whitespaces) }
        #expect(inside(3) == "exports/2025-02.ndjson#4")
        #expect(inside(4) == "notANumber: purchase_date_ms \"abc\" is not a number in in_app[2]")
        #expect(inside(6) == String(String(repeating: "0123456789", count: 8).prefix(72)))
        #expect(lines[2].contains("lines 1-18 of 45"), "\(lines[2])")
        #expect(lines[23].contains("scroll"))

        _ = reduce(&state, .key(.char("j")))
        #expect(state.rawView?.top == 1)
        _ = reduce(&state, .key(.char("G")))
        render(state, theme: .builtin, into: &buffer)
        lines = (0..<buffer.height).map(buffer.line)
        #expect(lines[2].contains("lines 28-45 of 45"), "\(lines[2])")
        // The last line holds what is left of the 3,000 bytes: 3,000 - 41 x 72 = 48.
        #expect(inside(20).count == 48)
        _ = reduce(&state, .key(.pageUp))
        #expect(state.rawView?.top == 9)
        _ = reduce(&state, .key(.char("g")))
        #expect(state.rawView?.top == 0)
        _ = reduce(&state, .key(.char("k")))
        #expect(state.rawView?.top == 0)

        // A resize wraps the record again; the first line shown stays within it.
        _ = reduce(&state, .key(.char("G")))
        _ = reduce(&state, .resize(width: 100, height: 30))
        let raw = try #require(state.rawView)
        #expect(raw.lines.count == 3 + 33)  // 3,000 bytes at 92 cells a line
        #expect(raw.top == 36 - 24)

        // `?` says the record's own keys (the screen's help named keys that do something else here), leaving it open
        // where it was.
        _ = reduce(&state, .key(.char("?")))
        #expect(!state.showHelp && state.rawView?.top == 36 - 24)
        #expect(state.message?.text == "this record: j/k, PgDn/PgUp, g/G scroll it; any other key closes it")

        // Any other key closes it without acting on the screen below.
        _ = reduce(&state, .key(.char("a")))
        #expect(state.rawView == nil)
        #expect(state.screen == .imports)

        // A record that fits closes at any key, as its footer says: j too.
        _ = reduce(&state, .rawLoaded(id: 9, bytes: Array("short".utf8)))
        render(state, theme: .builtin, into: &buffer)
        #expect(buffer.line(buffer.height - 1).contains("any key"), "\(buffer.line(buffer.height - 1))")
        _ = reduce(&state, .key(.char("?")))
        #expect(state.rawView != nil && state.message?.text == "this record: any key closes it")
        _ = reduce(&state, .key(.char("j")))
        #expect(state.rawView == nil && state.screen == .imports)
    }

    @Test("the rejected list keeps a record's file name and place, and shows the selected reason whole")
    func rejectedList() throws {
        var state = Fixture.state(width: 80, height: 24, screen: .imports)
        var record = try #require(state.rejected.first)
        record.sourcePath = "/srv/exports/by-month/2025/verify-receipt-responses.ndjson"
        record.message = "purchase_date_ms \"abc\" is not a number in latest_receipt_info[12]"
        state.rejected = [record]
        state.importsPane = 1
        let lines = renderedLines(state)
        let row = try #require(lines.first { $0.contains("notANumber ") })
        #expect(row.hasPrefix("…") && row.contains("-responses.ndjson#4 notANumber"), "\(row)")
        #expect(!row.contains("purchase_date_ms \"abc\" is not a number in latest"), "the reason fits its column?")
        #expect(lines[21].trimmingCharacters(in: .whitespaces) == "notANumber: " + record.message)
    }

    @Test("short entitlement names give the why their room, and its instants read as the screen's do")
    func entitlementColumns() throws {
        var state = Fixture.state(width: 80, height: 24, screen: .customer)
        let active = Fixture.transaction("3001", product: "pro.monthly", purchased: -10, expires: 20, original: "3001")
        let records = CustomerRecords(
            id: 7, identifiers: [CustomerIdentifier(kind: .originalTransactionId, value: "3001")], transactions: [active],
            firstSeen: ["3001": active.purchaseDate!], renewalInfos: [], notifications: [])
        _ = reduce(&state, .customerLoaded(CustomerDetail(records: records, flags: [], log: [])))
        state.screen = .customer
        let lines = renderedLines(state)
        // "group G1" is 8 cells: the state starts at column 10 (it was 20); the why after the widest state shown
        // ("ACTIVE"), at 17 (it was 34, then 24 with a state column as wide as "GRACE PERIOD").
        let row = try #require(lines.first { $0.contains("ACTIVE") })
        // (The product first: the name is the group's, and says nothing of what was bought.)
        #expect(row.hasPrefix(" group G1 ACTIVE pro.monthly: paid through 2025-03-21 08:00"), "\(row)")
        // The coverage strip starts under the state.
        let strip = try #require(lines.first { $0.hasPrefix(" group G1 ") && !$0.contains("ACTIVE") })
        #expect(strip.dropFirst(10).first.map { $0 != " " } == true, "\(strip)")
    }

    @Test("the transaction screen says what a revocation reason and an offer type code mean, beside the code")
    func codedFields() throws {
        var t = Fixture.records.transactions[3]
        t.offerType = .winBack
        let state = transactionScreen(t, width: 100, height: 40)
        let lines = renderedLines(state)
        let reason = try #require(lines.first { $0.hasPrefix("revocationReason ") }).trimmingCharacters(in: .whitespaces)
        #expect(reason.hasSuffix(" 1  (an issue in the app)"), "\(reason)")
        let offer = try #require(lines.first { $0.hasPrefix("offerType ") }).trimmingCharacters(in: .whitespaces)
        #expect(offer.hasSuffix(" 4  (win-back offer)"), "\(offer)")
        // The export keeps Apple's code alone.
        #expect(transactionFields(t).first { $0.key == "revocationReason" }?.value == "1")
    }

    @Test("a yen price has no decimals on the transaction screen and in its export")
    func yenPrice() throws {
        var t = Fixture.records.transactions[3]
        t.price = 1_500_000
        t.currency = "JPY"
        let state = transactionScreen(t, width: 100, height: 40)
        let price = try #require(renderedLines(state).first { $0.hasPrefix("price ") }).trimmingCharacters(in: .whitespaces)
        #expect(price.hasSuffix(" 1500"), "\(price)")
        #expect(transactionFields(t).first { $0.key == "price" }?.value == "1500")
    }

    @Test("the sort arrow stays on a column too narrow for its title and the arrow", arguments: [
        (CustomerSort.refunds, "refund▼"), (CustomerSort.lastActivity, "purchased▼"), (CustomerSort.id, "id▼"),
    ])
    func sortArrowKept(sort: CustomerSort, header: String) throws {
        var state = Fixture.state(width: 80, height: 24, screen: .customers)
        state.customerQuery.sort = sort
        let lines = renderedLines(state)
        let row = try #require(lines.first { $0.hasPrefix("id") })
        #expect(row.contains(header + " "), "\(row)")
    }

    @Test("at 60 columns the customer list drops columns in their order and keeps the one it is sorted by", arguments: [
        (CustomerSort.id, "id▼ identifier access refunds flags"),
        (CustomerSort.lastActivity, "id identif… purchase▼ access refunds flags"),
    ])
    func narrowListDropsColumns(sort: CustomerSort, header: String) throws {
        var state = Fixture.state(width: 60, height: 20, screen: .customers)
        state.customerQuery.sort = sort
        let row = try #require(renderedLines(state).first { $0.hasPrefix("id") })
        #expect(row.split(separator: " ").joined(separator: " ") == header, "\(row)")
        #expect(Column.shown([Column("a", 30), Column("b", 30, drops: 1)], width: 57) == [0, 1], "three cells cut, none dropped")
        #expect(Column.shown([Column("a", 30), Column("b", 30, drops: 1)], width: 56) == [0])
        #expect(Column.shown([Column("a", 30), Column("b", 30)], width: 20) == [0, 1], "only a column that drops leaves")
    }

    @Test("a customer's latest expiry passed at the instant says \"expired\" in words, not by its colour alone")
    func expiryEndedInWords() throws {
        var state = Fixture.state(width: 80, height: 24, screen: .customers)
        func row(_ id: String) throws -> String { try #require(renderedLines(state).first { $0.hasPrefix(id + " ") }) }
        #expect(try row("C43").contains("expired 2024-09-12"))
        #expect(try !row("C42").contains("expired"))
        // Travelled in time, the list's figures (the ledger's now) judge nothing until the engine has: an ellipsis.
        state.asOf = Timestamp.utc(year: 2024, month: 9, day: 1)
        #expect(try !row("C43").contains("expired") && row("C43").hasSuffix("…       -     -"))
        var active = Entitlement(name: "pro", state: .active, reason: "")
        active.expiresDate = Fixture.at(-170)
        state.customerAccess[43] = ListedAccess([active], instant: state.instant, generation: state.customerAccessGeneration)
        #expect(try row("C43").contains("2024-09-12") && !row("C43").contains("expired"))
    }

    @Test("a customer whose latest expiry's access was taken back shows when their standing access ends, or \"revoked\"")
    func expiryOfRevokedAccess() throws {
        var state = Fixture.state(width: 80, height: 24, screen: .customers)
        func row(_ id: String) throws -> String { try #require(renderedLines(state).first { $0.hasPrefix(id + " ") }) }
        // C43 (not the selected row, so its cell has its own colour) bought a year that ends the day after tomorrow.
        state.customerPage.rows[1].latestExpiry = Fixture.at(2)
        state.customerPage.rows[1].liveExpiry = Fixture.at(2)
        #expect(try row("C43").contains("2025-03-03"))
        // It was refunded; an earlier purchase's access stands until tomorrow: that is the date shown.
        state.customerPage.rows[1].liveExpiry = Fixture.at(1)
        #expect(try row("C43").contains("2025-03-02") && !row("C43").contains("2025-03-03"))
        // Nothing else stands: not its date in the colour of access, but "revoked", in its own.
        state.customerPage.rows[1].liveExpiry = nil
        #expect(try row("C43").contains("revoked") && !row("C43").contains("2025-03-03"))
        #expect(try style(of: "revoked", onRowOf: "C43", state) == Theme.builtin.style("entitlement.revoked"))
        state.customerPage.rows[1].liveExpiry = Fixture.at(-5)
        #expect(try row("C43").contains("revoked") && !row("C43").contains("expired"))
        // Exported, the access column says what the list shows.
        state.customerPage.rows[1].liveExpiry = Fixture.at(1)
        let csv = exportCSV(state)
        #expect(csv.contains("open flags,access\n"), "\(csv)")
        let line = try #require(csv.split(separator: "\n").first { $0.hasPrefix("C43,") })
        #expect(line.hasSuffix(",0,0,2025-03-02"), "\(line)")
        state.customerAccess[43] = ListedAccess(
            [Entitlement(name: "pro", state: .billingRetry, reason: "")], instant: state.instant, generation: state.customerAccessGeneration)
        #expect(exportCSV(state).split(separator: "\n").contains { $0.hasPrefix("C43,") && $0.hasSuffix(",billing retry") })
    }

    @Test("once the engine has judged a listed customer, the access column says what their screen says, in its words and colour")
    func listedAccessInWords() throws {
        var state = Fixture.state(width: 80, height: 24, screen: .customers)
        func row(_ id: String) throws -> String { try #require(renderedLines(state).first { $0.hasPrefix(id + " ") }) }
        func judged(_ entitlements: [Entitlement], at instant: Timestamp? = nil) {
            state.customerAccess[43] = ListedAccess(
                entitlements, instant: instant ?? state.instant, generation: state.customerAccessGeneration)
        }
        func e(_ state: EntitlementState, expires: Int64? = nil, grace: Int64? = nil, revoked: Int64? = nil) -> Entitlement {
            var e = Entitlement(name: "pro", state: state, reason: "")
            e.expiresDate = expires.map(Fixture.at)
            e.gracePeriodExpiresDate = grace.map(Fixture.at)
            e.revocationDate = revoked.map(Fixture.at)
            return e
        }
        // C43's figures say its year expired 2024-09-12; the engine knows better.
        for (entitlements, text, role) in [
            ([e(.gracePeriod, expires: -2, grace: 13)], "grace 2025-03-14", "entitlement.grace"),
            ([e(.billingRetry, expires: -20)], "billing retry", "entitlement.retry"),
            ([e(.expired, expires: -170), e(.owned)], "owned", "entitlement.owned"),
            // Owned grants access where a billing retry grants none.
            ([e(.billingRetry, expires: -20), e(.owned)], "owned", "entitlement.owned"),
            ([e(.revoked, expires: 30, revoked: -3)], "revoked 2025-02-26", "entitlement.revoked"),
            ([e(.expired, expires: -170), e(.revoked, expires: -100, revoked: -120)], "revoked 2024-11-01", "entitlement.revoked"),
            ([e(.expired, expires: -170), e(.active, expires: 20)], "2025-03-21", "entitlement.active"),
            ([e(.expired, expires: -170), e(.expired, expires: -40)], "expired 2025-01-20", "ui.text.muted"),
            ([], "-", "ui.text.muted"),
        ] as [([Entitlement], String, String)] {
            judged(entitlements)
            let line = try row("C43")
            #expect(line.hasSuffix(text + "       -     -"), "\(line)")
            if text != "-" { #expect(try style(of: text, onRowOf: "C43", state) == Theme.builtin.style(role), "\(text)") }
        }
        // Judged at another instant (before a time travel): not shown; the figures speak until it is judged again.
        judged([e(.gracePeriod, expires: -2, grace: 13)], at: Fixture.at(-30))
        #expect(try row("C43").contains("expired 2024-09-12"))
        // Judged live a minute before (the clock moved): shown until judged again; under time travel, not.
        state.customerAccess[43] = ListedAccess(
            [e(.gracePeriod, expires: -2, grace: 13)], instant: state.instant.adding(milliseconds: -60_000), live: true,
            generation: state.customerAccessGeneration)
        #expect(try row("C43").contains("grace 2025-03-14"))
        #expect(state.customersNeedingAccess(limit: 8).contains(43), "judged again all the same")
        state.asOf = Fixture.at(-1)
        #expect(try !row("C43").contains("grace"))
        state.asOf = nil
        // A customer that could not be read: the figures speak.
        state.customerAccess[43] = ListedAccess(unreadAt: state.instant, generation: state.customerAccessGeneration)
        #expect(try row("C43").contains("expired 2024-09-12"))
    }

    @Test("the customers whose access is computed: those on screen, the selected first, each once per instant and list read")
    func customersNeedingAccess() throws {
        var state = Fixture.state(width: 80, height: 24, screen: .customers)
        state.customerList.selected = 2
        #expect(state.customersNeedingAccess(limit: 8) == [44, 42, 43])
        #expect(state.customersNeedingAccess(limit: 2) == [44, 42])
        _ = reduce(&state, .customerAccessLoaded([
            42: ListedAccess([], instant: state.instant, generation: state.customerAccessGeneration),
            44: ListedAccess(unreadAt: state.instant, generation: state.customerAccessGeneration),
        ]))
        #expect(state.customersNeedingAccess(limit: 8) == [43])
        // Another instant: all again.
        state.asOf = Fixture.at(-30)
        #expect(state.customersNeedingAccess(limit: 8) == [44, 42, 43])
        state.asOf = nil
        // The list read again (the ledger may have changed): all again, what was known still shown meanwhile.
        _ = reduce(&state, .customersLoaded(state.customerPage, append: false))
        #expect(state.customersNeedingAccess(limit: 8).count == 3 && state.customerAccess[42] != nil)
        // Not on another screen, nor while the ledger is unavailable.
        state.screen = .overview
        #expect(state.customersNeedingAccess(limit: 8).isEmpty)
        state.screen = .customers
        state.unavailable = "gone"
        #expect(state.customersNeedingAccess(limit: 8).isEmpty)
    }

    /// The style of the cell where `text` starts on the row starting with `id` (wide characters taking two cells).
    private func style(of text: String, onRowOf id: String, _ state: AppState) throws -> Style {
        var buffer = ScreenBuffer(width: 0, height: 0)
        render(state, theme: .builtin, into: &buffer)
        let y = try #require((0..<buffer.height).first { buffer.line($0).hasPrefix(id + " ") })
        let cells = buffer.cells[(y * buffer.width)..<((y + 1) * buffer.width)]
        let x = try #require(cells.indices.first { i in text.enumerated().allSatisfy { i + $0 < cells.endIndex && cells[i + $0].text == String($1) } })
        return buffer.cells[x].style
    }

    @Test("an instant travelled to shows its seconds when it has them; an age past 999 days is in years")
    func instantSecondsAndAgeYears() throws {
        var state = Fixture.state(width: 100, height: 24, screen: .customer)
        _ = reduce(&state, .instantParsed(Timestamp(millisecondsSince1970: 1_606_293_030_000)))
        let lines = renderedLines(state)
        #expect(lines[0].contains("as of 2020-11-25 08:30:30"), "\(lines[0])")
        #expect(lines.contains { $0.contains("Entitlements as of 2020-11-25 08:30:30") })
        state.asOf = Timestamp(millisecondsSince1970: 1_606_293_000_000)
        #expect(renderedLines(state)[0].contains("as of 2020-11-25 08:30 "), "on the minute: the minute alone")
        #expect(Format.span(1_130 * 86_400_000) == "3y" && Format.span(999 * 86_400_000) == "999d")
    }

    @Test("at 80 and 100 columns the help box shows every description of a screen's keys whole", arguments: ScreenID.allCases)
    func helpDescriptionsWhole(_ screen: ScreenID) throws {
        for (width, height) in [(80, 24), (100, 30)] {
            var state = Fixture.state(width: width, height: height, screen: screen)
            _ = reduce(&state, .key(.char("?")))
            #expect(state.showHelp)
            var text = renderedLines(state).joined(separator: "\n")
            // (What does not fit in the box's height scrolls into view with j.)
            for _ in 0..<helpLayout(state).bindings.count {
                _ = reduce(&state, .key(.char("j")))
                text += renderedLines(state).joined(separator: "\n")
            }
            for binding in helpLayout(state).bindings {
                #expect(text.contains(binding.help), "\(screen) at \(width)x\(height): \(binding.help) cut:\n\(text)")
            }
            #expect(
                helpLayout(state).bindings.count == state.keymap.bindings(on: screen, readOnly: false).count - 2, "all but the wheel's")
        }
    }

    @Test("an acknowledged consumption request keeps its time left, on the overview and in the queue")
    func acknowledgedRequestKeepsItsClock() throws {
        var state = Fixture.state(width: 100, height: 30, screen: .overview)
        let request = RefundFlag(
            id: "consumption-request:u1", rule: "consumption-request", severity: .high, status: .acknowledged, customerId: 5,
            transactionId: "8001", productId: "coins.500", amount: nil, currency: nil, at: Fixture.now.adding(milliseconds: -3_600_000),
            detail: "refund requested")
        state.overview?.consumptionRequests = [request]
        let lines = renderedLines(state)
        #expect(lines.contains { $0.contains("11h left  C5 coins.500 (ack)") }, "\(lines)")
        #expect(!lines.contains { $0.contains("none pending") })
        #expect(dueCell(request, at: Fixture.now).text == "11h")
    }

    @Test("the queue's footer offers the triage keys its flags can take: o on resolved flags, a and r on open ones")
    func queueFooterByStatus() throws {
        var state = Fixture.state(width: 120, height: 30, screen: .refunds)
        let footer = { renderedLines(state).last ?? "" }
        #expect(footer().contains("a ack") && footer().contains("r resolve") && !footer().contains("o reopen"), "\(footer())")
        state.flagStatus = .resolved
        #expect(!footer().contains("a ack") && !footer().contains("r resolve") && footer().contains("o reopen"), "\(footer())")
        state.flagStatus = nil
        #expect(footer().contains("a ack") && footer().contains("o reopen"), "\(footer())")
    }

    @Test("what the status line says while a prompt is open shows on the line above it: `/` with nothing to filter says it finds a customer")
    func messageOverPrompt() throws {
        var state = Fixture.state(width: 100, height: 24, screen: .overview)
        _ = reduce(&state, .key(.char("/")))
        let lines = renderedLines(state)
        #expect(lines[21].contains("nothing to filter on Overview: / finds a customer here (Esc cancels)"), "\(lines.joined(separator: "\n"))")
        #expect(lines[22].hasPrefix(":customer"), "\(lines[22])")
        // Typed into, the prompt keeps it; closed, the line goes with it.
        _ = reduce(&state, .key(.char("C")))
        #expect(renderedLines(state)[21].contains("nothing to filter on Overview"))
        _ = reduce(&state, .key(.escape))
        #expect(!renderedLines(state).joined().contains("nothing to filter"))
    }

    @Test("the customer list's title says what A and F narrowed it to")
    func listTitleSaysItsNarrowing() throws {
        var state = Fixture.state(width: 100, height: 24, screen: .customers)
        state.customerQuery.activeAt = Timestamp(millisecondsSince1970: 1_606_293_030_000)
        state.customerQuery.withOpenFlags = true
        let title = try #require(renderedLines(state).first { $0.contains("sorted by") })
        #expect(title.contains("subscribed at 2020-11-25 08:30:30  with open flags"), "\(title)")
    }

    @Test("instants at the ends of Int64 draw without trapping (the screen fuzz harness's finding)")
    func extremeInstants() throws {
        var state = Fixture.state(width: 80, height: 24, screen: .overview)
        // The refunds series of an instant near the end of time: its first shown day is pinned, not overflowed.
        state.overview?.refunds90 = RefundSeries(firstDay: Timestamp(millisecondsSince1970: .max - 1_000), counts: Array(repeating: 1, count: 90))
        var buffer = ScreenBuffer(width: 0, height: 0)
        render(state, theme: .builtin, into: &buffer)
        #expect(buffer.text.contains("Refunds per day"))
        // A customer whose last period ended just before an instant near the end of time: the coverage strip's
        // margin past it is pinned too.
        let last = Timestamp(millisecondsSince1970: .max - 86_400_000)
        var t = Fixture.transaction("4001", product: "pro.monthly", purchased: 0, expires: nil)
        t.purchaseDate = Timestamp(millisecondsSince1970: .max - 3 * 86_400_000)
        t.expiresDate = last
        let records = CustomerRecords(
            id: 8, identifiers: [], transactions: [t], firstSeen: ["4001": t.purchaseDate!], renewalInfos: [], notifications: [])
        state.now = Timestamp(millisecondsSince1970: .max - 1)
        _ = reduce(&state, .customerLoaded(CustomerDetail(records: records, flags: [], log: [])))
        state.screen = .customer
        render(state, theme: .builtin, into: &buffer)
        #expect(buffer.text.contains("C8"))
        // A period that ended at the start of time and a grace end at its end: their distance is pinned, not trapped.
        var early = Fixture.transaction("4002", product: "pro.monthly", purchased: 0, expires: nil)
        early.purchaseDate = Timestamp(millisecondsSince1970: .min)
        early.expiresDate = Timestamp(millisecondsSince1970: .min + 1_000)
        var grace = RenewalInfo()
        grace.originalTransactionId = early.originalTransactionId
        grace.gracePeriodExpiresDate = Timestamp(millisecondsSince1970: .max)
        let far = CustomerRecords(
            id: 9, identifiers: [], transactions: [early], firstSeen: ["4002": early.purchaseDate!],
            renewalInfos: [(info: grace, seenAt: Timestamp(millisecondsSince1970: .min))], notifications: [])
        _ = reduce(&state, .customerLoaded(CustomerDetail(records: far, flags: [], log: [])))
        render(state, theme: .builtin, into: &buffer)
        #expect(buffer.text.contains("C9"))
    }

    @Test("the hardware cursor sits on the selected row")
    func cursor() {
        var state = Fixture.state(screen: .customers)
        _ = reduce(&state, .key(.char("j")))
        var buffer = ScreenBuffer(width: 0, height: 0)
        render(state, theme: .builtin, into: &buffer)
        #expect(buffer.cursor?.x == 0)
        #expect(buffer.cursor.map { buffer.line($0.y).hasPrefix("C43") } == true)
    }

    @Test("a prompt wider than the line scrolls to keep its cursor in view, an ellipsis on a side with more, the terminal cursor on it")
    func promptScrollsToCursor() throws {
        var state = Fixture.state(width: 60, height: 24, screen: .customers)
        let digits = String(repeating: "0123456789", count: 10)
        var prompt = Prompt(kind: .filter)
        for c in digits { _ = prompt.insert(c) }
        var buffer = ScreenBuffer(width: 0, height: 0)
        func line(_ cursor: Int) -> (text: String, x: Int?) {
            prompt.move(to: cursor)
            state.prompt = prompt
            render(state, theme: .builtin, into: &buffer)
            var text = buffer.line(22)
            while text.last == " " { text.removeLast() }
            return (text, buffer.cursor?.y == 22 ? buffer.cursor?.x : nil)
        }
        let chars = Array(digits)
        // At the end: the start is cut, the last character typed shows, the cursor after it.
        var shown = line(100)
        #expect(shown.text == "/…" + String(chars[44...]) && shown.x == 58, "\(shown)")
        // At the start: the end is cut.
        shown = line(0)
        #expect(shown.text == "/" + String(chars[..<57]) + "…" && shown.x == 1, "\(shown)")
        // In the middle of a long text: both are, the cursor on the character it stands before.
        shown = line(70)
        #expect(shown.text == "/…" + String(chars[14..<71]) + "…" && shown.x == 58, "\(shown)")
        #expect(buffer[58, 22].text == "0" && buffer[58, 22].style == Theme.builtin.style("ui.prompt.cursor"))
        // Text that fits is drawn whole, the cursor where it is.
        prompt = Prompt(kind: .filter)
        for c in "C42" { _ = prompt.insert(c) }
        shown = line(1)
        #expect(shown.text == "/C42" && shown.x == 2)

        // Wide characters are measured as drawn: the cursor lands after the last one.
        prompt = Prompt(kind: .filter)
        for c in String(repeating: "返金", count: 40) { _ = prompt.insert(c) }
        shown = line(80)
        #expect(shown.x == 58 && shown.text.hasPrefix("/…"), "\(shown)")
    }

    /// The screen `state` draws, line by line.
    /// The Transaction screen showing `t`, over the fixture's state.
    private func transactionScreen(_ t: Transaction, width: Int, height: Int) -> AppState {
        var state = Fixture.state(width: width, height: height, screen: .transaction)
        _ = reduce(&state, .transactionLoaded(t, id: t.transactionId))
        state.screen = .transaction
        return state
    }

    private func renderedLines(_ state: AppState) -> [String] {
        var buffer = ScreenBuffer(width: 0, height: 0)
        render(state, theme: .builtin, into: &buffer)
        return (0..<buffer.height).map(buffer.line)
    }

    private func match(_ state: AppState, name: String) throws {
        var buffer = ScreenBuffer(width: 0, height: 0)
        render(state, theme: .builtin, into: &buffer)
        let text = buffer.text + "\n"
        let file = Self.directory.appendingPathComponent(name + ".txt")
        if ProcessInfo.processInfo.environment["RECORD_SNAPSHOTS"] == "1" || !FileManager.default.fileExists(atPath: file.path) {
            try FileManager.default.createDirectory(at: Self.directory, withIntermediateDirectories: true)
            try Data(text.utf8).write(to: file)
            if ProcessInfo.processInfo.environment["CI"] == "true" {
                Issue.record("snapshot \(name) was missing and has been recorded; commit it")
            }
            return
        }
        let expected = try String(contentsOf: file, encoding: .utf8)
        #expect(text == expected, "snapshot \(name) differs; RECORD_SNAPSHOTS=1 records it anew:\n\(text)")
    }
}
