import Foundation
import Ledger
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOSSL
import PostgresNIO

/// A ledger shared by a team: PostgreSQL through postgres-nio.
///
/// The ledger's shared SQL runs synchronously inside a transaction, so each transaction runs on a serial
/// queue of this backend's own and waits on postgres-nio's futures there, never on an event loop or a Swift
/// concurrency thread.
///
/// Connections are pooled by what they do: writes go through one connection (writers serialise on an advisory
/// lock anyway), reads through ``readers`` others, each read on the least busy, so a dashboard's reads never
/// queue behind an import batch in the same process. The pool is this type's rather than postgres-nio's
/// `PostgresClient`, whose requests wait without limit while the server cannot be reached
/// (vapor/postgres-nio#565, #602): a dashboard must say "unavailable" at once and keep its last screen.
///
/// A lost connection (the server restarted, the network dropped, a statement outlived its timeout) is
/// dropped and the next transaction on that lane opens a new one, so a dashboard left open recovers by itself
/// when the server is back. Every wait is bounded: connecting by ``Timeouts/connect``, each statement of a
/// read by ``Timeouts/read``.
public final class PostgresDatabase: SQLDatabase, @unchecked Sendable {
    /// How long the backend waits for the server before it gives up on a connection.
    public struct Timeouts: Sendable {
        /// Opening a connection: TCP or socket connect, TLS and the startup handshake.
        public var connect: TimeAmount
        /// One statement of a read-only transaction, from sending it to its last row. Writes have no
        /// client-side limit: a batch may wait its turn behind another importer's.
        public var read: TimeAmount

        /// Creates timeouts.
        /// - Parameters:
        ///   - connect: the limit on opening a connection.
        ///   - read: the limit on each statement of a read.
        public init(connect: TimeAmount = .seconds(5), read: TimeAmount = .seconds(15)) {
            self.connect = connect
            self.read = read
        }
    }

    /// One connection of the pool and the serial queue its transactions block on.
    private final class Lane: @unchecked Sendable {
        let queue: DispatchQueue
        /// The open connection, `nil` until opened or once lost; read and written only on `queue`.
        var connection: PostgresConnection?
        /// Transactions sent to this lane and not yet finished; guarded by the database's `lock`.
        var busy = 0

        init(label: String) { queue = DispatchQueue(label: label) }
    }

    public let dialect = SQLDialect.postgres
    private let group: MultiThreadedEventLoopGroup
    private let configuration: PostgresConnection.Configuration
    /// For a server reached over TCP: where, and how its sockets are set up (connected here; see ``TCPEndpoint``).
    private let tcp: TCPEndpoint?
    /// The tables' identity sequences as the server names them, read once for this database's connections.
    private let sequences = SequenceNames()
    private let timeouts: Timeouts
    private let logger: Logger
    /// The URL without its password, safe to print.
    public let redactedURL: String
    /// The connection every write goes through.
    private let writer: Lane
    /// The connections reads go through, none of them the writer's.
    private let readerLanes: [Lane]
    /// Guards `isClosed`, `connectionCount` and each lane's `busy`.
    private let lock = NSLock()
    private var connectionCount = 0
    private var isClosed = false
    /// Whether writes keep to portable SQL; guarded by `lock`, settled at connect.
    private var portable = false
    /// Whether the portable writers' row exists (it does once the ledger is created); on the writer's queue only.
    private var writersRowExists = false

    /// Whether this ledger keeps to portable SQL (``PortableSQL``): set when it was created with `?portable=on`.
    public var isPortable: Bool { lock.withLock { portable } }

    /// Whether a URL asks for portable SQL (`?portable=on`), without connecting; false when it does not parse.
    public static func requestsPortable(url: String) -> Bool {
        (try? PostgresURL(url, environment: [:]).portable) ?? false
    }

    /// The connections reads are spread over.
    public var readers: Int { readerLanes.count }

    private init(
        group: MultiThreadedEventLoopGroup, configuration: PostgresConnection.Configuration, tcp: TCPEndpoint?, timeouts: Timeouts,
        readers: Int, logger: Logger, redactedURL: String
    ) {
        self.group = group
        self.configuration = configuration
        self.tcp = tcp
        self.timeouts = timeouts
        self.logger = logger
        self.redactedURL = redactedURL
        writer = Lane(label: "receiptdesk.postgres.writer")
        readerLanes = (1...max(1, readers)).map { Lane(label: "receiptdesk.postgres.reader\($0)") }
    }

    /// A `postgres://` URL as it may be printed: its target, never its password (in the user part or
    /// in a query parameter); a URL that does not parse says only that.
    public static func redacted(url: String) -> String {
        (try? PostgresURL(url, environment: [:]).redacted) ?? "postgres://(a URL that does not parse)"
    }

    /// Reads a `postgres://` URL without connecting, so that a malformed one is told apart from a server that
    /// cannot be reached.
    /// - Throws: `LedgerError.cannotOpen` saying what is wrong with it (never quoting it).
    public static func check(url: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        _ = try PostgresURL(url, environment: environment)
    }

