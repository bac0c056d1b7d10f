import Entitlements
import Foundation
import Ledger
import LedgerQueries
import LedgerSQLite
import ReceiptModel
import Testing
@testable import ReceiptDeskCLI

@Suite("lookup, refunds and triage, as support and on-call run them", .serialized, .ownThreads)
struct LookupCommandTests {
    /// SampleData imported (verified by its TEST root) into a ledger, once for the suite's tests that only read it.
    static func sampleDataLedger() throws -> String { try sampleData.get() }
    private static let sampleData = Result<String, any Error> {
        let ledger = ImportCommandTests.temporary("sample-data.sqlite")
        let data = Binary.packageRoot.appendingPathComponent("SampleData/data").path
        let root = Binary.packageRoot.appendingPathComponent("SampleData/test-root.pem").path
        let imported = try Binary.run(["import", "--ledger", "sqlite:\(ledger)", "--trust-root", root, data])
        #expect(imported.status == 0, "\(imported.stderr)")
        return ledger
    }

    static func ledgerWithHistory() throws -> String {
        let path = ImportCommandTests.temporary("lookup.sqlite")
        let file = try historyFile()
        let result = try Binary.run(["import", "--ledger", "sqlite:\(path)", file])
        guard result.status == 0 else { throw CLIFailure(message: "the history did not import: \(result.stderr)") }
        return path
    }

    /// A subscription bought 2025-03-01, renewed 2025-04-01, refunded (app issue) 2025-04-02: a verifyReceipt file.
    static func historyFile() throws -> String {
        let file = ImportCommandTests.temporary("history.json")
        let json = #"{"status":0,"environment":"Production","receipt":{"bundle_id":"com.example"},"latest_receipt_info":[{"transaction_id":"501","original_transaction_id":"500","web_order_line_item_id":"w501","product_id":"pro.monthly","purchase_date_ms":"1740787200000","expires_date_ms":"1743465600000","quantity":"1"},{"transaction_id":"502","original_transaction_id":"500","web_order_line_item_id":"w502","product_id":"pro.monthly","purchase_date_ms":"1743465600000","expires_date_ms":"1746057600000","cancellation_date_ms":"1743552000000","cancellation_reason":"1","quantity":"1"}]}"#
        writeTestFile(file, Data(json.utf8))
        return file
    }

