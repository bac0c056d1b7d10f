import Foundation
import Ledger
import Synchronization
import Testing

/// A throwaway PostgreSQL cluster for the test run: `initdb` + `pg_ctl` on a temporary directory,
/// reachable only through a unix socket in that directory, stopped (`-m immediate`) and removed at exit.
///
/// Root may not run `initdb`, so as root the cluster runs as the `postgres` user the package creates.
///
/// Tests that stop the server take a cluster of their own (``makePrivate()``), never the shared one
/// other tests run on at the same time. Tests/ReceiptDeskCLITests compiles this same file through a
/// symbolic link, so the dashboard's tests start servers the same way.
final class PostgresTestServer: @unchecked Sendable {
    let directory: String
    let socketDirectory: String
    private let binaries: String
    private let runAs: String?
    private static let lock = NSLock()
    nonisolated(unsafe) private static var shared: PostgresTestServer?
    nonisolated(unsafe) private static var startError: String?
    nonisolated(unsafe) private static var databaseCounter = 0

    /// Whether the tests must have PostgreSQL (CI): then its absence fails instead of skipping.
    static var required: Bool { ProcessInfo.processInfo.environment["CI"] == "true" }

    /// PostgreSQL's binaries directory, when the server package is installed.
    static var binaries: String? {
        let root = "/usr/lib/postgresql"
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
        for version in versions.sorted(by: >)
        where FileManager.default.isExecutableFile(atPath: "\(root)/\(version)/bin/initdb") {
            return "\(root)/\(version)/bin"
        }
        return nil
    }

    /// Whether PostgreSQL tests run here: always under CI (where absence fails), else when installed.
    static var enabled: Bool { required || binaries != nil }

    /// The shared server, started on first use.
    static func get() throws -> PostgresTestServer {
        lock.lock()
        defer { lock.unlock() }
        if let shared { return shared }
        if let startError { throw ServerError(message: startError) }
        do {
            let server = try PostgresTestServer()
            shared = server
            atexit { PostgresTestServer.shared?.stop() }
            return server
        } catch {
            startError = "\(error)"
            throw error
        }
    }

    struct ServerError: Error, CustomStringConvertible {
        let message: String
        var description: String { message }
    }

    /// A cluster for one test alone (one that stops and starts it); the caller calls ``stop()`` at the end.
    static func makePrivate() throws -> PostgresTestServer {
        try PostgresTestServer()
    }

