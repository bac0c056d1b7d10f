import Foundation
import GRDB
import GRDBSQLite
import Ledger

/// The embedded ledger: one SQLite file in WAL mode through GRDB, or an in-memory database for `--files`.
///
/// Readers see a consistent snapshot while an import writes; a second writer waits for the first
/// (up to ``busyTimeout``) and then fails with a message that says so.
public final class SQLiteDatabase: SQLDatabase {
    public let dialect = SQLDialect.sqlite
    /// How long a writer waits for another writer before giving up.
    public static let busyTimeout: TimeInterval = 10
    private let writer: any DatabaseWriter
    public let path: String?

    private init(writer: any DatabaseWriter, path: String?) {
        self.writer = writer
        self.path = path
    }

    /// Opens (creating when needed) the ledger file at `path`, or an in-memory ledger when `path` is nil.
    public static func open(path: String?, readOnly: Bool = false) throws -> SQLiteDatabase {
        var configuration = Configuration()
        configuration.foreignKeysEnabled = true
        configuration.readonly = readOnly
        configuration.busyMode = .timeout(busyTimeout)
        configuration.label = "receiptdesk-ledger"
        configuration.prepareDatabase { db in
            if !db.configuration.readonly {
                try db.execute(sql: "PRAGMA synchronous = NORMAL")
                try db.execute(sql: "PRAGMA page_size = 16384")
                try db.execute(sql: "PRAGMA cache_size = -131072")
                try db.execute(sql: "PRAGMA temp_store = MEMORY")
            }
        }
        do {
            guard let path else {
                return SQLiteDatabase(writer: try DatabaseQueue(configuration: configuration), path: nil)
            }
            if !readOnly {
                let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            }
            return SQLiteDatabase(writer: try DatabasePool(path: path, configuration: configuration), path: path)
        } catch {
            throw LedgerError.cannotOpen("cannot open the SQLite ledger at \(path ?? ":memory:"): \(describe(error))")
        }
    }

    public func write<T: Sendable>(_ body: @escaping @Sendable (any SQLConnection) throws -> T) async throws -> T {
        do {
            return try await writer.write { db in try body(GRDBConnection(db)) }
        } catch let error as DatabaseError {
            throw translate(error)
        }
    }

    public func read<T: Sendable>(_ body: @escaping @Sendable (any SQLConnection) throws -> T) async throws -> T {
        do {
            return try await writer.read { db in try body(GRDBConnection(db)) }
        } catch let error as DatabaseError {
            throw translate(error)
        }
    }

    public func close() async throws {
        if let pool = writer as? DatabasePool {
            // GRDB closes the writer before its readers, so the last connection to close is a read-only one, which
            // cannot checkpoint: every page committed since the last automatic checkpoint would stay in the -wal
            // file, and the .sqlite file alone (a copy, a backup) would not be the whole ledger. Checkpointing here
            // moves them in and empties the -wal file, which otherwise keeps its largest size (16 MB beside the
            // demo's 2.6 MB ledger). Without waiting: when another process reads an older snapshot, SQLite
            // checkpoints what it can, as PASSIVE does, and leaves the rest to a later checkpoint. An emptied log gets
            // one frame back (page 1 with the same user_version; only SQLite's change counter in it moves): GRDB
            // writes a table into a ledger whose log is empty when it next opens it (groue/GRDB.swift#102), and a
            // reading command must leave the files as they were. The -wal file outlives this close because the
            // pool's read-only readers close after its writer, and a reader was opened (SQLLedger.open reads).
            // Only when this connection changed rows: a reading command's close changes nothing either.
            if !pool.configuration.readonly {
                try? await pool.writeWithoutTransaction { db in
                    guard db.totalChangesCount > 0 else { return }
                    try db.execute(sql: "PRAGMA busy_timeout = 0")
                    let busy = try Int.fetchOne(db, sql: "PRAGMA wal_checkpoint(TRUNCATE)")
                    if busy == 0 {
                        let version = try Int.fetchOne(db, sql: "PRAGMA user_version") ?? 0
                        try db.execute(sql: "PRAGMA user_version = \(version)")
                    }
                }
            }
            try pool.close()
        }
        if let queue = writer as? DatabaseQueue { try queue.close() }
    }

    /// Runs SQLite's own integrity check; returns its verdict (`ok` when sound).
    public func integrityCheck() async throws -> String {
        try await writer.read { db in try String.fetchOne(db, sql: "PRAGMA integrity_check") ?? "no answer" }
    }

    private func translate(_ error: DatabaseError) -> Error {
        switch error.resultCode {
        case .SQLITE_BUSY, .SQLITE_LOCKED:
            return LedgerError(
                code: .busy,
                message: "another process is writing to this ledger and did not finish within \(Int(Self.busyTimeout)) s; try again when it is done")
        case .SQLITE_READONLY where writer.configuration.readonly:
            return LedgerError(code: .readOnly, message: "the ledger is open read-only")
        case .SQLITE_READONLY:
            // Opened for writing, yet SQLite cannot write: the file system says no, which no option changes.
            return LedgerError(
                code: .cannotWrite,
                message: "SQLite cannot write the ledger \(path ?? ":memory:") (file permissions, or a read-only file system): \(error.message ?? "")")
        default:
            // The message names the statement's failure, never the bound customer data.
            return LedgerError(code: .sqlite, message: "SQLite error \(error.resultCode.rawValue): \(error.message ?? "unknown")")
        }
    }
}

