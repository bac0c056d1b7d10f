import ArgumentParser
import Entitlements
import Foundation
import Ledger
import LedgerPostgres
import LedgerSQLite
import ReceiptDecoding
import ReceiptModel

/// Where the data comes from: a stored ledger (`--ledger`, `RECEIPTDESK_LEDGER`, or the default file)
/// or files decoded into an in-memory ledger at start-up (`--files`).
struct LedgerOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "The ledger: sqlite:PATH or postgres://user@host/db (default: $RECEIPTDESK_LEDGER, else the file under $XDG_DATA_HOME/receiptdesk).",
            valueName: "URL"))
    var ledger: String?

    @Option(
        name: .customLong("files"), parsing: .upToNextOption,
        help: ArgumentHelp("Decode these files or directories into an in-memory ledger instead.", valueName: "PATH"))
    var files: [String] = []

    @Flag(
        name: .customLong("read-only"),
        help: "Refuse every write (import, triage, notes, flag refresh, account links) with exit 2; also $RECEIPTDESK_READ_ONLY=1.")
    var readOnlyFlag = false

    /// `--read-only`, or `RECEIPTDESK_READ_ONLY` set to 1, true or yes: the stored ledger is opened for reading only.
    var readOnly: Bool { readOnlyFlag || Self.readOnlyFromEnvironment() }

    static func readOnlyFromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        ["1", "true", "yes"].contains(environment["RECEIPTDESK_READ_ONLY"]?.lowercased() ?? "")
    }

    /// The error for a write asked for while read-only: says what was refused and why, exit 2.
    static func refuse(_ write: String) -> CLIError {
        CLIError.usage("read-only: \(write) writes to the ledger and is refused (--read-only or RECEIPTDESK_READ_ONLY)")
    }

    /// The ledger URL: the one given, else `RECEIPTDESK_LEDGER`, else the XDG data file.
    static func ledgerURL(explicit: String?, environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let explicit { return explicit }
        if let url = environment["RECEIPTDESK_LEDGER"], !url.isEmpty { return url }
        return "sqlite:" + Self.defaultLedgerPath(environment: environment)
    }

    /// `$XDG_DATA_HOME/receiptdesk/ledger.sqlite`, or `~/.local/share/receiptdesk/ledger.sqlite`.
    static func defaultLedgerPath(environment: [String: String]) -> String {
        let base: String
        if let data = environment["XDG_DATA_HOME"], data.hasPrefix("/") {
            base = data
        } else {
            base = (environment["HOME"] ?? NSHomeDirectory()) + "/.local/share"
        }
        return base + "/receiptdesk/ledger.sqlite"
    }

    /// Opens the stored ledger, or builds the in-memory one from `--files` (with a progress bar).
    func open(verification: VerificationOptions, rules: FlagRules, now: Timestamp) async throws -> SQLLedger {
        if !files.isEmpty {
            let ledger = try await SQLLedger.open(try SQLiteDatabase.open(path: nil), now: now)
            let decoder = try verification.makeDecoder(now: now)
            _ = try await ImportRun(ledger: ledger, decoder: decoder, rules: rules, quiet: true).run(paths: files, now: now)
            return ledger
        }
        return try await Self.open(url: Self.ledgerURL(explicit: ledger), now: now, readOnly: readOnly, mustExist: true)
    }

    /// Opens a ledger URL; failures exit 3. Only `import` creates a SQLite ledger: everything else
    /// (`mustExist`) refuses a path with no ledger, so a typo never opens a new, empty one.
    static func open(url: String, now: Timestamp, readOnly: Bool = false, mustExist: Bool = false) async throws -> SQLLedger {
        do {
            let database: any SQLDatabase
            if url.hasPrefix("postgres://") || url.hasPrefix("postgresql://") {
                database = try await PostgresDatabase.connect(url: url)
            } else if url.hasPrefix("sqlite:") {
                var path = String(url.dropFirst("sqlite:".count))
                if path.hasPrefix("//") { path = String(path.dropFirst(2)) }
                if !(readOnly || mustExist) || FileManager.default.fileExists(atPath: path) {
                    database = try SQLiteDatabase.open(path: path, readOnly: readOnly)
                } else {
                    throw LedgerError.cannotOpen("no ledger at \(path) (receiptdesk import --ledger \(url) FILE... creates one)")
                }
            } else if url == "memory:" {
                database = try SQLiteDatabase.open(path: nil)
            } else {
                // Not echoed: a mistyped URL may hold a password.
                throw CLIError.usage("--ledger takes sqlite:PATH or postgres://user@host/database (the URL given is neither)")
            }
            return try await SQLLedger.open(database, now: now, readOnly: readOnly)
        } catch let error as LedgerError {
            throw CLIError.ledgerUnavailable(error.message)
        }
    }
}

