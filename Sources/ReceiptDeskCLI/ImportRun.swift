import ArgumentParser
import Entitlements
import Foundation
import Ledger
import LedgerPostgres
import LedgerSQLite
import ReceiptDecoding
import ReceiptModel

/// Imports files into a ledger with a progress bar on a terminal and a reconciliation line per file,
/// then brings the refund flags up to date, so reading commands only read.
struct ImportRun {
    let ledger: SQLLedger
    let decoder: RecordDecoder
    let rules: FlagRules
    var quiet = false
    var batchSize = 2000
    var maxRecordBytes = ChunkedFile.defaultMaxRecordBytes

    /// Imports every file under `paths`; returns the total counts.
    func run(paths: [String], now: Timestamp) async throws -> ImportCounts {
        let files = try ChunkedFile.expand(paths)
        let progress = ProgressBar(enabled: isatty(STDERR_FILENO) == 1)
        // Into an empty SQLite ledger, indexes only reading uses are built once after the load.
        let deferred = try await ledger.deferIndexesForFirstLoad()
        var committed = false
        let total: ImportCounts
        do {
            total = try await importAll(files, progress: progress, now: now, committed: &committed)
        } catch {
            // What the load committed is kept: its indexes are built now, or at the next open for writing.
            if deferred { try? await ledger.buildDeferredIndexes() }
            if committed, Self.wasCut(error) { await refreshFlagsAfterCut(now: now) }
            throw error
        }
        do {
            if deferred { try await ledger.buildDeferredIndexes() }
            try await ledger.refreshStatistics(afterImporting: total.imported)
            try await ledger.refreshFlags(rules: rules, now: now)
        } catch {
            if deferred { try? await ledger.buildDeferredIndexes() }
            throw error
        }
        return total
    }

    /// Whether an import stopped for Ctrl-C or a lost connection (its batches so far committed, the ledger as it
    /// was), not because the ledger refused it.
    static func wasCut(_ error: any Error) -> Bool {
        if error is CancellationError { return true }
        guard let error = error as? LedgerError else { return false }
        return error.code == .unavailable || error.code == .closed
    }

    /// An import cut short (Ctrl-C, a lost connection) flags the refunds its committed batches hold, as a whole import
    /// does: they were in the ledger, counted on the Overview, and in no queue until someone ran it again. Run outside
    /// the cancelled import's task (a second Ctrl-C still ends the process at once); when it fails, said with why and
    /// what raises them.
    private func refreshFlagsAfterCut(now: Timestamp) async {
        let ledger = ledger
        let rules = rules
        let refreshed = await Task { try await ledger.refreshFlags(rules: rules, now: now) }.result
        if case .failure(let error) = refreshed {
            let why = (error as? LedgerError)?.message ?? "\(error)"
            FileHandle.standardError.write(
                Data(
                    ("receiptdesk: the refund flags do not yet include what was committed (\(lineSafe(why))): the same import "
                        + "again, or receiptdesk refunds --refresh, raises them\n").utf8))
        }
    }

