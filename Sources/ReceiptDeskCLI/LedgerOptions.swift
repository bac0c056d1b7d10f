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

    func validate() throws {
        // Two sources: the files were read and the ledger named beside them was not even opened, with nothing said.
        if ledger != nil, !files.isEmpty {
            throw ValidationError(
                "--ledger and --files are two sources: give one (--files reads files into an in-memory ledger instead of the stored one)")
        }
    }

    /// `--read-only`, or `RECEIPTDESK_READ_ONLY` set to 1, true or yes: the stored ledger is opened for reading only.
    var readOnly: Bool { readOnlyFlag || Self.readOnlyFromEnvironment() }

    static func readOnlyFromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        ["1", "true", "yes"].contains(environment["RECEIPTDESK_READ_ONLY"]?.lowercased() ?? "")
    }

    /// The error for a write asked for while read-only: says what was refused and why, exit 2.
    static func refuse(_ write: String) -> CLIError {
        CLIError.usage("read-only: \(write) writes to the ledger and is refused (--read-only or RECEIPTDESK_READ_ONLY)")
    }

    /// The error for a write asked of the ledger `--files` builds in memory: it would be gone when the command exits,
    /// so it is refused (exit 2) rather than said to be done.
    static func refuseInMemory(_ write: String) -> CLIError {
        CLIError.usage(
            "\(write) with --files would change only the in-memory ledger built from the files, and the change would be lost "
                + "when receiptdesk exits: import them (receiptdesk import --ledger sqlite:PATH FILE...) and \(write) with --ledger sqlite:PATH")
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
        return try await Self.open(url: Self.ledgerURL(explicit: ledger), now: now, readOnly: readOnly, mustExist: true, creating: false)
    }

    /// Opens the ledger at `url`; a URL that does not parse exits 2, other failures 3. It is created (unless `creating` is false: a command that reads
    /// refuses a database with no ledger rather than give it the ledger's tables) or upgraded unless `readOnly`;
    /// with `mustExist` a SQLite path with no file is refused, so a typo never makes a new, empty one;
    /// `settingsOnly` opens an existing ledger as it is, for its stored settings alone (``SQLLedger/openForSettings(_:)``).
    static func open(
        url: String, now: Timestamp, readOnly: Bool = false, mustExist: Bool = false, settingsOnly: Bool = false, creating: Bool = true
    ) async throws -> SQLLedger {
        let database = try await connect(url: url, readOnly: readOnly, mustExist: mustExist)
        do {
            if settingsOnly { return try await SQLLedger.openForSettings(database) }
            return try await SQLLedger.open(database, now: now, readOnly: readOnly, creating: creating)
        } catch let error as LedgerError {
            try? await database.close()
            throw CLIError.ledgerUnavailable(error.message)
        } catch {
            try? await database.close()
            throw error
        }
    }

    /// The database at `url`, connected and not yet opened as a ledger (``open(url:now:readOnly:mustExist:settingsOnly:creating:)``
    /// does both); the same exit statuses.
    static func connect(url: String, readOnly: Bool = false, mustExist: Bool = false) async throws -> any SQLDatabase {
        do {
            if url.hasPrefix("postgres://") || url.hasPrefix("postgresql://") {
                do {
                    try PostgresDatabase.check(url: url)
                } catch let error as LedgerError {
                    // (The URL is --ledger's or $RECEIPTDESK_LEDGER's; the message names the part, or PGSSLMODE.)
                    throw CLIError.usage("the ledger: \(error.message)")
                }
                return try await PostgresDatabase.connect(url: url)
            } else if url.hasPrefix("sqlite:") {
                var path = String(url.dropFirst("sqlite:".count))
                if path.hasPrefix("//") { path = String(path.dropFirst(2)) }
                // No shell expands a ~ after "sqlite:": it is the home directory here, as a user means it.
                path = expandingHome(path)
                guard !path.isEmpty else { throw CLIError.usage("sqlite: needs the ledger file's path: sqlite:PATH (sqlite:ledger.sqlite)") }
                if !(readOnly || mustExist) || FileManager.default.fileExists(atPath: path) {
                    return try SQLiteDatabase.open(path: path, readOnly: readOnly)
                }
                throw LedgerError.cannotOpen(
                    "no ledger at \(path) (receiptdesk import --ledger \(url) FILE... creates one; --files FILE... reads files "
                        + "without one, and receiptdesk with no command shows the demo)")
            } else if url == "memory:" {
                return try SQLiteDatabase.open(path: nil)
            }
            // Not echoed: a mistyped URL may hold a password. A bare path holds none: said how to give it.
            let path = !url.isEmpty && !url.contains(":") && !url.contains("@") ? "; for the SQLite file \(safe(url)), give sqlite:\(safe(url))" : ""
            throw CLIError.usage(
                "the ledger (--ledger, else RECEIPTDESK_LEDGER) takes sqlite:PATH or postgres://user@host/database (the URL given is neither)\(path)")
        } catch let error as LedgerError {
            throw CLIError.ledgerUnavailable(error.message)
        }
    }
}

/// Who a triage or a note is written as, the same for the dashboard and the commands: `--operator`, `$USER`, the
/// PostgreSQL role the ledger is read as, else the login's own name (a cron job or a shell without `$USER` wrote
/// "unknown" into the log).
enum OperatorName {
    static func resolve(_ explicit: String?, environment: [String: String], role: String?) -> String {
        if let explicit, !explicit.isEmpty { return explicit }
        if let user = environment["USER"], !user.isEmpty { return user }
        if let role, !role.isEmpty { return role }
        if let entry = getpwuid(getuid()), let name = entry.pointee.pw_name, name.pointee != 0 { return String(cString: name) }
        return "unknown"
    }

    /// The same, asking the ledger for its role only when `--operator` and `$USER` say nothing.
    static func resolve(_ explicit: String?, environment: [String: String], ledger: SQLLedger) async throws -> String {
        let named = !(explicit ?? "").isEmpty || !(environment["USER"] ?? "").isEmpty
        return resolve(explicit, environment: environment, role: named ? nil : try await ledger.role()?.name)
    }
}
