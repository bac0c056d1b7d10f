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

    @Option(help: ArgumentHelp("Operator mapping of accounts: customer_id,kind,value lines (customers.csv).", valueName: "FILE"))
    var customers: String?

    /// Opens the ledger and applies the customer mapping.
    func open(now: Timestamp) async throws -> SQLLedger {
        let ledger = try await source.open(verification: verification, rules: try loadRules(), now: now)
        if let customers {
            for (line, entry) in try read(customers).split(separator: "\n").enumerated() {
                let fields = entry.split(separator: ",", omittingEmptySubsequences: false).map {
                    $0.trimmingCharacters(in: .whitespaces)
                }
                if fields.first == "customer_id" || entry.trimmingCharacters(in: .whitespaces).isEmpty { continue }
                guard fields.count == 3, ["originalTransactionId", "appAccountToken"].contains(fields[1]), !fields[2].isEmpty else {
                    throw CLIError(
                        message: "\(customers) line \(line + 1): expected customer_id,originalTransactionId|appAccountToken,value",
                        code: 2)
                }
                try await ledger.linkExternal(fields[0], kind: fields[1], value: fields[2], now: now)
            }
        }
        return ledger
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

    private static func read(_ path: String) throws -> String {
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