    /// The database a `postgres://` URL names, without connecting: its path, else (as libpq) the user's name.
    /// - Throws: `LedgerError.cannotOpen` when the URL does not parse.
    public static func databaseName(url: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws
        -> String
    {
        let target = try PostgresURL(url, environment: environment)
        return target.database ?? target.user
    }

    /// Connects to a `postgres://user[:password]@host[:port]/database` URL.
    ///
    /// A unix socket directory is given as `?host=/path/to/dir` (or an empty host with that parameter).
    /// TLS is as libpq's `sslmode` says (``SSLMode``: `disable`, `allow`, `prefer`, `require`, `verify-ca`,
    /// `verify-full`, with `sslrootcert=PATH` or `system` for the roots checked against); without one, off for
    /// loopback and unix sockets and `prefer` elsewhere.
    /// - Parameters:
    ///   - url: the server and database.
    ///   - timeouts: the limits on waiting for the server.
    ///   - readers: the connections reads are spread over (at least one), opened as reads first need them.
    ///   - environment: where `PGPASSWORD`, `PGPASSFILE` and `HOME` are read when the URL has no password.
    /// - Throws: `LedgerError.cannotOpen` when the URL is not one or the server cannot be reached now.
    public static func connect(
        url: String, timeouts: Timeouts = Timeouts(), readers: Int = 2,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) async throws -> PostgresDatabase {
        let target = try PostgresURL(url, environment: environment)
        var logger = Logger(label: "receiptdesk.postgres")
        logger.logLevel = .critical
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        var configuration: PostgresConnection.Configuration
        var tcp: TCPEndpoint?
        if let socket = target.socketDirectory {
            configuration = .init(
                unixSocketPath: "\(socket)/.s.PGSQL.\(target.port)", username: target.user, password: target.password,
                database: target.database)
        } else {
            let tls: PostgresConnection.Configuration.TLS
            do {
                tls = try target.tls()
            } catch {
                try? await group.shutdownGracefully()
                throw LedgerError.cannotOpen("cannot set up TLS for \(target.redacted): \(Self.reason(error))")
            }
            configuration = .init(
                host: target.host, port: target.port, username: target.user, password: target.password,
                database: target.database, tls: tls)
            tcp = TCPEndpoint(host: target.host, port: target.port, keepAlive: target.keepAlive)
        }
        configuration.options.connectTimeout = timeouts.connect
        let database = PostgresDatabase(
            group: group, configuration: configuration, tcp: tcp, timeouts: timeouts, readers: readers, logger: logger,
            redactedURL: target.redacted)
        do {
            // A first connection is made now, so a wrong URL or a server that is down fails at open.
            let first = database.readerLanes[0]
            _ = try await database.onQueue(first, translating: false) { try database.openConnection(first) }
        } catch {
            // Not awaited: the caller learns of the failure now, not after the event loop winds down.
            database.lock.withLock { database.isClosed = true }
            DispatchQueue.global().async { group.shutdownGracefully { _ in } }
            let reason = Self.reason(error)
            // A role the database refuses CONNECT to: the grant that gives it (it said only PostgreSQL's refusal).
            let grant =
                reason.contains("permission denied for database")
                ? " (\(SQLLedger.grantCommand("viewer|agent|importer", role: target.user)), run by the database's owner or a superuser, "
                    + "gives it CONNECT)" : ""
            throw LedgerError.cannotOpen(
                "cannot connect to the PostgreSQL ledger at \(target.redacted): \(reason)\(grant)"
                    + (target.passwordFileRefused.map { "; \($0)" } ?? ""))
        }
        // The ledger says how it is written; the URL's `portable` only chooses for a ledger not yet created.
        // (A role that cannot read it learns so at its first read.)
        let stored: Bool??
        do { stored = .some(try await database.read { c in try Self.storedPortable(c) }) } catch { stored = nil }
        switch (stored, target.portable) {
        case (.some(.some(true)), _), (.none, true), (.some(.none), true):
            database.lock.withLock { database.portable = true }
        case (.some(.some(false)), true):
            try? await database.close()
            throw LedgerError.cannotOpen(
                "the ledger at \(target.redacted) was created for one PostgreSQL server (advisory locks, triggers, "
                    + "temporary tables, COPY); portable=on applies only when a ledger is created, in an empty database")
        default:
            break
        }
        return database
    }

    /// What a ledger stores about portable SQL: `nil` when the database holds no ledger yet.
    private static func storedPortable(_ c: any SQLConnection) throws -> Bool? {
        let tables = try c.scalar(
            "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = 'ledger_meta'")
        guard tables?.int ?? 0 > 0 else { return nil }
        return try c.scalar("SELECT value FROM ledger_meta WHERE key = ?", [.text(PortableSQL.metaKey)])?.text == "1"
    }

    public func write<T: Sendable>(_ body: @escaping @Sendable (any SQLConnection) throws -> T) async throws -> T {
        try await onQueue(writer) { try self.transaction(on: self.writer, readOnly: false, body) }
    }

    public func read<T: Sendable>(_ body: @escaping @Sendable (any SQLConnection) throws -> T) async throws -> T {
        let lane = lock.withLock {
            // The least busy reader; the first of equals, so an idle process keeps reusing one connection.
            var chosen = readerLanes[0]
            for lane in readerLanes.dropFirst() where lane.busy < chosen.busy { chosen = lane }
            chosen.busy += 1
            return chosen
        }
        defer { lock.withLock { lane.busy -= 1 } }
        return try await onQueue(lane) { try self.transaction(on: lane, readOnly: true, body) }
    }

    /// Runs `work` on `lane`'s queue (where it may block) and translates its failure (unless `translating` is false).
    private func onQueue<T: Sendable>(
        _ lane: Lane, translating: Bool = true, _ work: @escaping @Sendable () throws -> T
    ) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            lane.queue.async {
                do {
                    continuation.resume(returning: try work())
                } catch {
                    continuation.resume(throwing: translating ? self.translate(error) : error)
                }
            }
        }
    }

    /// `lane`'s open connection, or a new one when there is none or the last was lost. On `lane.queue` only.
    private func openConnection(_ lane: Lane) throws -> PostgresConnection {
        let closed = lock.withLock { isClosed }
        if closed { throw LedgerError(code: .closed, message: "the PostgreSQL ledger at \(redactedURL) was closed") }
        if let connection = lane.connection, !connection.isClosed { return connection }
        lane.connection = nil
        let id = lock.withLock {
            connectionCount += 1
            return connectionCount
        }
        let loop = group.next()
        var configuration = self.configuration
        var channel: (any Channel)?
        if let tcp {
            let connected = try tcp.connect(on: loop, timeout: timeouts.connect).wait()
            configuration = tcp.configuration(over: connected, like: configuration)
            channel = connected
        }
        do {
            let opened = try PostgresConnection.connect(on: loop, configuration: configuration, id: id, logger: logger).wait()
            if lane !== writer { limitReads(on: opened) }
            lane.connection = opened
            return opened
        } catch {
            channel?.close(promise: nil)
            throw error
        }
    }

    /// One transaction on `lane`'s queue. A read that finds its connection lost runs once more on a new one
    /// (a server restart since the last call is only noticed at the next statement); a write does not,
    /// since its commit may have landed: the importer's resume makes re-running it the caller's choice.
    private func transaction<T>(on lane: Lane, readOnly: Bool, _ body: (any SQLConnection) throws -> T) throws -> T {
        var attempt = 0
        while true {
            attempt += 1
            let postgres = try openConnection(lane)
            let portable = isPortable
            let connection = PGConnection(
                connection: postgres, logger: logger, timeout: readOnly ? timeouts.read : nil, portable: portable,
                sequences: sequences)
            do {
                try connection.execute(
                    readOnly
                        ? "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY" : "BEGIN ISOLATION LEVEL READ COMMITTED", []
                )
                // Writers serialise on one lock: a second importer waits instead of interleaving.
                if !readOnly {
                    if portable {
                        try lockWritersRow(connection)
                    } else {
                        try connection.execute("SELECT pg_advisory_xact_lock(\(Self.writersLock))", [])
                    }
                }
                let result = try body(connection)
                try connection.execute("COMMIT", [])
                return result
            } catch {
                if postgres.isClosed || Self.isConnectionLost(error) {
                    lane.connection = nil
                    Self.release(postgres)
                    if readOnly && attempt == 1 && !connection.timedOut { continue }
                    throw error
                }
                try? connection.flush()
                try? connection.execute("ROLLBACK", [])
                throw refusal(error, writing: !readOnly) ?? error
            }
        }
    }

    /// Milliseconds the server gives a read statement beyond the client's read timeout before ending it itself.
    static let serverReadGrace: Int64 = 1000

    /// Has the server end a read the client gave up on (its read timeout closes the connection) a second later:
    /// closing the socket does not stop a statement waiting on a lock, and orphans of every dashboard's retries
    /// filled max_connections until nobody could log in, the owner included. (A second after, so that the client's
    /// own message, which says what to do, comes first.) It only lowers `statement_timeout`: a lower limit the
    /// role or database has stands. Set after connecting, not as a startup parameter, which a pooler such as
    /// PgBouncer refuses; an engine that cannot set it keeps its own (the read still times out here).
    private func limitReads(on connection: PostgresConnection) {
        let limit = timeouts.read.nanoseconds / 1_000_000 + Self.serverReadGrace
        let sql = """
            SELECT set_config('statement_timeout', '\(limit)ms', false)
            WHERE current_setting('statement_timeout')::interval = interval '0'
            OR current_setting('statement_timeout')::interval > interval '\(limit) milliseconds'
            """
        _ = try? connection.query(PostgresQuery(unsafeSQL: sql), logger: logger).wait()
    }

    /// The advisory lock every writing transaction takes first (portable SQL: the writers' row instead).
    public static let writersLock = 7_243_501

    /// Portable SQL's writers' lock: the one row of ``PortableSQL/writersTable``, locked until the transaction
    /// ends. Before the ledger is created there is no row (and nobody to wait for but another creator, whose
    /// CREATE TABLE then fails this one). On the writer's queue only.
    private func lockWritersRow(_ connection: PGConnection) throws {
        if !writersRowExists {
            let found = try connection.scalar(
                "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = ?",
                [.text(PortableSQL.writersTable)])
            guard found?.int ?? 0 > 0 else { return }
            writersRowExists = true
        }
        _ = try connection.query("SELECT id FROM \(PortableSQL.writersTable) FOR UPDATE", [])
    }

    /// Closes a connection and keeps it alive until it is closed (postgres-nio asserts that a connection
    /// is closed before it is freed).
    static func release(_ connection: PostgresConnection) {
        connection.close().whenComplete { _ in withExtendedLifetime(connection) {} }
    }

    deinit {
        // Dropped without close() (a caller that threw first): close what is open, off the event loop.
        guard !isClosed else { return }
        let group = self.group
        let open = ([writer] + readerLanes).compactMap(\.connection)
        let closed = open.map { connection in connection.close().always { _ in withExtendedLifetime(connection) {} } }
        EventLoopFuture.andAllComplete(closed, on: group.next()).whenComplete { _ in
            DispatchQueue.global().async { group.shutdownGracefully { _ in } }
        }
    }

    public func close() async throws {
        lock.withLock { isClosed = true }
        for lane in [writer] + readerLanes {
            // On the lane's queue: after the transaction it may be running.
            let connection = try await onQueue(lane) { () -> PostgresConnection? in
                defer { lane.connection = nil }
                return lane.connection
            }
            if let connection { try? await connection.close() }
        }
        try await group.shutdownGracefully()
    }

    /// A statement the server refused for want of a privilege (SQLSTATE 42501), as an error that names the role:
    /// `readOnly` in a write (a refused write, exit 2, like a ledger set read-only), `permissionDenied` in a read.
    func refusal(_ error: Error, writing: Bool) -> LedgerError? {
        guard let error = error as? PSQLError, error.code == .server, error.serverInfo?[.sqlState] == "42501" else { return nil }
        let role = "the PostgreSQL role \"\(configuration.username)\""
        let reason = Self.reason(error)
        if writing {
            // What the owner alone may do (create or upgrade the schema, set the ledger read-only) is said only when
            // that is what was refused: an agent refused an import needs the grant, not the owner.
            let ownersWork = Self.isOwnersWork(reason)
            return LedgerError(
                code: .readOnly,
                message: "\(role) may not make this change to the ledger at \(redactedURL) (\(reason)): "
                    + (ownersWork
                        ? "creating or upgrading the ledger's schema and setting it read-only are its owner's (the role that "
                            + "created it); the other roles have the rights receiptdesk ledger grant gave them"
                        : "its rights are those receiptdesk ledger grant gave it (importer imports, agent triages and notes, "
                            + "viewer reads; a role granted by an earlier receiptdesk may need the grant again)"))
        }
        return LedgerError(
            code: .permissionDenied,
            message: "\(role) may not read the ledger at \(redactedURL) (\(reason)): receiptdesk ledger grant viewer gives it "
                + "the right to")
    }

    /// Whether a refusal's reason is about what only the schema's owner may do: the schema itself (`permission denied
    /// for schema public`), owning a table (`must be owner of table flags`) or the ledger's settings (`ledger_meta`,
    /// `ledger_migrations`, which no grant makes writable).
    static func isOwnersWork(_ reason: String) -> Bool {
        ["for schema", "must be owner", "ledger_meta", "ledger_migrations"].contains { reason.contains($0) }
    }

    /// A failure as a `LedgerError`: `unavailable` when the server cannot be reached (worth retrying),
    /// else the server's message; never the query's bound values.
    func translate(_ error: Error) -> Error {
        if error is LedgerError { return error }
        if let timeout = error as? StatementTimeout {
            return LedgerError(
                code: .unavailable,
                message: "the PostgreSQL ledger at \(redactedURL) did not answer within \(Self.seconds(timeout.limit)) "
                    + "(read timeout); the connection was closed and the next request opens a new one")
        }
        if Self.isConnectionLost(error) {
            return LedgerError(
                code: .unavailable,
                message: "cannot reach the PostgreSQL ledger at \(redactedURL): \(Self.reason(error))")
        }
        let role = configuration.username
        switch (error as? PSQLError)?.serverInfo?[.sqlState] {
        case "55P03":
            // lock_timeout: the writers' advisory lock, or a row another session holds.
            return LedgerError(
                code: .busy,
                message: "the PostgreSQL ledger at \(redactedURL) is being written by another session (an import or a "
                    + "triage) and its lock was not granted within lock_timeout, the server's setting for the role "
                    + "\"\(role)\": nothing was written; run the command again when that session is done, or raise "
                    + "the limit (ALTER ROLE \"\(role)\" SET lock_timeout = '5min')")
        case "57014":
            // statement_timeout, or an administrator's pg_cancel_backend.
            return LedgerError(
                code: .postgres,
                message: "the PostgreSQL server cancelled a statement on the ledger at \(redactedURL) (\(Self.reason(error))): "
                    + "it ran longer than statement_timeout, the server's setting for the role \"\(role)\" (a read's is "
                    + "at most this receiptdesk's read timeout and a second), or an administrator cancelled it; nothing "
                    + "of that transaction was written. Raise the limit (ALTER ROLE \"\(role)\" SET statement_timeout = "
                    + "'5min'), or import with a smaller --batch-size")
        default:
            return LedgerError(code: .postgres, message: "PostgreSQL error: \(Self.reason(error))")
        }
    }

    /// Whether `error` means the connection is gone (or never came), rather than a statement failing on a
    /// live one. SQLSTATE class 57P is the server shutting down or not yet accepting connections.
    static func isConnectionLost(_ error: Error) -> Bool {
        if error is StatementTimeout || error is ClosedUnanswered { return true }
        if error is ChannelError || error is IOError || error is NIOConnectionError { return true }
        // (postgres-nio's COPY writer says a closed connection in its older error type.)
        if let error = error as? PostgresError, case .connectionClosed = error { return true }
        guard let error = error as? PSQLError else { return false }
        switch error.code {
        case .connectionError, .serverClosedConnection, .clientClosedConnection, .uncleanShutdown:
            return true
        case .server:
            return error.serverInfo?[.sqlState]?.hasPrefix("57P") ?? false
        default:
            return false
        }
    }

    /// What went wrong, for a person: the server's message, or the operating system's reason.
    static func reason(_ error: Error) -> String {
        if let error = error as? PSQLError {
            if let message = error.serverInfo?[.message] { return message }
            if let underlying = error.underlying { return reason(underlying) }
            switch error.code {
            case .serverClosedConnection, .uncleanShutdown: return "the server closed the connection"
            case .clientClosedConnection: return "the connection was closed"
            case .authMechanismRequiresPassword:
                return "the server asks this role for a password and none was given (in the URL, PGPASSWORD, or a "
                    + "pgpass file readable by you alone: PGPASSFILE or ~/.pgpass, mode 0600)"
            case .sslUnsupported:
                return "the server does not offer TLS, which sslmode asks for (sslmode=prefer uses it when offered, "
                    + "sslmode=disable never)"
            case .unsupportedAuthMechanism:
                return "the server asks for an authentication method receiptdesk does not speak (it speaks password, md5 "
                    + "and scram-sha-256)"
            default: return "\(error.code)"
            }
        }
        if let error = error as? LedgerError { return error.message }
        if let error = error as? StatementTimeout { return "no answer within \(seconds(error.limit))" }
        if error is ClosedUnanswered { return "the connection closed before the server answered" }
        if let error = error as? PostgresError, case .connectionClosed = error { return "the connection closed" }
        if let error = error as? IOError { return osReason(error.errnoCode) }
        if let error = error as? NIOConnectionError {
            if let first = error.connectionErrors.first?.error { return reason(first) }
            if let dns = error.dnsAAAAError ?? error.dnsAError { return "cannot resolve \(error.host): \(dns)" }
            return "cannot connect to \(error.host):\(error.port)"
        }
        if let error = error as? NIOSSLExtraError, error == .failedToValidateHostname {
            return "the server's certificate does not name the host in the URL (sslmode=verify-full checks the name; "
                + "connect by a name the certificate holds)"
        }
        if case NIOSSLError.handshakeFailed(let failure) = error {
            if "\(failure)".contains("CERTIFICATE_VERIFY_FAILED") {
                return "the server's certificate does not chain to a trusted root (sslrootcert names the CA file to trust)"
            }
            return "the TLS handshake failed: \(failure)"
        }
        if case ChannelError.connectTimeout(let limit) = error {
            return "no answer within \(seconds(limit)) (connect timeout)"
        }
        return "\(error)"
    }

    private static func osReason(_ code: Int32) -> String {
        let text = String(cString: strerror(code))
        switch code {
        case ENOENT, ECONNREFUSED: return "no server is listening there (\(text))"
        default: return text
        }
    }

    static func seconds(_ amount: TimeAmount) -> String {
        let milliseconds = amount.nanoseconds / 1_000_000
        return milliseconds % 1000 == 0 ? "\(milliseconds / 1000) s" : "\(milliseconds) ms"
    }
}

