import Foundation
import Ledger
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import PostgresNIO

/// A ledger shared by a team: PostgreSQL through postgres-nio.
///
/// The ledger's shared SQL runs synchronously inside a transaction, so each transaction runs on this
/// backend's own serial queue and waits on postgres-nio's futures there, never on an event loop or a
/// Swift concurrency thread.
public final class PostgresDatabase: SQLDatabase, @unchecked Sendable {
    public let dialect = SQLDialect.postgres
    private let group: MultiThreadedEventLoopGroup
    private let connection: PostgresConnection
    private let queue = DispatchQueue(label: "receiptdesk.postgres")
    private let logger: Logger
    /// The URL without its password, safe to print.
    public let redactedURL: String

    private init(group: MultiThreadedEventLoopGroup, connection: PostgresConnection, logger: Logger, redactedURL: String) {
        self.group = group
        self.connection = connection
        self.logger = logger
        self.redactedURL = redactedURL
    }

    /// Connects to a `postgres://user[:password]@host[:port]/database` URL.
    ///
    /// A unix socket directory is given as `?host=/path/to/dir` (or an empty host with that parameter).
    /// TLS is off for loopback and unix sockets, preferred elsewhere; `sslmode=disable|prefer|require` decides.
    public static func connect(url: String) async throws -> PostgresDatabase {
        let target = try PostgresURL(url)
        var logger = Logger(label: "receiptdesk.postgres")
        logger.logLevel = .critical
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        var configuration: PostgresConnection.Configuration
        if let socket = target.socketDirectory {
            configuration = .init(
                unixSocketPath: "\(socket)/.s.PGSQL.\(target.port)", username: target.user, password: target.password,
                database: target.database)
        } else {
            let tls: PostgresConnection.Configuration.TLS
            do {
                switch target.sslMode {
                case "disable": tls = .disable
                case "require": tls = .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
                default: tls = target.isLoopback ? .disable : .prefer(try NIOSSLContext(configuration: .makeClientConfiguration()))
                }
            } catch {
                try? await group.shutdownGracefully()
                throw LedgerError.cannotOpen("cannot set up TLS for \(target.redacted): \(error)")
            }
            configuration = .init(
                host: target.host, port: target.port, username: target.user, password: target.password,
                database: target.database, tls: tls)
        }
        do {
            let connection = try await PostgresConnection.connect(
                on: group.next(), configuration: configuration, id: 1, logger: logger)
            return PostgresDatabase(group: group, connection: connection, logger: logger, redactedURL: target.redacted)
        } catch {
            try? await group.shutdownGracefully()
            throw LedgerError.cannotOpen("cannot connect to the PostgreSQL ledger at \(target.redacted): \(Self.describe(error))")
        }
    }

    public func write<T: Sendable>(_ body: @escaping @Sendable (any SQLConnection) throws -> T) async throws -> T {
        try await run(begin: "BEGIN ISOLATION LEVEL READ COMMITTED", body)
    }

    public func read<T: Sendable>(_ body: @escaping @Sendable (any SQLConnection) throws -> T) async throws -> T {
        try await run(begin: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", body)
    }

    private func run<T: Sendable>(begin: String, _ body: @escaping @Sendable (any SQLConnection) throws -> T) async throws
        -> T
    {
        let postgres = self.connection
        let logger = self.logger
        return try await withCheckedThrowingContinuation { continuation in
            queue.async {
                let connection = PGConnection(connection: postgres, logger: logger)
                do {
                    try connection.execute(begin, [])
                    // Writers serialise on one advisory lock: a second importer waits instead of interleaving.
                    if !begin.contains("READ ONLY") { try connection.execute("SELECT pg_advisory_xact_lock(7243501)", []) }
                    let result = try body(connection)
                    try connection.execute("COMMIT", [])
                    continuation.resume(returning: result)
                } catch {
                    try? connection.flush()
                    try? connection.execute("ROLLBACK", [])
                    continuation.resume(throwing: Self.translate(error))
                }
            }
        }
    }

    public func close() async throws {
        try await connection.close()
        try await group.shutdownGracefully()
    }

    static func translate(_ error: Error) -> Error {
        if error is LedgerError { return error }
        return LedgerError(code: "postgres", message: "PostgreSQL error: \(describe(error))")
    }

    /// The server's message, without the query's bound values.
    static func describe(_ error: Error) -> String {
        if let error = error as? PSQLError {
            if let message = error.serverInfo?[.message] { return message }
            if let underlying = error.underlying { return "\(error.code): \(underlying)" }
            return "\(error.code)"
        }
        return "\(error)"
    }
}

/// One PostgreSQL connection seen through the ledger's `SQLConnection`; blocks its (non-loop) thread.
final class PGConnection: SQLConnection {
    let dialect = SQLDialect.postgres
    let connection: PostgresConnection
    let logger: Logger

