import ArgumentParser
import Entitlements
import Foundation
import Ledger
import ReceiptDecoding
import ReceiptModel

/// `receiptdesk refunds`: the flag queue.
struct Refunds: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List refund flags: the on-call queue.",
        discussion: "Rules: \(FlagRules.ruleIds.joined(separator: ", ")). Statuses: open, acknowledged, resolved."
    )

    @Option(help: ArgumentHelp("Only flags from this recent: 24h, 7d, 30m, or an ISO 8601 instant.", valueName: "DUR"))
    var since: String?

    @Option(help: ArgumentHelp("Only this rule.", valueName: "ID"))
    var rule: String?

    @Option(help: ArgumentHelp("Only this status: open, acknowledged or resolved.", valueName: "S"))
    var status: String?

    @Option(help: "At most this many flags.")
    var limit = 1000

    @Flag(help: "One JSON object per flag.")
    var json = false

    @Flag(help: "CSV with a header line.")
    var csv = false

    @Flag(help: "Run the refund rules again and store what they find first (a write; import and triage already do).")
    var refresh = false

    @OptionGroup var data: DataOptions

    func validate() throws {
        if let rule, !FlagRules.ruleIds.contains(rule) {
            throw ValidationError("--rule takes one of \(FlagRules.ruleIds.joined(separator: ", "))")
        }
        if let status, !["open", "acknowledged", "resolved"].contains(status) {
            throw ValidationError("--status takes open, acknowledged or resolved")
        }
        if json && csv { throw ValidationError("choose --json or --csv, not both") }
        if let since, Self.duration(since) == nil && InstantParser.parse(since) == nil {
            throw ValidationError("--since takes a duration (24h, 7d, 30m) or an ISO 8601 instant")
        }
    }

    static func duration(_ text: String) -> Int64? {
        guard let unit = text.last, let value = Int64(text.dropLast()) else { return nil }
        switch unit {
        case "m": return value * 60_000
        case "h": return value * 3_600_000
        case "d": return value * 86_400_000
        case "w": return value * 7 * 86_400_000
        default: return nil
        }
    }

    func run() async throws {
        if refresh && data.source.readOnly { throw LedgerOptions.refuse("refunds --refresh") }
        let now = currentTimestamp()
        try await data.withLedger(now: now) { ledger in try await run(ledger, now: now) }
    }

    private func run(_ ledger: SQLLedger, now: Timestamp) async throws {
        let rules = try data.loadRules()
        let outcomes =
            refresh
            ? try await ledger.refreshFlags(rules: rules, now: now).outcomes : try await ledger.refundOutcomes(rules: rules, now: now)
        let from = since.map { text in
            Self.duration(text).map { now.adding(milliseconds: -$0) } ?? InstantParser.parse(text)!
        }
        let flags = try await ledger.flags(FlagQuery(status: status, rule: rule, since: from, limit: limit))
        let output = Output()
        if json {
            var w = JSONWriter()
            for flag in flags {
                w.reset()
                w.flag(flag, full: true)
                w.newline()
                output.write(w.bytes)
            }
        } else if csv {
            output.line("id,rule,severity,status,customer_id,transaction_id,product_id,amount,currency,at,detail")
            for f in flags {
                let fields = [
                    f.id, f.rule, f.severity.rawValue, f.status, f.customerId.map { "C\($0)" } ?? "", f.transactionId ?? "", f.productId ?? "",
                    f.amount.map(String.init) ?? "", f.currency ?? "", f.at.iso8601, f.detail,
                ]
                output.line(fields.map(csvField).joined(separator: ","))
            }
        } else {
            output.line("refunds: \(outcomes.refunded) refunded, \(outcomes.declined) declined, \(outcomes.reversed) reversed, \(outcomes.pendingConsumptionRequests) consumption requests awaiting data")
            if flags.isEmpty { output.line("no flags") }
            for f in flags {
                output.line("\(f.at.iso8601)  \(f.severity.rawValue.padding(toLength: 8, withPad: " ", startingAt: 0)) \(f.status.padding(toLength: 12, withPad: " ", startingAt: 0)) \(safe(f.id))")
                output.line("    \(safe(f.detail))\(f.customerId.map { "  customer C\($0)" } ?? "")")
            }
        }
        output.flush()
    }
}

/// A CSV field, quoted when needed; cells that a spreadsheet would run as formulas are neutralised.
func csvField(_ text: String) -> String {
    var value = text
    if let first = value.first, "=+-@".contains(first) { value = "'" + value }
    if value.contains(",") || value.contains("\"") || value.contains("\n") {
        return "\"" + value.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
    return value
}

/// `receiptdesk triage FLAG_ID`: acknowledge, resolve or reopen a flag, appending to the triage log.
struct Triage: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Acknowledge, resolve or reopen a refund flag.")

    @Argument(help: "The flag's id, as refunds prints it.")
    var flagId: String

    @Flag(name: .customLong("ack"), help: "Acknowledge: someone is looking.")
    var acknowledge = false

    @Flag(help: "Resolve it (say why with --note).")
    var resolve = false

    @Flag(help: "Reopen it.")
    var reopen = false

    @Option(help: "A note for the triage log.")
    var note: String?

    @Option(name: .customLong("operator"), help: "Who is acting (default: $USER).")
    var operatorName: String?

    @Flag(help: "Print the flag as JSON.")
    var json = false

    @OptionGroup var data: DataOptions

    func validate() throws {
        if [acknowledge, resolve, reopen].filter({ $0 }).count != 1 {
            throw ValidationError("choose exactly one of --ack, --resolve, --reopen")
        }
    }

    func run() async throws {
        if data.source.readOnly { throw LedgerOptions.refuse("triage") }
        let now = currentTimestamp()
        try await data.withLedger(now: now) { ledger in try await run(ledger, now: now) }
    }

    private func run(_ ledger: SQLLedger, now: Timestamp) async throws {
        let action = acknowledge ? "ack" : resolve ? "resolve" : "reopen"
        let who = operatorName ?? ProcessInfo.processInfo.environment["USER"] ?? "unknown"
        do {
            let flag = try await ledger.triage(flagId: flagId, action: action, operatorName: who, note: note, now: now)
            if json {
                var w = JSONWriter()
                w.flag(flag, full: true)
                w.newline()
                Output().write(w.bytes)
            } else {
                print("\(safe(flag.id)): \(flag.status) by \(safe(who))")
            }
        } catch let error as LedgerError {
            throw CLIError(message: error.message, code: error.code == "notFound" ? 1 : 2)
        }
    }
}

/// `receiptdesk note ID TEXT`: attach a note to a customer, in the append-only triage log.
struct Note: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Attach a note to a customer (found by any id).")

    @Argument(help: "Any id of the customer.")
    var id: String

    @Argument(help: "The note.")
    var text: String

    @Option(name: .customLong("operator"), help: "Who is writing (default: $USER).")
    var operatorName: String?

    @OptionGroup var data: DataOptions

    func run() async throws {
        if data.source.readOnly { throw LedgerOptions.refuse("note") }
        let now = currentTimestamp()
        try await data.withLedger(now: now) { ledger in
            guard let customer = try await ledger.customerId(matching: id) else {
                throw CLIError(message: "no customer matches \(safe(id))", code: 1)
            }
            let who = operatorName ?? ProcessInfo.processInfo.environment["USER"] ?? "unknown"
            try await ledger.noteCustomer(customer, operatorName: who, note: text, now: now)
            print("noted on C\(customer) by \(safe(who))")
        }
    }
}
