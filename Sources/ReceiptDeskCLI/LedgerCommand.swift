import ArgumentParser
import Foundation
import Ledger

/// `receiptdesk ledger ...`: settings of the ledger itself.
struct LedgerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ledger",
        abstract: "Settings of the ledger itself, and who may do what to a PostgreSQL one.",
        subcommands: [ReadOnlySetting.self, GrantRole.self]
    )
}

/// `receiptdesk ledger read-only [on|off]`: the setting stored in the ledger that refuses every write.
struct ReadOnlySetting: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "read-only",
        abstract: "Show, or set, the ledger's stored read-only setting.",
        discussion: """
            With the setting on, every write through any receiptdesk (import, triage, notes, refunds --refresh, \
            account links) is refused with exit 2 and the dashboard hides its triage keys, whatever the process's \
            own options. Turning it off is the one write it allows; it also brings a ledger written by an older \
            receiptdesk up to this one's schema, as any command that writes would.
            """
    )

    enum Value: String, ExpressibleByArgument, CaseIterable {
        case on, off
    }

    @Argument(help: "on or off; without it, prints the setting.")
    var value: Value?

    @OptionGroup var source: LedgerOptions

    func validate() throws {
        if !source.files.isEmpty { throw ValidationError("ledger read-only is a setting of a stored ledger, not of --files") }
    }

    func run() async throws {
        let url = LedgerOptions.ledgerURL(explicit: source.ledger)
        if value != nil && source.readOnly { throw LedgerOptions.refuse("ledger read-only") }
        // As the ledger is, not upgraded: a ledger set read-only refuses its upgrade until the setting is off.
        let opened = try await LedgerOptions.open(
            url: url, now: currentTimestamp(), readOnly: value == nil, mustExist: true, settingsOnly: true)
        do {
            // Lifted, the upgrade the setting held back is done in the same transaction, as any command that writes
            // would do it, so that the ledger opens --read-only again (a read-only open refuses an older schema).
            if let value { try await opened.setReadOnly(value == .on, upgradingAt: value == .off ? currentTimestamp() : nil) }
            let on = try await opened.isSetReadOnly()
            print("\(redact(url)): read-only \(on ? "on" : "off")")
            try await opened.close()
        } catch {
            try? await opened.close()
            throw error
        }
    }
}
