import ArgumentParser
import Foundation

/// The `receiptdesk` command: the dashboard by default, and the subcommands that print data.
public struct ReceiptDesk: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "receiptdesk",
        abstract: "A terminal dashboard and toolkit for App Store purchase data.",
        discussion: """
            Without a subcommand, opens the dashboard. Exit codes: 0 success, 1 some records rejected or \
            a lookup found nothing, 2 usage error, 3 the ledger could not be opened.
            """,
        subcommands: [DashboardCommand.self, Decode.self, Import.self, Lookup.self, Refunds.self, Triage.self, Note.self, LedgerCommand.self, Bench.self, BrowseBench.self, Sample.self],
        defaultSubcommand: DashboardCommand.self
    )

    public init() {}

    /// Runs the command line with the exit codes of DESIGN section 10: usage errors exit 2, not 64.
    public static func runMain() async {
        do {
            var command = try parseAsRoot()
            // Parsed values are copies: the password of a postgres:// URL leaves the process list now,
            // before the command connects or reads anything.
            ArgvScrub.scrubProcessArguments()
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            let status = ExitStatus.of(error)
            if var message = status.message {
                if let hint = negativeValueHint(message, arguments: CommandLine.arguments) { message += "\n" + hint }
                if status.toStandardOutput { print(message) } else { FileHandle.standardError.write(Data((message + "\n").utf8)) }
            }
            Foundation.exit(status.code)
        }
    }
}
