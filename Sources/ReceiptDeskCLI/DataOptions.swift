import ArgumentParser
import Entitlements
import Foundation
import Ledger
import LedgerQueries
import ReceiptDecoding
import ReceiptModel

/// The options every command that reads the ledger shares: where the data is, how to check it,
/// and the operator's catalog, rules and customer mapping.
struct DataOptions: ParsableArguments {
    @OptionGroup var source: LedgerOptions
    @OptionGroup var verification: VerificationOptions

    @Option(help: ArgumentHelp("Product catalog: product_id,entitlement[,type,duration_days,price_tier] lines.", valueName: "FILE"))
    var catalog: String?

    @Option(help: ArgumentHelp("Refund rule parameters: RULE.PARAMETER = VALUE lines.", valueName: "FILE"))
    var rules: String?

    @Option(
        help: ArgumentHelp(
            "Operator mapping of accounts for --files: customer_id,kind,value lines (customers.csv); a stored ledger takes it from import --customers.",
            valueName: "FILE"))
    var customers: String?

    /// Opens the ledger (for reading only under `--read-only`); with `--files`, builds it and applies the
    /// customer mapping. Reads never write: a stored ledger is linked by `import --customers`.
    /// `readsRules`: whether the command reads `--rules` with a stored ledger (refunds does), else it is said to change nothing.
    func open(now: Timestamp, readsRules: Bool = false) async throws -> SQLLedger {
        try sayWhatAStoredLedgerIgnores(readsRules: readsRules)
        let ledger = try await source.open(verification: verification, rules: try loadRules(), now: now)
        if let customers { try await Self.linkCustomers(customers, into: ledger, now: now) }
        return ledger
    }

    /// With a stored ledger (no `--files`): `--customers` is a usage error (linking is a write), and the options that
    /// decide how `--files` are decoded, and `--rules` where the command does not read them (`readsRules` false), are
    /// said on standard error to change nothing. Taken for filters, they were ignored without a word: `refunds
    /// --environment sandbox` listed production's flags.
    func sayWhatAStoredLedgerIgnores(readsRules: Bool) throws {
        guard source.files.isEmpty else { return }
        if let customers {
            throw CLIError.usage("--customers links accounts into the ledger, which is a write, and reads never write: run receiptdesk import --customers \(customers)")
        }
        let given = verification.given
        if !given.isEmpty {
            let names = given.count == 1 ? given[0] : given.dropLast().joined(separator: ", ") + " and " + given[given.count - 1]
            FileHandle.standardError.write(
                Data(
                    ("receiptdesk: \(names) \(given.count == 1 ? "decides" : "decide") how --files are decoded; the stored ledger's records "
                        + "were checked when they were imported, so \(given.count == 1 ? "it changes" : "they change") nothing here\n").utf8))
        }
        if !readsRules, rules != nil {
            FileHandle.standardError.write(
                Data(
                    ("receiptdesk: --rules decides the flags an import raises (import --rules, refunds --rules); the flags "
                        + "shown here are the ones the stored ledger holds, so it changes nothing here\n").utf8))
        }
    }

    /// Links an operator mapping file (`customer_id,kind,value` lines, a header line allowed); a line that is
    /// not one is an error naming it.
    static func linkCustomers(_ path: String, into ledger: SQLLedger, now: Timestamp) async throws {
        try await link(try customerMapping(path), into: ledger, now: now)
    }

    /// Links each entry; returns those whose identifier no record in the ledger carried (nor an earlier mapping named).
    @discardableResult
    static func link(_ mapping: [(account: String, kind: IdentifierKind, value: String)], into ledger: SQLLedger, now: Timestamp) async throws
        -> [(account: String, kind: IdentifierKind, value: String)]
    {
        var unheld: [(account: String, kind: IdentifierKind, value: String)] = []
        for entry in mapping where try await !ledger.linkExternal(entry.account, kind: entry.kind, value: entry.value, now: now) {
            unheld.append(entry)
        }
        return unheld
    }

    /// The rows of an operator mapping file (`customer_id,kind,value`; a first row whose first field is
    /// `customer_id` is the header), all checked before any is linked.
    static func customerMapping(_ path: String) throws -> [(account: String, kind: IdentifierKind, value: String)] {
        var mapping: [(account: String, kind: IdentifierKind, value: String)] = []
        let rows: [CSVRow]
        do {
            rows = try CSVRows.parse(try readBytes(path, option: "--customers"))
        } catch let error as CSVRowsError {
            throw CLIError.usage(safe("\(path) \(error)"))
        }
        for (position, row) in rows.enumerated() {
            let fields = row.fields
            if position == 0 && fields.first == "customer_id" { continue }
            guard fields.count == 3, let kind = IdentifierKind(rawValue: fields[1]), kind != .external, !fields[0].isEmpty,
                !fields[2].isEmpty
            else {
                throw CLIError.usage("\(path) line \(row.line): expected customer_id,originalTransactionId|appAccountToken,value")
            }
            mapping.append((fields[0], kind, fields[2]))
        }
        return mapping
    }

    /// Opens the ledger, runs `body`, and closes the ledger whatever happens.
    func withLedger<T>(now: Timestamp, readsRules: Bool = false, _ body: (SQLLedger) async throws -> T) async throws -> T {
        let ledger = try await open(now: now, readsRules: readsRules)
        do {
            let result = try await body(ledger)
            try await ledger.close()
            return result
        } catch {
            try? await ledger.close()
            throw error
        }
    }

    func loadCatalog() throws -> Catalog {
        guard let catalog else { return Catalog() }
        do {
            return try Catalog.parse(csv: try Self.readBytes(catalog, option: "--catalog"))
        } catch let error as CatalogError {
            throw CLIError.usage(safe("\(catalog) \(error)"))
        }
    }

    func loadRules() throws -> FlagRules { try Self.loadRules(rules) }

    /// The refund rules from a rules file, or the defaults.
    static func loadRules(_ path: String?) throws -> FlagRules {
        guard let path else { return FlagRules() }
        do {
            return try FlagRules.parse(try read(path, option: "--rules"))
        } catch let error as CatalogError {
            throw CLIError.usage(safe("\(path) \(error)"))
        }
    }

    /// The bytes of the file an option names; else an error naming the option, the path and why ("--catalog: no such
    /// file: x.csv"; it said "cannot read x.csv", and "cannot read " for an empty path).
    static func readBytes(_ path: String, option: String) throws -> [UInt8] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw CLIError.usage(path.isEmpty ? "\(option) needs a file's path" : "\(option): no such file: \(safe(path))")
        }
        guard !isDirectory.boolValue else { throw CLIError.usage("\(option): \(safe(path)) is a directory; name a file") }
        guard let data = FileManager.default.contents(atPath: path) else { throw CLIError.usage("\(option): cannot read \(safe(path))") }
        return [UInt8](data)
    }

    static func read(_ path: String, option: String) throws -> String {
        String(decoding: try readBytes(path, option: option), as: UTF8.self)
    }
}