    private init() throws {
        guard let binaries = Self.binaries else {
            throw ServerError(message: "PostgreSQL is not installed (apt-get install postgresql); CI=true requires it")
        }
        self.binaries = binaries
        runAs = Self.serverUser
        Self.sweepOnce.withLock { swept in
            guard !swept else { return }
            swept = true
            Self.sweepAbandoned { owner, _ in kill(owner, 0) == 0 || errno != ESRCH }
        }
        let base = FileManager.default.temporaryDirectory.appendingPathComponent(
            "\(Self.prefix)\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        ).path
        directory = base + "/data"
        socketDirectory = base
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        if let runAs {
            try Self.run("/bin/chown", ["-R", "\(runAs):\(runAs)", base])
        }
        try command("initdb", ["-D", directory, "-A", "trust", "-U", "postgres", "--no-sync"])
        try startServer()
    }

    /// How a cluster's directory is named: this prefix, the test process's id, a random number.
    private static let prefix = "receiptdesk-pg-"
    /// Who runs the servers: root may not, so as root the `postgres` user.
    private static var serverUser: String? { getuid() == 0 ? "postgres" : nil }
    private static let sweepOnce = Mutex(false)

    /// Stops the servers of test processes that ended without stopping them (killed, or crashed in a test: a crash
    /// skips the `defer` that stops a test's cluster, and one that froze its server leaves it frozen) and removes their
    /// directories, so that runs that crashed do not leave servers behind. A process's first cluster does it; `isAlive`
    /// says whether the test process that named a directory (given with the directory's name) still runs.
    static func sweepAbandoned(isAlive: (_ owner: pid_t, _ name: String) -> Bool) {
        let temporary = FileManager.default.temporaryDirectory
        for name in (try? FileManager.default.contentsOfDirectory(atPath: temporary.path)) ?? [] where name.hasPrefix(prefix) {
            // receiptdesk-pg-PID-RANDOM (a cluster) or receiptdesk-pg-cmd-PID.log (its commands' output).
            let rest = name.dropFirst(prefix.count)
            let owner = rest.hasPrefix("cmd-") ? pid_t(rest.dropFirst(4).dropLast(4)) : rest.split(separator: "-").first.flatMap { pid_t($0) }
            guard let owner, !isAlive(owner, name) else { continue }
            let base = temporary.appendingPathComponent(name).path
            if let binaries, let postmaster = postmasterPID(base + "/data") {
                // (SIGCONT first: a frozen server takes no other signal until it runs again.)
                for pid in [postmaster] + children(of: postmaster) { kill(pid, SIGCONT) }
                _ = try? command(binaries, "pg_ctl", ["-D", base + "/data", "-m", "immediate", "-w", "stop"])
            }
            try? FileManager.default.removeItem(atPath: base)
        }
    }

    /// Starts the server on the cluster (again, after ``stopServer()``); returns once it accepts connections.
    func startServer() throws {
        try command(
            "pg_ctl",
            [
                "-D", directory, "-l", socketDirectory + "/server.log", "-w", "-t", "60", "-o",
                "-c listen_addresses='' -k \(socketDirectory) -c fsync=off -c full_page_writes=off", "start",
            ])
    }

    /// Stops the server as an operator would (`-m fast`: sessions are told and cut), keeping its data.
    func stopServer() throws {
        try command("pg_ctl", ["-D", directory, "-m", "fast", "-w", "-t", "60", "stop"])
    }

    /// The server's main process (from `postmaster.pid`), while it runs.
    var postmasterPID: pid_t? { Self.postmasterPID(directory) }

    private static func postmasterPID(_ directory: String) -> pid_t? {
        guard let text = try? String(contentsOfFile: directory + "/postmaster.pid", encoding: .utf8) else { return nil }
        return text.split(separator: "\n").first.flatMap { pid_t($0) }
    }

    /// The server's main process and its children (the backends serving connections, and its workers), from /proc.
    func processes() throws -> [pid_t] {
        guard let postmaster = postmasterPID else { return [] }
        return [postmaster] + Self.children(of: postmaster)
    }

    private static func children(of postmaster: pid_t) -> [pid_t] {
        var children: [pid_t] = []
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = pid_t(entry), let fields = statFields(pid) else { continue }
            if fields.count > 1, pid_t(fields[1]) == postmaster { children.append(pid) }
        }
        return children
    }

