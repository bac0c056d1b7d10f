import ArgumentParser
import CursesBackend
import DeskUI
import Entitlements
import Foundation
import Ledger
import LedgerPostgres
import ReceiptDecoding
import ReceiptModel

/// `receiptdesk` (or `receiptdesk dashboard`): the terminal dashboard.
struct DashboardCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dashboard",
        abstract: "The terminal dashboard (the default): customers, entitlements, timelines, the refund queue.",
        discussion: """
            Without --ledger or --files (and with no $RECEIPTDESK_LEDGER or default ledger), opens the demo built \
            from SampleData/. Keys: ? lists them on every screen; : opens the command line; q goes back, Q quits.
            """
    )

    @OptionGroup var data: DataOptions

    @Option(help: ArgumentHelp("Colour theme: a name (Themes/ or $XDG_CONFIG_HOME/receiptdesk/themes) or a theme file's path.", valueName: "NAME"))
    var theme: String?

    @Option(name: .customLong("operator"), help: "Who is triaging (default: $USER, else the PostgreSQL role, else the login).")
    var operatorName: String?

    @Flag(help: "Mouse: a click selects a row of the Customers and Refunds lists, the wheel scrolls (off by default: it breaks selecting text).")
    var mouse = false

    @Flag(help: "Build the demo afresh from SampleData/: the triage and notes made in it are forgotten.")
    var resetDemo = false

    func validate() throws {
        if data.source.files.contains("-") {
            throw ValidationError("the dashboard reads its keys from standard input: --files - is for lookup and refunds")
        }
    }

    func run() async throws {
        // --read-only (a ledger option): triage keys are hidden and refused.
        try await Dashboard(
            data: data, themeName: theme, readOnly: data.source.readOnly, operatorName: operatorName, mouse: mouse, resetDemo: resetDemo
        ).run()
    }
}

/// The dashboard: opens the ledger (or the demo), takes over the terminal, runs until the user quits,
/// and gives the terminal back on every path.
struct Dashboard {
    var data: DataOptions
    var themeName: String?
    var readOnly: Bool
    var operatorName: String?
    var mouse: Bool
    /// The demo is built afresh (`--reset-demo`), forgetting what was triaged in it.
    var resetDemo = false
    var environment: [String: String] = ProcessInfo.processInfo.environment

    /// The ledger the dashboard opens, and what to call it on screen.
    struct Opened {
        var ledger: SQLLedger
        var name: String
        var now: Timestamp
        var isDemo: Bool
        /// The demo's own catalog, used when no --catalog is given.
        var catalogPath: String? = nil
        /// The PostgreSQL role the ledger is read as, and whether it may triage (nil on SQLite).
        var role: (name: String, mayTriage: Bool)? = nil
    }

    /// The dashboard's first state over what was opened: read-only (the keys hidden) when asked, or when the
    /// role may not triage (a viewer: its keys would only be refused); the operator is `--operator`, `$USER`, else
    /// the role.
    func initialState(_ opened: Opened, width: Int = 80, height: Int = 24, themes: ThemeLoader, catalog: Catalog) -> AppState {
        let roleRefuses = opened.role.map { !$0.mayTriage } ?? false
        var state = AppState(
            width: width, height: height, now: opened.now, isDemo: opened.isDemo, ledgerName: opened.name,
            operatorName: who(opened), readOnly: readOnly || roleRefuses,
            mouse: mouse, themeName: themeName ?? "default", themeNames: themes.names, catalog: catalog)
        // Files decoded without their signatures checked: said on every screen, not only before the screen was taken.
        state.unverified = !data.source.files.isEmpty && data.verification.noVerify
        state.inMemory = !data.source.files.isEmpty
        if roleRefuses, !readOnly, let role = opened.role {
            state.readOnlyReason = "the PostgreSQL role \(role.name) may read this ledger, not triage it"
        }
        return state
    }

