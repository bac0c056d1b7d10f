import Foundation
import Ledger
import LedgerPostgres
import LedgerSQLite
import ReceiptDecoding
import ReceiptModel
import Samples
import Testing
import X509

/// The backends every conformance test runs against.
enum Backend: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case sqlite
    case postgres
    /// PostgreSQL with a ledger created for engines beyond one server (`?portable=on`, ``PortableSQL``).
    case postgresPortable
    var testDescription: String { rawValue }

    /// The backends that run here: PostgreSQL when installed, and always under CI (where absence fails).
    static var available: [Backend] { PostgresTestServer.enabled ? [.sqlite, .postgres, .postgresPortable] : [.sqlite] }

    /// Whether the ledger is on a PostgreSQL server, portable or not.
    var isPostgres: Bool { self != .sqlite }

    /// A new database's URL on the throwaway cluster (portable for ``postgresPortable``).
    private func postgresURL() throws -> String {
        let url = try PostgresTestServer.get().createDatabase()
        return self == .postgresPortable ? withParameter(url, "portable=on") : url
    }

    func database() async throws -> any SQLDatabase {
        switch self {
        case .sqlite:
            let path = testScratchDirectory.appendingPathComponent("ledger-\(UUID().uuidString).sqlite").path
            return try SQLiteDatabase.open(path: path)
        case .postgres, .postgresPortable:
            return try await PostgresDatabase.connect(url: postgresURL())
        }
    }

    /// Two connections to one new, empty store (as two processes sharing a ledger would have).
    func twoConnections() async throws -> (any SQLDatabase, any SQLDatabase) {
        switch self {
        case .sqlite:
            let path = testScratchDirectory.appendingPathComponent("ledger-\(UUID().uuidString).sqlite").path
            let first = try SQLiteDatabase.open(path: path)
            // The file exists once the first has created the schema; open the second after.
            _ = try await SQLLedger.open(first, now: testNow)
            return (first, try SQLiteDatabase.open(path: path))
        case .postgres, .postgresPortable:
            let url = try postgresURL()
            return (try await PostgresDatabase.connect(url: url), try await PostgresDatabase.connect(url: url))
        }
    }

    func ledger(now: Timestamp = testNow) async throws -> SQLLedger {
        try await SQLLedger.open(database(), now: now)
    }
}

let testNow = Timestamp.utc(year: 2026, month: 1, day: 1)

/// Where this test process's files go (SQLite ledgers, password files): one directory, removed when the process
/// exits (the suites make hundreds of ledgers, and none of them is worth keeping).
let testScratchDirectory: URL = {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("receiptdesk-tests-\(getpid())")
    try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    atexit { try? FileManager.default.removeItem(at: testScratchDirectory) }
    return url
}()

/// `url` with one more query parameter (`name=value`).
func withParameter(_ url: String, _ parameter: String) -> String {
    url + (url.contains("?") ? "&" : "?") + parameter
}

enum Corpus {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("shared/corpus")

    /// Every purchase-data file of the corpus (not its notes and certificates).
    /// - Throws: ``MissingFile`` when the corpus is not beside the project: no test reads it as empty.
    static var files: [String] {
        get throws {
            try filesBelowRoot()
        }
    }

    private static func filesBelowRoot() throws -> [String] {
        let skip: Set<String> = ["md", "cer", "der", "p8"]
        guard let enumerator = FileManager.default.enumerator(atPath: root.path) else { throw MissingFile(path: root.path) }
        var out: [String] = []
        for case let relative as String in enumerator {
            let url = root.appendingPathComponent(relative)
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else { continue }
            if isDirectory.boolValue || skip.contains(url.pathExtension) { continue }
            out.append(url.path)
        }
        return out.sorted()
    }

    /// A corpus file or folder that is not there.
    struct MissingFile: Error, CustomStringConvertible {
        var path: String
        var description: String { "nothing at \(path) (the corpus is ../shared/corpus; see its SOURCES.md)" }
    }
}

/// (`environment`: the one environment signed data must come from, as `--environment` sets it.)
func testDecoder(extraRoots: [[UInt8]] = [], environment: Environment? = nil) throws -> RecordDecoder {
    let roots = try ([AppleRoots.rootCAG3DER] + extraRoots).map { try Certificate(derEncoded: $0) }
    return RecordDecoder(
        verifier: JWSVerifier(policy: VerificationPolicy(trustRoots: roots, environment: environment)),
        receiptRoots: [AppleRoots.incRootDER] + extraRoots, now: testNow)
}

/// A Server API transaction history holding one transaction (its JSON), signed by `signer`: one input record.
func signedHistoryRecord(_ transaction: String, signedBy signer: JWSSigner) -> String {
    #"{"signedTransactions":[""# + signer.sign(json: transaction) + #""]}"#
}

/// A V2 notification as the App Store posts it: `payload` signed, under `signedPayload`.
func signedNotificationRecord(_ payload: String, signedBy signer: JWSSigner) -> String {
    #"{"signedPayload":""# + signer.sign(json: payload) + #""}"#
}