/// A statement that outlived the read timeout; its connection has been closed.
struct StatementTimeout: Error {
    let limit: TimeAmount
}

/// A statement whose connection closed without an answer to it.
struct ClosedUnanswered: Error {}

/// One wait's progress, touched only on its future's event loop.
private final class WaitState: @unchecked Sendable {
    var settled = false
    var closedTicks = 0
}

/// One PostgreSQL connection seen through the ledger's `SQLConnection`; blocks its (non-loop) thread.
final class PGConnection: SQLConnection {
    let dialect = SQLDialect.postgres
    let connection: PostgresConnection
    let logger: Logger
    /// The limit on each wait, or `nil` for none.
    let timeout: TimeAmount?
    /// Whether a wait outlived `timeout` (and closed the connection).
    private(set) var timedOut = false

    /// Whether to keep to portable SQL: no COPY, no temporary staging tables.
    let portableSQL: Bool

    init(connection: PostgresConnection, logger: Logger, timeout: TimeAmount?, portable: Bool, sequences: SequenceNames) {
        self.connection = connection
        self.logger = logger
        self.timeout = timeout
        portableSQL = portable
        self.sequences = sequences
    }

    /// Statements (and COPYs) sent and not yet confirmed: postgres-nio queues them on the connection, so a
    /// batch's writes cost one round trip at the next read or commit instead of one each, and the server loads
    /// one COPY's rows while this side prepares the next's.
    private var pending: [EventLoopFuture<Void>] = []

