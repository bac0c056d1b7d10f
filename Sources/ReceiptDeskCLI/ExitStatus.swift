import ArgumentParser
import CursesBackend
import Foundation
import Ledger

/// A command's failure, by what it means; its exit code is chosen in one place, ``ExitStatus/of(_:)``.
struct CLIError: Error, CustomStringConvertible {
    enum Kind {
        /// Records were rejected (decode, import; the records were already reported one by one).
        case rejected
        /// What was asked for is not there: no customer matches, no such flag.
        case notFound
        /// The command line, or a file or setting it names, is wrong; or a write was refused.
        case usage
        /// The ledger could not be opened, or failed under the command.
        case ledgerUnavailable
    }

    var kind: Kind
    /// Printed after `receiptdesk: `; empty when everything was already said.
    var message: String
    var description: String { message }

    static func rejected(_ message: String = "") -> CLIError { CLIError(kind: .rejected, message: message) }
    static func notFound(_ message: String) -> CLIError { CLIError(kind: .notFound, message: message) }
    static func usage(_ message: String) -> CLIError { CLIError(kind: .usage, message: message) }
    static func ledgerUnavailable(_ message: String) -> CLIError { CLIError(kind: .ledgerUnavailable, message: message) }
}

/// How a command ends: the message and exit code for every error, in one place (DESIGN section 10).
/// 0 success, 1 some records rejected or nothing found, 2 usage error (a refused write included),
/// 3 the ledger could not be opened or failed.
enum ExitStatus {
    static let success: Int32 = 0
    static let rejectedOrNotFound: Int32 = 1
    static let usage: Int32 = 2
    static let ledgerUnavailable: Int32 = 3

    /// The message to print on standard error (nil: nothing more to say, or, for `--help`, what to print
    /// on standard output) and the exit code.
    static func of(_ error: any Error) -> (message: String?, code: Int32, toStandardOutput: Bool) {
        switch error {
        case let error as CLIError:
            let code =
                switch error.kind {
                case .rejected, .notFound: rejectedOrNotFound
                case .usage: usage
                case .ledgerUnavailable: ledgerUnavailable
                }
            return (error.message.isEmpty ? nil : "receiptdesk: \(lineSafe(error.message))", code, false)
        case let error as LedgerError:
            // (A ledger's words carry data: a flag id, a role or schema name from the catalog, the server's text.)
            return ("receiptdesk: \(lineSafe(error.message))", code(of: error), false)
        case let error as ImportInterrupted:
            // The import command says what was committed first; anywhere else, the cause decides.
            return of(ImportRun.named(error.underlying, path: error.path))
        case let error as TerminalError:
            return ("receiptdesk: \(error.message)", usage, false)
        case let error as ExitCode:
            return (nil, error.rawValue, false)
        default:
            // swift-argument-parser's own errors: help, version, validation (exit 2 here, not 64).
            let code = ReceiptDesk.exitCode(for: error)
            let message = ReceiptDesk.fullMessage(for: error)
            if code == .success { return (message.isEmpty ? nil : message, success, true) }
            // swift-argument-parser answers 1 for an error it does not know (a file system error, say): that
            // is neither a rejected record nor a lookup that found nothing.
            if code == .failure { return ("receiptdesk: \((error as NSError).localizedDescription)", usage, false) }
            return (message.isEmpty ? nil : message, code == .validationFailure ? usage : code.rawValue, false)
        }
    }

    /// A ledger's error by its code: what is not there, what the operator asked wrongly, and the rest (the
    /// ledger cannot be opened, is of another version, went away or holds a row it cannot read).
    static func code(of error: LedgerError) -> Int32 {
        switch error.code {
        case .notFound: rejectedOrNotFound
        case .usage, .noChange, .readOnly: usage
        case .badRow, .busy, .cannotOpen, .cannotWrite, .closed, .internalError, .permissionDenied, .postgres, .schemaTooNew, .sqlite,
            .unavailable:
            ledgerUnavailable
        }
    }
}

/// A message for standard error with no control character from data in it, its line breaks kept: every error's text
/// goes through here, whatever its words were built from (`safe` at each place that names data is the rule; this is
/// the net under it).
func lineSafe(_ text: String) -> String {
    text.split(separator: "\n", omittingEmptySubsequences: false).map { safe(String($0)) }.joined(separator: "\n")
}
