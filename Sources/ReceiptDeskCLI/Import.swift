import ArgumentParser
import Foundation
import Ledger
import ReceiptModel

/// `receiptdesk import`: stream files into the ledger, losing nothing.
struct Import: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import files or directories into the ledger.",
        discussion: """
            Every record ends up imported, a duplicate, or rejected with its reason; each file ends with \
            `read N = imported I + duplicate D + rejected R` (the source keeps its own). Importing the same \
            files again decodes only the records they had rejected (after a --trust-root was added, say): those \
            accepted now are imported (or duplicates of a record imported since), the others (an Xcode \
            transaction id another app's test data holds, testIdReused, among them) stay rejected and are \
            counted rejected again; nothing else changes. An interrupted import resumes where it stopped, and \
            its line says how many records the other run had committed (two imports of one file at once share \
            it the same way, and each line is the file's). Each file's line goes to standard error with the \
            progress, the total to standard output. Ctrl-C stops it between batches, saying what they hold \
            (a second Ctrl-C stops it at once). With --customers and no paths it only links the accounts in \
            the ledger (after an import that forgot them, or a mapping that grew). Exits 1 when any record was \
            rejected, 3 when the ledger cannot be opened.
            """
    )

    @Option(help: ArgumentHelp("The ledger: sqlite:PATH or postgres://... (default: $RECEIPTDESK_LEDGER, else the XDG data file).", valueName: "URL"))
    var ledger: String?

    @Option(help: ArgumentHelp("Refund rule parameters for the flags found after the import: RULE.PARAMETER = VALUE lines.", valueName: "FILE"))
    var rules: String?

    @Option(help: "Records per transaction.")
    var batchSize = 2000

    @Option(help: ArgumentHelp("Reject a record longer than this many bytes, with its size, without holding it whole.", valueName: "BYTES"))
    var maxRecordBytes = ChunkedFile.defaultMaxRecordBytes

    @Option(help: ArgumentHelp("Operator mapping of accounts to link after the import: customer_id,kind,value lines (customers.csv).", valueName: "FILE"))
    var customers: String?

    @Flag(name: .customLong("read-only"), help: "Refuse (exit 2): an import is a write. Also $RECEIPTDESK_READ_ONLY=1.")
    var readOnly = false

    @OptionGroup var verification: VerificationOptions

    @Argument(
        help: ArgumentHelp("Files or directories to import; - reads standard input (none with --customers: only link).", valueName: "PATH"))
    var paths: [String] = []

    func validate() throws {
        guard !paths.isEmpty || customers != nil else {
            throw ValidationError(
                "missing <PATH>: the files or directories to import (or --customers FILE alone, to link accounts in the ledger)")
        }
        guard maxRecordBytes >= 1024 else { throw ValidationError("--max-record-bytes takes at least 1024") }
        guard batchSize >= 1 else { throw ValidationError("--batch-size takes at least 1") }
    }

    func run() async throws {
        if readOnly || LedgerOptions.readOnlyFromEnvironment() { throw LedgerOptions.refuse("import") }
        let now = currentTimestamp()
        let flagRules = try DataOptions.loadRules(rules)
        // The mapping is checked whole before anything is written.
        let mapping = try customers.map(DataOptions.customerMapping)
        // (A mistyped input or trust root is said before the ledger is opened, which creates a new SQLite one.)
        try ChunkedFile.requireExisting(paths)
        let decoder = try verification.makeDecoder(now: now)
        // (Links alone go into a ledger that is there: a mistyped path would have been created empty, and linked nothing.)
        let store = try await LedgerOptions.open(url: LedgerOptions.ledgerURL(explicit: ledger), now: now, mustExist: paths.isEmpty)
        do {
            try await store.refuseUnlessRoleMay(.importing)
        } catch {
            try? await store.close()
            throw error
        }
        let total: ImportCounts
        do {
            // Ctrl-C stops the import between batches, saying what its committed batches hold (a second one kills
            // it at once): it ended with nothing said but the progress bar's last line.
            let paths = paths
            let batchSize = batchSize
            let maxRecordBytes = maxRecordBytes
            let work = Task {
                // (--customers alone: nothing to read, only the links below.)
                if paths.isEmpty { return ImportCounts() }
                return try await ImportRun(
                    ledger: store, decoder: decoder, rules: flagRules, batchSize: batchSize, maxRecordBytes: maxRecordBytes
                ).run(paths: paths, now: now)
            }
            let interrupt = Interrupt.onFirst { work.cancel() }
            defer { interrupt.cancel() }
            total = try await work.value
            if let mapping, let customers {
                let unheld = try await DataOptions.link(mapping, into: store, now: now)
                // Links can merge customers: the flags follow them.
                try await store.refreshFlags(rules: flagRules, now: now)
                // Said, as each file's reconciliation is (it linked without a word), with the identifiers no record
                // carries: a mistyped one made a customer of its own, with nothing in it, and nothing said so.
                let accounts = Set(mapping.map(\.account)).count
                var line = "\(safe(customers)): linked \(mapping.count) \(mapping.count == 1 ? "identifier" : "identifiers") to \(accounts) "
                    + "\(accounts == 1 ? "account" : "accounts")"
                if !unheld.isEmpty {
                    let named = unheld.prefix(3).map { safe("\($0.account) \($0.kind.rawValue) \($0.value)") }.joined(separator: "; ")
                    line += "; \(unheld.count) of them no record in the ledger carries yet (\(named)\(unheld.count > 3 ? "; …" : "")): "
                        + "their accounts show nothing until those records are imported"
                }
                FileHandle.standardError.write(Data((line + "\n").utf8))
            }
        } catch is CancellationError {
            // Ctrl-C: what the file's committed batches hold was said with it. The process then dies of SIGINT, as
            // it would have, so that a shell loop over files stops too (an exit of 130 lets bash go on).
            try? await store.close()
            FileHandle.standardError.write(Data("receiptdesk: interrupted (Ctrl-C); the same command again resumes\n".utf8))
            signal(SIGINT, SIG_DFL)
            // (This task's thread may block the signal, as the runtime's threads can: unblocked, it is delivered
            // before raise returns.)
            var only = sigset_t()
            sigemptyset(&only)
            sigaddset(&only, SIGINT)
            pthread_sigmask(SIG_UNBLOCK, &only, nil)
            raise(SIGINT)
            throw CancellationError()
        } catch {
            try? await store.close()
            throw error
        }
        try await store.close()
        if !paths.isEmpty { print("total: \(total)") }
        if total.rejected > 0 { throw CLIError.rejected() }
    }
}

/// The first Ctrl-C (SIGINT) runs `action`; the next one, or one after the source is cancelled, ends the process
/// as Ctrl-C does.
enum Interrupt {
    static func onFirst(_ action: @escaping @Sendable () -> Void) -> any DispatchSourceSignal {
        signal(SIGINT, SIG_IGN)
        // A queue of its own: the global queue's threads are the decoding tasks' (Swift's executor on Linux), and a
        // verified import kept them all busy, so Ctrl-C was said seconds late and a second one did not stop it.
        let source = DispatchSource.makeSignalSource(signal: SIGINT, queue: DispatchQueue(label: "receiptdesk.interrupt"))
        source.setEventHandler {
            source.cancel()
            FileHandle.standardError.write(Data("\nreceiptdesk: stopping after the batch being written (Ctrl-C again stops at once)\n".utf8))
            action()
        }
        source.setCancelHandler { signal(SIGINT, SIG_DFL) }
        source.resume()
        return source
    }
}