    private func importAll(_ files: [String], progress: ProgressBar, now: Timestamp, committed: inout Bool) async throws -> ImportCounts {
        var total = ImportCounts()
        for path in files {
            // Standard input is read twice like a file (its hash names the source, so piping the same data
            // again is all duplicates and an interrupted import resumes): it is kept in a private temporary
            // file for the import, in chunks, never whole in memory.
            // (So is a pipe or a FIFO named as a file: `import <(zcat export.gz)`.)
            let readsOnce = ChunkedFile.readsOnce(path)
            if readsOnce { progress.note("\(path == "-" ? "standard input" : path): keeping it in a temporary file to read it twice…") }
            let spooled = readsOnce ? try ChunkedFile.spool(path) : nil
            defer { spooled?.close() }
            progress.note("\(path): hashing it (its content names the source)…")
            var info = try ChunkedFile.sourceInfo(spooled?.path ?? path)
            // The source is stored by its absolute path (`mixed.ndjson` typed in two directories were two sources of
            // one name on the Imports screen, their rejected records `mixed.ndjson#2` alike); what is printed here
            // keeps the path as typed.
            info.path = path == "-" ? "-" : URL(fileURLWithPath: path).standardizedFileURL.path
            var file = try ChunkedFile(spooled?.path ?? path, maxRecordBytes: maxRecordBytes)
            let importer = Importer(ledger: ledger, decoder: decoder, batchSize: batchSize)
            let counts: ImportCounts
            // Each rejected record is named with its reason as it happens (the first few of a file; the
            // dashboard's Imports screen lists them all).
            var shown = 0
            var warned = 0
            // (Files read for another command, quietly: the first of each file's only, which says why (a test CA's
            // root not trusted, say), where a count of rejections alone left `lookup --files` with "no customer matches".)
            let shownLimit = quiet ? 1 : 20
            var resumed = 0
            var byAnother = 0
            progress.note("\(path): decoding and writing its first \(batchSize) records…")
            do {
                counts = try await importer.run(info, now: now, nextPieces: { try file.next() }) { step in
                    if !step.rejections.isEmpty {
                        if shown < shownLimit { progress.clear() }
                        for rejection in step.rejections.prefix(max(0, shownLimit - shown)) {
                            FileHandle.standardError.write(Data("\(safe(path)): rejected \(safe(rejection))\n".utf8))
                        }
                        shown += step.rejections.count
                    }
                    // What a record left out as it was taken (a placeholder where a signed transaction was, a masked
                    // value): said as `decode` says it, or the import said nothing of transactions it did not take.
                    if !quiet, !step.warnings.isEmpty {
                        if warned < shownLimit { progress.clear() }
                        for warning in step.warnings.prefix(max(0, shownLimit - warned)) {
                            FileHandle.standardError.write(Data("\(safe(path)): \(safe(warning))\n".utf8))
                        }
                        warned += step.warnings.count
                    }
                    resumed = max(resumed, step.resumed)
                    byAnother = max(byAnother, step.committedByAnother)
                    progress.update(step)
                }
            } catch let error as ImportInterrupted {
                // What is committed stays committed: say how far it came, then why it stopped.
                if error.committed.imported > 0 { committed = true }
                progress.clear()
                // A run that itself resumed says so: its figures are this run's, not the file's (a loop of cut runs
                // read as the file's records 200, 800, 200...).
                let before = error.resumed
                let earlier =
                    before > 0
                    ? "; this run began after the first \(before) \(before == 1 ? "record" : "records"), committed by another run of this file" : ""
                FileHandle.standardError.write(
                    Data(
                        ("\(safe(path)): interrupted; its committed batches hold \(error.committed) "
                            + "(the same import again resumes after them\(earlier))\n").utf8))
                throw Self.named(error.underlying, path: path)
            } catch {
                progress.clear()
                throw Self.named(error, path: path)
            }
            progress.clear()
            if shown > shownLimit {
                FileHandle.standardError.write(
                    Data(
                        ("\(safe(path)): \(shown - shownLimit) more rejected "
                            + (quiet ? "(receiptdesk decode FILE names each)\n" : "(the dashboard's Imports screen lists them all)\n")).utf8))
            }
            if warned > shownLimit {
                FileHandle.standardError.write(Data("\(safe(path)): \(warned - shownLimit) more warnings (receiptdesk decode FILE names each)\n".utf8))
            }
            total = total + counts
            if counts.imported > 0 { committed = true }
            if !quiet || counts.rejected > 0 {
                // The file's reconciliation, another run's records in it: said, so that a resumed run's figures are not
                // read as its own. (That run may have been cut, or be importing the same file still: two importers of
                // one file share its source, each committing what the other has not.)
                // Records another run committed while this one came to them are that run's imports: duplicates here.
                var notes: [String] = []
                if resumed > 0 {
                    notes.append(
                        "resumed after its first \(resumed) \(resumed == 1 ? "record" : "records"), committed by another run of this file: one cut short, or one still under way")
                }
                if byAnother > 0 {
                    notes.append(
                        "\(byAnother) \(byAnother == 1 ? "record was" : "records were") committed first by another run of this file under way at "
                            + "the same time: what it imported is a duplicate here")
                }
                let earlier = notes.isEmpty ? "" : " (" + notes.joined(separator: "; ") + ")"
                FileHandle.standardError.write(Data("\(safe(path)): \(counts)\(earlier)\n".utf8))
            }
            // Sources are their content: the same bytes imported before under another name are listed under that one.
            // (Standard input too: piped bytes a file held are listed under that file's name.)
            // (An empty file holds nothing to list: it is said to be empty, not to be another empty file.)
            // A verifying run over records imported before with --no-verify checked none of them: said (the records read
            // as duplicates, with no word that no signature of theirs was ever looked at).
            if !quiet, decoder.verifier.policy.verifySignatures, counts.duplicate > 0, let stored = try? await ledger.source(sha256: info.sha256),
                let unverified = try? await ledger.recordsStandingUnverified(sourceId: stored.id), unverified > 0
            {
                FileHandle.standardError.write(
                    Data(
                        ("\(safe(path)): \(unverified) of its records stand as imported before with --no-verify: a ledger keeps a "
                            + "record's first import, so their signatures were not checked now (import the file into a new ledger to check them)\n").utf8))
            }
            if !quiet, info.size == 0 {
                FileHandle.standardError.write(Data("\(safe(path)): empty, no records\n".utf8))
            } else if !quiet, counts.read == 0 {
                FileHandle.standardError.write(Data("\(safe(path)): white space only, no records\n".utf8))
            } else if !quiet, let stored = try? await ledger.source(sha256: info.sha256), stored.path != info.path {
                FileHandle.standardError.write(
                    Data(
                        ("\(safe(path)): the same content as \(safe(stored.path)), imported \(stored.startedAt.iso8601): the Imports "
                            + "screen lists its records under that name\n").utf8))
            }
        }
        return total
    }

    /// A ledger's error with the file it stopped at in front; any other error as it is.
    static func named(_ error: any Error, path: String) -> any Error {
        guard let error = error as? LedgerError else { return error }
        return LedgerError(code: error.code, message: "\(path): \(error.message)")
    }
}
