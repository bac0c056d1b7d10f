import Foundation
import Samples
import Testing

@Suite("receiptdesk decode, as a user runs it", .ownThreads)
struct DecodeCommandTests {
    @Test("a directory's notes and key material are left out, and said: a raw receipt named .der is read when named itself")
    func skippedFilesSaid() throws {
        let directory = ImportCommandTests.temporary("walk")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let receipt = try Data(contentsOf: URL(fileURLWithPath: "\(Binary.corpus)/IdeasOnCanvas__AppReceiptValidator/mindnode_mac_sha256_receipt"))
        try receipt.write(to: URL(fileURLWithPath: directory + "/receipt.der"))
        try Data("notes\n".utf8).write(to: URL(fileURLWithPath: directory + "/README.md"))
        try Data(contentsOf: URL(fileURLWithPath: "\(Binary.corpus)/RevenueCat__purchases-ios/verifyReceiptSample1.txt"))
            .write(to: URL(fileURLWithPath: directory + "/response.json"))
        // What else a directory holds that is no data: a hidden file, a hidden directory (a checkout's .git), a FIFO
        // (read, it waited for a writer forever) and a link to nothing (read, it stopped the whole walk with exit 2).
        try Data("{}".utf8).write(to: URL(fileURLWithPath: directory + "/.hidden.json"))
        try FileManager.default.createDirectory(atPath: directory + "/.git", withIntermediateDirectories: true)
        try Data("{}".utf8).write(to: URL(fileURLWithPath: directory + "/.git/x.json"))
        #expect(mkfifo(directory + "/pipe.json", 0o600) == 0)
        try FileManager.default.createSymbolicLink(atPath: directory + "/gone.json", withDestinationPath: directory + "/nowhere")
        // And a link to a directory, which the walk does not follow: said (it was left out without a word).
        try FileManager.default.createSymbolicLink(atPath: directory + "/exports", withDestinationPath: directory + "/.git")
        let walked = try Binary.run(["decode", directory], limit: .seconds(60))
        #expect(walked.status == 0 && !walked.timedOut, "\(walked.stderr)")
        #expect(walked.stdout.contains("response.json#0") && !walked.stdout.contains("receipt.der"), "\(walked.stdout)")
        #expect(!walked.stdout.contains(".git") && !walked.stdout.contains(".hidden"), "\(walked.stdout)")
        #expect(
            walked.stderr.contains(
                "skipped 7 files of the paths given, 2 taken for notes or key material (.der .md), 2 hidden, "
                    + "2 no regular file (a pipe, socket, device or broken link), 1 linked directory (name it to read it): ")
                && walked.stderr.contains("name a file itself to read it"), "\(walked.stderr)")
        let named = try Binary.run(["decode", directory + "/receipt.der"])
        #expect(named.status == 0 && named.stdout.contains("appReceipt  ok  verified"), "\(named.stdout)")
        #expect(!named.stderr.contains("skipped"))
    }

    @Test("--json prints one object per record in input order, with DESIGN section 12's keys")
    func jsonContract() throws {
        let files = [
            "\(Binary.corpus)/RevenueCat__purchases-ios/verifyReceiptSample1.txt",
            "\(Binary.corpus)/aporat__store-receipt-validator/test-notification-signed-payload.json",
            "\(Binary.corpus)/aporat__store-receipt-validator/inAppPurchaseInvalidReceiptResponse.json",
        ]
        let result = try Binary.run(["decode", "--json"] + files)
        #expect(result.status == 1)
        #expect(result.lines.count == 3)
        let first = try Binary.json(result.lines[0])
        #expect(first["kind"] as? String == "verifyReceipt")
        #expect(first["status"] as? String == "ok")
        #expect(first["verification"] as? String == "notApplicable")
        #expect((first["source"] as? String)?.hasSuffix("verifyReceiptSample1.txt#0") == true)
        let transactions = try #require(first["transactions"] as? [[String: Any]])
        #expect(transactions.count == 9)
        // purchase_date_ms "1594755400000" in the file, as a number.
        #expect(transactions[0]["purchaseDate"] as? Int == 1_594_755_400_000)
        #expect(transactions.allSatisfy { $0["quantity"] as? Int == 1 })
        #expect(transactions.allSatisfy { $0["type"] as? String == "Auto-Renewable Subscription" })
        #expect(transactions.allSatisfy { $0.keys.contains("revocationDate") })
        #expect(first.keys.contains("notification"))
        let second = try Binary.json(result.lines[1])
        #expect(second["kind"] as? String == "notificationV2")
        #expect(second["verification"] as? String == "verified")
        let notification = try #require(second["notification"] as? [String: Any])
        #expect(notification["notificationType"] as? String == "TEST")
        #expect(notification["signedDate"] as? Int == 1_662_122_492_884)
        let third = try Binary.json(result.lines[2])
        #expect(third["status"] as? String == "rejected")
        let error = try #require(third["error"] as? [String: Any])
        #expect(error["code"] as? String == "appleStatus")
    }

    @Test("exit 0 when every record is ok; the readable form names kinds, ids and dates in UTC")
    func humanOutput() throws {
        let result = try Binary.run(["decode", "\(Binary.corpus)/imdhemy__laravel-in-app-purchases/appstore-server-notification.json"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("notificationV1  ok"))
        #expect(result.stdout.contains("DID_CHANGE_RENEWAL_STATUS"))
        #expect(result.stdout.contains("transaction 1000000746095599"))
        #expect(result.stdout.contains("2020-11-25T08:26:02Z"))
        #expect(result.stdout.contains("1 record: 1 ok, 0 rejected"))
    }

    @Test("a JSON array cut short between records is rejected at its end, by decode and import; the whole file imported after it adds what was missing")
    func cutArray() throws {
        let element = { (n: Int) in
            #"{"notification_type":"DID_RENEW","unified_receipt":{"status":0,"latest_receipt_info":[{"transaction_id":"\#(n)","product_id":"p"}]}}"#
        }
        let cut = ImportCommandTests.temporary("cut.json")
        let whole = ImportCommandTests.temporary("whole.json")
        writeTestFile(cut, Data(("[" + element(1) + ",\n" + element(2) + ",\n").utf8))
        writeTestFile(whole, Data(("[" + element(1) + ",\n" + element(2) + ",\n" + element(3) + "]\n").utf8))
        let decoded = try Binary.run(["decode", cut])
        #expect(decoded.status == 1)
        #expect(decoded.stdout.contains("#2  unknown  REJECTED  truncatedJSON: the input's JSON array has no closing ]"), "\(decoded.stdout)")
        #expect(decoded.stdout.contains("3 records: 2 ok, 1 rejected"), "\(decoded.stdout)")

        let ledger = ImportCommandTests.temporary("cut.sqlite")
        let first = try Binary.run(["import", "--ledger", "sqlite:\(ledger)", cut])
        #expect(first.status == 1)
        #expect(first.stdout.contains("total: read 3 = imported 2 + duplicate 0 + rejected 1"), "\(first.stdout)")
        #expect(first.stderr.contains("rejected record #2 (byte \(try Data(contentsOf: URL(fileURLWithPath: cut)).count)): truncatedJSON"), "\(first.stderr)")
        let second = try Binary.run(["import", "--ledger", "sqlite:\(ledger)", whole])
        #expect(second.status == 0, "\(second.stderr)")
        #expect(second.stdout.contains("total: read 3 = imported 1 + duplicate 2 + rejected 0"), "\(second.stdout)")
    }

    @Test("usage errors exit 2")
    func usage() throws {
        #expect(try Binary.run(["decode"]).status == 2)
        #expect(try Binary.run(["decode", "--environment", "mars", "x"]).status == 2)
        #expect(try Binary.run(["decode", "/nonexistent/file"]).status == 2)
        // Options that check signatures, given with --no-verify, which checks none.
        let file = "\(Binary.corpus)/RevenueCat__purchases-ios/verifyReceiptSample1.txt"
        for (options, says) in [
            (["--verify-now"], "so --verify-now would do nothing"), (["--trust-root", file], "so --trust-root would do nothing"),
            (["--trust-root", file, "--verify-now"], "so --trust-root and --verify-now would do nothing"),
        ] {
            let both = try Binary.run(["decode", "--no-verify"] + options + [file])
            #expect(both.status == 2 && both.stderr.contains("--no-verify checks no signature, \(says): give one or the other"), "\(both.stderr)")
        }
        #expect(try Binary.run(["decode", "--no-verify", "--bundle-id", "com.example", file]).status != 2)
    }

    @Test("control characters in data never reach the terminal")
    func escaping() throws {
        let evil = #"{"status":0,"latest_receipt_info":[{"transaction_id":"1\u001b[2J","product_id":"p\u0007"}]}"#
        let result = try Binary.run(["decode", "-"], stdin: Data(evil.utf8))
        #expect(result.status == 0)
        #expect(!result.stdout.contains("\u{1b}"))
        #expect(!result.stdout.contains("\u{07}"))
        #expect(result.stdout.contains("\\e[2J"))
    }

    @Test("--no-verify marks signed records skipped, loudly")
    func noVerify() throws {
        let result = try Binary.run([
            "decode", "--json", "--no-verify", "\(Binary.corpus)/awa__go-iap/EXTRACTED_validator_test.go_L326_sandbox-renewal-info.jws",
        ])
        #expect(result.status == 0)
        #expect(try Binary.json(result.lines[0])["verification"] as? String == "skipped")
        #expect(result.stderr.contains("NOT checked"))
    }

    @Test("--trust-root takes PEM or DER; --bundle-id and --environment reject what does not match")
    func trustRoots() throws {
        let ca = try TestCA(.init(seed: "cli-trust"))
        let jws = JWSSigner(ca: ca).sign(json: #"{"transactionId":"77","bundleId":"com.example","environment":"Sandbox","signedDate":1740816000000}"#)
        let input = ImportCommandTests.temporary("signed.jws")
        writeTestFile(input, Data(jws.utf8))
        let pem = ImportCommandTests.temporary("root.pem")
        writeTestFile(pem, Data(ca.rootPEM.utf8))
        let der = ImportCommandTests.temporary("root.der")
        writeTestFile(der, Data(ca.rootDER))
        let untrusted = try Binary.run(["decode", "--json", input])
        #expect(untrusted.status == 1)
        #expect(try Binary.json(untrusted.stdout)["verification"] as? String == "failed")
        for root in [pem, der] {
            let trusted = try Binary.run(["decode", "--json", "--trust-root", root, input])
            #expect(trusted.status == 0)
            #expect(try Binary.json(trusted.stdout)["verification"] as? String == "verified")
        }
        let wrongBundle = try Binary.run(["decode", "--json", "--trust-root", pem, "--bundle-id", "com.other", input])
        #expect(((try Binary.json(wrongBundle.stdout)["error"]) as? [String: Any])?["code"] as? String == "wrongBundle")
        let wrongEnvironment = try Binary.run(["decode", "--json", "--trust-root", pem, "--environment", "PRODUCTION", input])
        #expect(((try Binary.json(wrongEnvironment.stdout)["error"]) as? [String: Any])?["code"] as? String == "wrongEnvironment")
        #expect(try Binary.run(["decode", "--trust-root", input, input]).status == 2)
    }
}