private func describe(_ error: Error) -> String {
    if let error = error as? DatabaseError { return error.message ?? "SQLite error \(error.resultCode.rawValue)" }
    return "\(error)"
}

/// A GRDB database handle seen through the ledger's `SQLConnection`.
///
/// Statements come from GRDB's statement cache; binding and stepping use SQLite's C API directly,
/// which the importer's hot loop needs (GRDB's generic argument and row types cost more than the insert).
final class GRDBConnection: SQLConnection {
    let db: Database
    let dialect = SQLDialect.sqlite

    init(_ db: Database) {
        self.db = db
    }

    func execute(_ sql: String, _ arguments: [SQLValue]) throws {
        try step(try prepared(sql, arguments), sql: sql)
    }

    func executeDeferred(_ sql: String, _ arguments: [SQLValue]) throws {
        try execute(sql, arguments)
    }

    func flush() throws {}

    func insert(_ sql: String, _ arguments: [SQLValue]) throws -> Int64? {
        try execute(sql, arguments)
        guard sqlite3_changes(db.sqliteConnection) > 0 else { return nil }
        return sqlite3_last_insert_rowid(db.sqliteConnection)
    }

    func query(_ sql: String, _ arguments: [SQLValue]) throws -> [[SQLValue]] {
        let statement = try prepared(sql, arguments)
        var rows: [[SQLValue]] = []
        let columns = sqlite3_column_count(statement)
        while true {
            let code = sqlite3_step(statement)
            if code == SQLITE_DONE { break }
            guard code == SQLITE_ROW else { throw failure(code, sql) }
            var row: [SQLValue] = []
            row.reserveCapacity(Int(columns))
            for column in 0..<columns {
                switch sqlite3_column_type(statement, column) {
                case SQLITE_INTEGER: row.append(.int(sqlite3_column_int64(statement, column)))
                case SQLITE_FLOAT: row.append(.int(Int64(sqlite3_column_double(statement, column))))
                case SQLITE_TEXT:
                    let count = Int(sqlite3_column_bytes(statement, column))
                    if let text = sqlite3_column_text(statement, column) {
                        row.append(.text(String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)))
                    } else {
                        row.append(.text(""))
                    }
                case SQLITE_BLOB:
                    let count = Int(sqlite3_column_bytes(statement, column))
                    if let blob = sqlite3_column_blob(statement, column) {
                        row.append(.blob(Array(UnsafeRawBufferPointer(start: blob, count: count))))
                    } else {
                        row.append(.blob([]))
                    }
                default: row.append(.null)
                }
            }
            rows.append(row)
        }
        return rows
    }

    /// One statement for all the rows, found in the cache once (its lookup hashes the SQL's text, which per
    /// row of a large batch cost as much as binding the row).
    func insertRows(into table: String, columns: [String], rows: [[SQLValue]], onConflict: String) throws {
        guard !rows.isEmpty else { return }
        let sql = insertSQL(into: table, columns: columns, onConflict: onConflict)
        let statement = try db.cachedStatement(sql: sql).sqliteStatement
        for row in rows {
            try bind(statement, row, sql: sql)
            try step(statement, sql: sql)
        }
    }

    private func step(_ statement: OpaquePointer, sql: String) throws {
        while true {
            let code = sqlite3_step(statement)
            if code == SQLITE_DONE { break }
            if code != SQLITE_ROW { throw failure(code, sql) }
        }
    }

    private func prepared(_ sql: String, _ arguments: [SQLValue]) throws -> OpaquePointer {
        let statement = try db.cachedStatement(sql: sql).sqliteStatement
        try bind(statement, arguments, sql: sql)
        return statement
    }

    /// Resets `statement` and binds `arguments` to it.
    private func bind(_ statement: OpaquePointer, _ arguments: [SQLValue], sql: String) throws {
        sqlite3_reset(statement)
        sqlite3_clear_bindings(statement)
        for (offset, argument) in arguments.enumerated() {
            let index = Int32(offset + 1)
            let code: Int32
            switch argument {
            case .null: code = sqlite3_bind_null(statement, index)
            case .int(let value): code = sqlite3_bind_int64(statement, index, value)
            case .text(let text):
                code = text.utf8.withContiguousStorageIfAvailable { utf8 in
                    sqlite3_bind_text(statement, index, UnsafeRawPointer(utf8.baseAddress!).assumingMemoryBound(to: CChar.self), Int32(utf8.count), sqliteTransient)
                } ?? sqlite3_bind_text(statement, index, text, -1, sqliteTransient)
            case .blob(let bytes):
                code = bytes.withUnsafeBytes { sqlite3_bind_blob(statement, index, $0.baseAddress, Int32($0.count), sqliteTransient) }
            }
            if code != SQLITE_OK { throw failure(code, sql) }
        }
    }

    private func failure(_ code: Int32, _ sql: String) -> Error {
        // The statement's text and SQLite's message; never the bound (customer) values.
        let message = String(cString: sqlite3_errmsg(db.sqliteConnection))
        return DatabaseError(resultCode: ResultCode(rawValue: code), message: message, sql: sql)
    }
}

private let sqliteTransient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

extension SQLValue {
    var databaseValue: DatabaseValue {
        switch self {
        case .null: .null
        case .int(let value): value.databaseValue
        case .text(let value): value.databaseValue
        case .blob(let bytes): Data(bytes).databaseValue
        }
    }
}