    @Test("lookup at two instants gives the two answers a support agent needs")
    func twoInstants() throws {
        let ledger = try Self.ledgerWithHistory()
        let before = try Binary.run(["lookup", "w502", "--ledger", "sqlite:\(ledger)", "--at", "2025-03-15", "--json"])
        #expect(before.status == 0)
        let early = try Binary.json(before.stdout)
        let earlyStates = (early["entitlements"] as? [[String: Any]])?.compactMap { $0["state"] as? String }
        #expect(earlyStates == ["active"])
        #expect((early["customer"] as? [String: Any])?["id"] as? String != nil)
        #expect(early["at"] as? Int == 1_741_996_800_000)
        let after = try Binary.json(try Binary.run(["lookup", "502", "--ledger", "sqlite:\(ledger)", "--at", "1743638400000", "--json"]).stdout)
        let entitlement = try #require((after["entitlements"] as? [[String: Any]])?.first)
        #expect(entitlement["state"] as? String == "revoked")
        #expect(entitlement["transactionId"] as? String == "502")
        let kinds = (after["timeline"] as? [[String: Any]])?.compactMap { $0["kind"] as? String }
        #expect(kinds == ["subscribed", "renewed", "refunded"])
        let rules = Set((after["flags"] as? [[String: Any]])?.compactMap { $0["rule"] as? String } ?? [])
        #expect(rules == ["quick-refund", "app-issue"])
        let human = try Binary.run(["lookup", "500", "--ledger", "sqlite:\(ledger)", "--at", "2025-04-03"])
        #expect(human.stdout.contains("REVOKED"))
        #expect(human.stdout.contains("refunded"))
        #expect(try Binary.run(["lookup", "nobody", "--ledger", "sqlite:\(ledger)"]).status == 1)
        // An empty id is a usage error, not a search that found no one; an empty note is refused, not logged for good.
        let empty = try Binary.run(["lookup", " ", "--ledger", "sqlite:\(ledger)"])
        #expect(empty.status == 2 && empty.stderr.contains("the id to look up is empty"), "\(empty.stderr)")
        let blank = try Binary.run(["note", "w501", "", "--ledger", "sqlite:\(ledger)", "--operator", "ana"])
        #expect(blank.status == 2 && blank.stderr.contains("the note is empty"), "\(blank.stderr)")
        // An id pasted with punctuation around it: found, and standard error says by which id; the JSON is unchanged.
        let pasted = try Binary.run(["lookup", "(502).", "--ledger", "sqlite:\(ledger)", "--at", "1743638400000", "--json"])
        #expect(pasted.status == 0)
        #expect(pasted.stderr.contains("no id is (502). as given; found by 502"), "\(pasted.stderr)")
        #expect(try Binary.json(pasted.stdout)["entitlements"] as? [[String: Any]] != nil)
        // note finds the customer as lookup does, pasted punctuation and all, and says so.
        let pastedNote = try Binary.run(["note", "\"(w501)\"", "called about a charge", "--ledger", "sqlite:\(ledger)", "--operator", "ana"])
        #expect(pastedNote.status == 0 && pastedNote.stdout.hasPrefix("noted on C"), "\(pastedNote.stdout) \(pastedNote.stderr)")
        #expect(pastedNote.stderr.contains("found by w501"), "\(pastedNote.stderr)")
        #expect(try Binary.run(["note", "(w999)", "x", "--ledger", "sqlite:\(ledger)", "--operator", "ana"]).status == 1)
        // The note as triage takes one (--note), not both ways at once.
        let twice = try Binary.run(["note", "w501", "x", "--note", "y", "--ledger", "sqlite:\(ledger)", "--operator", "ana"])
        #expect(twice.status == 2 && twice.stderr.contains("the note is given twice"), "\(twice.stderr)")
        #expect(try Binary.run(["note", "w501", "--note", "sent a refund link", "--ledger", "sqlite:\(ledger)", "--operator", "ana"]).status == 0)
        #expect(try Binary.run(["note", "w501", "called about a double charge", "--ledger", "sqlite:\(ledger)", "--operator", "ana"]).status == 0)
        let noted = try Binary.json(try Binary.run(["lookup", "500", "--ledger", "sqlite:\(ledger)", "--json"]).stdout)
        let notes = try #require(noted["notes"] as? [[String: Any]])
        #expect(
            Set(notes.compactMap { $0["note"] as? String }) == ["called about a double charge", "called about a charge", "sent a refund link"], "\(notes)")
        #expect(notes.first?["operator"] as? String == "ana")
        let summary = try #require(noted["summary"] as? [String: Any])
        #expect(summary["transactions"] as? Int == 2)
        #expect(summary["refunds"] as? Int == 1)
        #expect(summary["environments"] as? [String] == ["Production"])
        #expect(try Binary.run(["lookup", "500", "--ledger", "sqlite:\(ledger)", "--at", "yesterday"]).status == 2)
        // The text: the notes a section of their own, before the flags; one written after the instant asked about
        // says so.
        let text = try Binary.run(["lookup", "500", "--ledger", "sqlite:\(ledger)", "--at", "2025-04-03"]).lines
        let section = try #require(text.firstIndex(of: "notes"), "\(text)")
        #expect(text[(section + 1)...].prefix(3).allSatisfy { $0.contains(" ana: ") && $0.hasSuffix("(written after 2025-04-03T00:00:00Z)") }, "\(text)")
        #expect(text.firstIndex(of: "flags").map { $0 > section } == true && !text.contains { $0.hasPrefix("  note ") }, "\(text)")
    }

    @Test("lookup's text says how many of the customer's transactions no signature vouched for (--no-verify, Xcode)")
    func lookupSaysUnverified() throws {
        let ledger = ImportCommandTests.temporary("unverified.sqlite")
        let server = Binary.packageRoot.appendingPathComponent("SampleData/data/server-api.ndjson").path
        let first = try #require(try String(contentsOfFile: server, encoding: .utf8).split(separator: "\n").first { $0.contains("signedTransactions") })
        let file = ImportCommandTests.temporary("one-response.json")
        writeTestFile(file, Data(first.utf8))
        let imported = try Binary.run(["import", "--no-verify", "--ledger", "sqlite:\(ledger)", file])
        #expect(imported.status == 0, "\(imported.stderr)")
        let response = try #require(try JSONSerialization.jsonObject(with: Data(first.utf8)) as? [String: Any])
        let count = (response["signedTransactions"] as? [String])?.count ?? 0
        #expect(count > 0)
        // Any of its transactions' ids finds the customer.
        let listed = try Binary.run(["decode", "--no-verify", "--json", file])
        let id = try #require(listed.stdout.firstMatch(of: /"transactionId":"(\d+)"/)?.1)
        let found = try Binary.run(["lookup", "--ledger", "sqlite:\(ledger)", String(id)])
        #expect(found.stdout.contains("not verified (imported with --no-verify)"), "\(found.stdout)")
        // Verified, nothing is said.
        let verified = ImportCommandTests.temporary("verified.sqlite")
        let root = Binary.packageRoot.appendingPathComponent("SampleData/test-root.pem").path
        #expect(try Binary.run(["import", "--trust-root", root, "--ledger", "sqlite:\(verified)", file]).status == 0)
        let plain = try Binary.run(["lookup", "--ledger", "sqlite:\(verified)", String(id)])
        #expect(plain.status == 0 && !plain.stdout.contains("not verified") && !plain.stdout.contains("of them"), "\(plain.stdout)")
    }

    @Test("refunds lists the queue; triage acknowledges and resolves with a note")
    func refundsAndTriage() throws {
        let ledger = try Self.ledgerWithHistory()
        let list = try Binary.run(["refunds", "--ledger", "sqlite:\(ledger)", "--json"])
        #expect(list.status == 0)
        let flags = try list.lines.map(Binary.json)
        #expect(Set(flags.compactMap { $0["rule"] as? String }) == ["quick-refund", "app-issue"])
        #expect(flags.allSatisfy { $0["status"] as? String == "open" && $0["productId"] as? String == "pro.monthly" })
        let id = try #require(flags.first { $0["rule"] as? String == "quick-refund" }?["id"] as? String)
        // The id as a paste brings it (white space and quotes around it) is the flag's id.
        let pasted = try Binary.run(["triage", " '\(id)', \n", "--ack", "--ledger", "sqlite:\(ledger)", "--operator", "ana"])
        #expect(pasted.status == 0, "\(pasted.stderr)")
        let resolved = try Binary.run(["triage", id, "--resolve", "--note", "accidental purchase", "--ledger", "sqlite:\(ledger)", "--json"])
        #expect(try Binary.json(resolved.stdout)["status"] as? String == "resolved")
        let ackResolved = try Binary.run(["triage", id, "--ack", "--ledger", "sqlite:\(ledger)"])
        #expect(ackResolved.status == 2 && ackResolved.stderr.contains("is resolved: only an open flag is acknowledged"), "\(ackResolved.stderr)")
        let open = try Binary.run(["refunds", "--ledger", "sqlite:\(ledger)", "--status", "open", "--json"]).lines
        #expect(open.count == 1)
        let csv = try Binary.run(["refunds", "--ledger", "sqlite:\(ledger)", "--csv", "--rule", "quick-refund"]).lines
        #expect(csv.first == "id,rule,severity,status,customer,environment,transactionId,productId,amount,currency,at,detail")
        #expect(csv.count == 2)
        #expect(try Binary.run(["triage", "no-such-flag", "--ack", "--ledger", "sqlite:\(ledger)"]).status == 1)
        #expect(try Binary.run(["triage", id, "--ledger", "sqlite:\(ledger)"]).status == 2)
        // The log, read back: who moved it, from what to what, and their note; also read-only, and as JSON.
        let log = try Binary.run(["triage", id, "--log", "--ledger", "sqlite:\(ledger)", "--read-only"])
        #expect(log.status == 0, "\(log.stderr)")
        #expect(log.lines.count == 2)
        #expect(log.lines.first?.contains(" ana ack open -> acknowledged") == true, "\(log.stdout)")
        #expect(log.lines.last?.hasSuffix(" resolve acknowledged -> resolved: accidental purchase") == true, "\(log.stdout)")
        let logRaw = try Binary.run(["triage", id, "--log", "--json", "--ledger", "sqlite:\(ledger)"])
        #expect(logRaw.status == 0, "\(logRaw.stderr)")
        let logJSON = try logRaw.lines.map(Binary.json)
        #expect(logJSON.map { $0["action"] as? String } == ["ack", "resolve"])
        #expect(logJSON.last?["note"] as? String == "accidental purchase" && logJSON.first?["operator"] as? String == "ana")
        #expect(try Binary.run(["triage", "no-such-flag", "--log", "--ledger", "sqlite:\(ledger)"]).status == 1)
        let never = try Binary.run(["triage", "app-issue:\(id.split(separator: ":").last ?? "")", "--log", "--ledger", "sqlite:\(ledger)"])
        #expect(never.status == 0 && never.stdout.hasSuffix("never triaged\n"), "\(never.stdout) \(never.stderr)")
        // A resolve without a note is taken (DESIGN section 12's `[--note TEXT]`), and said to leave nothing of why; a
        // blank note is none (it was stored as the spaces).
        let other = "app-issue:\(id.split(separator: ":").last ?? "")"
        let bare = try Binary.run(["triage", other, "--resolve", "--note", "  ", "--ledger", "sqlite:\(ledger)"])
        #expect(bare.status == 0 && bare.stderr.contains("resolved without a note: its log says nothing of why (--note says it)"), "\(bare.stderr)")
        let bareLog = try Binary.run(["triage", other, "--log", "--json", "--ledger", "sqlite:\(ledger)"]).lines.map(Binary.json)
        #expect(bareLog.count == 1 && bareLog.first?["note"] is NSNull, "\(bareLog)")
    }

    @Test("lookup's text says what stopped renewal for every expiration intent; 'renewal off' only for the customer's or none")
    func renewalWords() {
        func words(_ intent: ExpirationIntent?) -> String? {
            var e = Entitlement(name: "pro", state: .expired, reason: "expired")
            e.willRenew = false
            e.expirationIntent = intent
            return e.renewalWords
        }
        #expect(words(.customerCancelled) == "renewal off" && words(nil) == "renewal off")
        #expect(words(.billingError) == "renewal stopped: billing failed")
        #expect(words(.productUnavailable) == "renewal stopped: product unavailable")
        #expect(words(.priceIncreaseDeclined) == "renewal stopped: price increase not consented to")
        #expect(words(.other) == "renewal stopped by Apple, not by the customer")
        #expect(words(.unknown(9)) == "renewal stopped (expiration intent 9)")
        // Revoked: renewal off without an intent is Apple's, after the refund; the customer's own still says so.
        var revoked = Entitlement(name: "pro", state: .revoked, reason: "refunded")
        revoked.willRenew = false
        #expect(revoked.renewalWords == nil)
        revoked.expirationIntent = .customerCancelled
        #expect(revoked.renewalWords == "renewal off")
    }

    @Test("lookup --at lists only the flags raised by the instant; the text counts those raised after")
    func flagsAtInstant() throws {
        let url = "sqlite:\(try Self.ledgerWithHistory())"
        // The refund of 2025-04-02 raised both flags: not yet on 2025-03-15, both from the refund on.
        let before = try Binary.json(try Binary.run(["lookup", "500", "--ledger", url, "--at", "2025-03-15", "--json"]).stdout)
        #expect((before["flags"] as? [[String: Any]])?.isEmpty == true, "\(before["flags"] ?? "none")")
        #expect(before["flagsRaisedAfter"] as? Int == 2, "the JSON says how many it left out")
        let text = try Binary.run(["lookup", "500", "--ledger", url, "--at", "2025-03-15"]).stdout
        let flagLines = text.split(separator: "\n").drop { $0 != "flags" }.dropFirst()
        #expect(Array(flagLines) == ["  none", "  (2 more raised after 2025-03-15T00:00:00Z, not shown)"], "\(text)")
        let at = try Binary.json(try Binary.run(["lookup", "500", "--ledger", url, "--at", "1743552000000", "--json"]).stdout)
        let rules = Set((at["flags"] as? [[String: Any]])?.compactMap { $0["rule"] as? String } ?? [])
        #expect(rules == ["quick-refund", "app-issue"])
        #expect(at["flagsRaisedAfter"] as? Int == 0)
        let now = try Binary.run(["lookup", "500", "--ledger", url]).stdout
        #expect(now.contains("quick-refund:502") && !now.contains("raised after"), "\(now)")
    }

    @Test("--at takes now; seconds given for milliseconds are read as milliseconds and said; a negative one says how to give it")
    func atInputs() throws {
        let url = "sqlite:\(try Self.ledgerWithHistory())"
        let before = Int(Date().timeIntervalSince1970 * 1000)
        let now = try Binary.run(["lookup", "500", "--ledger", url, "--at", "now", "--json"])
        let after = Int(Date().timeIntervalSince1970 * 1000)
        #expect(now.status == 0, "\(now.stderr)")
        let at = try #require(try Binary.json(now.stdout)["at"] as? Int)
        #expect((before - 1000...after).contains(at), "\(at)")
        let seconds = try Binary.run(["lookup", "500", "--ledger", url, "--at", "1743638400", "--json"])
        #expect(seconds.status == 0)
        #expect(try Binary.json(seconds.stdout)["at"] as? Int == 1_743_638_400)
        #expect(seconds.stderr.contains("--at 1743638400 is read as milliseconds, 1970-01-21T04:20:38.400Z; for seconds, give 1743638400000 (2025-04-03T00:00:00Z)"), "\(seconds.stderr)")
        #expect(try Binary.run(["lookup", "500", "--ledger", url, "--at", "1743638400000"]).stderr.isEmpty)
        // A day without its dashes, or a year, is said too (each was 1970 without a word); refunds --since as --at.
        let day = try Binary.run(["lookup", "500", "--ledger", url, "--at", "20250701"])
        #expect(day.stderr.contains("--at 20250701 is read as milliseconds, 1970-01-01T05:37:30.701Z; for the day 2025-07-01, give 2025-07-01"), "\(day.stderr)")
        let year = try Binary.run(["lookup", "500", "--ledger", url, "--at", "2025"])
        #expect(year.stderr.contains("--at 2025 is read as milliseconds, 1970-01-01T00:00:02.025Z; for the start of 2025, give 2025-01-01"), "\(year.stderr)")
        let since = try Binary.run(["refunds", "--ledger", url, "--since", "20250601"])
        #expect(since.status == 0 && since.stderr.contains("--since 20250601 is read as milliseconds"), "\(since.stderr)")
        // Options of decoding given to a stored ledger are said to change nothing (--environment is no filter).
        let environment = try Binary.run(["refunds", "--ledger", url, "--environment", "sandbox"])
        #expect(environment.status == 0)
        #expect(environment.stderr.contains("--environment decides how --files are decoded; the stored ledger's records were checked when they were imported"), "\(environment.stderr)")
        let negative = try Binary.run(["lookup", "500", "--ledger", url, "--at", "-5"])
        #expect(negative.status == 2 && negative.stderr.contains("give a value that starts with - as --at=-5"), "\(negative.stderr)")
        #expect(try Binary.run(["lookup", "500", "--ledger", url, "--at=-5"]).status == 0)
    }

    @Test("lookup's text says states as the dashboard does, and renewal stopped by billing apart from renewal turned off; the JSON keeps DESIGN's words")
    func stateWords() throws {
        let ledger = try Self.sampleDataLedger()
        func entitlementLine(_ id: String, at: String) throws -> String {
            let text = try Binary.run(["lookup", id, "--ledger", "sqlite:\(ledger)", "--at", at]).stdout
            // The subscription's line (a customer may own consumables too, named before it).
            let lines = text.split(separator: "\n").drop { $0 != "entitlements" }.dropFirst()
            return String(try #require(lines.first { $0.hasPrefix("  group ") }, "\(text)"))
        }
        // SampleData: 150000000000001 in billing retry in July, its retries over by the end of August; 150000000012001
        // in a grace period in July; 150000000056001 turned renewal off.
        let retry = try entitlementLine("150000000000001", at: "2025-07-01")
        // (Not "renews": Apple is retrying a payment that failed, which is no promise.)
        #expect(retry.hasSuffix(" BILLING RETRY  pro.monthly  renewal on"), "\(retry)")
        #expect(try entitlementLine("150000000012001", at: "2025-07-01").contains(" GRACE PERIOD   storage.monthly"))
        let stopped = try entitlementLine("150000000000001", at: "9999-12-31T23:59:59Z")
        #expect(stopped.contains(" EXPIRED ") && stopped.hasSuffix("pro.monthly  renewal stopped: billing failed"), "\(stopped)")
        let off = try entitlementLine("150000000056001", at: "9999-12-31T23:59:59Z")
        #expect(off.contains(" EXPIRED ") && off.hasSuffix("pro.monthly  renewal off"), "\(off)")
        // 150000000180007 was refunded, and Apple turned its renewal off after: not the customer's "renewal off".
        let refunded = try entitlementLine("150000000180007", at: "2025-07-01")
        #expect(refunded.contains(" REVOKED ") && refunded.hasSuffix("storage.weekly"), "\(refunded)")
        let json = try Binary.json(try Binary.run(["lookup", "150000000000001", "--ledger", "sqlite:\(ledger)", "--at", "2025-07-01", "--json"]).stdout)
        #expect((json["entitlements"] as? [[String: Any]])?.compactMap { $0["state"] as? String } == ["billingRetry"])
    }

    @Test("output that cannot be written (a full disk) is said, exit 2, not a silent exit 0 over a cut file")
    func outputCannotBeWritten() throws {
        let ledger = try Self.sampleDataLedger()
        let full = try #require(FileHandle(forWritingAtPath: "/dev/full"))
        let commands: [[String]] = [
            ["lookup", "150000000000001"], ["lookup", "150000000000001", "--json"], ["refunds"], ["refunds", "--json"], ["refunds", "--csv"],
            ["triage", "family-revoke:150000000004001", "--log"],
        ]
        for command in commands {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: Binary.path)
            process.arguments = command + ["--ledger", "sqlite:\(ledger)"]
            process.standardOutput = full
            let err = Pipe()
            process.standardError = err
            try process.run()
            let said = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            #expect(process.terminationStatus == 2, "\(command): \(said)")
            #expect(said.contains("cannot write the output: No space left on device; what was written is incomplete"), "\(command): \(said)")
        }
    }

    @Test("note refuses a text naming two customers rather than write on one of them; lookup shows the first and names the other")
    func noteNamesOneCustomer() throws {
        let ledger = try Self.sampleDataLedger()
        let text = "orders 150000000000001 and 150000000056001"
        let shown = try Binary.run(["lookup", text, "--ledger", "sqlite:\(ledger)"])
        #expect(shown.status == 0 && shown.stderr.contains("the text also names C"), "\(shown.stderr)")
        let refused = try Binary.run(["note", text, "called", "--ledger", "sqlite:\(ledger)", "--operator", "ana"])
        #expect(refused.status == 2, "\(refused.stdout) \(refused.stderr)")
        #expect(refused.stderr.contains("names 2 customers, C") && refused.stderr.contains("give one id (nothing was written)"), "\(refused.stderr)")
        let notes = try Binary.json(try Binary.run(["lookup", "150000000000001", "--ledger", "sqlite:\(ledger)", "--json"]).stdout)["notes"] as? [[String: Any]]
        #expect(notes?.isEmpty != false, "\(String(describing: notes))")
    }

    @Test("refunds --json and --csv list every flag unless --limit is given; the text stops at the newest 1000 and says so")
    func machineOutputUncut() throws {
        // 1,050 consumables, each refunded an hour after purchase: a quick-refund flag each, and one serial refunder.
        let purchases = (0..<1050).map { n in
            let bought = 1_740_816_000_000 + Int64(n) * 60_000
            return #"{"transaction_id":"\#(700_000_000 + n)","original_transaction_id":"\#(700_000_000 + n)","product_id":"coins.100","quantity":"1","purchase_date_ms":"\#(bought)","cancellation_date_ms":"\#(bought + 3_600_000)","cancellation_reason":"0"}"#
        }
        let file = ImportCommandTests.temporary("many-refunds.json")
        writeTestFile(file, Data(#"{"status":0,"environment":"Production","receipt":{"bundle_id":"com.example","in_app":[\#(purchases.joined(separator: ","))]}}"#.utf8))
        let every = try Binary.run(["refunds", "--files", file, "--json", "--limit", "1000000"]).lines.count
        #expect(every > 1050, "\(every)")
        let json = try Binary.run(["refunds", "--files", file, "--json"])
        #expect(json.status == 0 && json.lines.count == every, "\(json.lines.count) \(json.stderr)")
        #expect(!json.stderr.contains("more match"), "\(json.stderr)")
        let csv = try Binary.run(["refunds", "--files", file, "--csv"])
        #expect(csv.status == 0 && csv.lines.count == every + 1, "\(csv.lines.count) \(csv.stderr)")
        // Given, --limit still cuts them, said on standard error only.
        let limited = try Binary.run(["refunds", "--files", file, "--json", "--limit", "10"])
        #expect(limited.lines.count == 10 && limited.stderr.contains("showing the newest 10 flags; more match"), "\(limited.stderr)")
        let text = try Binary.run(["refunds", "--files", file])
        #expect(text.status == 0 && text.stdout.contains("showing the newest 1000 flags; more match (--limit raises it)"), "\(text.stdout.suffix(300))")
        #expect(text.lines.filter { $0.hasPrefix("2025-") }.count == 1000)
    }

    @Test("refunds --day lists the refunds a day's bar of the dashboard counts, each with its records; with --at, those that stood then")
    func refundsOfADay() async throws {
        let path = try Self.sampleDataLedger()
        let ledger = try await SQLLedger.open(SQLiteDatabase.open(path: path), now: Timestamp(millisecondsSince1970: 0), readOnly: true)
        let now = Timestamp.utc(year: 2025, month: 7, day: 1)
        let series = try await ledger.refundsPerDay(days: 90, endingAt: now, productId: nil)
        try await ledger.close()
        // Every day the demo's chart has a refund on, the command lists as many, each from its records.
        var days = 0
        for (index, count) in series.counts.enumerated() where count > 0 {
            let day = String(series.firstDay.adding(milliseconds: Int64(index) * 86_400_000).iso8601.prefix(10))
            let listed = try Binary.run(["refunds", "--day", day, "--json", "--ledger", "sqlite:\(path)"])
            let refunds = try listed.lines.map(Binary.json)
            #expect(listed.status == 0 && refunds.count == count, "\(day): \(refunds.count) listed, the bar counts \(count); \(listed.stderr)")
            #expect(refunds.allSatisfy { ($0["sources"] as? [String])?.first?.contains(".ndjson#") == true && ($0["refundedAt"] as? Int).map { Timestamp(millisecondsSince1970: Int64($0)).iso8601.hasPrefix(day) } == true }, "\(refunds)")
            days += 1
        }
        #expect(days > 10)
        // lifetime.unlock's refund on 2025-06-02 was reversed on 06-11: not among that day's refunds now, among those
        // that stood on 06-05.
        let text = try Binary.run(["refunds", "--day", "2025-06-02", "--ledger", "sqlite:\(path)"]).lines
        #expect(text.first == "refunds on 2025-06-02 (UTC): 1, as the dashboard's bar counts them" && !text.contains { $0.contains("150000000010001") }, "\(text)")
        let then = try Binary.run(["refunds", "--day", "2025-06-02", "--at", "2025-06-05", "--csv", "--ledger", "sqlite:\(path)"]).lines
        #expect(then.first == "transactionId,productId,environment,price,currency,refunded,refundedAt,sources")
        #expect(then.count == 3 && then.contains { $0.hasPrefix("150000000010001,lifetime.unlock,Production,67.99,CAD,100%,2025-06-02T05:00:00Z,") }, "\(then)")
        // Today, as the live bar: a refund dated later today (a clock ahead of this one) is among them.
        let clock = Int64(Date().timeIntervalSince1970 * 1000)
        let endOfToday = clock - clock % 86_400_000 + 86_400_000 - 1
        let later = clock + (endOfToday - clock) / 2
        let file = ImportCommandTests.temporary("later-today.json")
        writeTestFile(file, Data(#"{"status":0,"environment":"Production","receipt":{"bundle_id":"com.example","in_app":[{"transaction_id":"990001","original_transaction_id":"990001","product_id":"coins.100","quantity":"1","purchase_date_ms":"\#(later - 60_000)","cancellation_date_ms":"\#(later)","cancellation_reason":"0"}]}}"#.utf8))
        let today = String(Timestamp(millisecondsSince1970: clock).iso8601.prefix(10))
        let laterToday = try Binary.run(["refunds", "--day", today, "--json", "--files", file]).lines
        #expect(laterToday.count == 1 && laterToday.first?.contains("990001") == true, "\(laterToday)")
        // It lists refunds, not flags: the flags' options are refused; and a day, not milliseconds in 1970 or a day
        // the chart has no bar for.
        let mixed = try Binary.run(["refunds", "--day", "2025-06-02", "--rule", "quick-refund", "--ledger", "sqlite:\(path)"])
        #expect(mixed.status == 2 && mixed.stderr.contains("--day lists a day's refunds, not flags"), "\(mixed.stderr)")
        for (day, said) in [("20250517", "for the day 2025-05-17, give 2025-05-17"), ("253402300800000", "years 1 to 9999")] {
            let refused = try Binary.run(["refunds", "--day", day, "--json", "--ledger", "sqlite:\(path)"])
            #expect(refused.status == 2 && refused.stderr.contains(said) && refused.stdout.isEmpty, "\(day): \(refused.stderr)")
        }
    }

    @Test("lookup's text piped (not a terminal) never cuts a name to its column")
    func namesWholeWhenPiped() throws {
        let file = ImportCommandTests.temporary("long-names.json")
        let long = "com.example.shortcutcallalert.inapp.pro"
        let json = #"{"status":0,"environment":"Production","receipt":{"bundle_id":"com.example","in_app":[{"transaction_id":"901","original_transaction_id":"901","product_id":"\#(long)","purchase_date_ms":"1740787200000","quantity":"1"}]}}"#
        writeTestFile(file, Data(json.utf8))
        let result = try Binary.run(["lookup", "901", "--files", file])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").drop { $0 != "entitlements" }.dropFirst()
        #expect(lines.first?.hasPrefix("  \(long) OWNED") == true, "\(result.stdout)")
        #expect(!result.stdout.contains("…"), "\(result.stdout)")
    }

    @Test("triage and note over --files are refused, exit 2: the in-memory ledger and the change vanish on exit")
    func writesOverFilesRefused() throws {
        let file = try Self.historyFile()
        let flags = try Binary.run(["refunds", "--files", file, "--json"]).lines.map(Binary.json)
        let id = try #require(flags.first?["id"] as? String, "no flag in \(file)")
        // Also with --files before the id (it takes every word after it: the id and the note went to it, and the
        // command said an argument was missing).
        for arguments in [
            ["triage", id, "--ack", "--files", file, "--operator", "ana"], ["note", "500", "hello", "--files", file],
            ["triage", "--ack", "--files", file, id], ["note", "--files", file, "500", "hello"],
        ] {
            let result = try Binary.run(arguments)
            #expect(result.status == 2, "\(arguments): \(result.stdout)")
            #expect(!result.stdout.contains("by ana") && !result.stdout.contains("noted on"), "\(result.stdout)")
            #expect(result.stderr.contains("would be lost") && result.stderr.contains("--ledger"), "\(result.stderr)")
        }
    }

    @Test("lookup --files says why a file's records were rejected (its first), not only how many")
    func filesRejectionSaid() throws {
        // The demo's signed notifications, without the test root they are signed with.
        let file = Binary.packageRoot.appendingPathComponent("SampleData/data/notifications-v2.ndjson").path
        let result = try Binary.run(["lookup", "150000000012001", "--files", file])
        #expect(result.status == 1, "\(result.stderr)")
        let rejected = result.stderr.split(separator: "\n").filter { $0.contains(": rejected ") }
        #expect(rejected.count == 1 && rejected[0].contains("a test CA's root is trusted with --trust-root FILE"), "\(result.stderr)")
        #expect(result.stderr.contains("more rejected (receiptdesk decode FILE names each)"), "\(result.stderr)")
    }

    @Test("--ledger and --files together are a usage error: one source is read, never the other silently")
    func twoSources() throws {
        let file = try Self.historyFile()
        for arguments in [["lookup", "500"], ["refunds"], ["triage", "x", "--log"], []] {
            let result = try Binary.run(arguments + ["--ledger", "sqlite:/nonexistent/never.sqlite", "--files", file])
            #expect(result.status == 2, "\(arguments): \(result.stdout)")
            #expect(result.stderr.contains("--ledger and --files are two sources: give one"), "\(arguments): \(result.stderr)")
        }
    }

    @Test("refunds --csv has the dashboard export's columns, amounts in units of their currency (JSON keeps milliunits)")
    func refundsCSVAmounts() throws {
        let ledger = try Self.sampleDataLedger()
        let json = try Binary.run(["refunds", "--ledger", "sqlite:\(ledger)", "--json", "--limit", "1000"]).lines.map(Binary.json)
        let csv = try Binary.run(["refunds", "--ledger", "sqlite:\(ledger)", "--csv", "--limit", "1000"]).lines
        #expect(csv.first == "id,rule,severity,status,customer,environment,transactionId,productId,amount,currency,at,detail")
        #expect(csv.count == json.count + 1 && json.count > 10)
        var priced = Set<String>()
        for (flag, line) in zip(json, csv.dropFirst()) {
            let cells = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            #expect(cells[0] == flag["id"] as? String)
            guard let amount = flag["amount"] as? Int else { continue }
            let currency = flag["currency"] as? String
            #expect(cells[8] == Money.format(Int64(amount), currency: currency), "\(line)")
            if let currency { priced.insert(currency) }
        }
        // Currencies of 0 and 2 decimals both (JPY's 750000 milliunits is 750).
        #expect(priced.contains("JPY") && priced.count > 1, "\(priced)")
        // The text's first line is the whole ledger's, whatever the filters; an empty list says the filters chose none.
        let recent = try Binary.run(["refunds", "--ledger", "sqlite:\(ledger)", "--since", "1d"]).lines
        #expect(recent.first?.hasPrefix("refunds in the whole ledger: ") == true && recent.dropFirst() == ["no flags match --since 1d"], "\(recent)")
    }

    @Test("refunds --at lists the queue as it stood: the flags raised by the instant, each with its status now; --since counts back from it")
    func refundsAt() throws {
        let ledger = try Self.sampleDataLedger()
        let all = try Binary.run(["refunds", "--ledger", "sqlite:\(ledger)", "--json", "--limit", "100000"]).lines.map(Binary.json)
        let times = all.compactMap { $0["at"] as? Int }.sorted()
        #expect(times.count == all.count && times.count > 10)
        // The instant a flag in the middle was raised (it is in the queue at that instant).
        let instant = times[times.count / 2]
        let iso = Timestamp(millisecondsSince1970: Int64(instant)).iso8601
        let at = try Binary.run(["refunds", "--ledger", "sqlite:\(ledger)", "--json", "--limit", "100000", "--at", iso])
        #expect(at.status == 0, "\(at.stderr)")
        let listed = try at.lines.map(Binary.json)
        #expect(listed.map { $0["id"] as? String } == all.filter { ($0["at"] as? Int ?? .max) <= instant }.map { $0["id"] as? String })
        #expect(!listed.isEmpty && listed.count < all.count)
        // Statuses are today's: the same flag says the same as the list now.
        let now = Dictionary(all.map { ($0["id"] as? String ?? "", $0["status"] as? String) }, uniquingKeysWith: { a, _ in a })
        #expect(listed.allSatisfy { now[$0["id"] as? String ?? ""] == $0["status"] as? String })

        // --since 24h: the day before the instant, not before now.
        let day = try Binary.run(["refunds", "--ledger", "sqlite:\(ledger)", "--json", "--limit", "100000", "--at", iso, "--since", "24h"])
        let inDay = all.filter { ($0["at"] as? Int).map { $0 <= instant && $0 >= instant - 86_400_000 } ?? false }
        #expect(try day.lines.map(Binary.json).map { $0["id"] as? String } == inDay.map { $0["id"] as? String })
        #expect(!inDay.isEmpty)

        // The text names the instant, and an empty list the options given.
        let text = try Binary.run(["refunds", "--ledger", "sqlite:\(ledger)", "--at", "1971-01-01"]).lines
        #expect(text.dropFirst() == ["the queue at 1971-01-01T00:00:00Z: the flags whose refund or request came by then (by the records' times, whenever imported), each with its status now", "no flags match --at 1971-01-01"], "\(text)")
        let wrong = try Binary.run(["refunds", "--ledger", "sqlite:\(ledger)", "--at", "yesterday-ish"])
        #expect(wrong.status == 2 && wrong.stderr.contains("--at takes now, a date or an instant"), "\(wrong.stderr)")
    }

    @Test("refunds and lookup say whether a consumption request's deadline has passed at the instant they answer for, as the dashboard's due column does")
    func consumptionDeadlineAtInstant() throws {
        let ledger = try Self.sampleDataLedger()
        let id = "consumption-request:a7d2e135-75aa-4969-b5d4-69ad5588fd02"
        let detail = "refund requested; send consumption data by 2025-07-01T02:00:00Z"
        // (Raised 2025-06-30T14:00Z, twelve hours to answer.)
        for (at, said) in [("2025-07-01T00:00:00Z", "  (2h left)"), ("2025-07-01T03:00:00Z", "  (deadline passed)"), (nil, "  (deadline passed)")] {
            let options = ["--ledger", "sqlite:\(ledger)"] + (at.map { ["--at", $0] } ?? [])
            let queue = try Binary.run(["refunds", "--rule", "consumption-request", "--limit", "1000"] + options)
            let lines = queue.lines
            let flag = try #require(lines.firstIndex { $0.hasSuffix(id) }, "\(queue.stdout)")
            #expect(lines[flag + 1].hasPrefix("    \(detail)\(said)  customer C"), "\(at ?? "now"): \(lines[flag + 1])")
            let customer = try #require(lines[flag + 1].split(separator: " ").last.map(String.init))
            let looked = try Binary.run(["lookup", customer] + options)
            #expect(looked.lines.contains { $0.hasSuffix("\(id)  \(detail)\(said)") }, "\(at ?? "now"): \(looked.stdout)")
        }
        // Raised after the instant, it is not in the queue at all.
        let before = try Binary.run(["refunds", "--rule", "consumption-request", "--ledger", "sqlite:\(ledger)", "--at", "2025-06-30T13:00:00Z"])
        #expect(!before.stdout.contains(id))
        // The first line's count of requests awaiting data is at the instant too: the one with 2h left, then none.
        // The rest of it is the whole ledger's now at any --at: a refund reversed since counts as reversed, not refunded.
        let outcomesNow = try #require(try Binary.run(["refunds", "--ledger", "sqlite:\(ledger)"]).lines.first?.split(separator: ",").dropLast())
        for (at, awaiting) in [("2025-07-01T00:00:00Z", 1), ("2025-07-01T03:00:00Z", 0), ("2025-06-30T13:00:00Z", 0), ("2025-01-01T00:00:00Z", 0)] {
            let first = try Binary.run(["refunds", "--ledger", "sqlite:\(ledger)", "--at", at]).lines.first ?? ""
            #expect(first.hasSuffix(" reversed, \(awaiting) consumption requests awaiting data at \(at)"), "\(at): \(first)")
            #expect(first.split(separator: ",").dropLast() == outcomesNow, "\(at): \(first)")
        }
    }

    @Test("refunds reads the queue a page at a time: every flag once, in order, up to --limit, and whether more match")
    func refundsPages() async throws {
        let path = try Self.sampleDataLedger()
        let ledger = try await SQLLedger.open(SQLiteDatabase.open(path: path), now: Timestamp(millisecondsSince1970: 0), readOnly: true)
        defer { Task { try? await ledger.close() } }
        let all = try await ledger.flags(FlagQuery(limit: 100_000))
        #expect(all.count > 10)
        for (limit, pageSize) in [(all.count, 3), (all.count + 5, 4), (all.count - 1, 3), (7, 3), (6, 3), (1, 1), (all.count, 1000)] {
            var pages: [[RefundFlag]] = []
            let more = try await ledger.forEachFlagPage(FlagQuery(), limit: limit, pageSize: pageSize) { pages.append($0) }
            let listed = pages.flatMap { $0 }
            #expect(listed.map(\.id) == all.prefix(limit).map(\.id), "limit \(limit), pages of \(pageSize)")
            #expect(more == (all.count > limit), "limit \(limit), pages of \(pageSize)")
            #expect(pages.allSatisfy { $0.count <= pageSize })
        }
        // The filters hold across pages.
        var open: [RefundFlag] = []
        _ = try await ledger.forEachFlagPage(FlagQuery(status: .open), pageSize: 2) { open += $0 }
        #expect(open.map(\.id) == all.filter { $0.status == .open }.map(\.id))
    }

    @Test("lookup --json counts the transactions the text and the dashboard count, and the purchases they are apart")
    func transactionsAndPurchases() throws {
        // Two sandbox receipts of one customer: restores give periods second ids (157 records, 61 purchases).
        let text = try Binary.run(["lookup", "--files", Binary.corpus, "1000000723811158"])
        #expect(text.status == 0, "\(text.stderr)")
        let counts = try #require(text.stdout.firstMatch(of: #/ (\d+) transactions \((\d+) purchases\)/#), "\(text.stdout)")
        let json = try Binary.json(try Binary.run(["lookup", "--files", Binary.corpus, "1000000723811158", "--json"]).stdout)
        let summary = try #require(json["summary"] as? [String: Any])
        #expect(summary["transactions"] as? Int == Int(counts.1) && summary["purchases"] as? Int == Int(counts.2), "\(summary)")
        #expect(Int(counts.2)! < Int(counts.1)!)
    }

    @Test("SampleData's README's lookup without a ledger works as written; with no ledger, the error says what does")
    func sampleDataLookup() throws {
        let readme = try String(contentsOf: Binary.packageRoot.appendingPathComponent("SampleData/README.md"), encoding: .utf8)
        // (With the catalog the demo reads: the entitlements' names and the products' kinds are the demo's.)
        let written =
            "receiptdesk lookup ID --files SampleData/data --trust-root SampleData/test-root.pem --catalog SampleData/catalog.csv --at 2025-07-01T00:00:00Z"
        #expect(readme.replacing("\n", with: " ").contains(written))
        let root = Binary.packageRoot.path
        let catalog = ["--catalog", root + "/SampleData/catalog.csv"]
        let result = try Binary.run(
            [
                "lookup", "150000000014001", "--files", root + "/SampleData/data", "--trust-root", root + "/SampleData/test-root.pem",
                "--at", "2025-07-01T00:00:00Z",
            ] + catalog)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("1 transaction, 1 refunded"), "\(result.stdout)")
        // A period that ended with renewal on: not "EXPIRED ... renews".
        let ended = try Binary.run(
            [
                "lookup", "150000000002001", "--files", root + "/SampleData/data", "--trust-root", root + "/SampleData/test-root.pem",
                "--at", "2025-07-01T00:00:00Z",
            ] + catalog)
        let line = try #require(ended.stdout.split(separator: "\n").first { $0.contains("EXPIRED") }, "\(ended.stdout)")
        #expect(line.hasSuffix("storage.monthly  renewal was on"), "\(line)")
        #expect(line.hasPrefix("  storage "), "the catalog's name for the group: \(line)")
        let missing = try Binary.run(["lookup", "150000000014001", "--ledger", "sqlite:" + ImportCommandTests.temporary("none.sqlite")])
        #expect(missing.status == 3 && missing.stderr.contains("--files FILE... reads files without one"), "\(missing.stderr)")
    }

    @Test("the timeline's columns line up, an instant with milliseconds among ones without")
    func timelineAligned() throws {
        let file = "\(Binary.corpus)/aporat__store-receipt-validator/inAppPurchaseResponse.json"
        let result = try Binary.run(["lookup", "1000000093384828", "--files", file])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false).drop { $0 != "timeline" }.dropFirst().prefix { !$0.isEmpty }
        #expect(lines.contains { $0.contains(".569Z") }, "\(result.stdout)")
        let kindColumns = Set(lines.map { line in line.firstRange(of: #/Z +[a-z]/#).map { line.distance(from: line.startIndex, to: $0.upperBound) } ?? -1 })
        #expect(kindColumns.count == 1, "\(lines.joined(separator: "\n"))")
    }

    @Test("--files decodes files into an in-memory ledger: nothing needs importing first")
    func filesInMemory() throws {
        let file = "\(Binary.corpus)/imdhemy__laravel-in-app-purchases/appstore-server-notification.json"
        let result = try Binary.run(["lookup", "1000000746095599", "--files", file, "--at", "2020-11-25T08:27:00Z", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let states = (try Binary.json(result.stdout)["entitlements"] as? [[String: Any]])?.compactMap { $0["state"] as? String }
        #expect(states == ["active"])
        let refunds = try Binary.run(["refunds", "--files", file, "--json"])
        #expect(refunds.status == 0)
        #expect(refunds.stdout.isEmpty)
        // The id after the paths (--files takes every word after it) is still the id; none at all says how to give one.
        let after = try Binary.run(["lookup", "--files", file, "1000000746095599"])
        #expect(after.status == 0 && after.stdout.contains("customer C1"), "\(after.stderr)")
        let none = try Binary.run(["lookup", "--files", file])
        #expect(none.status == 2 && none.stderr.contains("give the id to look up"), "\(none.stderr)")
    }

    @Test("refunds --limit cuts the list and says so; the JSON stays data only")
    func limitSaysSo() throws {
        let url = "sqlite:\(try Self.ledgerWithHistory())"
        let all = try Binary.run(["refunds", "--ledger", url, "--json"])
        #expect(all.lines.count == 2)
        #expect(!all.stderr.contains("more match"))
        let text = try Binary.run(["refunds", "--ledger", url, "--limit", "1"])
        #expect(text.status == 0)
        #expect(text.stdout.contains("showing the newest 1 flags; more match"), "\(text.stdout)")
        let json = try Binary.run(["refunds", "--ledger", url, "--json", "--limit", "1"])
        #expect(json.lines.count == 1)
        #expect(json.stderr.contains("showing the newest 1 flags; more match"), "\(json.stderr)")
        let exact = try Binary.run(["refunds", "--ledger", url, "--limit", "2"])
        #expect(!exact.stdout.contains("more match"))
        #expect(try Binary.run(["refunds", "--ledger", url, "--limit", "0"]).status == 2)
    }
}
