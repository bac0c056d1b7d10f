import Foundation
import Ledger
import LedgerSQLite
import ReceiptModel
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The real binary under tmux, as an operator uses it: ids typed at `:customer`, time travel, triage
/// written to the append-only log, themes, sizes, no colour, and hostile data that must never reach the
/// terminal as control sequences.
@Suite("Dashboard end to end (tmux)", .serialized, .ownThreads)
struct DashboardEndToEndTests {
    /// A small ledger: customer C1 (original 5000, token, web orders, external acct-77) with a renewal refunded
    /// an hour after purchase (quick-refund + app-issue flags), and a sandbox purchase whose product id holds
    /// `ESC [2J` and an OSC 52 sequence.
    /// The triage log of a SQLite ledger the dashboard has quit (one flag's, or all of it), read as it stands.
    static func triageLog(ofLedgerAt path: String, flagId: String? = nil) async throws -> [TriageEntry] {
        let ledger = try await SQLLedger.open(SQLiteDatabase.open(path: path), now: Timestamp(millisecondsSince1970: 0), readOnly: true)
        let log = try await ledger.triageLog(flagId: flagId, customerId: nil)
        try await ledger.close()
        return log
    }

    /// The dashboard over `makeLedger()`'s ledger as ana, showing the refund queue.
    static func openQueue(_ ledger: (directory: URL, url: String)) throws -> TmuxSession {
        let tmux = try TmuxSession(arguments: ["--ledger", ledger.url, "--operator", "ana"])
        tmux.waitFor(text: "customers")
        try tmux.keys("5")
        tmux.waitFor(text: "quick-refund")
        return tmux
    }

