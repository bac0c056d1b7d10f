import ArgumentParser
import CursesBackend
import Ledger
import Testing

@testable import ReceiptDeskCLI

@Suite("one function maps every error to its message and exit code (DESIGN section 10)")
struct ExitStatusTests {
    @Test("each failure's exit code")
    func codes() {
        let cases: [(any Error, Int32)] = [
            (CLIError.rejected(), 1), (CLIError.notFound("no customer matches x"), 1),
            (CLIError.usage("--ledger takes ..."), 2), (CLIError.ledgerUnavailable("no ledger at x"), 3),
            (LedgerError(code: "notFound", message: "no flag with id f"), 1), (LedgerError(code: "noChange", message: "already"), 2),
            (LedgerError(code: "readOnly", message: "read-only"), 2), (LedgerError(code: "usage", message: "bad action"), 2),
            (LedgerError.cannotOpen("refused"), 3), (LedgerError(code: "postgres", message: "server closed the connection"), 3),
            (LedgerError(code: "badRow", message: "flags.status holds \"x\""), 3), (TerminalError(message: "no terminal"), 2),
            (ValidationError("--rule takes one of ..."), 2), (ExitCode(1), 1),
        ]
        for (error, expected) in cases {
            #expect(ExitStatus.of(error).code == expected, "\(error)")
        }
    }

    @Test("messages: prefixed for the operator, none when everything was already said, help to standard output")
    func messages() throws {
        #expect(ExitStatus.of(CLIError.rejected()).message == nil)
        #expect(ExitStatus.of(CLIError.notFound("no customer matches 42")).message == "receiptdesk: no customer matches 42")
        #expect(ExitStatus.of(LedgerError(code: "notFound", message: "no flag with id f")).message == "receiptdesk: no flag with id f")
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
}