    func execute(_ sql: String, _ arguments: [SQLValue]) throws {
        let result = try run(sql, arguments)
        try flush()
        _ = try wait(result)
    }

    func executeDeferred(_ sql: String, _ arguments: [SQLValue]) throws {
        pending.append(try run(sql, arguments).map { _ in })
    }

    func flush() throws {
        let waiting = pending
        pending.removeAll()
        var failure: Error?
        for future in waiting {
            do { _ = try wait(future) } catch { if failure == nil { failure = error } }
        }
        if let failure { throw failure }
    }

    func insert(_ sql: String, _ arguments: [SQLValue]) throws -> Int64? {
        try insertReturningId(sql, arguments)
    }

    func query(_ sql: String, _ arguments: [SQLValue]) throws -> [[SQLValue]] {
        try rows(of: Self.statement(sql, arguments))
    }

    /// What a query has gathered: its rows, or the first value this side could not read.
    private struct Gathered: Sendable {
        var rows: [[SQLValue]] = []
        var failure: (any Error)?
    }

    /// Sends `query` behind the statements still pending, confirms those (their error, if any, is the one
    /// reported), and returns the query's rows, gathered as values each as it arrives.
    ///
    /// Not postgres-nio's `query(_:logger:)`, whose array of rows is copied whole at every read from the socket
    /// (postgres-nio 1.33.2, `PSQLRowStream` in its `waitingForAll` state): a result of 998,617 rows took 131 s
    /// to arrive that way, and psql reads it in 5 s; gathered row by row the time grows with the rows, not their
    /// square. A value this side cannot read is the error, naming its column (postgres-nio's own names nothing).
    private func rows(of query: PostgresQuery) throws -> [[SQLValue]] {
        let gathered = NIOLockedValueBox(Gathered())
        let done = connection.query(query, logger: logger) { row in
            do {
                let values = try row.map { cell in try Self.value(cell) }
                gathered.withLockedValue { $0.rows.append(values) }
            } catch {
                gathered.withLockedValue { $0.failure = $0.failure ?? error }
                throw error
            }
        }
        try flush()
        do {
            _ = try wait(done)
        } catch {
            throw gathered.withLockedValue { $0.failure } ?? error
        }
        return gathered.withLockedValue { $0.rows }
    }

    /// The list as one array parameter (`IN (SELECT unnest($n))`): one statement however long the list, and none
    /// with hundreds of parameters to parse and plan. (As `= ANY($n)`, a list of 2,000 had the planner scan a
    /// 562,000-row customer_ids whole, 22 ms, where the semi-join over the array probes its key in 5 ms.) Lists
    /// mixing kinds, or holding NULL, go as `IN` lists.
    func queryIn(_ sql: String, _ arguments: [SQLValue], list: [SQLValue]) throws -> [[SQLValue]] {
        guard !list.isEmpty else { return [] }
        var bindings = Self.bindings(arguments)
        if let texts = Self.all(list, { if case .text(let text) = $0 { text } else { nil } }) {
            bindings.append(texts)
        } else if let blobs = Self.all(list, { if case .blob(let bytes) = $0 { ByteBuffer(bytes: bytes) } else { nil } }) {
            bindings.append(blobs)
        } else if let numbers = Self.all(list, { if case .int(let number) = $0 { number } else { nil } }) {
            bindings.append(numbers)
        } else {
            return try queryInChunks(sql, arguments, list: list)
        }
        precondition(sql.components(separatedBy: SQLDialect.inListMarker).count == 2, "queryIn: one IN (?*)")
        let text = Self.numbered(sql.replacing(SQLDialect.inListMarker, with: "IN (SELECT unnest(?))"))
        return try rows(of: PostgresQuery(unsafeSQL: text, binds: bindings))
    }

    /// Each value's `part`, or `nil` when one has none.
    private static func all<Part>(_ values: [SQLValue], _ part: (SQLValue) -> Part?) -> [Part]? {
        var out: [Part] = []
        out.reserveCapacity(values.count)
        for value in values {
            guard let one = part(value) else { return nil }
            out.append(one)
        }
        return out
    }

    /// Below this many rows, pipelined single-row INSERTs cost less than a COPY's extra round trips.
    static let copyThreshold = 32

    /// Loads `rows` with `COPY ... FROM STDIN` into a temporary staging table shaped like `columns`
    /// of `table`, then moves them in with one `INSERT ... SELECT ... onConflict`; without a conflict clause,
    /// with COPY straight into `table`.
    func insertRows(into table: String, columns: [String], rows: [[SQLValue]], onConflict: String) throws {
        guard rows.count >= Self.copyThreshold, !portableSQL else {
            return try insertRowsOneByOne(into: table, columns: columns, rows: rows, onConflict: onConflict)
        }
        let list = columns.joined(separator: ", ")
        // Nothing to resolve on conflict: straight into the table (a collision fails the batch, as the INSERT would).
        if onConflict.isEmpty { return try copy(into: table, columns: columns, data: Self.copyText(rows)) }
        let stage = try stage(rows, as: columns, of: table)
        executeDeferredUnchecked("INSERT INTO \(table) (\(list)) SELECT \(list) FROM \(stage) \(onConflict)")
        executeDeferredUnchecked("TRUNCATE \(stage)")
    }

    /// COPYs `rows` into a temporary staging table shaped like `columns` of `table`, and returns its name.
    /// Temporary: this session's own, emptied at every commit, created once per connection and shape.
    private func stage(_ rows: [[SQLValue]], as columns: [String], of table: String) throws -> String {
        let list = columns.joined(separator: ", ")
        let stage = "receiptdesk_stage_\(table)_\(Self.stableHash(list))"
        executeDeferredUnchecked(
            "CREATE TEMPORARY TABLE IF NOT EXISTS \(stage) ON COMMIT DELETE ROWS AS SELECT \(list) FROM \(table) WITH NO DATA")
        try copy(into: stage, columns: columns, data: Self.copyText(rows))
        return stage
    }

    /// Loads `rows` (the key, then `columns`) with COPY into a temporary staging table, then sets them with one
    /// `UPDATE ... FROM` the staging table.
    func updateRows(in table: String, key: String, columns: [String], rows: [[SQLValue]]) throws {
        guard rows.count >= Self.copyThreshold, !portableSQL else {
            return try updateRowsOneByOne(in: table, key: key, columns: columns, rows: rows)
        }
        let stage = try stage(rows, as: [key] + columns, of: table)
        executeDeferredUnchecked(
            "UPDATE \(table) SET \(columns.map { "\($0) = s.\($0)" }.joined(separator: ", ")) FROM \(stage) s WHERE \(table).\(key) = s.\(key)")
        executeDeferredUnchecked("TRUNCATE \(stage)")
    }

    /// Ids from the table's identity sequence, in one round trip (and one more the first time the database's
    /// connections need the sequence's name: `nextval(pg_get_serial_sequence(...))` looked it up for every id, ten
    /// times slower).
    func reserveIds(in table: String, count: Int) throws -> [Int64] {
        guard count > 0 else { return [] }
        let sequence: String
        if let known = sequences.name(of: table) {
            sequence = known
        } else {
            guard let name = try query("SELECT pg_get_serial_sequence(?, 'id')", [.text(table)]).first?.first?.text else {
                throw LedgerError(code: .internalError, message: "\(table).id has no identity sequence")
            }
            sequences.set(name, of: table)
            sequence = name
        }
        let literal = "'" + sequence.replacing("'", with: "''") + "'"
        return try query("SELECT nextval(\(literal)::regclass) FROM generate_series(1, ?)", [.of(count)]).compactMap { $0.first?.int }
    }

