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
    func open(now: Timestamp) async throws -> SQLLedger {
        if let customers, source.files.isEmpty {
            throw CLIError.usage("--customers links accounts into the ledger, which is a write, and reads never write: run receiptdesk import --customers \(customers)")
        }
        let given = verification.given
        if source.files.isEmpty, !given.isEmpty {
            // (Taken for filters, they were ignored without a word: `refunds --environment sandbox` listed production's.)
            let names = given.count == 1 ? given[0] : given.dropLast().joined(separator: ", ") + " and " + given[given.count - 1]
            FileHandle.standardError.write(
                Data(
                    ("receiptdesk: \(names) \(given.count == 1 ? "decides" : "decide") how --files are decoded; the stored ledger's records "
                        + "were checked when they were imported, so \(given.count == 1 ? "it changes" : "they change") nothing here\n").utf8))
        }
        let ledger = try await source.open(verification: verification, rules: try loadRules(), now: now)
        if let customers { try await Self.linkCustomers(customers, into: ledger, now: now) }
        return ledger
    }

    /// Links an operator mapping file (`customer_id,kind,value` lines, a header line allowed); a line that is
    /// not one is an error naming it.
    static func linkCustomers(_ path: String, into ledger: SQLLedger, now: Timestamp) async throws {
        try await link(try customerMapping(path), into: ledger, now: now)
    }

    static func link(_ mapping: [(account: String, kind: IdentifierKind, value: String)], into ledger: SQLLedger, now: Timestamp) async throws {
        for entry in mapping { try await ledger.linkExternal(entry.account, kind: entry.kind, value: entry.value, now: now) }
    }

    /// The rows of an operator mapping file (`customer_id,kind,value`; a first row whose first field is
    /// `customer_id` is the header), all checked before any is linked.
    static func customerMapping(_ path: String) throws -> [(account: String, kind: IdentifierKind, value: String)] {
        var mapping: [(account: String, kind: IdentifierKind, value: String)] = []
        let rows: [CSVRow]
        do {
            rows = try CSVRows.parse(try readBytes(path))
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
    func withLedger<T>(now: Timestamp, _ body: (SQLLedger) async throws -> T) async throws -> T {
        let ledger = try await open(now: now)
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
            return try Catalog.parse(csv: try Self.readBytes(catalog))
        } catch let error as CatalogError {
            throw CLIError.usage(safe("\(catalog) \(error)"))
        }
    }

    func loadRules() throws -> FlagRules { try Self.loadRules(rules) }

    /// The refund rules from a rules file, or the defaults.
    static func loadRules(_ path: String?) throws -> FlagRules {
        guard let path else { return FlagRules() }
        do {
            return try FlagRules.parse(try read(path))
        } catch let error as CatalogError {
            throw CLIError.usage(safe("\(path) \(error)"))
        }
    }

    private func read(_ path: String) throws -> String { try Self.read(path) }

    static func readBytes(_ path: String) throws -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CLIError.usage("cannot read \(path)")
        }
        return [UInt8](data)
    }

    static func read(_ path: String) throws -> String {
        String(decoding: try readBytes(path), as: UTF8.self)
    }
}