    func run() async throws {
        let now = currentTimestamp()
        try refuseResetOfALedger()
        // No terminal is said next: reading --files or building the demo would be work thrown away.
        try CursesBackend.checkTerminal(environment: environment)
        // Everything that can fail for a reason a person must read happens before the screen is taken.
        let opened = try await open(now: now)
        var catalogOptions = data
        if catalogOptions.catalog == nil { catalogOptions.catalog = opened.catalogPath }
        let catalog = try catalogOptions.loadCatalog()
        let themes = ThemeLoader(environment: environment)
        let (theme, warning) = themes.loadOrDefault(themeName ?? environment["RECEIPTDESK_THEME"] ?? "default")
        if let warning { FileHandle.standardError.write(Data("receiptdesk: \(safe(warning))\n".utf8)) }
        let backend: CursesBackend
        do {
            backend = try CursesBackend(environment: environment)
        } catch {
            try? await opened.ledger.close()
            throw error
        }
        var state = initialState(opened, themes: themes, catalog: catalog)
        if let warning { state.message = StatusMessage(warning, kind: .error) }
        // (The ledger's own read-only setting, which hides the write keys as --read-only does while it is set, is
        // read by the runtime as it starts and followed after; the ledger refuses the writes itself.)
        let runtime = Runtime(state: state, theme: theme, backend: backend, handlers: handlers(opened, themes: themes))
        await runtime.start()
        await runtime.run()
        backend.end()
        // (Quit during a read that did not answer: the process ends without waiting for it, and the system closes the
        // connection; closing it here waited for the read, 15 s on a frozen server.)
        if !runtime.abandonedRead { try? await opened.ledger.close() }
        // A triage write that was still on its way when Q was pressed, and failed: said where it can still be read.
        if let error = Self.unsavedError(runtime) { throw error }
    }

    /// What the dashboard ends with when triage writes of its session were not saved: all refused by the ledger (set
    /// read-only meanwhile), a refused write's exit (2); any the ledger failed to take, a failed ledger's (3).
    static func unsavedError(_ runtime: Runtime) -> CLIError? {
        guard let unsaved = runtime.unsaved else { return nil }
        let text = Sanitize.text(unsaved)
        return runtime.unsavedWereRefused ? CLIError.usage(text) : CLIError.ledgerUnavailable(text)
    }

    /// The ledger: `--files`, `--ledger`, `$RECEIPTDESK_LEDGER` or the default file when it exists; else the demo.
    func open(now: Timestamp) async throws -> Opened {
        if opensALedger {
            let url = LedgerOptions.ledgerURL(explicit: data.source.ledger, environment: environment)
            let ledger: SQLLedger
            if data.source.files.isEmpty {
                try data.sayWhatAStoredLedgerIgnores(readsRules: false)
                ledger = try await LedgerOptions.open(url: url, now: now, readOnly: readOnly, mustExist: true, creating: false)
            } else {
                ledger = try await data.open(now: now)
            }
            let name = data.source.files.isEmpty ? redact(url) : "files: \(data.source.files.joined(separator: " "))"
            return Opened(ledger: ledger, name: name, now: now, isDemo: false, role: try await ledger.role())
        }
        return try await openDemo()
    }

    /// Whether a ledger is configured (`--files`, `--ledger`, `$RECEIPTDESK_LEDGER`) or the default file exists:
    /// else the dashboard shows the demo.
    var opensALedger: Bool {
        !data.source.files.isEmpty || data.source.ledger != nil || !(environment["RECEIPTDESK_LEDGER"] ?? "").isEmpty
            || FileManager.default.fileExists(atPath: LedgerOptions.defaultLedgerPath(environment: environment))
    }

    /// `--reset-demo` over a ledger resets nothing: a usage error, said before anything else.
    func refuseResetOfALedger() throws {
        guard resetDemo, opensALedger else { return }
        throw CLIError.usage(
            "--reset-demo is for the demo, and a ledger is configured (--ledger, --files, $RECEIPTDESK_LEDGER or "
                + "\(LedgerOptions.defaultLedgerPath(environment: environment))): nothing was reset")
    }

    /// The demo: SampleData/ (or `$RECEIPTDESK_SAMPLE_DATA`) imported into a cached ledger of its own.
    func openDemo() async throws -> Opened {
        let explicit = environment["RECEIPTDESK_SAMPLE_DATA"].flatMap { $0.isEmpty ? nil : $0 }
        guard let directory = explicit ?? DemoLedger.locateSampleData() else {
            throw CLIError.ledgerUnavailable(
                "no ledger configured, and no SampleData/ (beside this receiptdesk's build, or here) to show the demo from: "
                    + "give --ledger URL or --files PATH, set RECEIPTDESK_LEDGER, or RECEIPTDESK_SAMPLE_DATA=DIR "
                    + "(receiptdesk sample --out DIR makes such a directory)")
        }
        let demo = try await DemoLedger.open(sampleDataDirectory: directory, environment: environment, reset: resetDemo) { building in
            if building { FileHandle.standardError.write(Data("receiptdesk: building the demo ledger from \(directory) (a few seconds, once)…\n".utf8)) }
        }
        return Opened(ledger: demo.ledger, name: demo.dataDescription, now: demo.now, isDemo: true, catalogPath: demo.catalogPath)
    }