    /// The tables' identity sequences, shared by the database's connections.
    private let sequences: SequenceNames

    private func executeDeferredUnchecked(_ sql: String) {
        pending.append(connection.query(PostgresQuery(unsafeSQL: sql), logger: logger).map { _ in })
    }

    /// Starts postgres-nio's (async) COPY from this blocking queue thread and returns once the server has
    /// begun it (its CopyInResponse), leaving the rows to load while the caller goes on; the COPY is
    /// confirmed, like a deferred statement, at the next read or commit.
    ///
    /// Waiting for the start keeps the connection's order: every statement this thread sends afterwards is
    /// queued behind the COPY. (The COPY itself runs in a task, which would otherwise enqueue it after them.)
    func copy(into table: String, columns: [String], data: ByteBuffer) throws {
        let connection = self.connection
        let logger = self.logger
        let loop = connection.eventLoop
        let done = loop.makePromise(of: Void.self)
        let started = loop.makePromise(of: Void.self)
        let once = NIOLockedValueBox(false)
        let begin: @Sendable () -> Void = {
            if once.withLockedValue({ fired in defer { fired = true }; return !fired }) { started.succeed() }
        }
        // The task runs on the connection's event loop: each look at whether the connection is closed, and the step
        // of postgres-nio's COPY it guards, run in one turn of the loop, with no close between them.
        let operation: @Sendable () async -> Void = {
            do {
                try await PGConnection.copy(on: connection, into: table, columns: columns, data: data, logger: logger, begin: begin)
                done.succeed()
            } catch {
                done.fail(error)
            }
        }
        Task(executorPreference: EventLoopTaskExecutor(loop), operation: operation)
        // A COPY refused before it began (an earlier statement failed the transaction) ends the wait too; its
        // error is reported, in order, with the pending statements'.
        done.futureResult.whenComplete { _ in begin() }
        pending.append(done.futureResult)
        do {
            try wait(started.futureResult)
        } catch {
            try flush()
            throw error
        }
    }

    /// The COPY itself, on the connection's event loop; `begin` is called once the server has begun it.
    private static func copy(
        on connection: PostgresConnection, into table: String, columns: [String], data: ByteBuffer, logger: Logger,
        begin: @escaping @Sendable () -> Void
    ) async throws {
        // postgres-nio drops a COPY written to a closed channel without resuming its continuation (the task would wait
        // forever, and Swift says so on stderr): a closed connection fails here, as a statement does.
        try await unlessClosed(connection)
        try await connection.copyFrom(table: table, columns: columns, logger: logger) { writer in
            begin()
            // CopyData messages of up to 256 MB, one for any import batch (a message may not reach 1 GB: the raw COPY
            // anchor's whole table is more): a second write waits for the socket to drain, and postgres-nio drops
            // that wait's promise when the server goes away meanwhile (its continuation never resumed).
            var data = data
            while data.readableBytes > 0 {
                try await unlessClosed(connection)
                try await writer.write(data.readSlice(length: min(Self.copyMessageBytes, data.readableBytes))!)
            }
            try await unlessClosed(connection)
        }
    }

    /// The most bytes of rows one CopyData message carries.
    static let copyMessageBytes = 256 << 20

    /// Throws when the connection has closed, once postgres-nio has let go of it: its COPY writer traps (a
    /// precondition, "Copy mode is only supported for extended queries") on a write, done or fail sent to a connection
    /// that closed under it (the server stopped mid-import) while its handler is still in the pipeline, and gives
    /// the closed-connection error once the channel's close has completed (its handlers removed). Called on the
    /// connection's event loop, right before the step it guards.
    static func unlessClosed(_ connection: PostgresConnection) async throws {
        guard connection.isClosed else { return }
        try? await connection.closeFuture.get()
        throw ClosedUnanswered()
    }

    /// Rows in COPY's text format: tab-separated, `\N` for NULL, backslash escapes, bytea as `\\x` hex.
    static func copyText(_ rows: [[SQLValue]]) -> ByteBuffer {
        var out = ByteBufferAllocator().buffer(capacity: rows.count * 256)
        for row in rows {
            for (column, value) in row.enumerated() {
                if column > 0 { out.writeInteger(UInt8(ascii: "\t")) }
                switch value {
                case .null:
                    out.writeStaticString("\\N")
                case .int(let number):
                    out.writeString(String(number))
                case .text(let text):
                    writeEscaped(text, to: &out)
                case .blob(let bytes):
                    out.writeStaticString("\\\\x")
                    out.writeWithUnsafeMutableBytes(minimumWritableBytes: bytes.count * 2) { target in
                        let hex: StaticString = "0123456789abcdef"
                        let digits = hex.utf8Start
                        for (i, byte) in bytes.enumerated() {
                            target[2 * i] = digits[Int(byte >> 4)]
                            target[2 * i + 1] = digits[Int(byte & 0x0f)]
                        }
                        return bytes.count * 2
                    }
                }
            }
            out.writeInteger(UInt8(ascii: "\n"))
        }
        return out
    }

    /// Writes `text` with COPY's escapes: the whole string at once when nothing in it needs one (nearly always).
    private static func writeEscaped(_ text: String, to out: inout ByteBuffer) {
        func special(_ byte: UInt8) -> Bool {
            byte == UInt8(ascii: "\\")
                || (byte <= UInt8(ascii: "\r") && (byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") || byte == UInt8(ascii: "\t")))
        }
        let clean = text.utf8.withContiguousStorageIfAvailable { bytes in
            for byte in bytes where special(byte) { return false }
            return true
        }
        if clean ?? !text.utf8.contains(where: special) {
            out.writeString(text)
            return
        }
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\\"): out.writeStaticString("\\\\")
            case UInt8(ascii: "\n"): out.writeStaticString("\\n")
            case UInt8(ascii: "\r"): out.writeStaticString("\\r")
            case UInt8(ascii: "\t"): out.writeStaticString("\\t")
            default: out.writeInteger(byte)
            }
        }
    }

    /// FNV-1a of `text` in hex: the same on every run (unlike `Hasher`), to name staging tables.
    static func stableHash(_ text: String) -> String {
        var hash: UInt32 = 2_166_136_261
        for byte in text.utf8 {
            hash ^= UInt32(byte)
            hash = hash &* 16_777_619
        }
        return String(hash, radix: 16)
    }

    /// Waits for `future`; past `timeout`, closes the connection (which fails every statement on it) and
    /// throws `StatementTimeout`, so a server that stopped answering cannot hang the caller.
    ///
    /// A statement whose connection closed under it (the server stopped) fails, at most two seconds after the
    /// close, even when postgres-nio leaves its future waiting: 1.33.2 was seen to leave a pipelined statement's
    /// future unanswered forever after the server stopped mid-batch, hanging an import that had no timeout.
    private func wait<T: Sendable>(_ future: EventLoopFuture<T>) throws -> T {
        let connection = self.connection
        let loop = future.eventLoop
        let outcome = WaitState()
        let answer = loop.makePromise(of: T.self)
        let settle: @Sendable (Result<T, Error>) -> Void = { result in
            guard !outcome.settled else { return }
            outcome.settled = true
            answer.completeWith(result)
        }
        future.whenComplete(settle)
        let watchdog = loop.scheduleRepeatedTask(initialDelay: .seconds(1), delay: .seconds(1)) { _ in
            guard connection.isClosed else { return }
            // One tick's grace, so postgres-nio's own error (the server's reason) wins when it comes.
            outcome.closedTicks += 1
            if outcome.closedTicks >= 2 { settle(.failure(ClosedUnanswered())) }
        }
        defer { watchdog.cancel() }
        guard let timeout else { return try answer.futureResult.wait() }
        let deadline = NIODeadline.now() + timeout
        let timer = loop.scheduleTask(deadline: deadline) { connection.close().whenComplete { _ in } }
        defer { timer.cancel() }
        do {
            return try answer.futureResult.wait()
        } catch {
            if NIODeadline.now() >= deadline {
                timedOut = true
                throw StatementTimeout(limit: timeout)
            }
            throw error
        }
    }

