import ArgumentParser
import Foundation
import Ledger
import ReceiptModel

/// `receiptdesk note ID TEXT`: attach a note to a customer, in the append-only triage log.
struct Note: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Attach a note to a customer (found by any id).")

    @Argument(help: "Any id of the customer.")
    var id: String

    @Argument(help: "The note.")
    var text: String

    @Option(name: .customLong("operator"), help: "Who is writing (default: $USER, else the PostgreSQL role, else the login).")
    var operatorName: String?

    @OptionGroup var data: DataOptions

    func run() async throws {
        if data.source.readOnly { throw LedgerOptions.refuse("note") }
        if !data.source.files.isEmpty { throw LedgerOptions.refuseInMemory("note") }
        let now = currentTimestamp()
        try await data.withLedger(now: now) { ledger in
            guard let customer = try await ledger.customerId(matching: id) else {
                throw CLIError.notFound("no customer matches \(safe(id))")
            }
            let who = try await OperatorName.resolve(operatorName, environment: ProcessInfo.processInfo.environment, ledger: ledger)
            try await ledger.noteCustomer(customer, operatorName: who, note: text, now: now)
            print("noted on C\(customer) by \(safe(who))")
        }
    }
}