    /// A process's fields in /proc/PID/stat after its command (its state, its parent, ...); nil once it is gone.
    static func statFields(_ pid: pid_t) -> [Substring]? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = stat.lastIndex(of: ")") else {
            return nil
        }
        // pid (comm) state ppid ...: the command may hold spaces and parentheses, so read after the last ")".
        return stat[stat.index(after: close)...].split(separator: " ")
    }

    /// Runs `sql` through psql in the background, as another session would (one holding a lock for a while); returns
    /// its process, for ``end(_:)``.
    func background(_ sql: String, database: String) throws -> pid_t {
        var pid: pid_t = 0
        let arguments = [binaries + "/psql", "-h", socketDirectory, "-U", "postgres", "-d", database, "-q", "-c", sql]
        let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let spawned = posix_spawn(&pid, arguments[0], nil, nil, argv, environ)
        guard spawned == 0 else { throw ServerError(message: "cannot start psql: error \(spawned)") }
        return pid
    }

    /// Whether `ledger` sees the lock `lock` names (a `pg_locks` condition) granted, asked every 50 ms for up to 10 s: a
    /// ``background(_:database:)`` session has taken it.
    static func waitForLock(_ lock: String, seenBy ledger: SQLLedger) async throws -> Bool {
        for _ in 0..<200 {
            let held = try await ledger.database.read { c in
                try c.scalar("SELECT COUNT(*) FROM pg_locks WHERE \(lock) AND granted")?.int == 1
            }
            if held { return true }
            try await Task.sleep(for: .milliseconds(50))
        }
        return false
    }

    /// Ends a ``background(_:database:)`` session (its transaction rolled back by the server) and waits for it.
    static func end(_ pid: pid_t) {
        kill(pid, SIGKILL)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    }

    /// A fresh database for one test; returns its URL.
    func createDatabase() throws -> String {
        Self.lock.lock()
        Self.databaseCounter += 1
        let name = "ledger_test_\(Self.databaseCounter)"
        Self.lock.unlock()
        try command(
            "psql", ["-h", socketDirectory, "-U", "postgres", "-d", "postgres", "-q", "-c", "CREATE DATABASE \(name)"])
        return "postgres://postgres@/\(name)?host=\(socketDirectory)"
    }

    /// Creates a role that must give `password` (SCRAM) to connect over the socket; other roles keep `trust`.
    func createPasswordRole(_ role: String, password: String) throws {
        try command(
            "psql",
            ["-h", socketDirectory, "-U", "postgres", "-d", "postgres", "-q", "-c", "CREATE ROLE \(role) LOGIN SUPERUSER PASSWORD '\(password)'"])
        let hba = directory + "/pg_hba.conf"
        let rules = try String(contentsOfFile: hba, encoding: .utf8)
        try ("local all \(role) scram-sha-256\n" + rules).write(toFile: hba, atomically: false, encoding: .utf8)
        try command("pg_ctl", ["-D", directory, "-w", "reload"])
    }

    func stop() {
        _ = try? command("pg_ctl", ["-D", directory, "-m", "immediate", "-w", "stop"])
        try? FileManager.default.removeItem(atPath: socketDirectory)
        try? FileManager.default.removeItem(
            atPath: FileManager.default.temporaryDirectory.appendingPathComponent("receiptdesk-pg-cmd-\(getpid()).log")
                .path)
    }

    private func command(_ name: String, _ arguments: [String]) throws {
        try Self.command(binaries, name, arguments)
    }

    private static func command(_ binaries: String, _ name: String, _ arguments: [String]) throws {
        if let runAs = serverUser {
            try run("/usr/sbin/runuser", ["-u", runAs, "--", "\(binaries)/\(name)"] + arguments)
        } else {
            try run("\(binaries)/\(name)", arguments)
        }
    }

    /// Runs a command with its output sent to a file, never a pipe (the server inherits it and would
    /// hold it open), and no other descriptor of this process, through `posix_spawn` and `waitpid`: Foundation's `Process.waitUntilExit` can hang
    /// when the child daemonises, as `pg_ctl start` does.
    private static func run(_ path: String, _ arguments: [String]) throws {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("receiptdesk-pg-cmd-\(getpid()).log")
            .path
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // Nothing else: a pipe another test holds open for a child of its own (Foundation's pipes are inheritable)
        // would otherwise stay open in the server for as long as it runs, and that test would wait for its EOF.
        closeFrom3(&actions)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))
        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, path, &actions, &attributes, argv, environ)
        guard spawned == 0 else { throw ServerError(message: "cannot start \(path): error \(spawned)") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let exited = (status & 0x7f) == 0
        let code = (status >> 8) & 0xff
        if !exited || code != 0 {
            let output = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            throw ServerError(
                message: "\(path) \(arguments.joined(separator: " ")) failed (\(status)): \(output.suffix(600))")
        }
    }

    /// Adds "close every descriptor from 3 up" to `actions`: glibc's `posix_spawn_file_actions_addclosefrom_np`
    /// (2.34 and later; Swift's Glibc module does not declare it), else a close for each descriptor open now.
    private static func closeFrom3(_ actions: inout posix_spawn_file_actions_t) {
        typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        if let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") {
            _ = unsafeBitCast(symbol, to: AddCloseFrom.self)(&actions, 3)
            return
        }
        for name in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? [] {
            if let fd = Int32(name), fd > 2 { posix_spawn_file_actions_addclose(&actions, fd) }
        }
    }
}
