import Foundation
import GRDB
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
        if let pool = writer as? DatabasePool { try pool.close() }
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
                code: "busy",
                message: "another process is writing to this ledger and did not finish within \(Int(Self.busyTimeout)) s; try again when it is done")
        case .SQLITE_READONLY:
            return LedgerError(code: "readOnly", message: "the ledger is open read-only")
        default:
            // The message names the statement's failure, never the bound customer data.
            return LedgerError(code: "sqlite", message: "SQLite error \(error.resultCode.rawValue): \(error.message ?? "unknown")")
        }
    }
}

private func describe(_ error: Error) -> String {
    if let error = error as? DatabaseError { return error.message ?? "SQLite error \(error.resultCode.rawValue)" }
    return "\(error)"
}

/// A GRDB database handle seen through the ledger's `SQLConnection`.
final class GRDBConnection: SQLConnection {
    let db: Database
    let dialect = SQLDialect.sqlite

    init(_ db: Database) {
        self.db = db
    }

    func execute(_ sql: String, _ arguments: [SQLValue]) throws {
        if arguments.isEmpty && sql.contains(";") || sql.hasPrefix("CREATE TRIGGER") {
            try db.execute(sql: sql)
            return
        }
        let statement = try db.cachedStatement(sql: sql)
        try statement.execute(arguments: StatementArguments(arguments.map(\.databaseValue)))
    }

    func query(_ sql: String, _ arguments: [SQLValue]) throws -> [[SQLValue]] {
        let statement = try db.cachedStatement(sql: sql)
        statement.arguments = StatementArguments(arguments.map(\.databaseValue))
        var rows: [[SQLValue]] = []
        let cursor = try Row.fetchCursor(statement)
        while let row = try cursor.next() {
            var values: [SQLValue] = []
            values.reserveCapacity(row.count)
            for index in 0..<row.count {
                switch row[index] as DatabaseValue {
                case let value where value.isNull: values.append(.null)
                case let value:
                    switch value.storage {
                    case .int64(let number): values.append(.int(number))
                    case .double(let number): values.append(.int(Int64(number)))
                    case .string(let text): values.append(.text(text))
                    case .blob(let data): values.append(.blob([UInt8](data)))
                    case .null: values.append(.null)
                    }
                }
            }
            rows.append(values)
        }
        return rows
    }
}

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
