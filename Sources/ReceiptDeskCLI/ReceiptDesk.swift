import ArgumentParser
import Foundation

/// The `receiptdesk` command: the dashboard by default, and the subcommands that print data.
public struct ReceiptDesk: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "receiptdesk",
        abstract: "A terminal dashboard and toolkit for App Store purchase data.",
        discussion: """
            Without a subcommand, opens the dashboard. Exit codes: 0 success, 1 some records rejected or \
            a lookup found nothing, 2 usage error (a refused write, output that cannot be written), 3 the ledger \
            could not be opened or failed under the command.
            """,
        subcommands: [DashboardCommand.self, Decode.self, Import.self, Lookup.self, Refunds.self, Triage.self, Note.self, LedgerCommand.self, Bench.self, BrowseBench.self, Sample.self],
        defaultSubcommand: DashboardCommand.self
    )

    public init() {}

    /// Runs the command line with the exit codes of DESIGN section 10: usage errors exit 2, not 64.
    public static func runMain() async {
        if let message = unknownCommand(Array(CommandLine.arguments.dropFirst())) {
            FileHandle.standardError.write(Data((message + "\n").utf8))
            Foundation.exit(ExitStatus.usage)
        }
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

extension ReceiptDesk {
    /// What to say of a first argument that is neither an option nor a command (`receiptdesk lokup 5000`), or nil.
    /// The dashboard, run when no command is given, would take it and answer "2 unexpected arguments ... Usage:
    /// receiptdesk dashboard", as if the dashboard had been asked for.
    static func unknownCommand(_ arguments: [String]) -> String? {
        guard let first = arguments.first, !first.hasPrefix("-") else { return nil }
        // `help COMMAND`: the command asked about is judged as one typed first (`help lokup` printed the whole help).
        if first == "help", arguments.count > 1 { return unknownCommand(Array(arguments.dropFirst())) }
        let commands = configuration.subcommands.filter { $0.configuration.shouldDisplay }.map { $0._commandName }
        let names = configuration.subcommands.flatMap { [$0._commandName] + $0.configuration.aliases } + ["help"]
        guard !names.contains(first) else { return nil }
        let shown = safe(first)
        var message = "receiptdesk: no command is named '\(shown)'"
        let typed = first.lowercased()
        // Commands it begins (`imp`), then those a slip or two away from it (`lokup`, `refund`).
        let begun = typed.count >= 2 ? commands.filter { $0.hasPrefix(typed) } : []
        let near = commands.filter { !begun.contains($0) && editDistance($0, typed) <= max(1, $0.count / 3) }
        if !(begun + near).isEmpty {
            message += "; did you mean \((begun + near).joined(separator: " or "))?"
        } else {
            // (An id pasted after the program's name: what the person wanted is most likely its customer.)
            let plain = first.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "._:@+-".contains($0)) }
            let argument = plain ? first : "'" + shown.replacing("'", with: #"'\''"#) + "'"
            message += "; to find the customer an id belongs to: receiptdesk lookup \(argument)"
        }
        return message + "\nCommands: \(commands.joined(separator: ", ")) (receiptdesk --help says what each does)."
    }

    /// The number of single-character insertions, deletions and substitutions that make `a` into `b`.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        guard !a.isEmpty, !b.isEmpty else { return max(a.count, b.count) }
        // One row of the table at a time: row[j] is the distance from a's first i characters to b's first j.
        var row = Array(0...b.count)
        for i in 1...a.count {
            var diagonal = row[0]
            row[0] = i
            for j in 1...b.count {
                let above = row[j]
                row[j] = a[i - 1] == b[j - 1] ? diagonal : 1 + min(diagonal, above, row[j - 1])
                diagonal = above
            }
        }
        return row[b.count]
    }
}
