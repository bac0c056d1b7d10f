import ArgumentParser
import Entitlements
import Foundation
import Ledger
import LedgerQueries
import ReceiptDecoding
import ReceiptModel

/// `receiptdesk triage FLAG_ID`: acknowledge, resolve or reopen a flag, appending to the triage log.
struct Triage: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Acknowledge, resolve or reopen a refund flag.")

    @Argument(help: "The flag's id, as refunds prints it.")
    var flagId: String

    @Flag(name: .customLong("ack"), help: "Acknowledge an open flag: someone is looking (reopen a resolved one first).")
    var acknowledge = false

    @Flag(help: "Resolve it (say why with --note).")
    var resolve = false

    @Flag(help: "Reopen it.")
    var reopen = false

    @Option(help: "A note for the triage log.")
    var note: String?

    @Option(name: .customLong("operator"), help: "Who is acting (default: $USER, else the PostgreSQL role, else the login).")
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
        if !data.source.files.isEmpty { throw LedgerOptions.refuseInMemory("triage") }
        let now = currentTimestamp()
        try await data.withLedger(now: now) { ledger in try await run(ledger, now: now) }
    }

    private func run(_ ledger: SQLLedger, now: Timestamp) async throws {
        let action: TriageAction = acknowledge ? .ack : resolve ? .resolve : .reopen
        let who = try await OperatorName.resolve(operatorName, environment: ProcessInfo.processInfo.environment, ledger: ledger)
        // A flag that is not there exits 1, one already in that status 2 (ExitStatus).
        let flag = try await ledger.triage(flagId: flagId, action: action, operatorName: who, note: note, now: now)
        if json {
            var w = JSONWriter()
            w.flag(flag, full: true)
            w.newline()
            Output().write(w.bytes)
        } else {
            print("\(safe(flag.id)): \(flag.status.rawValue) by \(safe(who))")
        }
    }
}
