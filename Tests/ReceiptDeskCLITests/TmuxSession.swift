import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The real `receiptdesk` binary in a private tmux server: type keys, read the screen, record the bytes
/// the terminal received. Each session has its own socket and is killed at the end.
final class TmuxSession {
    let socket = "rd-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    let directory: URL
    let statusFile: URL
    let rawFile: URL
    private var killed = false

    /// Whether tmux can run here. Under CI=true a missing tmux fails the test instead of skipping it.
    static func available() -> Bool {
        if run(["tmux", "-V"]).status == 0 { return true }
        if ProcessInfo.processInfo.environment["CI"] == "true" {
            Issue.record("tmux is required under CI=true (apt-get install tmux); .ci/run installs it")
        }
        return false
    }

    /// What the pane runs.
    enum Program {
        /// The binary with these arguments; its exit status goes to `statusFile`.
        case binary([String])
        /// An interactive shell with job control (prompt ``TmuxSession/prompt``), for Ctrl-Z and `fg`.
        case shell
    }

    /// The interactive shell's prompt.
    static let prompt = "rd-shell$"

    /// Starts the binary with `arguments` at a size, in a clean environment plus `environment`.
    convenience init(arguments: [String], width: Int = 100, height: Int = 30, environment: [String: String] = [:]) throws {
        try self.init(program: .binary(arguments), width: width, height: height, environment: environment)
    }