/// Imports bytes as one source through the real importer, in small batches (decoded by ``testDecoder(extraRoots:)``
/// unless given a decoder).
@discardableResult
func importBytes(
    _ bytes: [UInt8], path: String, into ledger: SQLLedger, decoder: RecordDecoder? = nil, batchSize: Int = 3,
    now: Timestamp = testNow, maxRecordBytes: Int = 64 << 20
) async throws -> ImportCounts {
    let decoder = try decoder ?? testDecoder()
    var splitter = RecordSplitter(maxRecordBytes: maxRecordBytes)
    var chunks: [[RecordSplitter.Piece]] = [splitter.feed(bytes), splitter.finish()]
    let info = SourceInfo(path: path, sha256: CanonicalJSON.sha256Hex(bytes), size: Int64(bytes.count))
    return try await Importer(ledger: ledger, decoder: decoder, batchSize: batchSize).run(info, now: now) {
        chunks.isEmpty ? nil : chunks.removeFirst()
    }
}

@discardableResult
func importText(_ text: String, path: String, into ledger: SQLLedger, now: Timestamp = testNow) async throws -> ImportCounts {
    try await importBytes(Array(text.utf8), path: path, into: ledger, now: now)
}

@discardableResult
func importFile(_ path: String, into ledger: SQLLedger) async throws -> ImportCounts {
    guard let data = FileManager.default.contents(atPath: path) else { throw Corpus.MissingFile(path: path) }
    return try await importBytes([UInt8](data), path: path, into: ledger)
}

/// Takes a ledger back to what schema version 3 wrote (before `transactions.revocation_kind` and the counters per
/// environment), as a ledger of that release holds it: the kinds, their indexes, the newer counters and the later
/// versions' flag indexes gone, the migrations not applied.
func undoMigrationV4(_ c: any SQLConnection) throws {
    let v7 =
        c.dialect == .postgres
        ? ["DROP TRIGGER IF EXISTS flags_status_logged ON flags", "DROP FUNCTION IF EXISTS flags_status_logged()"]
        : ["DROP TRIGGER IF EXISTS flags_status_logged"]
    for statement in v7 + [
        "DELETE FROM ledger_migrations WHERE id = 'v12-upgraded-refunds'",
        "DROP INDEX flags_rule_status", "DELETE FROM ledger_migrations WHERE id = 'v11-flag-rule-status-index'",
        "DROP INDEX flags_severity_at", "DELETE FROM ledger_migrations WHERE id = 'v10-flag-severity-index'",
        "DROP INDEX flags_product_at", "DELETE FROM ledger_migrations WHERE id = 'v8-flag-product-index'",
        "DELETE FROM ledger_migrations WHERE id = 'v7-flag-status-logged'",
        "DELETE FROM ledger_migrations WHERE id = 'v6-covering-sort-indexes'",
        "DELETE FROM ledger_counters WHERE name LIKE '%@%'",
        "DELETE FROM ledger_migrations WHERE id = 'v5-environment-counters'",
        "DROP INDEX transactions_refund_day", "DROP INDEX transactions_product_refund_day", "DROP INDEX notifications_reversals",
        "ALTER TABLE transactions DROP COLUMN revocation_kind",
        "CREATE INDEX transactions_refunds ON transactions (product_id, revocation_date) WHERE revocation_date IS NOT NULL",
        "DELETE FROM ledger_counters WHERE name = 'refunded_transactions'",
        "INSERT INTO ledger_counters (name, value) SELECT 'revoked_transactions', COUNT(*) FROM transactions WHERE revocation_date IS NOT NULL",
        "DELETE FROM ledger_migrations WHERE id = 'v4-revocation-kind'",
        "UPDATE ledger_meta SET value = '3' WHERE key = 'schema_version'",
    ] {
        try c.execute(statement)
    }
}

/// Whether the ledger holds an index of that name.
func indexExists(_ c: any SQLConnection, _ name: String) throws -> Bool {
    let sql =
        switch c.dialect {
        case .sqlite: "SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND name = ?"
        case .postgres: "SELECT COUNT(*) FROM pg_indexes WHERE schemaname = current_schema() AND indexname = ?"
        }
    return try c.scalar(sql, [.text(name)])?.int ?? 0 > 0
}

/// The plan the database would run a statement with, as text: PostgreSQL's `EXPLAIN`, told to read by index
/// wherever one serves (a test's tables are small enough to read whole), or SQLite's `EXPLAIN QUERY PLAN`.
func queryPlan(_ c: any SQLConnection, _ sql: String, _ arguments: [SQLValue]) throws -> String {
    switch c.dialect {
    case .postgres:
        try c.execute("SET LOCAL enable_seqscan = off", [])
        return try c.query("EXPLAIN " + sql, arguments).compactMap { $0.first?.text }.joined(separator: "\n")
    case .sqlite:
        return try c.query("EXPLAIN QUERY PLAN " + sql, arguments).compactMap { $0.last?.text }.joined(separator: "\n")
    }
}