    static func makeLedger() throws -> (directory: URL, url: String) {
        // (Under the test process's scratch directory, removed when it exits: not every caller removes its own.)
        let directory = cliScratchDirectory.appendingPathComponent("rd-e2e-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let lines = [
            #"{"transactionId":"5001","originalTransactionId":"5000","webOrderLineItemId":"9001","bundleId":"com.example.app","productId":"pro.monthly","subscriptionGroupIdentifier":"G1","purchaseDate":1740816000000,"originalPurchaseDate":1740816000000,"expiresDate":1743494400000,"quantity":1,"type":"Auto-Renewable Subscription","appAccountToken":"aaaaaaaa-0000-4000-8000-000000000001","inAppOwnershipType":"PURCHASED","signedDate":1740816000000,"environment":"Production","transactionReason":"PURCHASE","storefront":"USA","price":9990,"currency":"USD"}"#,
            #"{"transactionId":"5002","originalTransactionId":"5000","webOrderLineItemId":"9002","bundleId":"com.example.app","productId":"pro.monthly","subscriptionGroupIdentifier":"G1","purchaseDate":1743494400000,"originalPurchaseDate":1740816000000,"expiresDate":1746086400000,"quantity":1,"type":"Auto-Renewable Subscription","appAccountToken":"aaaaaaaa-0000-4000-8000-000000000001","inAppOwnershipType":"PURCHASED","signedDate":1743494400000,"environment":"Production","transactionReason":"RENEWAL","storefront":"USA","price":9990,"currency":"USD","revocationDate":1743498000000,"revocationReason":1}"#,
            #"{"transactionId":"6001","originalTransactionId":"6001","bundleId":"com.example.app","productId":"evil\u001b[2J\u001b]52;c;aGVsbG8=\u0007","purchaseDate":1740900000000,"quantity":1,"type":"Non-Consumable","inAppOwnershipType":"PURCHASED","signedDate":1740900000000,"environment":"Sandbox","storefront":"FRA","price":4990,"currency":"EUR"}"#,
        ]
        let data = directory.appendingPathComponent("e2e.ndjson")
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: data)
        let customers = directory.appendingPathComponent("customers.csv")
        try Data("customer_id,kind,value\nacct-77,originalTransactionId,5000\n".utf8).write(to: customers)
        let url = "sqlite:" + directory.appendingPathComponent("ledger.sqlite").path
        let imported = try Binary.run(["import", "--no-verify", "--ledger", url, "--customers", customers.path, data.path])
        #expect(imported.status == 0, "\(imported.stderr)")
        let linked = try Binary.run(["lookup", "acct-77", "--ledger", url])
        #expect(linked.status == 0, "\(linked.stderr)")
        return (directory, url)
    }

    static let pastEndOfData = "2025-06-01"

    /// The colour parameters (30-49, 90-107) of every SGR sequence (`ESC [ ... m`) in `bytes`.
    static func colourParameters(_ bytes: [UInt8]) -> [Int] {
        var found: [Int] = []
        var index = 0
        while index + 1 < bytes.count {
            guard bytes[index] == 0x1B, bytes[index + 1] == UInt8(ascii: "[") else {
                index += 1
                continue
            }
            var end = index + 2
            while end < bytes.count, !(0x40...0x7E).contains(bytes[end]) { end += 1 }
            if end < bytes.count, bytes[end] == UInt8(ascii: "m") {
                let parameters = String(decoding: bytes[(index + 2)..<end], as: UTF8.self).split(separator: ";").compactMap { Int($0) }
                found += parameters.filter { (30...49).contains($0) || (90...107).contains($0) }
            }
            index = end
        }
        return found
    }

    @Test(":customer opens the customer by every id kind")
    func customerByEveryIdKind() throws {
        guard TmuxSession.available() else { return }
        let ledger = try Self.makeLedger()
        defer { try? FileManager.default.removeItem(at: ledger.directory) }
        let tmux = try TmuxSession(arguments: ["--ledger", ledger.url])
        defer { tmux.kill() }
        tmux.waitFor(text: "customers")
        for id in ["5002", "5000", "9002", "aaaaaaaa-0000-4000-8000-000000000001", "acct-77", "C1"] {
            try tmux.type(":customer \(id)")
            try tmux.keys("Enter")
            let screen = tmux.waitFor("customer C1 opened by \(id)") { $0.contains("› C1") && $0.contains("external acct-77") }
            #expect(screen.contains("original 5000"))
            try tmux.keys("Escape")
            tmux.waitFor("back from C1") { !$0.contains("› C1") }
        }
        // Pasted as a message had it: found, and the status line says by which id.
        try tmux.type(":customer #5002,")
        try tmux.keys("Enter")
        tmux.waitFor(text: "found by 5002 (pasted as #5002,)")
        try tmux.keys("Escape")
        tmux.waitFor("back from C1") { !$0.contains("› C1") }
        try tmux.type(":customer nobody")
        try tmux.keys("Enter")
        tmux.waitFor(text: "no customer matches nobody")
        try tmux.keys("Q")
        #expect(tmux.exitStatus() == 0)
    }

    @Test("the timeline tells a refund from a renewal turned off; t travels back to before the refund")
    func timelineAndTimeTravel() throws {
        guard TmuxSession.available() else { return }
        let ledger = try Self.makeLedger()
        defer { try? FileManager.default.removeItem(at: ledger.directory) }
        let tmux = try TmuxSession(arguments: ["--ledger", ledger.url], width: 120, height: 40)
        defer { tmux.kill() }
        tmux.waitFor(text: "customers")
        try tmux.type(":customer 5000")
        try tmux.keys("Enter")
        // (Its timeline drawn: the breadcrumb alone can be on screen over the overview while the customer is read.)
        var screen = tmux.waitFor("C1 with its timeline") { $0.contains("› C1") && $0.contains("09:00 refunded") }
        #expect(screen.contains("REVOKED"))
        #expect(screen.contains("refunded"))
        #expect(!screen.contains("autoRenewDisabled"))
        // Move through the timeline: the hardware cursor sits on the selected row and follows each key.
        let lines = screen.split(separator: "\n", omittingEmptySubsequences: false)
        func row(_ prefix: String) -> String {
            lines.firstIndex { $0.hasPrefix(prefix) }.map(String.init) ?? "no row starting \(prefix)"
        }
        let subscribed = row("2025-03-01 08:00 subscribed")
        let renewed = row("2025-04-01 08:00 renewed")
        let refunded = row("2025-04-01 09:00 refunded")
        #expect(Set([subscribed, renewed, refunded]).count == 3)
        tmux.waitFor(format: "#{cursor_y}", toBe: refunded)
        for (key, expected) in [("k", renewed), ("k", subscribed), ("j", renewed)] {
            try tmux.keys(key)
            tmux.waitFor(format: "#{cursor_y}", toBe: expected)
        }
        try tmux.keys("t")
        tmux.waitFor(text: "as of (")
        try tmux.type("2025-03-15")
        try tmux.keys("Enter")
        screen = tmux.waitFor(text: "as of 2025-03-15")
        #expect(screen.contains("ACTIVE"))
        #expect(!screen.contains("REVOKED"))
        #expect(!screen.contains("Apple refunded"))
        try tmux.keys("t")
        tmux.waitFor(text: "as of (")
        try tmux.keys("C-u")
        try tmux.type("now")
        try tmux.keys("Enter")
        tmux.waitFor(text: "REVOKED")
        // Ctrl-C: the terminal is given back (the alternate screen left), then the process dies of SIGINT.
        try tmux.keys("C-c")
        #expect(tmux.exitStatus() == 130)
        tmux.outputThroughExit()
    }

    @Test("with no ledger configured it opens the demo: DEMO badge, the data's own now, the README's story ids, a cache of its own")
    func demo() async throws {
        guard TmuxSession.available() else { return }
        let tmux = try TmuxSession(arguments: [], width: 120, height: 36)
        defer { tmux.kill() }
        // The first run builds the demo ledger (SampleData/ found beside the binary) into XDG_CACHE_HOME.
        let overview = tmux.waitFor("the demo's overview", seconds: 180) { $0.contains("DEMO") && $0.contains("customers") }
        #expect(overview.contains("now 2025-07-01 00:00"))
        // Every story of SampleData/README.md, by the id it names, shows what the README says.
        let stories: [(id: String, shows: [String])] = [
            ("150000000000001", ["BILLING RETRY"]),
            ("150000000012001", ["GRACE PERIOD", "2025-07-14"]),
            ("150000000002001", ["4 refunded", "consumptionRequest", "Apple refunded it"]),
            ("150000000004001", ["REVOKED", "family-revoke"]),
            ("150000000014001", ["filters.pack", "refunded"]),
            ("150000000006001", ["ACTIVE", "pro.plus.monthly"]),
            ("150000000008001", ["consumption-request"]),
            ("150000000010001", ["OWNED", "refundReversed", "access reinstated"]),
        ]
        for story in stories {
            try tmux.type(":customer \(story.id)")
            try tmux.keys("Enter")
            tmux.waitFor("story \(story.id): \(story.shows)") { screen in
                screen.contains("original \(story.id)") && story.shows.allSatisfy { screen.contains($0) }
            }
            try tmux.keys("Escape")
            tmux.waitFor("back from \(story.id)") { !$0.contains("original \(story.id)") }
        }
        // The reversed refund's transaction: its revocation fields, as Apple sent them, say the refund was reversed.
        try tmux.type(":customer 150000000010001")
        try tmux.keys("Enter")
        tmux.waitFor(text: "original 150000000010001")
        // (Tab goes round the panes: entitlements, timeline, transactions, flags.)
        for _ in 0..<4 where !tmux.screen().contains("Transactions (newest first)") {
            let before = tmux.screen()
            try tmux.keys("Tab")
            tmux.waitFor("the next pane") { $0 != before }
        }
        tmux.waitFor(text: "Transactions (newest first)")
        try tmux.keys("Enter")
        tmux.waitFor(text: "the refund was reversed: access restored")
        // Its export keeps Apple's values, and says the refund was reversed on a row after them (alone, they read as a
        // refund that stands).
        let exported = tmux.directory.appendingPathComponent("reversed.csv").path
        try tmux.type(":export csv \(exported)")
        try tmux.keys("Enter")
        tmux.waitFor(text: "reversed.csv")
        let csv = try String(contentsOfFile: exported, encoding: .utf8)
        let rows = csv.split(separator: "\n")
        let date = try #require(rows.firstIndex { $0.hasPrefix("revocationDate,") }, "\(csv)")
        #expect(rows[date + 1] == "revocationReversed,the refund was reversed: access restored", "\(csv)")
        try tmux.keys("Escape")
        tmux.waitFor(text: "original 150000000010001")
        try tmux.keys("Escape")
        // The spike is in the refund queue.
        try tmux.keys("5")
        try tmux.type("/refund-spike")
        try tmux.keys("Enter")
        // A flag row, not the title (which repeats the filter text whether or not a flag matches).
        tmux.waitFor("a refund-spike flag row") { screen in
            screen.split(separator: "\n").contains { $0.contains("refund-spike") && !$0.contains("filter \"") }
        }
        // Triage in the demo is kept in its cache, until --reset-demo builds it afresh.
        try tmux.keys("a")
        tmux.waitFor(text: "1 flag acknowledged")
        try tmux.keys("Q")
        #expect(tmux.exitStatus() == 0)
        let fm = FileManager.default
        let cache = tmux.directory.appendingPathComponent("cache/receiptdesk").path
        let demos = ((try? fm.contentsOfDirectory(atPath: cache)) ?? []).filter { $0.hasPrefix("demo-") && $0.hasSuffix(".sqlite") }
        #expect(demos.count == 1)
        #expect(!fm.fileExists(atPath: tmux.directory.appendingPathComponent("data/receiptdesk").path), "the demo wrote a user ledger")
        let demoPath = cache + "/" + (demos.first ?? "")
        func triage() async throws -> [TriageAction] { try await Self.triageLog(ofLedgerAt: demoPath).map(\.action) }
        #expect(try await triage() == [.ack])

        let reset = try TmuxSession(arguments: ["--reset-demo"], width: 120, height: 36, environment: ["XDG_CACHE_HOME": tmux.directory.appendingPathComponent("cache").path])
        defer { reset.kill() }
        reset.waitFor("the reset demo's overview", seconds: 180) { $0.contains("DEMO") && $0.contains("customers") }
        try reset.keys("Q")
        #expect(reset.exitStatus() == 0)
        #expect(try await triage().isEmpty, "--reset-demo kept the demo's triage")
        // (A ledger given is never the demo's to reset.)
        #expect(try Binary.run(["--reset-demo", "--ledger", "sqlite:/nonexistent.sqlite"]).status == 2)
        let configured = try Binary.run(["--reset-demo"], environment: ["RECEIPTDESK_LEDGER": "sqlite:/nonexistent.sqlite"])
        #expect(configured.status == 2 && configured.stderr.contains("--reset-demo is for the demo"), "\(configured.stderr)")
    }

    @Test("acknowledge, resolve with a note (edited at the cursor) and undo from the refund queue land in the triage log")
    func triageFromTheQueue() async throws {
        guard TmuxSession.available() else { return }
        let ledger = try Self.makeLedger()
        defer { try? FileManager.default.removeItem(at: ledger.directory) }
        let tmux = try Self.openQueue(ledger)
        defer { tmux.kill() }
        // Rows are newest first, then by id: app-issue:5002, quick-refund:5002.
        try tmux.keys("j", "a")
        tmux.waitFor(text: "1 flag acknowledged")
        try tmux.keys("f")
        tmux.waitFor(text: "Refund flags: acknowledged")
        try tmux.keys("f", "f", "f")
        tmux.waitFor(text: "Refund flags: open")
        try tmux.keys("g", "r")
        tmux.waitFor(text: "note:")
        // Typed as a person mends a note: the 4 forgotten, then the start (the terminal's own arrow and Home keys).
        try tmux.type("of ticket 2")
        // Keys the terminfo entry names but the prompt does not use do nothing; and so does a sequence ncurses does
        // not know (Shift-Enter as terminals with CSI u send it, `ESC [13;2u`): it was Esc, then keys ('1' went to
        // the Overview).
        try tmux.keys("C-Left", "M-Left", "C-Home")
        try tmux.type("\u{1B}[13;2u")
        try tmux.keys("Left")
        try tmux.type("4")
        try tmux.keys("Home")
        try tmux.type("duplicate ")
        tmux.waitFor(text: "note: duplicate of ticket 42")
        try tmux.keys("Enter")
        tmux.waitFor(text: "1 flag resolved")
        try tmux.keys("u")
        tmux.waitFor(text: "undone: app-issue:5002 of C1 back to open")
        try tmux.keys("Q")
        #expect(tmux.exitStatus() == 0)

        let path = String(ledger.url.dropFirst("sqlite:".count))
        let quick = try await Self.triageLog(ofLedgerAt: path, flagId: "quick-refund:5002")
        #expect(quick.map(\.action) == [.ack])
        #expect(quick.first?.operatorName == "ana")
        let issue = try await Self.triageLog(ofLedgerAt: path, flagId: "app-issue:5002")
        #expect(issue.map(\.action) == [.resolve, .reopen])
        #expect(issue.first?.note == "duplicate of ticket 42")
        #expect(issue.last?.note == "undo of resolve")
        #expect(issue.map(\.toStatus) == [.resolved, .open])
    }

    @Test("a paste is text: its line breaks are not Enter and its letters not triage keys; outside a prompt it looks up its first line")
    func pasteIsNeverKeys() async throws {
        guard TmuxSession.available() else { return }
        let ledger = try Self.makeLedger()
        defer { try? FileManager.default.removeItem(at: ledger.directory) }
        let tmux = try Self.openQueue(ledger)
        defer { tmux.kill() }
        // Two lines from a message into the note: one line of text, the prompt still open.
        try tmux.keys("r")
        tmux.waitFor(text: "note:")
        try tmux.paste("pasted first line\nand a second, again\n")
        tmux.waitFor(text: "note: pasted first line and a second, again")
        try tmux.keys("Escape")
        // The terminal resized while a paste is read (its end not come yet): the screen is laid out for the new
        // size once the paste is in (ncurses hands the resize over again after the paste's read passed it by).
        try tmux.keys("r")
        tmux.waitFor(text: "note:")
        try tmux.type("\u{1B}[200~half")
        // (Time for the paste's start to be read, so the resize comes inside it: nothing on screen says so. The paste
        // waits a second for each character.)
        usleep(300_000)
        try tmux.resize(width: 80, height: 24)
        try tmux.type(" done\u{1B}[201~")
        tmux.waitFor(text: "note: half done")
        // (The title line ends with the time: laid out for 100 columns, tmux cut it off at 80.)
        tmux.waitFor("the title line laid out for 80 columns, ending with its time") { screen in
            let title = Array(screen.split(separator: "\n").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? "")
            return title.count > 5 && title.suffix(5).enumerated().allSatisfy { $0.offset == 2 ? $0.element == ":" : $0.element.isNumber }
        }
        try tmux.keys("Escape")
        // Outside a prompt: the first line, looked up on Enter (the rest, "Regards, Ana", is not keys).
        try tmux.paste("#5002,\nRegards, Ana\n")
        tmux.waitFor(text: ":customer #5002,")
        try tmux.keys("Enter")
        tmux.waitFor(text: "found by 5002 (pasted as #5002,)")
        try tmux.keys("Q")
        #expect(tmux.exitStatus() == 0)
        #expect(try await Self.triageLog(ofLedgerAt: String(ledger.url.dropFirst("sqlite:".count))).isEmpty, "a paste triaged a flag")
    }

    @Test("themes switch, sizes redraw, NO_COLOR and TERM=vt100 still work")
    func themesSizesAndColour() throws {
        guard TmuxSession.available() else { return }
        let ledger = try Self.makeLedger()
        defer { try? FileManager.default.removeItem(at: ledger.directory) }
        let tmux = try TmuxSession(arguments: ["--ledger", ledger.url])
        defer { tmux.kill() }
        tmux.waitFor(text: "customers")
        try tmux.type(":theme nord")
        try tmux.keys("Enter")
        tmux.waitFor(text: "theme nord")
        try tmux.type(":theme nosuch")
        try tmux.keys("Enter")
        tmux.waitFor(text: "no such theme")
        try tmux.resize(width: 80, height: 24)
        // Redrawn for 80x24: the footer on the 24th line, the clock badge ending at the 80th column.
        tmux.waitFor("a redraw at 80x24") { screen in
            let lines = screen.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            guard lines.count >= 24, lines[23].contains("help"), let header = lines.first else { return false }
            let trimmed = header.trimmingCharacters(in: .whitespaces)
            // The header is ASCII and `›`: a character is a column.
            return header.contains("now ") && trimmed.last?.isNumber == true && header.count - header.reversed().prefix(while: { $0 == " " }).count >= 78
        }
        try tmux.resize(width: 50, height: 12)
        tmux.waitFor(text: "Terminal too small: 50x12")
        try tmux.resize(width: 200, height: 60)
        tmux.waitFor(text: "Consumption requests")
        try tmux.keys("Q")
        #expect(tmux.exitStatus() == 0)

        let mono = try TmuxSession(arguments: ["--ledger", ledger.url], environment: ["NO_COLOR": "1"])
        defer { mono.kill() }
        mono.waitFor(text: "customers")
        try mono.keys("2")
        mono.waitFor(text: "C1")
        try mono.keys("Q")
        #expect(mono.exitStatus() == 0)
        // Attributes (bold, reverse) only: no SGR sequence the program sent sets a colour.
        let colours = Self.colourParameters(mono.outputThroughExit())
        #expect(colours.isEmpty, "colours sent under NO_COLOR: \(colours.prefix(5))")

        let vt100 = try TmuxSession(arguments: ["--ledger", ledger.url], environment: ["TERM": "vt100"])
        defer { vt100.kill() }
        vt100.waitFor(text: "customers")
        try vt100.keys("2")
        vt100.waitFor(text: "C1")
        try vt100.keys("Q")
        #expect(vt100.exitStatus() == 0)
        // No alternate screen to leave: the last frame is cleared, not left for the shell's prompt to land on.
        let after = vt100.screen()
        #expect(!after.contains("customers") && !after.contains("C1") && !after.contains("quit"), "\(after)")
    }

    @Test("a product id holding ESC [2J and OSC 52 is shown escaped and never reaches the terminal")
    func hostileData() throws {
        guard TmuxSession.available() else { return }
        let ledger = try Self.makeLedger()
        defer { try? FileManager.default.removeItem(at: ledger.directory) }
        let tmux = try TmuxSession(arguments: ["--ledger", ledger.url], width: 120, height: 40)
        defer { tmux.kill() }
        tmux.waitFor(text: "customers")
        try tmux.type(":customer 6001")
        try tmux.keys("Enter")
        let screen = tmux.waitFor(text: "evil\\e[2J\\e]52;c;aGVsbG8=")
        #expect(screen.contains("OWNED"))
        try tmux.keys("Tab", "Tab", "Enter")
        tmux.waitFor(text: "Transaction 6001")
        try tmux.keys("Q")
        #expect(tmux.exitStatus() == 0)
        let raw = tmux.outputThroughExit()
        // ncurses clears the screen with ESC [2J itself: what must never appear is the data's own sequence.
        #expect(!raw.isEmpty)
        #expect(!raw.containsSequence(Array("evil\u{1B}".utf8)), "the product id's ESC reached the terminal")
        #expect(!raw.containsSequence(Array("\u{1B}]52;c;aGVsbG8=".utf8)), "the product id's OSC 52 reached the terminal")
        #expect(!raw.contains(0x07), "a BEL reached the terminal")
        #expect(raw.containsSequence(Array("evil\\e[2J".utf8)), "the product id is not shown escaped")
    }

    /// The payloads of every OSC 52 sequence (`ESC ] 52 ; c ; PAYLOAD`, ended by BEL or ESC) in `bytes`.
    static func osc52Payloads(_ bytes: [UInt8]) -> [String] {
        let start = Array("\u{1B}]52;c;".utf8)
        var found: [String] = []
        var index = 0
        while index + start.count <= bytes.count {
            guard Array(bytes[index..<(index + start.count)]) == start else {
                index += 1
                continue
            }
            var end = index + start.count
            while end < bytes.count, bytes[end] != 0x07, bytes[end] != 0x1B { end += 1 }
            found.append(String(decoding: bytes[(index + start.count)..<end], as: UTF8.self))
            index = end
        }
        return found
    }

    /// OSC 52 for `text`, wrapped for tmux: `ESC Ptmux; ESC ESC ]52;c;BASE64 BEL ESC \`.
    static func plainOSC52(_ text: String) -> [UInt8] {
        Array("\u{1B}]52;c;\(Data(text.utf8).base64EncodedString())\u{07}".utf8)
    }

    @Test("y copies the selected id with OSC 52, which tmux takes into its buffer as it is (no passthrough wrapping), and nothing else sends one")
    func copyIdWithOSC52() throws {
        guard TmuxSession.available() else { return }
        let ledger = try Self.makeLedger()
        defer { try? FileManager.default.removeItem(at: ledger.directory) }
        // Inside tmux a program sees $TMUX (the session's environment is otherwise cleared).
        let tmux = try TmuxSession(
            arguments: ["--ledger", ledger.url], environment: ["TMUX": "/tmp/tmux-1000/default,4242,0"])
        defer { tmux.kill() }
        tmux.waitFor(text: "customers")
        try tmux.keys("2")
        let list = tmux.waitFor("the customer list") { $0.contains("acct-77") && $0.contains("6001") }
        let lines = list.split(separator: "\n", omittingEmptySubsequences: false)
        let c1 = lines.firstIndex { $0.hasPrefix("C1 ") }.map(String.init) ?? "no C1 row"
        let c2 = lines.firstIndex { $0.hasPrefix("C2 ") }.map(String.init) ?? "no C2 row"
        tmux.waitFor(format: "#{cursor_y}", toBe: c1)
        // pipe-pane keeps the order of the bytes: once the list has arrived, everything sent before it is there.
        let before = tmux.waitForOutput("the customer list's bytes") { $0.containsSequence(Array("acct-77".utf8)) }
        #expect(Self.osc52Payloads(before).isEmpty, "an OSC 52 was sent before y")
        #expect(!before.containsSequence(Array("]52;".utf8)), "an OSC 52 was sent before y")

        // C1's id is its original transaction id.
        try tmux.keys("y")
        tmux.waitFor(text: "copied 5000")
        let first = tmux.waitForOutput("an OSC 52 after y") { !Self.osc52Payloads($0).isEmpty }
        #expect(first.containsSequence(Self.plainOSC52("5000")), "not a plain OSC 52: \(Self.osc52Payloads(first))")
        #expect(!first.containsSequence(Array("\u{1B}Ptmux;".utf8)), "wrapped in tmux's passthrough, which tmux drops by default")
        #expect(Self.osc52Payloads(first) == [Data("5000".utf8).base64EncodedString()])
        // tmux (set-clipboard on, passthrough left off as by default) holds it in its buffer.
        tmux.waitFor(buffer: "5000")

        // Moving sends nothing; y copies the row now selected.
        try tmux.keys("j")
        tmux.waitFor(format: "#{cursor_y}", toBe: c2)
        try tmux.keys("y")
        tmux.waitFor(text: "copied 6001")
        let second = tmux.waitForOutput("a second OSC 52 after y") { Self.osc52Payloads($0).count >= 2 }
        #expect(second.containsSequence(Self.plainOSC52("6001")))
        tmux.waitFor(buffer: "6001")
        try tmux.keys("Q")
        #expect(tmux.exitStatus() == 0)
        let raw = tmux.outputThroughExit()
        #expect(Self.osc52Payloads(raw) == ["5000", "6001"].map { Data($0.utf8).base64EncodedString() })
        // Each one is whole: one BEL per copy, none elsewhere.
        #expect(raw.filter { $0 == 0x07 }.count == 2)
    }

    @Test("SIGTERM gives the terminal back, then the process dies of it (exit 143)")
    func sigterm() throws {
        guard TmuxSession.available() else { return }
        let ledger = try Self.makeLedger()
        defer { try? FileManager.default.removeItem(at: ledger.directory) }
        let tmux = try TmuxSession(arguments: ["--ledger", ledger.url])
        defer { tmux.kill() }
        tmux.waitFor(text: "customers")
        tmux.waitFor(format: "#{alternate_on}", toBe: "1")
        let pid = try #require(tmux.programPid(), "no receiptdesk process under the pane's shell")
        #expect(Glibc.kill(pid, SIGTERM) == 0)
        #expect(tmux.exitStatus() == 143)
        // The alternate screen left: the pane shows the shell's own screen again.
        tmux.waitFor(format: "#{alternate_on}", toBe: "0")
        #expect(!tmux.screen().contains("customers"))
        tmux.outputThroughExit()
    }

    @Test("Ctrl-Z gives the shell back with the terminal restored; fg redraws the dashboard where it was, round after round, a key just before")
    func suspendAndResume() throws {
        guard TmuxSession.available() else { return }
        let ledger = try Self.makeLedger()
        defer { try? FileManager.default.removeItem(at: ledger.directory) }
        let tmux = try TmuxSession(program: .shell)
        defer { tmux.kill() }
        func atPrompt(_ screen: String) -> Bool {
            screen.split(separator: "\n").last.map { $0.trimmingCharacters(in: .whitespaces) } == TmuxSession.prompt
        }
        tmux.waitFor("the shell's prompt", atPrompt)
        try tmux.runInShell(["--ledger", ledger.url])
        tmux.waitFor(text: "customers")
        try tmux.keys("2")
        tmux.waitFor(text: "acct-77")
        // Round after round: the handler that stops the process must be back after each resume. Ctrl-Z sent with a key
        // just before it, whose frame is being drawn as it comes: the stop, done in the signal's handler, raced that
        // frame (cells on the shell's screen) and the read under way (after `fg` it waited for Enter, unredrawn).
        for round in 1...8 {
            try tmux.keys(round % 2 == 0 ? "k" : "j", "C-z")
            let shell = tmux.waitFor("the prompt after Ctrl-Z (round \(round))") { atPrompt($0) && $0.contains("Stopped") }
            #expect(!shell.contains("acct-77"))
            tmux.waitFor(format: "#{alternate_on}", toBe: "0")
            #expect(!shell.contains("id family") && !shell.contains("acct-"), "the dashboard drew on the shell's screen: \(shell)")
            try tmux.type("fg")
            try tmux.keys("Enter")
            // The alternate screen starts empty: what is on it now the program drew after resuming.
            tmux.waitFor("the customer list redrawn (round \(round))") { screen in
                screen.contains("Customers") && screen.contains("acct-77") && !screen.contains(TmuxSession.prompt)
            }
            tmux.waitFor(format: "#{alternate_on}", toBe: "1")
        }
        // Still answering keys, and quits cleanly.
        try tmux.keys("j")
        try tmux.keys("Q")
        tmux.waitFor("the prompt after Q", atPrompt)
        try tmux.type("echo \"exit $?\"")
        try tmux.keys("Enter")
        tmux.waitFor("the exit status") { screen in
            screen.split(separator: "\n").contains { $0.trimmingCharacters(in: .whitespaces) == "exit 0" }
        }
    }

    @Test("a theme in $XDG_CONFIG_HOME/receiptdesk/themes is used; a broken one is named with its file and line and the default drawn")
    func userThemes() throws {
        guard TmuxSession.available() else { return }
        let ledger = try Self.makeLedger()
        defer { try? FileManager.default.removeItem(at: ledger.directory) }
        let config = ledger.directory.appendingPathComponent("config")
        let themes = config.appendingPathComponent("receiptdesk/themes")
        try FileManager.default.createDirectory(at: themes, withIntermediateDirectories: true)
        let broken = "\"ui.text\" = \"red\"\n\"ui.title\" = { fg = \"nosuch\" }\n"
        try Data(broken.utf8).write(to: themes.appendingPathComponent("broken.toml"))
        try Data("inherits = \"nord\"\n\"ui.title\" = \"#ff00ff\"\n".utf8).write(to: themes.appendingPathComponent("mine.toml"))
        let tmux = try TmuxSession(
            arguments: ["--ledger", ledger.url, "--theme", "broken"], width: 160, environment: ["XDG_CONFIG_HOME": config.path])
        defer { tmux.kill() }
        // The warning is also written to stderr before the screen is taken: wait for the dashboard's own line.
        let file = themes.appendingPathComponent("broken.toml").path
        tmux.waitFor("the dashboard naming the broken theme's file and line") { screen in
            screen.contains("customers") && screen.contains("\(file):2: ui.title: nosuch is neither")
                && !screen.contains("receiptdesk: \(file)")
        }
        tmux.waitFor(format: "#{alternate_on}", toBe: "1")
        try tmux.type(":theme mine")
        try tmux.keys("Enter")
        tmux.waitFor(text: "theme mine")
        try tmux.type(":theme broken")
        try tmux.keys("Enter")
        tmux.waitFor(text: "\(file):2: ")
        try tmux.keys("Q")
        #expect(tmux.exitStatus() == 0)
    }

    @Test("over a stored ledger, decoding options and --rules are said to change nothing, and --customers (a write) is refused")
    func storedLedgerOptions() throws {
        guard TmuxSession.available() else { return }
        let ledger = try Self.makeLedger()
        defer { try? FileManager.default.removeItem(at: ledger.directory) }
        let rules = ledger.directory.appendingPathComponent("rules.txt")
        try Data("refund-spike.factor = 5\n".utf8).write(to: rules)
        let tmux = try TmuxSession(arguments: ["--ledger", ledger.url, "--environment", "sandbox", "--rules", rules.path], width: 200)
        defer { tmux.kill() }
        // Said on standard error before the screen is taken, so it is there again when the dashboard gives it back.
        tmux.waitFor(format: "#{alternate_on}", toBe: "1")
        try tmux.keys("Q")
        #expect(tmux.exitStatus() == 0)
        let screen = tmux.waitFor(text: "--rules decides the flags an import raises")
        #expect(screen.contains("--environment decides how --files are decoded"), "\(screen)")
        let customers = try TmuxSession(arguments: ["--ledger", ledger.url, "--customers", rules.path], width: 200)
        defer { customers.kill() }
        #expect(customers.exitStatus() == 2)
        customers.waitFor(text: "--customers links accounts into the ledger, which is a write")
        // refunds reads --rules (its outcomes); lookup does not, and says so.
        #expect(!(try Binary.run(["refunds", "--ledger", ledger.url, "--rules", rules.path]).stderr.contains("--rules decides")))
        let lookup = try Binary.run(["lookup", "5001", "--ledger", ledger.url, "--rules", rules.path])
        #expect(lookup.stderr.contains("--rules decides the flags an import raises"), "\(lookup.stderr)")
    }

    @Test("no terminal (said before a ledger is opened or the demo built), a dumb TERM and an unknown one exit with a message before the screen is taken")
    func refusals() throws {
        // No terminal is said before anything is opened, read or built: the ledger's own trouble would come next.
        let noTerminal = try Binary.run(["--ledger", "sqlite:/nonexistent/x.sqlite"])
        #expect(noTerminal.status == 2, "\(noTerminal.stderr)")
        #expect(noTerminal.stderr.contains("needs a terminal (standard input and output are not one)"), "\(noTerminal.stderr)")
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("rd-e2e-noterm-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let home = [
            "HOME": scratch.path, "XDG_CACHE_HOME": scratch.appendingPathComponent("cache").path,
            "XDG_DATA_HOME": scratch.appendingPathComponent("data").path, "RECEIPTDESK_LEDGER": "",
        ]
        let demo = try Binary.run([], environment: home)
        #expect(demo.status == 2, "\(demo.stderr)")
        #expect(demo.stderr.contains("needs a terminal") && !demo.stderr.contains("building the demo"), "\(demo.stderr)")
        #expect(!FileManager.default.fileExists(atPath: scratch.appendingPathComponent("cache").path), "the demo was built for nothing")
        let ledger = try Self.makeLedger()
        defer { try? FileManager.default.removeItem(at: ledger.directory) }
        let piped = try Binary.run(["--ledger", ledger.url])
        #expect(piped.status == 2)
        #expect(piped.stderr.contains("needs a terminal"))
        guard TmuxSession.available() else { return }
        let dumb = try TmuxSession(arguments: ["--ledger", ledger.url], environment: ["TERM": "dumb"])
        defer { dumb.kill() }
        #expect(dumb.exitStatus() == 2)
        let unknown = try TmuxSession(arguments: ["--ledger", ledger.url], environment: ["TERM": "no-such-terminal-xyz"])
        defer { unknown.kill() }
        #expect(unknown.exitStatus() == 2)
        unknown.waitFor(text: "no-such-terminal-xyz")
    }
}

extension Array where Element == UInt8 {
    func containsSequence(_ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, count >= needle.count else { return false }
        for start in 0...(count - needle.count) where self[start] == needle[0] {
            if Array(self[start..<(start + needle.count)]) == needle { return true }
        }
        return false
    }
}