    private func run(_ sql: String, _ arguments: [SQLValue]) throws -> EventLoopFuture<PostgresQueryResult> {
        connection.query(Self.statement(sql, arguments), logger: logger)
    }

    /// `sql` with its `?`s numbered, and `arguments` bound to them.
    private static func statement(_ sql: String, _ arguments: [SQLValue]) -> PostgresQuery {
        PostgresQuery(unsafeSQL: numbered(sql), binds: bindings(arguments))
    }

    private static func bindings(_ arguments: [SQLValue]) -> PostgresBindings {
        var bindings = PostgresBindings(capacity: arguments.count + 1)
        for argument in arguments {
            switch argument {
            case .null: bindings.appendNull()
            case .int(let value): bindings.append(value)
            case .text(let value): bindings.append(value)
            case .blob(let bytes): bindings.append(ByteBuffer(bytes: bytes))
            }
        }
        return bindings
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

    /// A cell as a ledger value. NULL is NULL; a cell that does not decode as its type says (a `badRow`
    /// naming the column and the type), never reads as NULL.
    static func value(_ cell: PostgresCell) throws -> SQLValue {
        guard cell.bytes != nil else { return .null }
        func failed(_ what: String) -> LedgerError {
            LedgerError(code: .badRow, message: "column \(cell.columnName) (\(cell.dataType)) holds \(what) this receiptdesk cannot read")
        }
        do {
            switch cell.dataType {
            case .int8, .int4, .int2:
                return .int(try cell.decode(Int64.self))
            case .bool:
                return .int(try cell.decode(Bool.self) ? 1 : 0)
            case .bytea:
                return .blob(Array(try cell.decode(ByteBuffer.self).readableBytesView))
            case .numeric:
                // SUM and the like over integer columns: whole numbers, exactly.
                let text = "\(try cell.decode(Decimal.self))"
                guard let number = Int64(text) else {
                    throw failed("a number that is not a whole Int64 (\(text.prefix(40)))")
                }
                return .int(number)
            default:
                return .text(try cell.decode(String.self))
            }
        } catch let error as LedgerError {
            throw error
        } catch {
            throw failed("a value")
        }
    }
}

/// A parsed `postgres://` URL; `redacted` never shows the password.
///
/// The grammar is libpq's: `postgres[ql]://[user[:password]@][host][:port][/database][?name=value&...]`, the
/// host a name, an address (IPv6 in brackets) or a percent-encoded socket directory (`%2Frun%2Fpostgresql`),
/// or the directory given as `?host=/run/postgresql`. Each part is percent-decoded exactly once, by
/// ``percentDecoded(_:_:)``; a malformed escape is an error naming the part, never a fallback.
///
/// A password need not be in the URL (where `ps` would show it): without one it comes from
/// `PGPASSWORD`, else from the password file (`PGPASSFILE`, else `~/.pgpass`), as libpq reads them.
struct PostgresURL {
    var user: String
    var password: String?
    /// Whether the URL itself carried the password (the redacted form says so).
    var passwordInURL: Bool
    /// Why the password file was not read, when it exists but others may read it (libpq ignores it then too).
    var passwordFileRefused: String?
    /// The server's name or address (an IPv6 address without brackets); empty for a unix socket.
    var host: String
    /// The TCP port, or for a socket the number in its file name (`.s.PGSQL.5432`).
    var port: Int
    var database: String?
    var socketDirectory: String?
    /// libpq's `sslmode` (the parameter, else `PGSSLMODE`); nil when neither gives one.
    var sslMode: SSLMode?
    /// libpq's `sslrootcert` (the parameter, else `PGSSLROOTCERT`, else `~/.postgresql/root.crt`).
    var rootCertificates: RootCertificates?
    /// receiptdesk's own `portable` parameter (`on`/`off`): create the ledger with portable SQL (``PortableSQL``).
    var portable = false
    /// How a TCP connection notices a server gone silent: libpq's `keepalives`, `keepalives_idle`,
    /// `keepalives_interval`, `keepalives_count` and `tcp_user_timeout`, over ``KeepAlive``'s defaults.
    var keepAlive = KeepAlive()

    /// Parses a URL; reads `USER`, `PGPASSWORD`, `PGPASSFILE`, `PGSSLMODE`, `PGSSLROOTCERT` and `HOME` from
    /// `environment` for what it lacks.
    /// - Throws: `LedgerError.cannotOpen` when the text is not a `postgres://` URL, a part holds a malformed
    ///   percent escape, the port is not a number from 1 to 65535, or the TLS settings are ones libpq refuses
    ///   (``tlsSettings(parameters:environment:)``). The message names the part and never quotes the URL, which
    ///   may hold a password.
    init(_ text: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        guard let scheme = ["postgres://", "postgresql://"].first(where: { text.hasPrefix($0) }) else {
            throw LedgerError.cannotOpen("not a postgres:// URL")
        }
        let rest = text.dropFirst(scheme.count)
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        var hostAndPort = rest[..<authorityEnd]
        // As libpq reads it: the first @ ends the user and password, so an @ inside them must be written %40.
        var rawUser: Substring = ""
        var rawPassword: Substring?
        if let at = hostAndPort.firstIndex(of: "@") {
            let credentials = hostAndPort[..<at]
            hostAndPort = hostAndPort[hostAndPort.index(after: at)...]
            if let colon = credentials.firstIndex(of: ":") {
                rawUser = credentials[..<colon]
                rawPassword = credentials[credentials.index(after: colon)...]
            } else {
                rawUser = credentials
            }
        }
        guard !hostAndPort.contains("@") else {
            throw LedgerError.cannotOpen(
                "the host in the postgres:// URL holds an @: write an @ in the user or password as %40")
        }
        var rawPort: Substring?
        if hostAndPort.hasPrefix("[") {
            guard let close = hostAndPort.firstIndex(of: "]") else {
                throw LedgerError.cannotOpen(
                    "the host in the postgres:// URL opens an IPv6 address with [ and never closes it")
            }
            let after = hostAndPort[hostAndPort.index(after: close)...]
            if after.hasPrefix(":") {
                rawPort = after.dropFirst()
            } else if !after.isEmpty {
                throw LedgerError.cannotOpen(
                    "the host in the postgres:// URL has more than :port after its IPv6 address")
            }
            host = try Self.percentDecoded(hostAndPort.dropFirst()[..<close], "host")
        } else if let colon = hostAndPort.firstIndex(of: ":") {
            rawPort = hostAndPort[hostAndPort.index(after: colon)...]
            host = try Self.percentDecoded(hostAndPort[..<colon], "host")
        } else {
            host = try Self.percentDecoded(hostAndPort, "host")
        }
        port = 5432
        if let rawPort, !rawPort.isEmpty { port = try Self.portNumber(rawPort) }
        let decodedUser = try Self.percentDecoded(rawUser, "user")
        user = decodedUser.isEmpty ? environment["USER"] ?? "postgres" : decodedUser
        password = try rawPassword.map { try Self.percentDecoded($0, "password") }
        let afterAuthority = rest[authorityEnd...]
        let queryStart = afterAuthority.firstIndex(of: "?") ?? afterAuthority.endIndex
        let path = afterAuthority[..<queryStart].trimmingCharacters(in: CharacterSet(charactersIn: "/"))
        let decodedDatabase = try Self.percentDecoded(Substring(path), "database")
        database = decodedDatabase.isEmpty ? nil : decodedDatabase
        var parameters: [String: String] = [:]
        for item in afterAuthority[queryStart...].dropFirst().split(separator: "&") {
            // A parameter without a value says nothing (URLComponents gave it a nil value, which was ignored).
            guard let equals = item.firstIndex(of: "=") else { continue }
            let name = try Self.percentDecoded(item[..<equals], "parameter name")
            guard parameters[name] == nil else { continue }
            parameters[name] = try Self.percentDecoded(item[item.index(after: equals)...], "\(name) parameter")
        }
        // libpq's connection parameters in the query win over the URL's parts (`postgres:///ledger?port=5433`).
        if let given = parameters["port"] { port = try Self.portNumber(Substring(given)) }
        if let given = parameters["user"], !given.isEmpty { user = given }
        if let given = parameters["dbname"], !given.isEmpty { database = given }
        // The query's password wins over the user part's, as its user, port and dbname do (libpq stores the URL's
        // parts, then each query parameter over them). An empty one is none: PGPASSWORD and the password file count.
        if let given = parameters["password"], !given.isEmpty { password = given }
        (sslMode, rootCertificates) = try Self.tlsSettings(parameters: parameters, environment: environment)
        try Self.checkParameters(parameters)
        keepAlive = try KeepAlive(parameters: parameters)
        if let given = parameters["portable"] {
            switch given.lowercased() {
            case "on", "true", "yes", "1": portable = true
            case "off", "false", "no", "0": portable = false
            default: throw LedgerError.cannotOpen("the portable parameter of the postgres:// URL is on or off")
            }
        }
        let hostGiven = !host.isEmpty
        if let socket = parameters["host"], socket.hasPrefix("/") {
            socketDirectory = socket
        } else if host.hasPrefix("/") {
            socketDirectory = host
        }
        // The socket is where the URL leads (libpq lets ?host= override the host): no host besides it, so
        // that the printed form names one target.
        if socketDirectory != nil {
            host = ""
        } else if host.isEmpty {
            host = "127.0.0.1"
        }
        passwordInURL = password != nil
        if password == nil {
            if let fromEnvironment = environment["PGPASSWORD"], !fromEnvironment.isEmpty {
                password = fromEnvironment
            } else if let file = parameters["passfile"].flatMap({ $0.isEmpty ? nil : $0 })
                ?? environment["PGPASSFILE"].flatMap({ $0.isEmpty ? nil : $0 })
                ?? environment["HOME"].map({ $0 + "/.pgpass" })
            {
                if Self.othersMayRead(file) {
                    passwordFileRefused =
                        "the password file \(file) was not read: others may read it (chmod 600 \(file))"
                }
                // libpq matches a socket, or no host given, as "localhost".
                password = Self.passwordFile(file)?.password(
                    host: socketDirectory == nil && hostGiven ? host : "localhost", port: port, database: database ?? user, user: user)
            }
        }
    }