    /// Starts `program` at a size, in a clean environment plus `environment`.
    init(program: Program, width: Int = 100, height: Int = 30, environment: [String: String] = [:]) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent(socket)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        statusFile = directory.appendingPathComponent("status")
        rawFile = directory.appendingPathComponent("raw")
        let go = directory.appendingPathComponent("go")
        var env = [
            "PATH": "/usr/bin:/bin", "HOME": directory.path, "TERM": "xterm-256color", "LANG": "C.UTF-8", "USER": "e2e-agent",
            "XDG_CACHE_HOME": directory.appendingPathComponent("cache").path,
            "XDG_CONFIG_HOME": directory.appendingPathComponent("config").path,
            "XDG_DATA_HOME": directory.appendingPathComponent("data").path,
        ]
        if case .shell = program { env["PS1"] = Self.prompt + " " }
        for (key, value) in environment { env[key] = value }
        let assignments = env.sorted { $0.key < $1.key }.map { "\($0.key)=\(Self.quote($0.value))" }.joined(separator: " ")
        // Wait for pipe-pane to be attached before the program writes its first byte.
        let wait = "while [ ! -f \(Self.quote(go.path)) ]; do sleep 0.02; done"
        let script: String
        switch program {
        case .binary(let arguments):
            let command = ([Binary.path] + arguments).map(Self.quote).joined(separator: " ")
            // The shell survives the Ctrl-C it shares with the program (`trap :`, reset to the default in the
            // program on exec), so it can write the program's exit status; then it keeps the pane (and what the
            // program printed) open.
            script = "trap : INT; \(wait); env -i \(assignments) \(command); echo $? > \(Self.quote(statusFile.path)); sleep 600"
        case .shell:
            script = "\(wait); exec env -i \(assignments) sh -i"
        }
        try tmux(["new-session", "-d", "-s", "app", "-x", "\(width)", "-y", "\(height)", "sh", "-c", script])
        // OSC 52 from the program into tmux's buffer (the default, external, passes it to the terminal only).
        try tmux(["set-option", "-g", "set-clipboard", "on"])
        try tmux(["pipe-pane", "-o", "-t", "app", "cat >> \(Self.quote(rawFile.path))"])
        writeTestFile(go.path, Data())
    }

    deinit { kill() }

    func kill() {
        guard !killed else { return }
        killed = true
        _ = Self.run(["tmux", "-L", socket, "-f", "/dev/null", "kill-server"])
        try? FileManager.default.removeItem(at: directory)
        try? FileManager.default.removeItem(atPath: "/tmp/tmux-\(getuid())/\(socket)")
    }

    /// The screen as text.
    func screen() -> String {
        Self.run(["tmux", "-L", socket, "-f", "/dev/null", "capture-pane", "-p", "-t", "app"]).output
    }

    /// The screen with colour escapes (`capture-pane -e`).
    func screenWithAttributes() -> String {
        Self.run(["tmux", "-L", socket, "-f", "/dev/null", "capture-pane", "-p", "-e", "-t", "app"]).output
    }

    /// Every byte the program sent to the terminal so far.
    func rawOutput() -> [UInt8] {
        (try? [UInt8](Data(contentsOf: rawFile))) ?? []
    }

    /// Sends keys as tmux names them (`j`, `Enter`, `Escape`, `C-c`).
    func keys(_ keys: String...) throws {
        try tmux(["send-keys", "-t", "app"] + keys)
    }

    /// Types text literally.
    func type(_ text: String) throws {
        try tmux(["send-keys", "-t", "app", "-l", text])
    }

    /// Pastes text as a terminal does (bracketed, when the program asked for it).
    func paste(_ text: String) throws {
        try tmux(["set-buffer", "-b", "pasted", "--", text])
        try tmux(["paste-buffer", "-p", "-d", "-b", "pasted", "-t", "app"])
    }

    func resize(width: Int, height: Int) throws {
        try tmux(["resize-window", "-t", "app", "-x", "\(width)", "-y", "\(height)"])
    }

    /// Waits until the screen satisfies `condition` (polling, never a fixed sleep); records a failure and
    /// returns the last screen when it does not within `seconds`.
    ///
    /// The screen returned is a settled one: the condition held on two captures in a row that were the same (or on
    /// five in a row, for a screen that keeps changing). A capture can fall between the lines of one frame, tmux
    /// having taken in its first lines only: a header already the new screen's over the old screen's body, read as
    /// the new screen (CI saw "› C1" in the breadcrumb over the overview's figures).
    @discardableResult
    func waitFor(_ description: String, seconds: Double = 15, sourceLocation: SourceLocation = #_sourceLocation, _ condition: (String) -> Bool) -> String {
        let deadline = Date().addingTimeInterval(seconds)
        var last = ""
        var held = 0
        while Date() < deadline {
            let previous = last
            last = screen()
            if condition(last) {
                held += 1
                if (held > 1 && last == previous) || held >= 5 { return last }
            } else {
                held = 0
            }
            usleep(30_000)
        }
        // Held at the deadline without settling: what was waited for is there.
        if held > 0 { return last }
        Issue.record("timed out waiting for \(description); screen:\n\(last)", sourceLocation: sourceLocation)
        return last
    }

    @discardableResult
    func waitFor(text: String, seconds: Double = 15, sourceLocation: SourceLocation = #_sourceLocation) -> String {
        waitFor("\"\(text)\"", seconds: seconds, sourceLocation: sourceLocation) { $0.contains(text) }
    }

    /// A tmux format evaluated for the pane: `#{cursor_y}` (the hardware cursor's row), `#{alternate_on}`.
    func display(_ format: String) -> String {
        Self.run(["tmux", "-L", socket, "-f", "/dev/null", "display-message", "-p", "-t", "app", format]).output
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Waits until tmux's newest paste buffer (what an OSC 52 put there) is `text`; records a failure otherwise.
    @discardableResult
    func waitFor(buffer text: String, seconds: Double = 15, sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        var last = ""
        while Date() < deadline {
            last = Self.run(["tmux", "-L", socket, "-f", "/dev/null", "show-buffer"]).output
            if last == text { return true }
            usleep(30_000)
        }
        Issue.record("timed out waiting for tmux's buffer to be \(text) (it is \(last))", sourceLocation: sourceLocation)
        return false
    }

    /// Waits until the pane's `format` reads `value`; records a failure when it does not within `seconds`.
    @discardableResult
    func waitFor(format: String, toBe value: String, seconds: Double = 15, sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        var last = ""
        while Date() < deadline {
            last = display(format)
            if last == value { return true }
            usleep(30_000)
        }
        Issue.record("timed out waiting for \(format) to be \(value) (it is \(last)); screen:\n\(screen())", sourceLocation: sourceLocation)
        return false
    }

    /// Waits until the bytes the terminal received satisfy `condition`; records a failure and returns the last
    /// bytes when they do not within `seconds`.
    @discardableResult
    func waitForOutput(
        _ description: String, seconds: Double = 15, sourceLocation: SourceLocation = #_sourceLocation, _ condition: ([UInt8]) -> Bool
    ) -> [UInt8] {
        let deadline = Date().addingTimeInterval(seconds)
        var last: [UInt8] = []
        while Date() < deadline {
            last = rawOutput()
            if condition(last) { return last }
            usleep(30_000)
        }
        Issue.record("timed out waiting for output: \(description) (\(last.count) bytes)", sourceLocation: sourceLocation)
        return last
    }

    /// Every byte the program sent, once it has given the terminal back (left the alternate screen). Its exit
    /// status is written as soon as it exits, while its last bytes may still be on their way through tmux and
    /// pipe-pane; this waits for them, and records a failure when the alternate screen is never left.
    @discardableResult
    func outputThroughExit(seconds: Double = 15, sourceLocation: SourceLocation = #_sourceLocation) -> [UInt8] {
        waitForOutput("the alternate screen left (ESC [?1049l)", seconds: seconds, sourceLocation: sourceLocation) {
            $0.containsSequence(Array("\u{1B}[?1049l".utf8))
        }
    }

    /// Types the binary with `arguments` at the interactive shell's prompt (a ``Program/shell`` session).
    func runInShell(_ arguments: [String]) throws {
        try type(([Binary.path] + arguments).map(Self.quote).joined(separator: " "))
        try keys("Enter")
    }

    /// The process id of the running `receiptdesk`: the child of the pane's shell.
    func programPid(seconds: Double = 15) -> pid_t? {
        guard let shell = pid_t(display("#{pane_pid}")) else { return nil }
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
                guard let pid = pid_t(entry), let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                    let open = stat.firstIndex(of: "("), let close = stat.lastIndex(of: ")")
                else { continue }
                // pid (comm) state ppid ...
                let command = stat[stat.index(after: open)..<close]
                let fields = stat[stat.index(after: close)...].split(separator: " ")
                if command == "receiptdesk", fields.count > 1, pid_t(fields[1]) == shell { return pid }
            }
            usleep(30_000)
        }
        return nil
    }

    /// The program's exit status, once it has exited.
    func exitStatus(seconds: Double = 15) -> Int32? {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if let text = try? String(contentsOf: statusFile, encoding: .utf8), let status = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)) {
                return status
            }
            usleep(30_000)
        }
        return nil
    }

    private func tmux(_ arguments: [String]) throws {
        let result = Self.run(["tmux", "-L", socket, "-f", "/dev/null"] + arguments)
        if result.status != 0 {
            throw CLIFailure(message: "tmux \(arguments.first ?? "") failed (\(result.status)): \(result.output)")
        }
    }

    static func quote(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    /// Runs a program with posix_spawn and an empty signal mask, output to a file (a daemonising tmux
    /// server would hold a pipe open forever).
    static func run(_ arguments: [String]) -> (status: Int32, output: String) {
        let outPath = FileManager.default.temporaryDirectory.appendingPathComponent("rd-spawn-\(getpid())-\(UInt32.random(in: 0...UInt32.max))").path
        defer { unlink(outPath) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, outPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGINT, SIGTERM, SIGCHLD, SIGPIPE, SIGWINCH] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var pid: pid_t = 0
        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let spawned = posix_spawnp(&pid, arguments[0], &actions, &attributes, argv, environ)
        guard spawned == 0 else { return (127, "cannot start \(arguments[0])") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        let output = (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? ""
        let exited = (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        return (exited, output)
    }
}

struct CLIFailure: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
