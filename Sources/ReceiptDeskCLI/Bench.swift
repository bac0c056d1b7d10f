import ArgumentParser
import Entitlements
import Foundation
import ReceiptDecoding
import ReceiptModel
import Ledger
import LedgerSQLite
import Samples
import X509

/// `receiptdesk bench`: the performance figures of DESIGN section 11, measured in this process.
///
/// Build with `swift build -c release` first: debug builds are an order of magnitude slower.
struct Bench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Measure decoding, verification and storage speed on generated data.",
        discussion: "Prints a table and a final JSON line. Run a release build: swift build -c release."
    )

    @Option(help: "Signed transactions to verify.")
    var verifyCount = 20_000

    @Option(help: "Signing chains the verified transactions are spread over (the several-chains run).")
    var chains = 8

    @Option(help: "Megabytes of legacy verifyReceipt/V1 NDJSON to decode.")
    var decodeMB = 50

    @Option(help: "Transactions imported into SQLite for the import rate.")
    var importTransactions = 200_000

    @Option(help: "Transactions in the ledger the lookups run against (0 skips the lookups).")
    var transactions = 1_000_000

    @Flag(help: "Print only the JSON line.")
    var json = false

    func run() async throws {
        var figures: [(String, Double, String)] = []
        func report(_ key: String, _ value: Double, _ unit: String) {
            figures.append((key, value, unit))
            if !json {
                let name = key + String(repeating: " ", count: max(1, 34 - key.count))
                let number = String(format: "%.1f", value)
                print(name + String(repeating: " ", count: max(0, 12 - number.count)) + number + "  " + unit)
            }
        }

        // Verification: one chain, several chains, and the raw P-256 floor in the same run.
        let single = try SignedBatch.transactions(count: verifyCount, chains: 1)
        let signingInput = single.jws[0].utf8.count - 87  // header.payload, without the signature
        let raw = SignedBatch.rawP256VerificationsPerSecond(count: verifyCount, messageBytes: signingInput)
        report("rawP256VerifyPerSec", raw, "ECDSA P-256 verifications/s of a \(signingInput)-byte message (swift-crypto)")
        let singleRate = try await verifyRate(single)
        report("verifyPerSec", singleRate, "signed transactions verified+decoded/s, one chain, one core")
        report("verifyVsRawP256", singleRate / raw * 100, "% of the raw P-256 rate")
        let several = try SignedBatch.transactions(count: verifyCount, chains: chains)
        report("verifyPerSecSeveralChains", try await verifyRate(several), "signed transactions/s over \(chains) chains")

        // Legacy JSON decoding throughput.
        let (input, records) = legacyInput(megabytes: decodeMB)
        let decoder = RecordDecoder(verifier: JWSVerifier(policy: .skipVerification), now: currentTimestamp())
        let clock = ContinuousClock()
        var transactions = 0
        let elapsed = try await clock.measure {
            var splitter = RecordSplitter()
            var pieces = input.withUnsafeBufferPointer { splitter.feed($0) }
            pieces += splitter.finish()
            for piece in pieces {
                let record = await decoder.decode(piece, path: "bench")
                guard record.isOK else { throw CLIError(message: "bench input rejected: \(record.error!)", code: 1) }
                transactions += record.transactions.count
            }
        }
        let secondsTaken = seconds(elapsed)
        report("legacyDecodeMBPerSec", Double(input.count) / 1e6 / secondsTaken, "MB/s verifyReceipt+V1 NDJSON (decode only)")
        report("legacyDecodeRecordsPerSec", Double(records) / secondsTaken, "records/s")
        report("legacyDecodeTransactionsPerSec", Double(transactions) / secondsTaken, "transactions/s")
        try await storage(report)
        report("peakRSSMB", peakRSSMegabytes(), "MB peak resident memory")

        var line = "{"
        line += figures.map { "\"\($0.0)\":\(String(format: "%.1f", $0.1))" }.joined(separator: ",")
        line += "}"
        print(line)
    }

    /// Import into SQLite against a raw insert loop, then lookups on a large ledger.
    private func storage(_ report: (String, Double, String) -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("receiptdesk-bench-\(getpid())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let now = currentTimestamp()
        let decoder = RecordDecoder(verifier: JWSVerifier(policy: .skipVerification), now: now)

        let input = BenchData.transactionsNDJSON(count: importTransactions, offset: 0)
        let ledger = try await SQLLedger.open(try SQLiteDatabase.open(path: directory + "/import.sqlite"), now: now)
        let clock = ContinuousClock()
        let elapsed = try await clock.measure {
            _ = try await BenchData.importBytes(input, path: "bench-import.ndjson", into: ledger, decoder: decoder, now: now)
        }
        let importRate = Double(importTransactions) / seconds(elapsed)
        let written = try await ledger.database.read { c in
            try ["raw_records", "customers", "customer_ids", "transactions"].reduce(0) { sum, table in
                sum + Int(try c.scalar("SELECT COUNT(*) FROM \(table)")?.int ?? 0)
            }
        }
        try await ledger.close()
        report("importRowsPerSec", importRate, "transactions/s imported into SQLite from NDJSON (no verification)")
        let importedRowRate = Double(written) / seconds(elapsed)
        report("importTableRowsPerSec", importedRowRate, "table rows/s the import wrote (\(written) rows)")
        let raw = try await RawInsertBenchmark.rowsPerSecond(
            copying: directory + "/import.sqlite", into: directory + "/raw.sqlite", now: now)
        report("rawInsertRowsPerSec", raw.rate, "rows/s, prepared INSERT loop of the same \(raw.rows) rows, same tables")
        report("importVsRawInsert", raw.rate / importedRowRate, "x the time of the raw insert loop")

        // Entitlements and timeline for one customer with 1,000 transactions.
        let history = BenchData.longHistory(count: 1000)
        let runs = 50
        var events = 0
        let pure = clock.measure {
            for _ in 0..<runs {
                events += history.entitlements(at: now).count + history.timeline(upTo: now).count
            }
        }
        precondition(events > 0)
        report("entitlementsPerCustomerMs", seconds(pure) * 1000 / Double(runs), "ms entitlements + timeline, one customer with 1,000 transactions")

        guard transactions > 0 else { return }
        let big = try await SQLLedger.open(try SQLiteDatabase.open(path: directory + "/lookup.sqlite"), now: now)
        var made = 0
        while made < transactions {
            let step = min(250_000, transactions - made)
            let part = BenchData.transactionsNDJSON(count: step, offset: made)
            _ = try await BenchData.importBytes(part, path: "bench-\(made).ndjson", into: big, decoder: decoder, now: now)
            made += step
        }
        var all: [Double] = []
        for kind in BenchData.IdKind.allCases {
            var samples: [Double] = []
            for i in 0..<2000 {
                let n = (i &* 7919) % transactions
                let id = BenchData.id(kind, n)
                let start = ContinuousClock.now
                let found = try await big.customerId(matching: id)
                samples.append(seconds(ContinuousClock.now - start) * 1000)
                guard found != nil else { throw CLIError(message: "bench: lookup of \(kind) \(id) found nothing", code: 1) }
            }
            samples.sort()
            report("lookupP99Ms.\(kind.rawValue)", samples[samples.count * 99 / 100], "ms p99 lookup by \(kind.rawValue)")
            all += samples
        }
        all.sort()
        report("transactions", Double(transactions), "transactions in the lookup ledger")
        report("lookupP50Ms", all[all.count / 2], "ms p50 over every id kind")
        report("lookupP99Ms", all[all.count * 99 / 100], "ms p99 over every id kind")
        let flagClock = ContinuousClock()
        var found = 0
        let flagTime = try await flagClock.measure {
            found = try await big.refreshFlags(rules: FlagRules(), now: now).flags.count
        }
        report("flagRulesSeconds", seconds(flagTime), "s refund rules over the \(transactions)-transaction ledger (\(found) flags)")
        try await big.close()
    }

    private func verifyRate(_ batch: (jws: [String], roots: [[UInt8]])) async throws -> Double {
        let roots = try batch.roots.map { try Certificate(derEncoded: $0) }
        let policy = VerificationPolicy(trustRoots: roots)
        let decoder = RecordDecoder(verifier: JWSVerifier(policy: policy), now: currentTimestamp())
        let inputs = batch.jws.map { Array($0.utf8) }
        let clock = ContinuousClock()
        var verified = 0
        let elapsed = await clock.measure {
            for (index, bytes) in inputs.enumerated() {
                let record = await decoder.decode(bytes, provenance: Provenance(path: "bench", index: index))
                if record.verification == .verified { verified += 1 }
            }
        }
        guard verified == inputs.count else {
            throw CLIError(message: "bench: only \(verified) of \(inputs.count) verified", code: 1)
        }
        return Double(inputs.count) / seconds(elapsed)
    }

    /// Generated legacy data: V1 notifications with a unified receipt and verifyReceipt responses, as NDJSON.
    private func legacyInput(megabytes: Int) -> ([UInt8], Int) {
        var out: [UInt8] = []
        out.reserveCapacity(megabytes << 20)
        var n = 0
        var records = 0
        while out.count < megabytes * 1_000_000 {
            var entries: [String] = []
            for k in 0..<24 {
                let purchase = 1_600_000_000_000 + Int64(n) * 3_600_000 + Int64(k) * 2_592_000_000
                entries.append(
                    #"{"quantity":"1","product_id":"month_premium","transaction_id":"\#(1_000_000_000_000 + n * 100 + k)","original_transaction_id":"\#(1_000_000_000_000 + n * 100)","purchase_date":"2020-11-25 08:26:02 Etc/GMT","purchase_date_ms":"\#(purchase)","purchase_date_pst":"2020-11-25 00:26:02 America/Los_Angeles","original_purchase_date":"2020-11-25 08:25:27 Etc/GMT","original_purchase_date_ms":"\#(purchase)","original_purchase_date_pst":"2020-11-25 00:25:27 America/Los_Angeles","expires_date":"2020-11-25 08:31:02 Etc/GMT","expires_date_ms":"\#(purchase + 2_592_000_000)","expires_date_pst":"2020-11-25 00:31:02 America/Los_Angeles","web_order_line_item_id":"\#(2_000_000_000_000 + n * 100 + k)","is_trial_period":"\#(k == 0)","is_in_intro_offer_period":"false","in_app_ownership_type":"PURCHASED","subscription_group_identifier":"20667927"}"#)
            }
            let list = entries.joined(separator: ",")
            let record: String
            if n % 2 == 0 {
                record = #"{"notification_type":"DID_RENEW","environment":"PROD","auto_renew_status":"true","auto_renew_product_id":"month_premium","bid":"com.example.app","bvrs":"34","unified_receipt":{"status":0,"environment":"Production","latest_receipt_info":[\#(list)],"pending_renewal_info":[{"auto_renew_status":"1","auto_renew_product_id":"month_premium","product_id":"month_premium","original_transaction_id":"\#(1_000_000_000_000 + n * 100)"}]}}"#
            } else {
                record = #"{"status":0,"environment":"Production","receipt":{"receipt_type":"Production","adam_id":1,"bundle_id":"com.example.app","application_version":"34","receipt_creation_date_ms":"1606292762000","request_date_ms":"1606292762000","original_purchase_date_ms":"1606292762000","in_app":[\#(list)]},"latest_receipt_info":[\#(list)],"pending_renewal_info":[]}"#
            }
            out.append(contentsOf: record.utf8)
            out.append(0x0A)
            n += 1
            records += 1
        }
        return (out, records)
    }
}

/// Peak resident set size of this process in megabytes (Linux `VmHWM`).
func peakRSSMegabytes() -> Double {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
    for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
        let digits = line.split(separator: " ").compactMap { Double($0) }
        return (digits.first ?? 0) / 1024
    }
    return 0
}