/// Imports files into a ledger with a progress bar on a terminal and a reconciliation line per file,
/// then brings the refund flags up to date, so reading commands only read.
struct ImportRun {
    let ledger: SQLLedger
    let decoder: RecordDecoder
    let rules: FlagRules
    var quiet = false
    var batchSize = 2000
    var maxRecordBytes = ChunkedFile.defaultMaxRecordBytes

    /// Imports every file under `paths`; returns the total counts.
    func run(paths: [String], now: Timestamp) async throws -> ImportCounts {
        let files = try ChunkedFile.expand(paths)
        let progress = ProgressBar(enabled: isatty(STDERR_FILENO) == 1)
        var total = ImportCounts()
        for path in files {
            // Standard input is read twice like a file (its hash names the source, so piping the same data
            // again is all duplicates and an interrupted import resumes): it is kept in a private temporary
            // file for the import, in chunks, never whole in memory.
            let spooled = path == "-" ? try ChunkedFile.spoolStandardInput() : nil
            defer { spooled?.close() }
            var info = try ChunkedFile.sourceInfo(spooled?.path ?? path)
            if spooled != nil { info.path = "-" }
            var file = try ChunkedFile(spooled?.path ?? path, maxRecordBytes: maxRecordBytes)
            let importer = Importer(ledger: ledger, decoder: decoder, batchSize: batchSize)
            let counts: ImportCounts
            // Each rejected record is named with its reason as it happens (the first few of a file; the
            // dashboard's Imports screen lists them all).
            var shown = 0
            let shownLimit = 20
            do {
                counts = try await importer.run(info, now: now, nextPieces: { try file.next() }) { step in
                    if !quiet, !step.rejections.isEmpty {
                        progress.clear()
                        for rejection in step.rejections.prefix(max(0, shownLimit - shown)) {
                            FileHandle.standardError.write(Data("\(safe(path)): rejected \(safe(rejection))\n".utf8))
                        }
                        shown += step.rejections.count
                    }
                    progress.update(step)
                }
            } catch let error as LedgerError {
                progress.clear()
                throw LedgerError(code: error.code, message: "\(path): \(error.message)")
            }
            progress.clear()
            if shown > shownLimit {
                FileHandle.standardError.write(
                    Data("\(safe(path)): \(shown - shownLimit) more rejected (the dashboard's Imports screen lists them all)\n".utf8))
            }
            total = total + counts
            if !quiet || counts.rejected > 0 {
                FileHandle.standardError.write(Data("\(safe(path)): \(counts)\n".utf8))
            }
        }
        try await ledger.refreshFlags(rules: rules, now: now)
        return total
    }
}

/// A one-line progress bar on standard error: records, bytes, rate and time left.
final class ProgressBar: @unchecked Sendable {
    let enabled: Bool
    private let start = ContinuousClock.now
    private var lastDraw = ContinuousClock.now - .seconds(1)

    init(enabled: Bool) {
        self.enabled = enabled
    }

    func update(_ step: ImportProgress) {
        guard enabled else { return }
        let now = ContinuousClock.now
        guard now - lastDraw > .milliseconds(100) || step.bytes >= step.totalBytes else { return }
        lastDraw = now
        let elapsed = max(0.001, Double((now - start).components.attoseconds) / 1e18 + Double((now - start).components.seconds))
        let fraction = step.totalBytes > 0 ? min(1, Double(step.bytes) / Double(step.totalBytes)) : 1
        let width = 24
        let filled = Int(fraction * Double(width))
        let rate = Double(step.records) / elapsed
        let eta = fraction > 0 ? elapsed * (1 - fraction) / fraction : 0
        let bar = String(repeating: "#", count: filled) + String(repeating: " ", count: width - filled)
        let line = String(
            format: "\r[%@] %3.0f%%  %d records  %.1f/%.1f MB  %.0f rec/s  ETA %.0fs ", bar, fraction * 100, step.records,
            Double(step.bytes) / 1e6, Double(step.totalBytes) / 1e6, rate, eta)
        FileHandle.standardError.write(Data(line.utf8))
    }

    func clear() {
        guard enabled else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
    }
}