    /// The parameters this URL reads: libpq's that say where to connect, as whom and how safely, and the ledger's
    /// own `portable`.
    static let readParameters: Set<String> = [
        "host", "port", "dbname", "user", "password", "passfile", "sslmode", "sslrootcert", "portable", "keepalives",
        "keepalives_idle", "keepalives_interval", "keepalives_count", "tcp_user_timeout",
    ]

    /// libpq's parameters that change nothing this client promises (names, timeouts of its own, the encoding:
    /// the ledger's text is UTF-8 whatever the client asks), accepted and not acted on.
    static let ignoredParameters: Set<String> = [
        "application_name", "fallback_application_name", "connect_timeout", "client_encoding", "sslsni", "sslcompression",
    ]

    /// libpq's parameters whose value may ask for nothing beyond what this client does: these values are accepted
    /// (`gssencmode=disable`, common in container set-ups), any other refused.
    static let harmlessValues: [String: Set<String>] = [
        "gssencmode": ["disable", "prefer"], "channel_binding": ["disable", "prefer"], "target_session_attrs": ["any"],
        "sslnegotiation": ["postgres"], "load_balance_hosts": ["disable"],
    ]

    /// The rest of libpq's parameters (PostgreSQL 18): each asks for something this client does not do (an
    /// authentication method, a revocation list, a service file, server options), so a URL naming one is refused
    /// rather than connected without it.
    static let unsupportedParameters: Set<String> = [
        "hostaddr", "require_auth", "channel_binding", "options", "replication", "gssencmode", "requiressl",
        "sslnegotiation", "sslcert", "sslkey", "sslkeylogfile", "sslpassword", "sslcertmode", "sslcrl", "sslcrldir",
        "requirepeer", "ssl_min_protocol_version", "ssl_max_protocol_version", "min_protocol_version",
        "max_protocol_version", "krbsrvname", "gsslib", "gssdelegation", "service", "target_session_attrs",
        "load_balance_hosts",
    ]

    /// Refuses a query parameter this client would not act on where libpq does, and one libpq does not know
    /// (libpq refuses those too: "invalid URI query parameter"). A misspelt `sslmode` must not connect without TLS.
    /// - Throws: `LedgerError.cannotOpen` naming the parameter (a name is echoed only when it is one of libpq's or
    ///   looks like a parameter name: lower-case letters, digits and `_`, at most 32).
    /// Every parameter this client takes, from the sets it takes them by, for a refusal to name (the list said nothing
    /// of the keepalives or application_name, which are taken); made once, for a refusal only.
    static let parametersTaken: String = {
        let order = ["host", "port", "dbname", "user", "password", "passfile", "sslmode", "sslrootcert"]
        let others = readParameters.subtracting(order + ["portable"]).sorted()
        return "it reads \((order + others).joined(separator: ", ")) and its own portable, and takes "
            + "\(ignoredParameters.sorted().joined(separator: ", ")) without acting on them"
    }()

    static func checkParameters(_ parameters: [String: String]) throws {
        let reads = parametersTaken
        for name in parameters.keys.sorted() where !readParameters.contains(name) && !ignoredParameters.contains(name) {
            if let value = parameters[name], harmlessValues[name]?.contains(value) == true { continue }
            if unsupportedParameters.contains(name) {
                throw LedgerError.cannotOpen(
                    "the \(name) parameter of the postgres:// URL asks for what receiptdesk does not do (\(reads))")
            }
            let plain = name.count <= 32 && name.utf8.allSatisfy { byte in
                byte == UInt8(ascii: "_") || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
            }
            let named = plain && !name.isEmpty ? "a parameter libpq does not know, \(name)" : "a parameter libpq does not know"
            throw LedgerError.cannotOpen("the postgres:// URL has \(named) (\(reads))")
        }
    }

    /// A port as written in the URL or its `port` parameter.
    /// - Throws: `LedgerError.cannotOpen` when it is not a number from 1 to 65535.
    static func portNumber(_ text: Substring) throws -> Int {
        guard text.count <= 5, text.allSatisfy({ $0.isASCII && $0.isNumber }), let number = Int(text), (1...65535).contains(number)
        else { throw LedgerError.cannotOpen("the port in the postgres:// URL is not a number from 1 to 65535") }
        return number
    }

    /// `text` with each `%XX` replaced by the byte it stands for, once: `%2541` is `%41`, never `A`.
    /// - Parameters:
    ///   - text: one part of the URL as written.
    ///   - part: the part's name for the error (`user`, `password`, `host`, `database`, ...).
    /// - Throws: `LedgerError.cannotOpen` naming `part` when a `%` is not followed by two hex digits, an escape
    ///   is `%00` (PostgreSQL takes no NUL), or the bytes are not UTF-8. The text is not quoted: it may be a password.
    static func percentDecoded(_ text: Substring, _ part: String) throws -> String {
        guard text.contains("%") else { return String(text) }
        func hexValue(_ byte: UInt8?) -> UInt8? {
            guard let byte else { return nil }
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
            default: return nil
            }
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var input = text.utf8.makeIterator()
        while let byte = input.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = hexValue(input.next()), let low = hexValue(input.next()) else {
                throw LedgerError.cannotOpen(
                    "the \(part) in the postgres:// URL has a malformed percent escape: % must be followed by two hex "
                        + "digits (write a % itself as %25)")
            }
            guard high != 0 || low != 0 else {
                throw LedgerError.cannotOpen(
                    "the \(part) in the postgres:// URL holds %00: PostgreSQL takes no NUL character")
            }
            bytes.append(high << 4 | low)
        }
        guard let decoded = String(validating: bytes, as: UTF8.self) else {
            throw LedgerError.cannotOpen(
                "the \(part) in the postgres:// URL is not UTF-8 once its percent escapes are decoded")
        }
        return decoded
    }

    /// A password file's lines, or nil when there is none or it is readable by others (libpq ignores it then).
    static func passwordFile(_ path: String) -> PasswordFile? {
        var status = stat()
        guard stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFREG, !othersMayRead(path),
            let data = FileManager.default.contents(atPath: path)
        else { return nil }
        return PasswordFile(String(decoding: data, as: UTF8.self))
    }