    init(connection: PostgresConnection, logger: Logger) {
        self.connection = connection
        self.logger = logger
    }

    /// Statements sent and not yet confirmed: postgres-nio queues them on the connection, so a batch's
    /// writes cost one round trip at the next read or commit instead of one each.
    private var pending: [EventLoopFuture<PostgresQueryResult>] = []

    func execute(_ sql: String, _ arguments: [SQLValue]) throws {
        try flush()
        _ = try run(sql, arguments).wait()
    }

    func executeDeferred(_ sql: String, _ arguments: [SQLValue]) throws {
        pending.append(try run(sql, arguments))
    }

    func flush() throws {
        let waiting = pending
        pending.removeAll()
        var failure: Error?
        for future in waiting {
            do { _ = try future.wait() } catch { if failure == nil { failure = error } }
        }
        if let failure { throw failure }
    }

    func insert(_ sql: String, _ arguments: [SQLValue]) throws -> Int64? {
        try insertReturningId(sql, arguments)
    }

    func query(_ sql: String, _ arguments: [SQLValue]) throws -> [[SQLValue]] {
        try flush()
        return try run(sql, arguments).wait().rows.map { row in
            row.map { cell in Self.value(cell) }
        }
    }

    private func run(_ sql: String, _ arguments: [SQLValue]) throws -> EventLoopFuture<PostgresQueryResult> {
        var bindings = PostgresBindings(capacity: arguments.count)
        for argument in arguments {
            switch argument {
            case .null: bindings.appendNull()
            case .int(let value): bindings.append(value)
            case .text(let value): bindings.append(value)
            case .blob(let bytes): bindings.append(ByteBuffer(bytes: bytes))
            }
        }
        let query = PostgresQuery(unsafeSQL: Self.numbered(sql), binds: bindings)
        return connection.query(query, logger: logger)
    }

    /// Rewrites `?` placeholders as `$1`, `$2`, ... (the ledger's SQL has no `?` inside literals).
    static func numbered(_ sql: String) -> String {
        guard sql.contains("?") else { return sql }
        var out = ""
        out.reserveCapacity(sql.utf8.count + 16)
        var n = 0
        for character in sql {
            if character == "?" {
                n += 1
                out += "$\(n)"
            } else {
                out.append(character)
            }
        }
        return out
    }

    static func value(_ cell: PostgresCell) -> SQLValue {
        guard cell.bytes != nil else { return .null }
        switch cell.dataType {
        case .int8, .int4, .int2:
            return (try? cell.decode(Int64.self)).map(SQLValue.int) ?? .null
        case .bool:
            return (try? cell.decode(Bool.self)).map { .int($0 ? 1 : 0) } ?? .null
        case .bytea:
            return (try? cell.decode(ByteBuffer.self)).map { .blob(Array($0.readableBytesView)) } ?? .null
        case .numeric:
            if let text = try? cell.decode(String.self), let number = Int64(text.split(separator: ".")[0]) { return .int(number) }
            return .null
        default:
            return (try? cell.decode(String.self)).map(SQLValue.text) ?? .null
        }
    }
}

/// A parsed `postgres://` URL; `redacted` never shows the password.
struct PostgresURL {
    var user: String
    var password: String?
    var host: String
    var port: Int
    var database: String?
    var socketDirectory: String?
    var sslMode: String?

    init(_ text: String) throws {
        guard let components = URLComponents(string: text),
            components.scheme == "postgres" || components.scheme == "postgresql"
        else {
            throw LedgerError.cannotOpen("not a postgres:// URL")
        }
        user = components.user?.removingPercentEncoding ?? ProcessInfo.processInfo.environment["USER"] ?? "postgres"
        password = components.password?.removingPercentEncoding
        host = components.host ?? ""
        port = components.port ?? 5432
        let path = components.path.trimmingCharacters(in: CharacterSet(charactersIn: "/"))
        database = path.isEmpty ? nil : path
        let items = components.queryItems ?? []
        sslMode = items.first { $0.name == "sslmode" }?.value
        if let socket = items.first(where: { $0.name == "host" })?.value, socket.hasPrefix("/") {
            socketDirectory = socket
        } else if host.hasPrefix("/") || host.hasPrefix("%2F") {
            socketDirectory = host.removingPercentEncoding
        }
        if host.isEmpty && socketDirectory == nil { host = "127.0.0.1" }
    }

    var isLoopback: Bool { ["127.0.0.1", "localhost", "::1", "[::1]"].contains(host) || host.hasPrefix("127.") }

    var redacted: String {
        let credentials = password == nil ? user : "\(user):***"
        let place = socketDirectory.map { "?host=\($0)" } ?? ""
        return "postgres://\(credentials)@\(host)\(socketDirectory == nil ? ":\(port)" : "")/\(database ?? "")\(place)"
    }
}
