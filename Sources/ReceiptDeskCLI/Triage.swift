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

    @Argument(help: ArgumentHelp("The flag's id, as refunds prints it.", valueName: "flag-id"))
    var given: String?

    /// The flag's id as given, without the white space or quotes a paste brings around it (``validate()`` makes sure
    /// there is one).
    private var flagId: String { trimmedPaste(given ?? "") }

    @Flag(name: .customLong("ack"), help: "Acknowledge an open flag: someone is looking (reopen a resolved one first).")
    var acknowledge = false

    @Flag(help: "Resolve it (say why with --note).")
    var resolve = false

    @Flag(help: "Reopen it.")
    var reopen = false

    @Flag(help: "Print the flag's triage log (who moved it, when, from what to what, their note), in the order written; changes nothing.")
    var log = false

    @Option(help: "A note for the triage log.")
    var note: String?

    @Option(name: .customLong("operator"), help: "Who is acting (default: $USER, else the PostgreSQL role, else the login).")
    var operatorName: String?

    @Flag(help: "Print the flag as JSON.")
    var json = false

    @OptionGroup var data: DataOptions

    mutating func validate() throws {
        // `--files` takes every word after it, so `triage --files DIR FLAG --ack` gave the flag's id to it: a last
        // "path" that is no file is the id (and the write is then refused as one to an in-memory ledger).
        if given == nil, let last = data.source.files.last, data.source.files.count > 1, !FileManager.default.fileExists(atPath: last) {
            given = data.source.files.removeLast()
        }
        guard given != nil else {
            throw ValidationError("give the flag's id, as refunds prints it: receiptdesk triage FLAG-ID --ack|--resolve|--reopen|--log")
        }
        if [acknowledge, resolve, reopen, log].filter({ $0 }).count != 1 {
            throw ValidationError("choose exactly one of --ack, --resolve, --reopen, or --log to read the flag's triage log")
        }
        if log, note != nil { throw ValidationError("--note goes with --ack, --resolve or --reopen, not --log") }
    }

    func run() async throws {
        let now = currentTimestamp()
        if log {
            try await data.withLedger(now: now) { ledger in try await printLog(ledger) }
            return
        }
        if data.source.readOnly { throw LedgerOptions.refuse("triage") }
        if !data.source.files.isEmpty { throw LedgerOptions.refuseInMemory("triage") }
        try await data.withLedger(now: now) { ledger in try await run(ledger, now: now) }
    }

    /// The flag's log, in the order written: one line each (`AT OPERATOR ACTION FROM -> TO: NOTE`), or one JSON object each.
    private func printLog(_ ledger: SQLLedger) async throws {
        // A flag that is not there exits 1, as a triage of it does.
        guard try await ledger.flag(id: flagId) != nil else {
            throw LedgerError(code: .notFound, message: "no flag with id \(safe(flagId))")
        }
        // In the order written (the ledger's), not by their clocks: operators' clocks differ, and an undo printed
        // before the change it undid would say the opposite of what happened.
        let entries = try await ledger.triageLog(flagId: flagId, customerId: nil)
        let output = Output()
        for entry in entries {
            if json {
                // (A writer a line: one object per line, no separator between them.)
                var w = JSONWriter()
                w.beginObject()
                w.string("flagId", entry.flagId)
                w.int("at", entry.at.millisecondsSince1970)
                w.string("operator", entry.operatorName)
                w.string("action", entry.action.rawValue)
                w.string("fromStatus", entry.fromStatus?.rawValue)
                w.string("toStatus", entry.toStatus?.rawValue)
                w.string("note", entry.note)
                w.endObject()
                w.newline()
                output.write(w.bytes)
            } else {
                let move = "\(entry.fromStatus?.rawValue ?? "-") -> \(entry.toStatus?.rawValue ?? "-")"
                output.line(safe("\(entry.at.iso8601) \(entry.operatorName) \(entry.action.rawValue) \(move)\(entry.note.map { ": \($0)" } ?? "")"))
            }
        }
        if !json, entries.isEmpty { output.line("\(safe(flagId)): never triaged") }
        try output.finish()
    }

    private func run(_ ledger: SQLLedger, now: Timestamp) async throws {
        let action: TriageAction = acknowledge ? .ack : resolve ? .resolve : .reopen
        try await ledger.refuseUnlessRoleMay(.triaging)
        let who = try await OperatorName.resolve(operatorName, environment: ProcessInfo.processInfo.environment, ledger: ledger)
        // A flag that is not there exits 1, one already in that status 2 (ExitStatus).
        // A blank note is none (it was stored as "   ", and an empty one printed a dangling ": " in the log).
        let note = note.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.flatMap { $0.isEmpty ? nil : $0 }
        let flag = try await ledger.triage(flagId: flagId, action: action, operatorName: who, note: note, now: now)
        // The note stays optional (DESIGN section 12's `[--note TEXT]`, which scripts rely on), but a resolve without
        // one is said to leave the next on-call nothing to go on (the dashboard asks for it).
        if resolve, note == nil {
            FileHandle.standardError.write(Data("receiptdesk: \(safe(flagId)) resolved without a note: its log says nothing of why (--note says it)\n".utf8))
        }
        if json {
            var w = JSONWriter()
            w.flag(flag, full: true)
            w.newline()
            let output = Output()
            output.write(w.bytes)
            try output.finish()
        } else {
            print("\(safe(flag.id)): \(flag.status.rawValue) by \(safe(who))")
        }
    }
}
