import ArgumentParser
import CursesBackend
import Foundation
import Ledger
import Testing

@testable import ReceiptDeskCLI

@Suite("one function maps every error to its message and exit code (DESIGN section 10)", .ownThreads)
struct ExitStatusTests {
    @Test("each failure's exit code")
    func codes() {
        let cases: [(any Error, Int32)] = [
            (CLIError.rejected(), 1), (CLIError.notFound("no customer matches x"), 1),
            (CLIError.usage("--ledger takes ..."), 2), (CLIError.ledgerUnavailable("no ledger at x"), 3),
            (LedgerError(code: .notFound, message: "no flag with id f"), 1), (LedgerError(code: .noChange, message: "already"), 2),
            (LedgerError(code: .readOnly, message: "read-only"), 2), (LedgerError(code: .usage, message: "bad action"), 2),
            (LedgerError.cannotOpen("refused"), 3), (LedgerError(code: .postgres, message: "server closed the connection"), 3),
            (LedgerError(code: .badRow, message: "flags.status holds \"x\""), 3), (TerminalError(message: "no terminal"), 2),
            (ValidationError("--rule takes one of ..."), 2), (ExitCode(1), 1),
            (CocoaError(.fileWriteNoPermission), 2),
        ]
        for (error, expected) in cases {
            #expect(ExitStatus.of(error).code == expected, "\(error)")
        }
    }

    @Test("messages: prefixed for the operator, none when everything was already said, help to standard output")
    func messages() throws {
        #expect(ExitStatus.of(CLIError.rejected()).message == nil)
        #expect(ExitStatus.of(CLIError.notFound("no customer matches 42")).message == "receiptdesk: no customer matches 42")
        #expect(ExitStatus.of(LedgerError(code: .notFound, message: "no flag with id f")).message == "receiptdesk: no flag with id f")
        // Data in a message (a role name from the catalog, a server's text) reaches the terminal escaped; lines stay.
        #expect(
            ExitStatus.of(LedgerError(code: .permissionDenied, message: "role \"ev\u{1B}[2Jil\" has no rights\nask its owner")).message
                == "receiptdesk: role \"ev\\e[2Jil\" has no rights\nask its owner")
        #expect(ExitStatus.of(CLIError.usage("bad \u{202E}id")).message == "receiptdesk: bad \\u{202e}id")
        let help = ExitStatus.of(CleanExit.helpRequest())
        #expect(help.code == 0)
        #expect(help.toStandardOutput)
        #expect(help.message?.contains("USAGE") == true)
        // An unknown option: swift-argument-parser's message, exit 2 (not its 64).
        do {
            _ = try ReceiptDesk.parseAsRoot(["refunds", "--status", "pending"])
            Issue.record("parsed")
        } catch {
            let status = ExitStatus.of(error)
            #expect(status.code == 2)
            #expect(status.message?.contains("'pending' is invalid") == true && status.message?.contains("'acknowledged'") == true, "\(status.message ?? "")")
        }
    }

    @Test("input at the ends of Int64 is refused with exit 2, never a trap; a mistyped URL is not echoed")
    func hostileArguments() throws {
        for arguments in [
            ["refunds", "--since", "200000000000000d", "--files", "/dev/null"], ["refunds", "--since", "-5d", "--files", "/dev/null"],
            ["refunds", "--limit", "9223372036854775807", "--files", "/dev/null"],
            ["sample", "--out", "/tmp/never", "--from", "9223372036854775000", "--to=-9223372036854775000"],
        ] {
            let result = try Binary.run(arguments)
            #expect(result.status == 2, "\(arguments): \(result.status) \(result.stderr)")
        }
        let typo = try Binary.run(["lookup", "1", "--ledger", "postgress://admin:hunter2@db.example.com/ledger"])
        #expect(typo.status == 2)
        #expect(!typo.stderr.contains("hunter2") && !typo.stdout.contains("hunter2"), "\(typo.stderr)")
    }

    @Test("a first argument that is no command is said so, with the command meant (exit 2); it never reads as the dashboard's")
    func unknownCommand() throws {
        let mistyped = try Binary.run(["lokup", "5000"])
        #expect(mistyped.status == 2)
        #expect(mistyped.stdout.isEmpty)
        #expect(mistyped.stderr.hasPrefix("receiptdesk: no command is named 'lokup'; did you mean lookup?\nCommands: dashboard, decode,"))
        #expect(!mistyped.stderr.contains("dashboard <options>"), "the dashboard's usage, as before")
        #expect(!mistyped.stderr.contains("browse-bench"), "a hidden command is not listed")
        func said(_ arguments: String...) -> String? { ReceiptDesk.unknownCommand(arguments) }
        #expect(said("imp", "a.json")?.contains("did you mean import?") == true)
        #expect(said("refund")?.contains("did you mean refunds?") == true)
        #expect(said("help", "lokup")?.hasPrefix("receiptdesk: no command is named 'lokup'; did you mean lookup?") == true)
        #expect(said("Lookup", "5000")?.contains("did you mean lookup?") == true)
        // An id typed where the command goes: lookup is offered with it, quoted for a shell when it needs it.
        #expect(said("1000000123456789")?.contains("to find the customer an id belongs to: receiptdesk lookup 1000000123456789") == true)
        #expect(said("#5002, it says")?.contains("receiptdesk lookup '#5002, it says'") == true)
        // Control characters in it are shown escaped.
        #expect(said("x\u{1B}[2J")?.contains("\u{1B}") == false)
        // Commands, their aliases, help and options go to the parser as before.
        for arguments in [["lookup", "5000"], ["help", "lookup"], ["--ledger", "sqlite:x"], [], ["ledger", "grant"]] {
            #expect(ReceiptDesk.unknownCommand(arguments) == nil, "\(arguments)")
        }
        #expect(ReceiptDesk.editDistance("lokup", "lookup") == 1)
        #expect(ReceiptDesk.editDistance("", "abc") == 3)
        #expect(ReceiptDesk.editDistance("kitten", "sitting") == 3)
    }
}