    /// Who triage is written as: `--operator`, `$USER`, else the PostgreSQL role (the screen and the log agree).
    func who(_ opened: Opened) -> String { OperatorName.resolve(operatorName, environment: environment, role: opened.role?.name) }

    func handlers(_ opened: Opened, themes: ThemeLoader) -> EffectHandlers {
        let ledger = opened.ledger
        let readOnly = readOnly
        let who = who(opened)
        let isDemo = opened.isDemo
        // The demo's now is the end of its data, and stays there.
        let wallClock: @Sendable () -> Timestamp = { currentTimestamp() }
        let clock = isDemo ? nil : wallClock
        let demoNow = opened.now
        return EffectHandlers(
            reader: ledger,
            triage: { ids, action, note, expecting in
                guard !readOnly else {
                    throw TriageRefused(reason: LedgerOptions.refuse("triage").message)
                }
                var changes: [TriageChange] = []
                for id in ids {
                    // The demo's clock is its data's end and stands still: its triage is stamped then, never later
                    // than the now its header shows (the log keeps their order by entry).
                    let at = isDemo ? demoNow : currentTimestamp()
                    do {
                        let result = try await ledger.triageChange(
                            flagId: id, action: action, operatorName: who, note: note, now: at, expecting: expecting)
                        changes.append(TriageChange(flagId: id, from: result.from, to: result.flag.status, customerId: result.flag.customerId))
                    } catch let error as LedgerError where error.code == .noChange {
                        // Already there (someone else moved it since the queue was read): nothing is written, and
                        // the change comes back unmoved for the status line to say so.
                        // Who did, from the flag's log (its last entry), for the line to name them.
                        let by = try? await ledger.triageLog(flagId: id, customerId: nil).last?.operatorName
                        if let target = action.target { changes.append(TriageChange(flagId: id, from: target, to: target, by: by ?? nil)) }
                    } catch {
                        // A write the ledger refused (set read-only since the dashboard read it) is told from one it
                        // failed to take: the dashboard's exit says which (2 or 3).
                        let refused = (error as? LedgerError)?.code == .readOnly
                        // The flags written before the failure are kept (and undoable); the rest are said not saved.
                        if !changes.isEmpty { throw TriageInterrupted(written: changes, reason: "\(error)", refused: refused) }
                        if refused { throw TriageRefused(reason: "\(error)") }
                        throw error
                    }
                }
                return changes
            },
            // Years 1970 to 9999: an instant outside them is a typo, and would overflow the day arithmetic.
            parseInstant: { text in
                guard let instant = InstantParser.parse(text) else { return nil }
                guard (0...253_402_300_799_999).contains(instant.millisecondsSince1970) else {
                    throw CLIError.usage("\(text) is outside the years 1970 to 9999, which the dashboard shows")
                }
                return instant
            },
            loadTheme: { name in try themes.load(name) },
            writeFile: { path, contents in try writeExport(contents, to: path) },
            clock: clock)
    }
}

/// Writes an export, replacing a file there, and returns whether there was one. It is written beside its place and
/// renamed into it, so a write that fails part-way (a full disk) leaves the export that was there whole; a failure
/// says why (`cannot write /x/y.csv: No such file or directory`).
func writeExport(_ contents: String, to given: String) throws -> Bool {
    // (Typed at the dashboard's command line, where no shell expands a ~.)
    let path = expandingHome(given)
    func failed() -> CLIError { CLIError.usage("cannot write \(path): \(String(cString: strerror(errno)))") }
    var isDirectory: ObjCBool = false
    let existed = FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory)
    if existed, isDirectory.boolValue {
        throw CLIError.usage("cannot write \(path): \(String(cString: strerror(EISDIR)))")
    }
    let temporary = path + ".receiptdesk-\(getpid())"
    let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
    guard descriptor >= 0 else { throw failed() }
    var done = false
    defer {
        close(descriptor)
        if !done { unlink(temporary) }
    }
    var bytes = Array(contents.utf8)[...]
    while !bytes.isEmpty {
        let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        if written < 0 {
            if errno == EINTR { continue }
            throw failed()
        }
        bytes = bytes.dropFirst(written)
    }
    guard rename(temporary, path) == 0 else { throw failed() }
    done = true
    return existed
}

/// A ledger URL as it may be printed: a PostgreSQL URL as its parser prints it (never a password,
/// wherever the URL held it), anything else as it is.
func redact(_ url: String) -> String {
    let lowered = url.lowercased()
    guard lowered.hasPrefix("postgres://") || lowered.hasPrefix("postgresql://") else { return url }
    return PostgresDatabase.redacted(url: url)
}
