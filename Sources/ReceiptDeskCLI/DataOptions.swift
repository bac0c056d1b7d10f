import ArgumentParser
import Entitlements
import Foundation
import Ledger
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
            throw CLIError(
                message: "--customers links accounts into the ledger, which is a write, and reads never write: run receiptdesk import --customers \(customers)",
                code: 2)
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

    static func link(_ mapping: [(account: String, kind: String, value: String)], into ledger: SQLLedger, now: Timestamp) async throws {
        for entry in mapping { try await ledger.linkExternal(entry.account, kind: entry.kind, value: entry.value, now: now) }
    }

    /// The lines of an operator mapping file, all checked before any is linked.
    static func customerMapping(_ path: String) throws -> [(account: String, kind: String, value: String)] {
        var mapping: [(account: String, kind: String, value: String)] = []
        for (line, entry) in try read(path).split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let fields = entry.split(separator: ",", omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: .whitespacesAndNewlines)
            }
            if (line == 0 && fields.first == "customer_id") || entry.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty { continue }
            guard fields.count == 3, ["originalTransactionId", "appAccountToken"].contains(fields[1]), !fields[0].isEmpty, !fields[2].isEmpty
            else {
                throw CLIError(
                    message: "\(path) line \(line + 1): expected customer_id,originalTransactionId|appAccountToken,value", code: 2)
            }
            mapping.append((fields[0], fields[1], fields[2]))
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
            return try Catalog.parse(csv: try read(catalog))
        } catch let error as CatalogError {
            throw CLIError(message: "\(catalog) \(error)", code: 2)
        }
    }

    func loadRules() throws -> FlagRules { try Self.loadRules(rules) }

    /// The refund rules from a rules file, or the defaults.
    static func loadRules(_ path: String?) throws -> FlagRules {
        guard let path else { return FlagRules() }
        do {
            return try FlagRules.parse(try read(path))
        } catch let error as CatalogError {
            throw CLIError(message: "\(path) \(error)", code: 2)
        }
    }

    private func read(_ path: String) throws -> String { try Self.read(path) }

    static func read(_ path: String) throws -> String {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CLIError(message: "cannot read \(path)", code: 2)
        }
        return String(decoding: data, as: UTF8.self)
    }
}

/// Parses `--at`: ISO 8601 or milliseconds.
func parseInstant(_ text: String, option: String) throws -> Timestamp {
    guard let instant = InstantParser.parse(text) else {
        throw ValidationError("\(option) takes ISO 8601 (2025-03-01, 2025-03-01T12:00:00Z) or milliseconds, not \(text)")
    }
    return instant
}
