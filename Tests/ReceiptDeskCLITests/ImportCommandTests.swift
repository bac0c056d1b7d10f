import Foundation
import Ledger
import LedgerSQLite
import ReceiptModel
import Testing

/// Where this test process's files go (ledgers, inputs, exports): one directory, removed when the process exits.
let cliScratchDirectory: URL = {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("receiptdesk-cli-tests-\(getpid())")
    try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    atexit { try? FileManager.default.removeItem(at: cliScratchDirectory) }
    return url
}()

@Suite("receiptdesk import, as an operator runs it", .serialized, .ownThreads)
struct ImportCommandTests {
    static func temporary(_ name: String) -> String {
        cliScratchDirectory.appendingPathComponent("rd-\(UUID().uuidString)-\(name)").path
    }

    /// Starts the real binary in the background, its output discarded.
    static func start(_ arguments: [String]) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Binary.path)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }

    /// Lets an import run until its ledger holds `rows` raw records, and leaves it stopped (SIGSTOP) there; returns
    /// the last count seen. A reader works while the import writes (WAL). The import runs in 20 ms slices and is
    /// stopped while the reader counts, so it cannot finish unseen however the machine schedules the test.
    static func stopOnceCommitted(_ process: Process, ledgerPath: String, rows wanted: Int64) async -> Int64 {
        var seen: Int64 = 0
        let deadline = Date().addingTimeInterval(300)
        kill(process.processIdentifier, SIGSTOP)
        while Date() < deadline && process.isRunning {
            if FileManager.default.fileExists(atPath: ledgerPath),
                let database = try? SQLiteDatabase.open(path: ledgerPath, readOnly: true),
                let rows = try? await database.read({ c in try c.scalar("SELECT COUNT(*) FROM raw_records")?.int ?? 0 })
            {
                try? await database.close()
                seen = rows
                if rows >= wanted { break }
            }
            kill(process.processIdentifier, SIGCONT)
            usleep(20_000)
            kill(process.processIdentifier, SIGSTOP)
        }
        return seen
    }

    /// NDJSON of decoded transaction payloads: small records, many of them.
    /// - Parameter refundedEvery: every so many transactions one is refunded an hour after purchase (a quick refund).
    static func writeTransactions(count: Int, to path: String, prefix: String = "k", refundedEvery: Int? = nil) {
        var text = ""
        text.reserveCapacity(count * 200)
        for i in 0..<count {
            let purchase = 1_700_000_000_000 + Int64(i) * 1000
            let refund = refundedEvery.map { i % $0 == 0 } == true ? #","revocationDate":\#(purchase + 3_600_000),"revocationReason":0"# : ""
            text += #"{"transactionId":"\#(prefix)\#(i)","originalTransactionId":"\#(prefix)o\#(i / 10)","productId":"pro.monthly","purchaseDate":\#(purchase),"expiresDate":\#(1_702_592_000_000 + Int64(i) * 1000),"type":"Auto-Renewable Subscription","quantity":1\#(refund)}"#
            text += "\n"
        }
        writeTestFile(path, Data(text.utf8))
    }

    @Test("a second import of the same files changes nothing: every record a duplicate but those refused again")
    func idempotent() async throws {
        let ledger = Self.temporary("ledger.sqlite")
        let first = try Binary.run(["import", "--ledger", "sqlite:\(ledger)", Binary.corpus])
        #expect(first.status == 1)  // the corpus holds records Apple would reject
        let firstTotal = try #require(first.stdout.split(separator: "\n").last)
        #expect(firstTotal.hasPrefix("total: read 36 = imported "))
        // A first import into the new ledger built the indexes it loaded without (SQLLedger.deferIndexesForFirstLoad).
        let database = try SQLiteDatabase.open(path: ledger)
        let (deferred, indexes) = try await database.read { c in
            (
                try c.scalar("SELECT COUNT(*) FROM ledger_meta WHERE key = 'deferred_indexes'")?.int,
                try c.query("SELECT name FROM sqlite_master WHERE type = 'index'", []).compactMap { $0.first?.text }
            )
        }
        try await database.close()
        #expect(deferred == 0)
        #expect(indexes.contains("customer_stats_activity") && indexes.contains("transactions_refund_day"), "\(indexes)")
        let second = try Binary.run(["import", "--ledger", "sqlite:\(ledger)", Binary.corpus])
        // The six Apple would reject, the Xcode id another app's test data holds, and the response whose transaction
        // ids are masked are decoded again and refused again; no other record is decoded again.
        #expect(second.status == 1)
        #expect(second.stdout.contains("total: read 36 = imported 0 + duplicate 28 + rejected 8"), "\(second.stdout)")
    }

    @Test("a file imported without the root its records need is imported again with --trust-root: its rejected records go in")
    func retryWithRoot() throws {
        let ledger = Self.temporary("retry.sqlite")
        let file = Binary.packageRoot.appendingPathComponent("SampleData/data/server-api.ndjson").path
        let root = Binary.packageRoot.appendingPathComponent("SampleData/test-root.pem").path
        let first = try Binary.run(["import", "--ledger", "sqlite:\(ledger)", file])
        #expect(first.status == 1)
        #expect(first.stderr.contains("chainInvalid"), "\(first.stderr)")
        #expect(first.stdout.contains("total: read 103 = imported 0 + duplicate 0 + rejected 103"), "\(first.stdout)")
        let second = try Binary.run(["import", "--ledger", "sqlite:\(ledger)", "--trust-root", root, file])
        #expect(second.status == 0, "\(second.stderr)")
        #expect(second.stdout.contains("total: read 103 = imported 103 + duplicate 0 + rejected 0"), "\(second.stdout)")
        let lookup = try Binary.run(["lookup", "--ledger", "sqlite:\(ledger)", "--json", "150000000022001"])
        #expect(lookup.status == 0, "\(lookup.stderr)")
        let third = try Binary.run(["import", "--ledger", "sqlite:\(ledger)", "--trust-root", root, file])
        #expect(third.status == 0)
        #expect(third.stdout.contains("total: read 103 = imported 0 + duplicate 103 + rejected 0"), "\(third.stdout)")
    }

    @Test("a ledger kept in the directory imported is not read as data: no run stores the ledger's bytes in itself")
    func ledgerBesideItsData() throws {
        let directory = Self.temporary("beside")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            atPath: "\(Binary.corpus)/RevenueCat__purchases-ios/verifyReceiptSample1.txt", toPath: directory + "/response.json")
        let ledger = directory + "/ledger.sqlite"
        let first = try Binary.run(["import", "--ledger", "sqlite:\(ledger)", "--no-verify", directory])
        #expect(first.status == 0, "\(first.stdout)\(first.stderr)")
        #expect(first.stdout.contains("total: read 1 = imported 1 + duplicate 0 + rejected 0"), "\(first.stdout)")
        // Its -wal and -shm beside it too, as while another process has it open.
        for companion in ["-wal", "-shm"] { _ = FileManager.default.createFile(atPath: ledger + companion, contents: Data([1, 2, 3])) }
        let second = try Binary.run(["import", "--ledger", "sqlite:\(ledger)", "--no-verify", directory])
        #expect(second.status == 0, "\(second.stdout)\(second.stderr)")
        #expect(second.stdout.contains("total: read 1 = imported 0 + duplicate 1 + rejected 0"), "\(second.stdout)")
        #expect(second.stderr.contains("SQLite database file"), "\(second.stderr)")
        // Named one by one (`import ./*`), the same.
        let named = try FileManager.default.contentsOfDirectory(atPath: directory).sorted().map { directory + "/" + $0 }
        #expect(named.count == 4, "\(named)")
        let third = try Binary.run(["import", "--ledger", "sqlite:\(ledger)", "--no-verify"] + named)
        #expect(third.status == 0, "\(third.stdout)\(third.stderr)")
        #expect(third.stdout.contains("total: read 1 = imported 0 + duplicate 1 + rejected 0"), "\(third.stdout)")
    }

    @Test("the same content imported again under another name says under which name the Imports screen lists it")
    func sameContentElsewhere() throws {
        let ledger = Self.temporary("renamed.sqlite")
        let original = "\(Binary.corpus)/aporat__store-receipt-validator/inAppPurchaseInvalidReceiptResponse.json"
        let copy = Self.temporary("bad.json")
        try FileManager.default.copyItem(atPath: original, toPath: copy)
        let first = try Binary.run(["import", "--ledger", "sqlite:\(ledger)", original])
        #expect(first.status == 1 && !first.stderr.contains("the same content as"), "\(first.stderr)")
        let again = try Binary.run(["import", "--ledger", "sqlite:\(ledger)", copy])
        #expect(again.status == 1)
        #expect(again.stderr.contains("\(copy): the same content as \(original), imported "), "\(again.stderr)")
        #expect(again.stderr.contains("the Imports screen lists its records under that name"))
        // The same file again: nothing to say.
        #expect(!(try Binary.run(["import", "--ledger", "sqlite:\(ledger)", original])).stderr.contains("the same content as"))
        // Two empty files are not the same content of anything: each is said to be empty.
        let empty = [Self.temporary("empty-1.ndjson"), Self.temporary("empty-2.ndjson")]
        for path in empty { _ = FileManager.default.createFile(atPath: path, contents: Data()) }
        let both = try Binary.run(["import", "--ledger", "sqlite:\(ledger)"] + empty)
        #expect(both.status == 0 && !both.stderr.contains("the same content as"), "\(both.stderr)")
        #expect(empty.allSatisfy { both.stderr.contains("\($0): empty, no records") }, "\(both.stderr)")
    }

    @Test("a file named relative to two directories is two sources, each stored by its absolute path; piped bytes a file held say so")
    func sourcesByAbsolutePath() async throws {
        let ledger = Self.temporary("relative.sqlite")
        let original = "\(Binary.corpus)/aporat__store-receipt-validator/inAppPurchaseInvalidReceiptResponse.json"
        let other = "\(Binary.corpus)/RevenueCat__purchases-ios/verifyReceiptSample1.txt"
        var directories: [String] = []
        for (index, file) in [original, other].enumerated() {
            let directory = Self.temporary("dir\(index)")
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: file, toPath: directory + "/mixed.json")
            _ = try Binary.run(["import", "--ledger", "sqlite:\(ledger)", "mixed.json"], directory: directory)
            directories.append(directory)
        }
        // Piped, the first file's bytes: said to be listed under that file's name.
        let piped = try Binary.run(["import", "--ledger", "sqlite:\(ledger)", "-"], stdin: try Data(contentsOf: URL(fileURLWithPath: original)))
        #expect(piped.stderr.contains("-: the same content as \(directories[0])/mixed.json, imported "), "\(piped.stderr)")
        let database = try SQLiteDatabase.open(path: ledger, readOnly: true)
        let paths = try await database.read { c in try c.query("SELECT path FROM sources", []).compactMap { $0.first?.text } }
        try await database.close()
        #expect(Set(paths) == Set(directories.map { $0 + "/mixed.json" }), "\(paths)")
    }

    @Test("a pipe named as a file (import <(zcat x.gz), /dev/stdin) is read whole once: its records imported, not a source of none")
    func pipeNamedAsFile() throws {
        let ledger = Self.temporary("pipe.sqlite")
        let file = "\(Binary.corpus)/RevenueCat__purchases-ios/verifyReceiptSample1.txt"
        let bytes = try Data(contentsOf: URL(fileURLWithPath: file))
        // Read twice (hashed, then decoded), the pipe was empty the second time: "read 0", and the source stored
        // as imported, so the same content from a file later was taken for already imported.
        let piped = try Binary.run(["import", "--ledger", "sqlite:\(ledger)", "/dev/stdin"], stdin: bytes, limit: .seconds(60))
        #expect(piped.status == 0 && piped.stdout.contains("total: read 1 = imported 1 + duplicate 0 + rejected 0"), "\(piped.stdout)\(piped.stderr)")
        let again = try Binary.run(["import", "--ledger", "sqlite:\(ledger)", file])
        #expect(again.stdout.contains("total: read 1 = imported 0 + duplicate 1 + rejected 0"), "\(again.stdout)")
    }

    @Test("Xcode test transactions numbered 0 in two apps are two purchases: the second app's is refused, naming both, not merged")
    func reusedTestIds() throws {
        let ledger = Self.temporary("xcode.sqlite")
        let apple = "\(Binary.corpus)/apple__app-store-server-library-swift/xcode"
        let files = [
            "\(apple)/xcode-app-receipt-with-transaction", "\(apple)/xcode-signed-transaction",
            "\(Binary.corpus)/tikhop__TPInAppReceipt/receipt-xcode",
        ]
        let first = try Binary.run(["import", "--ledger", "sqlite:\(ledger)"] + files)
        #expect(first.status == 1, "\(first.stderr)")
        #expect(
            first.stderr.contains("receipt-xcode: rejected record #0 (byte 0): testIdReused: its Xcode transaction 0 has bundle net.zachariadis.cyclemaps, where the ledger's has "),
            "\(first.stderr)")
        #expect(first.stderr.contains("StoreKit testing numbers transactions anew in each app and session"))
        // The two sightings of one purchase (Apple's receipt and its signed transaction) are one transaction still.
        #expect(first.stdout.contains("total: read 3 = imported 2 + duplicate 0 + rejected 1"), "\(first.stdout)")
        let found = try Binary.run(["lookup", "--json", "--ledger", "sqlite:\(ledger)", "0"])
        let summary = try #require(String(data: Data(found.stdout.utf8), encoding: .utf8))
        #expect(!summary.contains("CYCLEMAPS") && !summary.contains("cyclemaps"), "\(summary)")
        // Imported again: refused again, with nothing rewritten.
        let again = try Binary.run(["import", "--ledger", "sqlite:\(ledger)"] + files)
        #expect(again.stdout.contains("total: read 3 = imported 0 + duplicate 2 + rejected 1"), "\(again.stdout)")

        // The other app first: Apple's files are the refused ones, their renewal info of subscription 0 with them
        // (it joined the other app's customer, "renews" to pass.premium).
        let other = Self.temporary("xcode-other.sqlite")
        let reversed = try Binary.run(["import", "--ledger", "sqlite:\(other)", files[2], apple + "/xcode-signed-renewal-info"] + files.prefix(2))
        #expect(reversed.stdout.contains("total: read 4 = imported 1 + duplicate 0 + rejected 3"), "\(reversed.stdout)\n\(reversed.stderr)")
        #expect(
            reversed.stderr.contains(
                "testIdReused: its Xcode renewal info of subscription 0 is for pass.premium, where the ledger's subscription 0 is CYCLEMAPS_PREMIUM"),
            "\(reversed.stderr)")
        let cyclemaps = try Binary.run(["lookup", "--json", "--ledger", "sqlite:\(other)", "0"])
        #expect(cyclemaps.stdout.contains("CYCLEMAPS_PREMIUM") && !cyclemaps.stdout.contains("pass.premium"), "\(cyclemaps.stdout)")
    }

    /// The first transaction-history response of the demo's Server API file holding at least `count` signed
    /// transactions (signed by its TEST root, SampleData/test-root.pem).
    static func demoHistory(atLeast count: Int) throws -> [String: Any] {
        let lines = try String(contentsOfFile: Binary.packageRoot.appendingPathComponent("SampleData/data/server-api.ndjson").path, encoding: .utf8)
            .split(separator: "\n")
        return try #require(
            lines.lazy.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
                .first { ($0["signedTransactions"] as? [String])?.count ?? 0 >= count })
    }

    @Test("what a record leaves out as it is taken (a placeholder where a signed transaction was) is said by import as decode says it")
    func importSaysWarnings() throws {
        // A history response of the demo's with two of its signed transactions replaced: a redaction, and one cut short.
        var response = try Self.demoHistory(atLeast: 5)
        var signed = try #require(response["signedTransactions"] as? [String])
        signed[3] = "[REDACTED]"
        signed[4] = String(signed[4].prefix(300))
        response["signedTransactions"] = signed
        let file = Self.temporary("history-redacted.json")
        writeTestFile(file, try JSONSerialization.data(withJSONObject: response))
        let root = Binary.packageRoot.appendingPathComponent("SampleData/test-root.pem").path
        let ledger = Self.temporary("warned.sqlite")
        let imported = try Binary.run(["import", "--trust-root", root, "--ledger", "sqlite:\(ledger)", file])
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(
            imported.stderr.contains(#"history-redacted.json: record #0 (byte 0): warning: signedTransactions[3] is not a JWS ("[REDACTED]")"#),
            "\(imported.stderr)")
        #expect(imported.stderr.contains("record #0 (byte 0): warning: signedTransactions[4] is not a JWS"), "\(imported.stderr)")
        // As `decode` says them.
        let decoded = try Binary.run(["decode", "--trust-root", root, file])
        #expect(decoded.stdout.contains(#"warning: signedTransactions[3] is not a JWS ("[REDACTED]")"#), "\(decoded.stdout)")
    }

    @Test("a record the ledger refuses after it decoded keeps its bytes without the shared secret")
    func refusedKeepsNoSecret() async throws {
        let path = Self.temporary("refused-secret.sqlite")
        // Signed (Sandbox) data holding transaction 0, then Xcode's receipt of its transaction 0 in a request body with
        // the app's shared secret: refused (testIdReused), its bytes kept for the Imports screen.
        let sandbox = Self.temporary("sandbox-0.json")
        writeTestFile(sandbox, Data(#"{"status":0,"environment":"Sandbox","receipt":{"bundle_id":"com.example"},"latest_receipt_info":[{"transaction_id":"0","original_transaction_id":"0","product_id":"pro.monthly","purchase_date_ms":"1740787200000","expires_date_ms":"1743465600000","quantity":"1"}]}"#.utf8))
        #expect(try Binary.run(["import", "--ledger", "sqlite:\(path)", sandbox]).status == 0)
        let receipt = try String(
            contentsOfFile: "\(Binary.corpus)/apple__app-store-server-library-swift/xcode/xcode-app-receipt-with-transaction", encoding: .utf8)
        let body = Self.temporary("body.json")
        let secret = "SEKRIT-shared-secret-0123456789"
        writeTestFile(body, Data(#"{"receipt-data":"\#(receipt.trimmingCharacters(in: .whitespacesAndNewlines))","password":"\#(secret)"}"#.utf8))
        let refused = try Binary.run(["import", "--ledger", "sqlite:\(path)", body])
        #expect(refused.stderr.contains("testIdReused"), "\(refused.stderr)")
        let ledger = try await SQLLedger.open(SQLiteDatabase.open(path: path), now: Timestamp(millisecondsSince1970: 0), readOnly: true)
        let rejected = try #require(try await ledger.rejectedRecords(after: nil, limit: 10).first)
        let raw = String(decoding: try await ledger.rejectedRaw(rejected.id), as: UTF8.self)
        try await ledger.close()
        #expect(!raw.contains(secret) && raw.contains(#""password":"<redacted>""#), "\(raw.prefix(200))")
        #expect(raw.contains("receipt-data"))
    }

    @Test("a verifying import of records a --no-verify import took before says their signatures were not checked now")
    func verifyingOverUnverified() throws {
        let lines = try String(contentsOfFile: Binary.packageRoot.appendingPathComponent("SampleData/data/server-api.ndjson").path, encoding: .utf8)
            .split(separator: "\n")
        let file = Self.temporary("one-unverified.json")
        writeTestFile(file, Data(lines[0].utf8))
        // The same record and another, in a file of its own: the first is a duplicate of the unverified one.
        let more = Self.temporary("two-records.ndjson")
        writeTestFile(more, Data((lines[0] + "\n" + lines[1] + "\n").utf8))
        let root = Binary.packageRoot.appendingPathComponent("SampleData/test-root.pem").path
        let ledger = "sqlite:" + Self.temporary("unverified-first.sqlite")
        let unverified = try Binary.run(["import", "--no-verify", "--ledger", ledger, file])
        #expect(unverified.status == 0, "\(unverified.stderr)")
        #expect(!unverified.stderr.contains("stand as imported before with --no-verify"))
        let said = "of its records stand as imported before with --no-verify: a ledger keeps a record's first import, so their signatures were not checked now"
        let again = try Binary.run(["import", "--trust-root", root, "--ledger", ledger, file])
        #expect(again.status == 0 && again.stderr.contains("one-unverified.json: 1 " + said), "\(again.stderr)")
        let other = try Binary.run(["import", "--trust-root", root, "--ledger", ledger, more])
        #expect(other.stdout.contains("imported 1 + duplicate 1"), "\(other.stdout)")
        #expect(other.stderr.contains("two-records.ndjson: 1 " + said), "\(other.stderr)")
        // Again with --no-verify: nothing to say.
        #expect(try !Binary.run(["import", "--no-verify", "--ledger", ledger, more]).stderr.contains(said))
    }

    @Test("a response refused for one of its signed transactions says which one")
    func nestedRefusalSaysWhich() throws {
        var response = try Self.demoHistory(atLeast: 3)
        var signed = try #require(response["signedTransactions"] as? [String])
        // Its second transaction's payload edited (the price), its signature left as it was.
        var parts = signed[1].split(separator: ".").map(String.init)
        var base64 = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        let decoded = try #require(Data(base64Encoded: base64))
        var payload = try #require(try JSONSerialization.jsonObject(with: decoded) as? [String: Any])
        payload["price"] = 1
        parts[1] = try JSONSerialization.data(withJSONObject: payload).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        signed[1] = parts.joined(separator: ".")
        response["signedTransactions"] = signed
        let file = Self.temporary("history-tampered.json")
        writeTestFile(file, try JSONSerialization.data(withJSONObject: response))
        let root = Binary.packageRoot.appendingPathComponent("SampleData/test-root.pem").path
        let imported = try Binary.run(["import", "--trust-root", root, "--ledger", "sqlite:\(Self.temporary("tampered.sqlite"))", file])
        #expect(imported.status == 1)
        #expect(
            imported.stderr.contains(
                "rejected record #0 (byte 0): signatureInvalid: signedTransactions[1]: the signature does not match the header and payload"),
            "\(imported.stderr)")
    }

    @Test("an Xcode payload (unsigned by design) naming a subscription the ledger holds from signed data is refused, not joined to it")
    func testDataJoinsNoSignedSubscription() throws {
        let ledger = Self.temporary("xcode-forged.sqlite")
        // A real Sandbox subscription, 1000000723811158, from verifyReceipt.
        let sandbox = "\(Binary.corpus)/imdhemy__laravel-in-app-purchases/iOS-receipt.json"
        let first = try Binary.run(["import", "--ledger", "sqlite:\(ledger)", sandbox])
        #expect(first.status == 0, "\(first.stderr)")
        // Apple's Xcode transaction with its payload edited to name that subscription (its signature no longer matches,
        // which an Xcode payload's verification never looks at).
        let xcode = try String(contentsOfFile: "\(Binary.corpus)/apple__app-store-server-library-swift/xcode/xcode-signed-transaction", encoding: .utf8)
        let parts = xcode.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ".").map(String.init)
        func base64URL(_ text: String) -> Data? {
            var b = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            while b.count % 4 != 0 { b += "=" }
            return Data(base64Encoded: b)
        }
        let payload = String(decoding: try #require(base64URL(parts[1])), as: UTF8.self)
            .replacingOccurrences(of: #""originalTransactionId":"0""#, with: #""originalTransactionId":"1000000723811158""#)
            .replacingOccurrences(of: #""transactionId":"0""#, with: #""transactionId":"4242""#)
        #expect(payload.contains("1000000723811158") && payload.contains(#""transactionId":"4242""#))
        let encoded = Data(payload.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        let forged = Self.temporary("forged.jws")
        writeTestFile(forged, Data([parts[0], encoded, parts[2]].joined(separator: ".").utf8))
        let imported = try Binary.run(["import", "--ledger", "sqlite:\(ledger)", forged])
        #expect(imported.status == 1, "\(imported.stdout)\(imported.stderr)")
        #expect(imported.stdout.contains("total: read 1 = imported 0 + duplicate 0 + rejected 1"), "\(imported.stdout)")
        #expect(
            imported.stderr.contains(
                "testIdReused: its Xcode transaction 4242 names subscription 1000000723811158, which the ledger holds from signed data"),
            "\(imported.stderr)")
        let found = try Binary.run(["lookup", "--json", "--ledger", "sqlite:\(ledger)", "1000000723811158"])
        #expect(found.status == 0 && !found.stdout.contains("4242") && !found.stdout.contains("Xcode"), "\(found.stdout)")
        // Signed data and the forged record in one file, one batch: refused all the same.
        let batch = Self.temporary("signed-then-forged.ndjson")
        let signedLine = #"{"status":0,"environment":"Sandbox","receipt":{"bundle_id":"com.example"},"latest_receipt_info":[{"transaction_id":"4241","original_transaction_id":"1000000723811158","product_id":"pro.monthly","purchase_date_ms":"1740787200000","expires_date_ms":"1743465600000","quantity":"1"}]}"#
        writeTestFile(batch, Data((signedLine + "\n" + [parts[0], encoded, parts[2]].joined(separator: ".") + "\n").utf8))
        let oneBatch = Self.temporary("one-batch.sqlite")
        let together = try Binary.run(["import", "--ledger", "sqlite:\(oneBatch)", batch])
        #expect(together.stdout.contains("total: read 2 = imported 1 + duplicate 0 + rejected 1"), "\(together.stdout)\(together.stderr)")
        #expect(together.stderr.contains("testIdReused: its Xcode transaction 4242 names subscription 1000000723811158"), "\(together.stderr)")
        // Apple's own Xcode files, numbered 0, join nothing signed: imported as before.
        let own = try Binary.run(["import", "--ledger", "sqlite:\(ledger)", "\(Binary.corpus)/apple__app-store-server-library-swift/xcode/xcode-signed-transaction"])
        #expect(own.status == 0 && own.stdout.contains("imported 1"), "\(own.stdout)\(own.stderr)")
    }

    @Test("the ledger comes from --ledger, else RECEIPTDESK_LEDGER; a bad URL (postgres:// ones too) exits 2, an unreachable ledger 3")
    func ledgerSelection() throws {
        let path = Self.temporary("env.sqlite")
        let file = "\(Binary.corpus)/RevenueCat__purchases-ios/verifyReceiptSample1.txt"
        let viaEnvironment = try Binary.run(["import", file], environment: ["RECEIPTDESK_LEDGER": "sqlite:\(path)"])
        #expect(viaEnvironment.status == 0)
        #expect(FileManager.default.fileExists(atPath: path))
        #expect(try Binary.run(["import", "--ledger", "mysql://x", file]).status == 2)
        // A postgres:// URL that does not parse is a usage error too, told before any connection is tried.
        for (url, says) in [
            ("postgres://someone:secret@127.0.0.1:1/none?sslmode=bogus", "the sslmode parameter"),
            ("postgres://someone:secret@127.0.0.1:1/none?sslmod=require", "libpq does not know, sslmod"),
            ("postgres://someone:secret@127.0.0.1:70000/none", "not a number from 1 to 65535"),
        ] {
            let malformed = try Binary.run(["import", "--ledger", url, file])
            #expect(malformed.status == 2, "\(url): \(malformed.stderr)")
            #expect(malformed.stderr.contains(says) && !malformed.stderr.contains("secret"), "\(malformed.stderr)")
        }
        let unreachable = try Binary.run(["import", "--ledger", "postgres://someone:secret@127.0.0.1:1/none", file])
        #expect(unreachable.status == 3)
        #expect(!unreachable.stderr.contains("secret"))
        let home = Self.temporary("home")
        let xdg = try Binary.run(["import", file], environment: ["HOME": home, "RECEIPTDESK_LEDGER": "", "XDG_DATA_HOME": home + "/data"])
        #expect(xdg.status == 0)
        #expect(FileManager.default.fileExists(atPath: home + "/data/receiptdesk/ledger.sqlite"))
        // A ~ after sqlite: is the home directory (no shell expands it there); no path at all, or a bare path, is a
        // usage error saying how to give it, and one from the environment says where it came from.
        let tilde = try Binary.run(["import", "--ledger", "sqlite:~/tilde.sqlite", file], environment: ["HOME": home])
        #expect(tilde.status == 0 && FileManager.default.fileExists(atPath: home + "/tilde.sqlite"), "\(tilde.stderr)")
        let empty = try Binary.run(["import", "--ledger", "sqlite:", file])
        #expect(empty.status == 2 && empty.stderr.contains("sqlite: needs the ledger file's path"), "\(empty.stderr)")
        let bare = try Binary.run(["import", "--ledger", home + "/bare.sqlite", file])
        #expect(bare.status == 2 && bare.stderr.contains("give sqlite:\(home)/bare.sqlite"), "\(bare.stderr)")
        let bogus = try Binary.run(["import", file], environment: ["RECEIPTDESK_LEDGER": "bogus"])
        #expect(bogus.status == 2 && bogus.stderr.contains("(--ledger, else RECEIPTDESK_LEDGER)"), "\(bogus.stderr)")
        // A mistyped input is said before the ledger is opened: no new ledger is left behind, and a PostgreSQL one is
        // never reached.
        let mistyped = Self.temporary("mistyped.sqlite")
        let missing = try Binary.run(["import", "--ledger", "sqlite:\(mistyped)", file, home + "/nofile.json"])
        #expect(missing.status == 2 && missing.stderr.contains("no such file: \(home)/nofile.json"), "\(missing.stderr)")
        #expect(!FileManager.default.fileExists(atPath: mistyped) && !FileManager.default.fileExists(atPath: mistyped + "-wal"))
        let badRoot = try Binary.run(["import", "--ledger", "sqlite:\(mistyped)", "--trust-root", home + "/noroot.pem", file])
        #expect(badRoot.status == 2 && badRoot.stderr.contains("cannot read trust root \(home)/noroot.pem"), "\(badRoot.stderr)")
        #expect(!FileManager.default.fileExists(atPath: mistyped))
        let missingOnServer = try Binary.run(["import", "--ledger", "postgres://someone@127.0.0.1:1/none", home + "/nofile.json"])
        #expect(missingOnServer.status == 2 && missingOnServer.stderr.contains("no such file"), "\(missingOnServer.stderr)")
    }

    @Test("import - reads standard input: piped again it is all duplicates; the source is named -")
    func standardInput() async throws {
        let ledger = Self.temporary("stdin.sqlite")
        let input = Self.temporary("piped.ndjson")
        // More than one read chunk (1 MiB), through a temporary directory of its own.
        Self.writeTransactions(count: 12_000, to: input, prefix: "p")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: input))
        #expect(bytes.count > 2 << 20)
        let spoolDirectory = Self.temporary("spool")
        try FileManager.default.createDirectory(atPath: spoolDirectory, withIntermediateDirectories: true)
        let first = try Binary.run(["import", "--ledger", "sqlite:\(ledger)", "-"], environment: ["TMPDIR": spoolDirectory], stdin: bytes)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.contains("total: read 12000 = imported 12000 + duplicate 0 + rejected 0"), "\(first.stdout)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: spoolDirectory).isEmpty)
        let again = try Binary.run(["import", "--ledger", "sqlite:\(ledger)", "-"], stdin: bytes)
        #expect(again.stdout.contains("total: read 12000 = imported 0 + duplicate 12000 + rejected 0"), "\(again.stdout)")
        #expect(try Binary.run(["lookup", "p7", "--ledger", "sqlite:\(ledger)"]).status == 0)
        let database = try SQLiteDatabase.open(path: ledger, readOnly: true)
        let paths = try await database.read { c in try c.query("SELECT path FROM sources", []).map { $0[0].text } }
        try await database.close()
        #expect(paths == ["-"])
    }

    @Test("a record over --max-record-bytes is rejected with its size; the records around it import")
    func oversizeRecord() throws {
        let ledger = Self.temporary("oversize.sqlite")
        let input = Self.temporary("oversize.ndjson")
        let big = #"{"transactionId":"big","originalTransactionId":"big","productId":""# + String(repeating: "x", count: 10_000) + #"","purchaseDate":1700000000000,"type":"Non-Consumable","quantity":1}"#
        let small = #"{"transactionId":"s1","originalTransactionId":"s1","productId":"pro","purchaseDate":1700000000000,"type":"Non-Consumable","quantity":1}"#
        _ = FileManager.default.createFile(atPath: input, contents: Data([small, big, small.replacingOccurrences(of: "s1", with: "s2")].joined(separator: "\n").utf8))
        let result = try Binary.run(["import", "--ledger", "sqlite:\(ledger)", "--max-record-bytes", "4096", "--no-verify", input])
        #expect(result.status == 1)
        #expect(result.stdout.contains("total: read 3 = imported 2 + duplicate 0 + rejected 1"), "\(result.stdout)")
        #expect(
            result.stderr.contains(
                "rejected record #1 (byte \(small.utf8.count + 1)): recordTooLarge: the record is \(big.utf8.count) bytes, over the limit of 4096 bytes"),
            "\(result.stderr)")
        #expect(try Binary.run(["import", "--ledger", "sqlite:\(ledger)", "--max-record-bytes", "10", input]).status == 2)
    }

    @Test("SIGKILL mid-import leaves a sound ledger of whole batches; running it again completes it")
    func killMidImport() async throws {
        let input = Self.temporary("big.ndjson")
        let count = 50_000
        Self.writeTransactions(count: count, to: input)
        let ledgerPath = Self.temporary("kill.sqlite")
        let batch = 500
        let process = try Self.start(["import", "--ledger", "sqlite:\(ledgerPath)", "--batch-size", "\(batch)", input])
        // It is killed once some batches are in.
        let seen = await Self.stopOnceCommitted(process, ledgerPath: ledgerPath, rows: Int64(batch * 4))
        #expect(process.isRunning, "the import finished before it could be killed; make the input larger")
        kill(process.processIdentifier, SIGKILL)
        kill(process.processIdentifier, SIGCONT)
        process.waitUntilExit()
        #expect(seen >= Int64(batch * 4))

        let database = try SQLiteDatabase.open(path: ledgerPath)
        #expect(try await database.integrityCheck() == "ok")
        let (records, transactions, completed) = try await database.read { c in
            (
                try c.scalar("SELECT COUNT(*) FROM raw_records")?.int ?? -1,
                try c.scalar("SELECT COUNT(*) FROM transactions")?.int ?? -1,
                try c.scalar("SELECT COUNT(*) FROM sources WHERE completed_at IS NOT NULL")?.int ?? -1
            )
        }
        try await database.close()
        #expect(records > 0 && records < Int64(count))
        #expect(records % Int64(batch) == 0, "only whole batches are committed")
        #expect(transactions == records)
        #expect(completed == 0)

        let rerun = try Binary.run(["import", "--ledger", "sqlite:\(ledgerPath)", "--batch-size", "\(batch)", input])
        #expect(rerun.status == 0)
        #expect(rerun.stdout.contains("total: read \(count) = imported \(count) + duplicate 0 + rejected 0"))
        // The file's figures hold the killed run's records: the line says how many were.
        #expect(
            rerun.stderr.contains("imported \(count) + duplicate 0 + rejected 0 (resumed after its first \(records) records, committed by another run of this file: one cut short, or one still under way)"),
            "\(rerun.stderr)")
        let again = try SQLiteDatabase.open(path: ledgerPath)
        let final = try await again.read { c in try c.scalar("SELECT COUNT(*) FROM transactions")?.int ?? -1 }
        #expect(final == Int64(count))
        try await again.close()
    }

    /// A running `receiptdesk` whose standard output and error are read once it ends, killed after two minutes (a
    /// handler that never ends the import fails the test instead of hanging the suite).
    struct Running {
        let process = Process()
        private let output = Pipe()
        private let errors = Pipe()

        init(_ arguments: [String]) throws {
            process.executableURL = URL(fileURLWithPath: Binary.path)
            process.arguments = arguments
            process.standardOutput = output
            process.standardError = errors
            try process.run()
        }

        var pid: pid_t { process.processIdentifier }

        /// Waits for the end: (standard output, standard error).
        func finish() -> (stdout: String, stderr: String) {
            let pid = pid
            let watchdog = DispatchWorkItem { kill(pid, SIGKILL) }
            DispatchQueue.global().asyncAfter(deadline: .now() + 120, execute: watchdog)
            // (Standard output after standard error: an import writes a line or two there, never enough to fill a pipe.)
            let err = errors.fileHandleForReading.readDataToEndOfFile()
            let out = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            watchdog.cancel()
            return (String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self))
        }

        /// Whether it died of SIGINT, as Ctrl-C kills.
        var diedOfInterrupt: Bool { process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGINT }
    }

    @Test("Ctrl-C mid-import stops between batches, says what they hold and dies of SIGINT; running it again completes it")
    func interruptMidImport() async throws {
        let input = Self.temporary("ctrl-c.ndjson")
        let count = 50_000
        Self.writeTransactions(count: count, to: input, prefix: "c", refundedEvery: 100)
        let ledgerPath = Self.temporary("ctrl-c.sqlite")
        let batch = 500
        let arguments = ["import", "--ledger", "sqlite:\(ledgerPath)", "--batch-size", "\(batch)", input]
        /// Runs the import, interrupts it once `rows` raw records are committed, and reads the line saying what it holds.
        func cut(atLeast rows: Int64) async throws -> (line: Substring, stderr: String) {
            let run = try Running(arguments)
            _ = await Self.stopOnceCommitted(run.process, ledgerPath: ledgerPath, rows: rows)
            #expect(run.process.isRunning, "the import finished before it could be interrupted; make the input larger")
            kill(run.pid, SIGINT)
            kill(run.pid, SIGCONT)
            let (_, stderr) = run.finish()
            // It dies of SIGINT, as without the handler (a shell's loop over files stops), after saying what it committed.
            #expect(run.diedOfInterrupt, "\(run.process.terminationStatus) \(stderr)")
            #expect(stderr.contains("receiptdesk: interrupted (Ctrl-C); the same command again resumes"), "\(stderr)")
            let line = try #require(stderr.split(separator: "\n").last { $0.contains("interrupted; its committed batches hold") }, "\(stderr)")
            return (line, stderr)
        }
        // The signal comes once some batches are in.
        let first = try await cut(atLeast: Int64(batch * 4))
        let committed = try #require(PostgresImportTests.counts(in: first.line), "\(first.line)")
        #expect(committed.reconciles && committed.read > 0 && committed.read < count && committed.read % batch == 0, "\(first.line)")
        // The refunds the committed batches hold are in the queue (they were counted, and flagged by no one).
        let cutLedger = try SQLiteDatabase.open(path: ledgerPath)
        let (refunds, flagged) = try await cutLedger.read { c in
            (
                try c.scalar("SELECT COUNT(*) FROM transactions WHERE revocation_date IS NOT NULL")?.int ?? -1,
                try c.scalar("SELECT COUNT(*) FROM flags WHERE rule = 'quick-refund'")?.int ?? -2
            )
        }
        try await cutLedger.close()
        #expect(refunds > 0 && flagged == refunds, "\(refunds) refunds committed, \(flagged) flagged")

        // Cut again: this run's figures are its own, and it says where it began.
        let second = try await cut(atLeast: Int64(committed.read + batch * 4))
        #expect(
            second.line.contains("this run began after the first \(committed.read) records, committed by another run of this file"), "\(second.line)")
        let both = try #require(PostgresImportTests.counts(in: second.line), "\(second.line)")
        let resumedAt = committed.read + both.read

        let rerun = try Binary.run(arguments)
        #expect(rerun.status == 0 && rerun.stdout.contains("total: read \(count) = imported \(count) + duplicate 0 + rejected 0"), "\(rerun.stderr)")
        #expect(rerun.stderr.contains("resumed after its first \(resumedAt) records"), "\(rerun.stderr)")
    }

    @Test("Ctrl-C while verification keeps every core busy is said at once, and a second one stops the import at once")
    func interruptWhileVerifying() async throws {
        let directory = Self.temporary("busy-ctrl-c")
        let sample = try Binary.run(["sample", "--customers", "800", "--seed", "ctrl-c", "--out", directory])
        #expect(sample.status == 0, "\(sample.stderr)")
        let ledgerPath = Self.temporary("busy-ctrl-c.sqlite")
        // One batch of every record: its verification takes seconds on both cores, and it commits only at the end.
        let run = try Running([
            "import", "--ledger", "sqlite:\(ledgerPath)", "--batch-size", "100000", "--trust-root", "\(directory)/test-root.pem",
            "\(directory)/data/notifications-v2.ndjson",
        ])
        // Once its source is recorded, the import has begun (its Ctrl-C handler is in place a moment before): then
        // the file is read and the batch verified.
        var begun = false
        for _ in 0..<600 where !begun && run.process.isRunning {
            if let database = try? SQLiteDatabase.open(path: ledgerPath, readOnly: true) {
                begun = (try? await database.read { c in try c.scalar("SELECT COUNT(*) FROM sources")?.int ?? 0 }) ?? 0 > 0
                try? await database.close()
            }
            if !begun { pause(for: .milliseconds(50)) }
        }
        #expect(begun, "the import never recorded its source")
        pause(for: .milliseconds(300))
        kill(run.pid, SIGINT)
        pause(for: .milliseconds(500))
        kill(run.pid, SIGINT)
        let (stdout, stderr) = run.finish()
        // The first was answered while the batch was being verified (on the global queue its handler waited for the
        // decoding to end), so the second found Ctrl-C's default and ended it there: nothing of the batch committed.
        #expect(run.diedOfInterrupt, "\(run.process.terminationStatus) \(stderr)")
        #expect(stderr.contains("stopping after the batch being written"), "\(stderr)")
        #expect(!stdout.contains("total:"), "the import ran to its end: \(stdout)")
        let held = stderr.split(separator: "\n").last { $0.contains("its committed batches hold") }.flatMap { PostgresImportTests.counts(in: $0) }
        #expect((held?.read ?? 0) == 0, "the batch ran to its end: \(stderr)")
    }

    @Test("two importers at once both finish: the second waits for the first's batches")
    func concurrentImporters() throws {
        let ledgerPath = Self.temporary("concurrent.sqlite")
        let a = Self.temporary("a.ndjson")
        let b = Self.temporary("b.ndjson")
        Self.writeTransactions(count: 5_000, to: a, prefix: "a")
        Self.writeTransactions(count: 5_000, to: b, prefix: "b")
        // Create the ledger first so both start against the same schema.
        #expect(try Binary.run(["import", "--ledger", "sqlite:\(ledgerPath)", "\(Binary.corpus)/aporat__store-receipt-validator/serverNotificationRequest.json"]).status == 0)
        let first = try Self.start(["import", "--ledger", "sqlite:\(ledgerPath)", a])
        let second = try Binary.run(["import", "--ledger", "sqlite:\(ledgerPath)", b])
        first.waitUntilExit()
        #expect(first.terminationStatus == 0)
        #expect(second.status == 0, "\(second.stderr)")
        #expect(second.stdout.contains("imported 5000"))
    }

    @Test("two importers of the same file at once share the work; the reconciliation adds up")
    func sameFileTwice() async throws {
        let ledgerPath = Self.temporary("same.sqlite")
        let input = Self.temporary("same.ndjson")
        Self.writeTransactions(count: 20_000, to: input, prefix: "s")
        #expect(try Binary.run(["import", "--ledger", "sqlite:\(ledgerPath)", "\(Binary.corpus)/aporat__store-receipt-validator/serverNotificationRequest.json"]).status == 0)
        let first = try Self.start(["import", "--ledger", "sqlite:\(ledgerPath)", "--batch-size", "500", input])
        let second = try Binary.run(["import", "--ledger", "sqlite:\(ledgerPath)", "--batch-size", "500", input])
        first.waitUntilExit()
        #expect(first.terminationStatus == 0)
        #expect(second.status == 0, "\(second.stderr)")
        let database = try SQLiteDatabase.open(path: ledgerPath)
        let (transactions, records) = try await database.read { c in
            (try c.scalar("SELECT COUNT(*) FROM transactions WHERE transaction_id LIKE 's%'")?.int ?? -1,
             try c.scalar("SELECT COUNT(*) FROM raw_records r JOIN sources s ON s.id = r.source_id WHERE s.path LIKE '%same.ndjson'")?.int ?? -1)
        }
        try await database.close()
        #expect(transactions == 20_000)
        #expect(records == 20_000)
    }

    @Test("on a terminal, what the import does before its first batch is in is on the progress bar's line (tmux)")
    func progressBeforeFirstBatch() throws {
        guard TmuxSession.available() else { return }
        let ledger = "sqlite:" + Self.temporary("progress.sqlite")
        // A named pipe is kept in a temporary file before it is read (it is read twice): the import waits on it until
        // the test writes its record and closes it, the line saying meanwhile what it is doing.
        let fifo = Self.temporary("progress.fifo")
        #expect(mkfifo(fifo, 0o600) == 0)
        let tmux = try TmuxSession(arguments: ["import", "--ledger", ledger, "--no-verify", fifo], width: 220)
        defer { tmux.kill() }
        // (It said nothing until the first batch was in: a large file's hash and first batch take seconds.)
        // (Its path's end: the line is kept to 76 columns.)
        tmux.waitFor(text: "progress.fifo: keeping it in a temporary file to read it twice…")
        let writer = try #require(FileHandle(forWritingAtPath: fifo))
        writer.write(
            Data(#"{"transactionId":"p1","originalTransactionId":"p1","productId":"lifetime","purchaseDate":1740787200000,"type":"Non-Consumable","quantity":1}"#.utf8))
        try writer.close()
        #expect(tmux.exitStatus() == 0)
        let screen = tmux.waitFor(text: "read 1 = imported 1")
        #expect(!screen.contains("keeping it in a temporary file") && !screen.contains("decoding and writing"), "the bar's line is cleared: \(screen)")
    }
}
