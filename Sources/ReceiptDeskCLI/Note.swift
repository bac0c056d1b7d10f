import ArgumentParser
import Foundation
import Ledger
import ReceiptModel

/// `receiptdesk note ID TEXT`: attach a note to a customer, in the append-only triage log.
struct Note: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Attach a note to a customer (found by any id).")

    @Argument(help: ArgumentHelp("Any id of the customer.", valueName: "id"))
    var given: String?

    @Argument(help: ArgumentHelp("The note.", valueName: "text"))
    var givenText: String?

    /// The note as `triage --resolve --note TEXT` takes one: the same as the second argument.
    @Option(name: .customLong("note"), help: ArgumentHelp("The note (instead of the second argument, as triage takes it).", valueName: "text"))
    var noteOption: String?

    private var id: String { given ?? "" }
    private var text: String { givenText ?? "" }

    mutating func validate() throws {
        // `--files` takes every word after it (`note --files DIR C1 "text"`): the last two "paths" that are no files
        // are the id and the note (and the note is then refused as a write to an in-memory ledger).
        if given == nil, data.source.files.count > 2, !data.source.files.suffix(2).contains(where: { FileManager.default.fileExists(atPath: $0) }) {
            givenText = data.source.files.removeLast()
            given = data.source.files.removeLast()
        }
        if let noteOption {
            guard givenText == nil else { throw ValidationError("the note is given twice (TEXT and --note): give one") }
            givenText = noteOption
        }
        guard given != nil, let givenText else {
            throw ValidationError("give the customer's id and the note: receiptdesk note ID \"TEXT\"")
        }
        // (The log is append-only: an empty note could never be taken back.)
        if givenText.allSatisfy(\.isWhitespace) { throw ValidationError("the note is empty: receiptdesk note ID \"TEXT\"") }
    }

    @Option(name: .customLong("operator"), help: "Who is writing (default: $USER, else the PostgreSQL role, else the login).")
    var operatorName: String?

    @OptionGroup var data: DataOptions

    func run() async throws {
        if data.source.readOnly { throw LedgerOptions.refuse("note") }
        if !data.source.files.isEmpty { throw LedgerOptions.refuseInMemory("note") }
        let now = currentTimestamp()
        try await data.withLedger(now: now) { ledger in
            try await ledger.refuseUnlessRoleMay(.noting)
            // (Found as `lookup` finds it: the id the customer gave, pasted with what came around it.)
            let customer = try await Lookup.customer(pasted: id, in: ledger, single: true).customer
            let who = try await OperatorName.resolve(operatorName, environment: ProcessInfo.processInfo.environment, ledger: ledger)
            try await ledger.noteCustomer(customer, operatorName: who, note: text, now: now)
            print("noted on C\(customer) by \(safe(who))")
        }
    }
}
