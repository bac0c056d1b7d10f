import ArgumentParser
import DeskUI
import Entitlements
import Foundation
import Ledger
import LedgerPostgres
import LedgerSQLite
import ReceiptDecoding
import ReceiptModel
import Samples
import X509

#if canImport(Glibc)
    import Glibc
#endif

/// `receiptdesk bench`: every figure of DESIGN section 11, measured in one run on data from the sample
/// generator, each next to its target (issue 9).
///
/// Build with `swift build -c release` first: debug builds are an order of magnitude slower.
struct Bench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Measure every performance figure on generated sample data, against its target.",
        discussion: """
            Generates about N transactions with the sample generator (the same as `receiptdesk sample`), then \
            measures decoding per input kind, verification next to raw P-256, import next to a raw insert loop, \
            entitlements and timelines, lookups by id kind, the refund rules, and (in a separate process, \
            `bench-browse`) the dashboard's first frame, key latency and memory. Prints a table and one JSON \
            line. Run a release build: swift build -c release.
            """
    )

    @Option(help: "Transactions to generate (approximately: whole customers).")
    var transactions = 100_000

    @Flag(help: "Print only the JSON line.")
    var json = false

    @Option(
        name: .customLong("postgres"),
        help: ArgumentHelp(
            "Also measure the PostgreSQL import into this empty database (postgres://...), next to a raw COPY.",
            discussion: "The ledger the bench writes stays in it; drop the database afterwards.", valueName: "URL"))
    var postgresURL: String?

    /// One measured figure: its JSON key, value (nil: not measured), unit, and target.
    struct Figure {
        var key: String
        var value: Double?
        var unit: String
        var target: Target?
        var note = ""

        enum Target {
            case atLeast(Double)
            case atMost(Double)
        }

        var met: Bool? {
            guard let value, let target else { return nil }
            switch target {
            case .atLeast(let bound): return value >= bound
            case .atMost(let bound): return value <= bound
            }
        }

        var targetText: String {
            switch target {
            case .atLeast(let bound)?: ">= " + Bench.format(bound)
            case .atMost(let bound)?: "<= " + Bench.format(bound)
            case nil: ""
            }
        }
    }

    static func format(_ value: Double) -> String {
        if value == value.rounded() && abs(value) < 1e12 { return String(Int(value)) }
        return abs(value) >= 100 ? String(format: "%.0f", value) : String(format: "%.3g", value)
    }

    func run() async throws {
        let progress = BenchProgress(enabled: isatty(STDERR_FILENO) == 1, phases: 9)
        var figures: [Figure] = []
        func add(_ key: String, _ value: Double?, _ unit: String, _ target: Figure.Target? = nil, note: String = "") {
            figures.append(Figure(key: key, value: value, unit: unit, target: target, note: note))
        }
        let started = ContinuousClock.now
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("receiptdesk-bench-\(getpid())").path
        try? FileManager.default.removeItem(atPath: directory)
        defer { try? FileManager.default.removeItem(atPath: directory) }

        // Before any work: a --postgres database that cannot be opened or is not empty stops the run now.
        if let postgresURL { try await Self.openEmptyPostgres(postgresURL, now: currentTimestamp()).ledger.close() }

        // 1. The data, from the sample generator.
        progress.phase("generating about \(transactions) transactions")
        let data = try BenchData.generate(transactions: transactions, into: directory + "/data")
        let now = data.generator.options.to
        add("transactions", Double(data.summary.transactions), "transactions generated (\(data.summary.customers) customers, \(data.summary.records) records, \(Self.format(Double(data.summary.bytes) / 1e6)) MB; customers by kind: \(BenchData.formatsText))")
        add("sampleCustomersPerSec", data.customersPerSecond, "customers/s written by the generator", .atLeast(20_000))

        // 2. Decoding per input kind, without verification: the parsers alone.
        progress.phase("decoding each input kind")
        let plain = RecordDecoder(verifier: JWSVerifier(policy: .skipVerification), now: now)
        var legacyBytes = 0
        var legacySeconds = 0.0
        for file in SampleGenerator.dataFiles {
            let kind = Self.kind(file)
            let lines = try Self.lines(data.directory + "/" + file, limit: 64 << 20)
            guard !lines.records.isEmpty else { continue }
            let elapsed = try await Self.decodeAll(lines.records, with: plain)
            add("decode.\(kind).recordsPerSec", Double(lines.records.count) / elapsed, "records/s decoded, \(kind)")
            add("decode.\(kind).MBPerSec", Double(lines.bytes) / 1e6 / elapsed, "MB/s decoded, \(kind)")
            if kind == "verify-receipt" || kind == "notifications-v1" {
                legacyBytes += lines.bytes
                legacySeconds += elapsed
            }
        }
        add("legacyDecodeMBPerSec", legacySeconds > 0 ? Double(legacyBytes) / 1e6 / legacySeconds : nil, "MB/s verifyReceipt + V1 JSON decoded", .atLeast(100))

        // 3. Verification next to raw P-256 in the same run.
        progress.phase("verifying signed transactions")
        let signed = try Self.signedTransactions(data.directory + "/data/server-api.ndjson", limit: 20_000)
        let root = try Certificate(derEncoded: SampleCA.rootDER)
        let verifying = RecordDecoder(verifier: JWSVerifier(policy: VerificationPolicy(trustRoots: [root])), now: now)
        var verifyRate: Double?
        if !signed.isEmpty {
            let elapsed = try await Self.decodeAll(signed, with: verifying, requireVerified: true)
            verifyRate = Double(signed.count) / elapsed
        }
        let messageBytes = signed.first.map { $0.count - 87 } ?? 1200
        let raw = SignedBatch.rawP256VerificationsPerSecond(count: 20_000, messageBytes: messageBytes)
        add("verifyPerSec", verifyRate, "signed transactions verified + decoded/s (\(signed.count), one core)")
        add("rawP256VerifyPerSec", raw, "raw P-256 verifications/s of a \(messageBytes)-byte message")
        add("verifyVsRawP256Percent", verifyRate.map { $0 / raw * 100 }, "% of the raw P-256 rate", .atLeast(70))

        // 4. Import into SQLite, verifying as `import` does, next to a raw insert loop of the same rows.
        progress.phase("importing into SQLite")
        let ledgerPath = directory + "/ledger.sqlite"
        let decoder = RecordDecoder(
            verifier: JWSVerifier(policy: VerificationPolicy(trustRoots: [root], validationTime: .signedDate)),
            receiptRoots: [SampleCA.rootDER], now: now)
        var ledger = try await SQLLedger.open(try SQLiteDatabase.open(path: ledgerPath), now: now)
        let (counts, perKind, importSeconds) = try await Self.importFiles(of: data, into: ledger, decoder: decoder, now: now)
        let written = try await Self.importedRows(ledger)
        try await DataOptions.linkCustomers(data.directory + "/customers.csv", into: ledger, now: now)
        try await ledger.close()
        add("importSeconds", importSeconds, "s to import every generated file (\(counts.imported) records, verified)")
        add("importRowsPerSec", Double(data.summary.transactions) / importSeconds, "transactions/s imported into an empty SQLite ledger (the bench's mix: mostly legacy JSON, see import.* per kind)", .atLeast(50_000))
        for (kind, records, bytes, elapsed) in perKind where records > 0 {
            add("import.\(kind).recordsPerSec", Double(records) / elapsed, "records/s imported, \(kind) (\(records) records, \(Self.format(Double(bytes) / 1e6)) MB, \(Self.format(elapsed)) s)")
        }
        add("importTableRowsPerSec", Double(written) / importSeconds, "table rows/s the import wrote (\(written) rows)")
        progress.phase("raw insert loop of the same rows")
        let rawInsert = try await RawInsertBenchmark.rowsPerSecond(copying: ledgerPath, into: directory + "/raw.sqlite", now: now)
        try? FileManager.default.removeItem(atPath: directory + "/raw.sqlite")
        add("rawInsertRowsPerSec", rawInsert.rate, "rows/s, prepared INSERT loop of the same \(rawInsert.rows) rows, same tables")
        add("importVsRawInsert", rawInsert.rate / (Double(written) / importSeconds), "x the raw loop's time (import includes decoding and verifying)", .atMost(2))

        // 4b. Import into PostgreSQL without verification, next to a raw COPY of the same rows (issue 11).
        if let postgresURL {
            progress.phase("importing into PostgreSQL")
            figures += try await Self.postgresImport(url: postgresURL, data: data, now: now)
        }

        // 5. Flag rules over the whole ledger.
        progress.phase("refund rules over the ledger")
        ledger = try await SQLLedger.open(try SQLiteDatabase.open(path: ledgerPath), now: now)
        var flagCount = 0
        let flagTime = try await ContinuousClock().measure {
            flagCount = try await ledger.refreshFlags(rules: FlagRules(), now: now).flags.count
        }
        add("flagRulesSeconds", seconds(flagTime), "s for every refund rule over the ledger (\(flagCount) flags)")

        // 6. Entitlements + timeline per customer, and whole lookups by id kind.
        progress.phase("entitlements, timelines and lookups")
        let catalog = try Catalog.parse(csv: SampleCatalog.catalogCSV)
        var pureSeconds = 0.0
        var pureCustomers = 0
        var shown = 0
        var all: [Double] = []
        // The kinds take turns, a lookup each, and a different kind goes first each turn: the kinds' ids come
        // from the same customers, so the first to look one up pays for reading that customer's rows, and the
        // first kind measured would pay alone for warming the caches after the import.
        let kinds = BenchData.IdKind.allCases
        let idsByKind = kinds.map { data.ids($0, count: 400) }
        var samplesByKind = kinds.map { _ in [Double]() }
        for turn in 0..<(idsByKind.map(\.count).max() ?? 0) {
            for step in kinds.indices {
                let k = (turn + step) % kinds.count
                let ids = idsByKind[k]
                guard turn < ids.count else { continue }
                let kind = kinds[k]
                let id = ids[turn]
                let start = ContinuousClock.now
                guard let customer = try await ledger.customerId(matching: id) else {
                    throw CLIError.notFound("bench: lookup by \(kind.rawValue) \(id) found nothing")
                }
                let records = try await ledger.customerRecords(customer)
                let pureStart = ContinuousClock.now
                let entitlements = records.history.entitlements(at: now, catalog: catalog)
                let timeline = records.history.timeline(upTo: now, catalog: catalog)
                pureSeconds += seconds(ContinuousClock.now - pureStart)
                pureCustomers += 1
                let flags = try await ledger.flags(FlagQuery(customerId: records.id, limit: 500))
                let notes = try await ledger.triageLog(flagId: nil, customerId: records.id)
                samplesByKind[k].append(seconds(ContinuousClock.now - start) * 1000)
                shown += entitlements.count + timeline.count + flags.count + notes.count
            }
        }
        for (kind, unsorted) in zip(kinds, samplesByKind) where !unsorted.isEmpty {
            let samples = unsorted.sorted()
            add("lookupP50Ms.\(kind.rawValue)", Self.percentile(samples, 50), "ms p50, whole lookup by \(kind.rawValue)")
            add("lookupP99Ms.\(kind.rawValue)", Self.percentile(samples, 99), "ms p99, whole lookup by \(kind.rawValue)", .atMost(5))
            all += samples
        }
        all.sort()
        add("lookupP50Ms", all.isEmpty ? nil : Self.percentile(all, 50), "ms p50, whole lookup (resolve, records, entitlements, timeline, flags, notes), every id kind (\(all.count) lookups, \(shown) lines shown)")
        add("lookupP99Ms", all.isEmpty ? nil : Self.percentile(all, 99), "ms p99, the same", .atMost(5))
        add("entitlementsPerCustomerMs", pureCustomers > 0 ? pureSeconds * 1000 / Double(pureCustomers) : nil, "ms entitlements + timeline per customer (\(pureCustomers) customers)")
        try await ledger.close()

        // 7. The dashboard, in a separate process that only opens the ledger and browses it.
        progress.phase("browsing the dashboard (separate process)")
        let browse = Self.browse(ledger: "sqlite:" + ledgerPath)
        let note = browse.failure.map { "not measured: \($0)" } ?? ""
        add("firstFrameMs", browse.figures?["firstFrameMs"] as? Double, "ms to the dashboard's first frame", .atMost(500), note: note)
        add("keyP99Ms", browse.figures?["keyP99Ms"] as? Double, "ms p99 per key (query + reduce + render + blit)", .atMost(16), note: note)
        if let byScreen = browse.figures?["keyP99MsByScreen"] as? [String: Double] {
            for (screen, value) in byScreen.sorted(by: { $0.key < $1.key }) {
                add("keyP99Ms.\(screen)", value, "ms p99 per key on \(screen)", .atMost(16))
            }
        }
        add(
            "accessTurnP99Ms", browse.figures?["accessTurnP99Ms"] as? Double,
            "ms p99 per idle turn judging \(Runtime.accessBatch) listed customers' access (the most a key typed then waits; \(browse.figures?["accessTurns"] as? Int ?? 0) turns)",
            .atMost(16), note: note)
        add("browseRSSMB", browse.figures?["peakRSSMB"] as? Double, "MB peak RSS of the browsing process", .atMost(200), note: note)

        progress.phase("done")
        progress.clear()
        add("peakRSSMB", peakRSSMegabytes(), "MB peak RSS of this bench process (generator, import, lookups)")
        add("benchSeconds", seconds(ContinuousClock.now - started), "s for the whole bench run", transactions >= 1_000_000 ? .atMost(600) : nil)
        if !json { print(Self.table(figures)) }
        print(Self.jsonLine(figures))
    }

    // MARK: Measurements

    /// One data file's import: its kind, records imported, bytes and seconds.
    typealias FileImport = (kind: String, records: Int, bytes: Int64, seconds: Double)

    /// Imports every data file of `data` into `ledger`, timed as a whole and per file; a generated record that
    /// is rejected is an error.
    static func importFiles(of data: BenchData, into ledger: SQLLedger, decoder: RecordDecoder, now: Timestamp) async throws
        -> (counts: ImportCounts, perKind: [FileImport], seconds: Double)
    {
        var counts = ImportCounts()
        var perKind: [FileImport] = []
        let elapsed = try await ContinuousClock().measure {
            // As `import` does: an empty SQLite ledger builds its reading-only indexes after the load (timed).
            let deferred = try await ledger.deferIndexesForFirstLoad()
            for file in SampleGenerator.dataFiles {
                let path = data.directory + "/" + file
                let info = try ChunkedFile.sourceInfo(path)
                var chunks = try ChunkedFile(path)
                var fileCounts = ImportCounts()
                let fileElapsed = try await ContinuousClock().measure {
                    fileCounts = try await Importer(ledger: ledger, decoder: decoder).run(info, now: now) { try chunks.next() }
                }
                counts = counts + fileCounts
                perKind.append((kind(file), fileCounts.imported, info.size, seconds(fileElapsed)))
            }
            if deferred { try await ledger.buildDeferredIndexes() }
            try await ledger.refreshStatistics(afterImporting: counts.imported)
        }
        guard counts.rejected == 0 else {
            throw CLIError.rejected("bench: \(counts.rejected) generated records were rejected on import")
        }
        return (counts, perKind, seconds(elapsed))
    }

    /// The rows in the tables an import fills.
    static func importedRows(_ ledger: SQLLedger) async throws -> Int {
        try await ledger.database.read { c in
            try SQLLedger.importedTables.reduce(0) { sum, table in sum + Int(try c.scalar("SELECT COUNT(*) FROM \(table)")?.int ?? 0) }
        }
    }

    /// The ledger in the database `url` names, refused unless it holds no transactions.
    static func openEmptyPostgres(_ url: String, now: Timestamp) async throws -> (ledger: SQLLedger, database: PostgresDatabase) {
        do {
            try PostgresDatabase.check(url: url)
        } catch let error as LedgerError {
            throw CLIError.usage("bench: --postgres: \(error.message)")
        }
        let database = try await PostgresDatabase.connect(url: url)
        let ledger = try await SQLLedger.open(database, now: now)
        guard try await ledger.overview().transactions == 0 else {
            try await ledger.close()
            throw CLIError.usage("bench: --postgres must name an empty database; \(PostgresDatabase.redacted(url: url)) holds a ledger")
        }
        return (ledger, database)
    }

    /// Imports the bench's files into an empty PostgreSQL ledger without verification (the figure DESIGN section 11
    /// sets, >= 25,000 transactions/s), then COPYs the same rows into copies of the same tables.
    static func postgresImport(url: String, data: BenchData, now: Timestamp) async throws -> [Figure] {
        let (ledger, database) = try await openEmptyPostgres(url, now: now)
        let decoder = RecordDecoder(verifier: JWSVerifier(policy: .skipVerification), now: now)
        let imported: (counts: ImportCounts, perKind: [FileImport], seconds: Double)
        do {
            imported = try await importFiles(of: data, into: ledger, decoder: decoder, now: now)
        } catch {
            try await ledger.close()
            throw error
        }
        let (counts, importSeconds) = (imported.counts, imported.seconds)
        let transactions = try await ledger.overview().transactions
        let written = try await importedRows(ledger)
        let raw = try await RawCopyBenchmark.rowsPerSecond(in: database)
        try await ledger.close()
        let importRate = Double(written) / importSeconds
        return [
            Figure(key: "postgresImportSeconds", value: importSeconds, unit: "s to import every generated file into PostgreSQL (\(counts.imported) records, --no-verify)"),
            Figure(
                key: "postgresImportRowsPerSec", value: Double(transactions) / importSeconds,
                unit: "transactions/s imported into an empty PostgreSQL ledger without verification", target: .atLeast(25_000)),
            Figure(key: "postgresImportTableRowsPerSec", value: importRate, unit: "table rows/s the PostgreSQL import wrote (\(written) rows)"),
            Figure(key: "postgresRawCopyRowsPerSec", value: raw.rate, unit: "rows/s, COPY of the same \(raw.rows) rows into copies of the same tables"),
            Figure(key: "postgresImportVsRawCopy", value: raw.rate / importRate, unit: "x the raw COPY's time (import includes decoding)"),
        ]
    }

    /// The input kind of a data file: its name without the directory and extension.
    static func kind(_ file: String) -> String {
        (file as NSString).lastPathComponent.replacingOccurrences(of: ".ndjson", with: "")
    }

    /// Lines of an NDJSON file, up to `limit` bytes (whole lines).
    static func lines(_ path: String, limit: Int) throws -> (records: [[UInt8]], bytes: Int) {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw CLIError.usage("bench: cannot read \(path)") }
        defer { try? handle.close() }
        let bytes = [UInt8](handle.readData(ofLength: limit))
        var records: [[UInt8]] = []
        var total = 0
        var start = 0
        for (index, byte) in bytes.enumerated() where byte == 0x0A {
            if index > start { records.append(Array(bytes[start..<index])) }
            total = index + 1
            start = index + 1
        }
        return (records, total)
    }

    /// Seconds to decode every record; a rejection is an error (the generator's data must all decode).
    static func decodeAll(_ records: [[UInt8]], with decoder: RecordDecoder, requireVerified: Bool = false) async throws -> Double {
        let clock = ContinuousClock()
        var failure: String?
        let elapsed = await clock.measure {
            for (index, bytes) in records.enumerated() {
                let record = await decoder.decode(bytes, provenance: Provenance(path: "bench", index: index))
                if !record.isOK || (requireVerified && record.verification != .verified) {
                    failure = record.error.map { "\($0)" } ?? "not verified"
                    break
                }
            }
        }
        if let failure { throw CLIError.rejected("bench: generated record rejected: \(failure)") }
        return max(seconds(elapsed), 1e-9)
    }

    /// The signed transactions (each a JWS on its own) in Server API history responses, up to `limit`.
    static func signedTransactions(_ path: String, limit: Int) throws -> [[UInt8]] {
        var out: [[UInt8]] = []
        for line in try lines(path, limit: 256 << 20).records where out.count < limit {
            guard let object = try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any],
                let list = object["signedTransactions"] as? [String]
            else { continue }
            for jws in list.prefix(limit - out.count) { out.append(Array(jws.utf8)) }
        }
        return out
    }

    static func percentile(_ sorted: [Double], _ p: Int) -> Double {
        sorted[min(sorted.count - 1, sorted.count * p / 100)]
    }

    /// Runs `receiptdesk bench-browse --ledger URL` (this executable) and parses its JSON line.
    static func browse(ledger: String) -> (figures: [String: Any]?, failure: String?) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Bundle.main.executablePath ?? CommandLine.arguments[0])
        process.arguments = ["bench-browse", "--ledger", ledger]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            return (nil, "cannot start bench-browse: \(error.localizedDescription)")
        }
        let bytes = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { return (nil, "bench-browse exited with \(process.terminationStatus)") }
        let line = String(decoding: bytes, as: UTF8.self).split(separator: "\n").last { $0.hasPrefix("{") }
        guard let line, let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
            return (nil, "bench-browse printed no JSON line")
        }
        var figures: [String: Any] = [:]
        for (key, value) in object {
            if let number = value as? NSNumber {
                figures[key] = number.doubleValue
            } else if let nested = value as? [String: Any] {
                figures[key] = nested.compactMapValues { ($0 as? NSNumber)?.doubleValue }
            }
        }
        return (figures, nil)
    }

    // MARK: Output

    static func table(_ figures: [Figure]) -> String {
        var lines = [pad("figure", 40) + pad("value", 12, left: true) + "  " + pad("target", 10) + "  " + pad("", 6) + "  what"]
        for figure in figures {
            let value = figure.value.map(format) ?? "not measured"
            let status = figure.met.map { $0 ? "ok" : "MISSED" } ?? ""
            let what = figure.note.isEmpty ? figure.unit : figure.unit + " (" + figure.note + ")"
            lines.append(pad(figure.key, 40) + pad(value, 12, left: true) + "  " + pad(figure.targetText, 10) + "  " + pad(status, 6) + "  " + what)
        }
        return lines.joined(separator: "\n")
    }

    private static func pad(_ text: String, _ width: Int, left: Bool = false) -> String {
        let fill = String(repeating: " ", count: max(0, width - text.count))
        return left ? fill + text : text + fill
    }

    /// One JSON object: every figure by key (null when not measured), and the targets missed.
    static func jsonLine(_ figures: [Figure]) -> String {
        var members = figures.map { figure in
            "\"\(figure.key)\":" + (figure.value.map { $0.isFinite ? String(format: "%.3f", $0) : "null" } ?? "null")
        }
        let missed = figures.filter { $0.met == false }.map { "\"\($0.key)\"" }
        let unmeasured = figures.filter { $0.value == nil }.map { "\"\($0.key)\"" }
        members.append("\"missed\":[" + missed.joined(separator: ",") + "]")
        members.append("\"notMeasured\":[" + unmeasured.joined(separator: ",") + "]")
        return "{" + members.joined(separator: ",") + "}"
    }
}

/// The bench's progress on standard error, on a terminal only: phase k of n and the time so far.
final class BenchProgress {
    let enabled: Bool
    let phases: Int
    private var current = 0
    private let start = ContinuousClock.now

    init(enabled: Bool, phases: Int) {
        self.enabled = enabled
        self.phases = phases
    }

    func phase(_ name: String) {
        current += 1
        guard enabled else { return }
        let width = 20
        let filled = min(width, (current - 1) * width / max(1, phases - 1))
        let bar = String(repeating: "#", count: filled) + String(repeating: " ", count: width - filled)
        let line = String(format: "\r\u{1B}[K[%@] %d/%d %@  (%.0fs)", bar, min(current, phases), phases, name, seconds(ContinuousClock.now - start))
        FileHandle.standardError.write(Data(line.utf8))
    }

    func clear() {
        guard enabled else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
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