    /// Whether `path` is a file its group or others may use: libpq reads no password file then, nor does this.
    static func othersMayRead(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFREG && status.st_mode & 0o077 != 0
    }

    var isLoopback: Bool { ["127.0.0.1", "localhost", "::1"].contains(host) || host.hasPrefix("127.") }

    /// The URL to print: `***` for a password it held, every part percent-encoded where it would otherwise be
    /// read as a delimiter (or is not printable ASCII), so that it reads back as the same target. A socket is
    /// printed as `postgres://user@/database?host=/dir`, with `:port` when it is not 5432; a TCP server as
    /// `postgres://user@host:port/database`, an IPv6 address in brackets.
    var redacted: String {
        var text = "postgres://" + Self.percentEncoded(user, keeping: Self.subDelimiters)
        if passwordInURL { text += ":***" }
        text += "@"
        if host.contains(":") {
            text += "[" + Self.percentEncoded(host, keeping: ":") + "]"
        } else {
            text += Self.percentEncoded(host, keeping: Self.subDelimiters)
        }
        if socketDirectory == nil || port != 5432 { text += ":\(port)" }
        text += "/" + (database.map { Self.percentEncoded($0, keeping: Self.subDelimiters + ":@") } ?? "")
        if let socketDirectory { text += "?host=" + Self.percentEncoded(socketDirectory, keeping: "!$'()*,;:@/") }
        return text
    }

    /// RFC 3986's sub-delims: kept in a user, host or database, where they delimit nothing.
    private static let subDelimiters = "!$&'()*+,;="

    /// `text` with every byte but RFC 3986's unreserved characters and `kept` written as `%XX`.
    static func percentEncoded(_ text: String, keeping kept: String) -> String {
        let kept = Set(kept.utf8)
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            case _ where kept.contains(byte):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = Array("0123456789ABCDEF".utf8)
                out += "%" + String(decoding: [hex[Int(byte >> 4)], hex[Int(byte & 15)]], as: UTF8.self)
            }
        }
        return out
    }
}

/// A libpq password file: `host:port:database:user:password` lines, `*` matching anything, `\` escaping
/// `:` and `\`, `#` starting a comment; the first matching line wins.
struct PasswordFile {
    var entries: [[String]]

    init(_ text: String) {
        entries = text.split(whereSeparator: \.isNewline).compactMap { line in
            guard !line.hasPrefix("#") else { return nil }
            var fields: [String] = []
            var field = ""
            var escaped = false
            for character in line {
                if escaped {
                    field.append(character)
                    escaped = false
                } else if character == "\\" {
                    escaped = true
                } else if character == ":" {
                    fields.append(field)
                    field = ""
                } else {
                    field.append(character)
                }
            }
            fields.append(field)
            return fields.count == 5 ? fields : nil
        }
    }

    func password(host: String, port: Int, database: String, user: String) -> String? {
        let wanted = [host, String(port), database, user]
        return entries.first { entry in zip(entry, wanted).allSatisfy { $0 == "*" || $0 == $1 } }?[4]
    }
}

/// TCP keepalive and the user timeout of a TCP connection to the server (a unix socket has neither): how soon a
/// server gone silent (a network cut, a host powered off, no reset sent) is noticed. Without them a connection to it
/// waits for the operating system's defaults, two hours idle and about fifteen minutes for data sent; with these,
/// about a minute: an import then stops with what it committed (exit 3), and the dashboard says the ledger is
/// unavailable and retries. A server that is only slow still answers the probes, so a long statement is not cut.
struct KeepAlive: Equatable {
    /// Whether to probe at all (libpq's `keepalives`, 1 or 0).
    var enabled = true
    /// Seconds of silence before the first probe (`keepalives_idle`); nil for the operating system's default.
    var idle: Int? = 30
    /// Seconds between probes (`keepalives_interval`); nil for the operating system's default.
    var interval: Int? = 10
    /// Unanswered probes before the connection is given up (`keepalives_count`); nil for the operating system's.
    var count: Int? = 3
    /// Milliseconds data sent may stay unacknowledged before the connection is given up (`tcp_user_timeout`); nil
    /// for the operating system's default.
    var userTimeout: Int? = 60_000

    init() {}

    /// The defaults, with what the URL's parameters say over them: libpq's names and meanings (0 is the operating
    /// system's default). A value that is not a whole number of at least 0 is refused naming the parameter, as
    /// libpq refuses it.
    init(parameters: [String: String]) throws {
        func number(_ name: String) throws -> Int? {
            guard let text = parameters[name] else { return nil }
            guard let value = Int(text.trimmingCharacters(in: .whitespaces)), value >= 0, value <= Int(Int32.max) else {
                throw LedgerError.cannotOpen("the \(name) parameter of the postgres:// URL takes a whole number of at least 0")
            }
            return value
        }
        func orSystemDefault(_ value: Int) -> Int? { value == 0 ? nil : value }
        if let on = try number("keepalives") { enabled = on != 0 }
        if let value = try number("keepalives_idle") { idle = orSystemDefault(value) }
        if let value = try number("keepalives_interval") { interval = orSystemDefault(value) }
        if let value = try number("keepalives_count") { count = orSystemDefault(value) }
        if let value = try number("tcp_user_timeout") { userTimeout = orSystemDefault(value) }
    }
}

/// A server reached over TCP. Its connections are made here and handed to postgres-nio as established channels,
/// because postgres-nio's own bootstrap sets no socket options: this one sets ``KeepAlive``'s.
struct TCPEndpoint: Sendable {
    let host: String
    let port: Int
    let keepAlive: KeepAlive

    /// Connects a socket to the server, with keepalive and the user timeout set.
    func connect(on loop: any EventLoop, timeout: TimeAmount) -> EventLoopFuture<any Channel> {
        var bootstrap = ClientBootstrap(group: loop).connectTimeout(timeout)
            .channelOption(ChannelOptions.socketOption(.so_keepalive), value: keepAlive.enabled ? 1 : 0)
        #if os(Linux)
        func tcpOption(_ name: Int32, _ value: Int?) {
            guard let value else { return }
            bootstrap = bootstrap.channelOption(
                ChannelOptions.Types.SocketOption(level: .tcp, name: NIOBSDSocket.Option(rawValue: name)), value: SocketOptionValue(value))
        }
        if keepAlive.enabled {
            tcpOption(TCP_KEEPIDLE, keepAlive.idle)
            tcpOption(TCP_KEEPINTVL, keepAlive.interval)
            tcpOption(TCP_KEEPCNT, keepAlive.count)
        }
        tcpOption(TCP_USER_TIMEOUT, keepAlive.userTimeout)
        #endif
        return bootstrap.connect(host: host, port: port)
    }

    /// `template`'s TLS, user, database, password and options, over `channel`; the host names the server for TLS
    /// (SNI and `verify-full`'s check) unless it is an address, as postgres-nio does for a host it connects to itself.
    func configuration(over channel: any Channel, like template: PostgresConnection.Configuration) -> PostgresConnection.Configuration {
        var configuration = PostgresConnection.Configuration(
            establishedChannel: channel, tls: template.tls, username: template.username, password: template.password,
            database: template.database)
        configuration.options = template.options
        if configuration.options.tlsServerName == nil, !Self.isAddress(host) { configuration.options.tlsServerName = host }
        return configuration
    }

    /// Whether `host` is an IPv4 or IPv6 address rather than a name.
    static func isAddress(_ host: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
    }
}

/// Each table's identity sequence as the server names it (`pg_get_serial_sequence`), read once and shared by a
/// database's connections: a ledger's sequences keep their names.
final class SequenceNames: @unchecked Sendable {
    private let lock = NIOLock()
    private var names: [String: String] = [:]

    func name(of table: String) -> String? { lock.withLock { names[table] } }
    func set(_ name: String, of table: String) { lock.withLock { names[table] = name } }
}

/// Runs a task's jobs on one event loop (SE-0417's task executor preference): nonisolated async code, postgres-nio's
/// COPY writer included, then runs on the loop thread, and steps with no `await` between them are one turn of it.
final class EventLoopTaskExecutor: TaskExecutor {
    let loop: any EventLoop

    init(_ loop: any EventLoop) { self.loop = loop }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        loop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
