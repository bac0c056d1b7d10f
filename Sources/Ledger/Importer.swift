import ReceiptDecoding
import ReceiptModel

/// How far an import has come, for a progress bar.
public struct ImportProgress: Sendable {
    public var path: String
    public var records: Int
    public var bytes: Int64
    public var totalBytes: Int64
    /// The records the last batch rejected: "record N (byte O): code: reason", to show as they happen.
    public var rejections: [String] = []
    /// What the last batch's records left out as they were taken (a nested value that is no transaction, a masked
    /// value): "record N (byte O): warning", as `decode` says it.
    public var warnings: [String] = []
    /// The records an earlier, interrupted run committed, which this one resumed after (so far).
    public var resumed = 0
    /// The records of this run's batches that another run of the same file, importing it at the same time, had
    /// committed first (so far): this run counts them as duplicates (or rejected, as that run stored them).
    public var committedByAnother = 0
}

/// An import that stopped part-way (the ledger went away, the file could not be read): what the batches it
/// committed hold, and why it stopped. Running the same import again resumes after those batches.
public struct ImportInterrupted: Error, CustomStringConvertible {
    /// The source, as the import named it.
    public var path: String
    /// The records of this run's committed batches; every one of them is imported, a duplicate or rejected.
    public var committed: ImportCounts
    /// Why the import stopped.
    public var underlying: any Error
    /// The records before this run's, committed by another run of the source, which this one began after.
    public var resumed = 0

    public var description: String { "\(path): interrupted after \(committed): \(underlying)" }
}

/// Streams one source's records from the decoder into the ledger in batched transactions.
///
/// Memory stays bounded by the batch, not the file. Decoding of the next batch overlaps the write
/// of the current one, and a batch decodes on every core. A batch commits whole or not at all, so an
/// interrupted import leaves whole batches, and running it again resumes after the last one.
public struct Importer: Sendable {
    public let ledger: SQLLedger
    public let decoder: RecordDecoder
    /// Records per transaction.
    public var batchSize: Int
    /// Decoding tasks per batch.
    public var parallelism: Int

    public init(ledger: SQLLedger, decoder: RecordDecoder, batchSize: Int = 2000, parallelism: Int = 2) {
        self.ledger = ledger
        self.decoder = decoder
        self.batchSize = batchSize
        self.parallelism = max(1, parallelism)
    }

    /// Imports one source.
    /// - Parameters:
    ///   - info: the source's path, content hash and size (hash it before importing).
    ///   - nextPieces: the next records from the splitter; `nil` at the end.
    ///   - progress: called after each batch.
    /// - Returns: the source's reconciliation, including records an interrupted earlier run committed, except that
    ///   records another run importing the same file at the same time committed first while this one came to them are
    ///   duplicates here (that run counts them as imported: each record is imported by one run only); for a
    ///   source imported completely before, this run's: the records it rejected then and accepts now are imported
    ///   (or duplicates of a record imported since), those still refused rejected, and every other a duplicate.
    /// - Throws: ``ImportInterrupted`` when the import stops after the source was begun, with what it committed;
    ///   before that (the ledger cannot be written at all), the ledger's error.
    public func run(
        _ info: SourceInfo, now: Timestamp, nextPieces: () throws -> [RecordSplitter.Piece]?,
        progress: (ImportProgress) -> Void = { _ in }
    ) async throws -> ImportCounts {
        let sourceId: Int64
        let resumeAfter: Int?
        /// A source imported before: its rejected records, which alone are decoded again (with any past the records it
        /// held).
        let retrying: (rejected: Set<Int>, held: Int)?
        // (Stopped before it began, a file leaves no source cut short.)
        try Task.checkCancellation()
        switch try await ledger.beginSource(info, now: now) {
        case .alreadyImported(let counts): return counts
        case .started(let id, let after):
            sourceId = id
            resumeAfter = after
            retrying = nil
        case .retrying(let id, let rejected, let records):
            sourceId = id
            resumeAfter = nil
            retrying = (Set(rejected), records)
        }
        /// Records of a source imported before that are not decoded again.
        var settled = 0
        var batch: [RecordSplitter.Piece] = []
        var pendingWrite: Task<(counts: ImportCounts, refused: [String], written: ImportCounts), Error>?
        var committed = ImportCounts()
        /// Records of this run's batches another run of the same file committed first, by their stored outcomes.
        var byAnother = ImportCounts()
        var records = 0
        var resumed = 0
        var bytes: Int64 = 0
        /// What the ledger itself refused in the batch last written, said with the next progress.
        var refusedByLedger: [String] = []
        /// Whether the ledger's lookup tables were looked at for statistics after this run's first batch.
        var statisticsChecked = false
        /// Waits for the batch being written, and counts it.
        func settle() async throws {
            guard let write = pendingWrite else { return }
            pendingWrite = nil
            let (counts, refused, written) = try await write.value
            committed = committed + counts
            // (A retry's rows were there before it: its own rejections, refused again or not, are in `counts`.)
            if retrying == nil { byAnother = byAnother + written }
            refusedByLedger += refused
            // After the first batch, so that its rows are there to sample (counted first: a failure here still
            // reports what was committed).
            if !statisticsChecked {
                statisticsChecked = true
                try await ledger.analyzeTablesWithoutStatistics()
            }
        }
        func flush() async throws {
            // A cancelled import (Ctrl-C) stops between batches: what is committed is reported, and a re-run resumes.
            try Task.checkCancellation()
            let decoded = await decode(batch, path: info.path)
            batch.removeAll(keepingCapacity: true)
            try await settle()
            let ledger = self.ledger
            pendingWrite = Task { try await ledger.importBatchNaming(sourceId: sourceId, decoded, now: now) }
            let rejections = refusedByLedger + decoded.compactMap { input in
                input.record.error.map { "record #\(input.index) (byte \(input.offset)): \($0.code): \($0.message)" }
            }
            refusedByLedger = []
            var warnings: [String] = []
            for input in decoded where input.record.isOK {
                for warning in input.record.warnings { warnings.append("record #\(input.index) (byte \(input.offset)): warning: \(warning)") }
            }
            progress(
                ImportProgress(
                    path: info.path, records: records, bytes: bytes, totalBytes: info.size, rejections: rejections, warnings: warnings))
        }
        do {
            while let pieces = try nextPieces() {
                for piece in pieces {
                    records += 1
                    bytes = piece.offset + Int64(piece.bytes.count)
                    if let resumeAfter, piece.index <= resumeAfter {
                        resumed += 1
                        continue
                    }
                    if let retrying, !retrying.rejected.contains(piece.index), piece.index < retrying.held {
                        settled += 1
                        continue
                    }
                    batch.append(piece)
                    if batch.count >= batchSize { try await flush() }
                }
            }
            if !batch.isEmpty { try await flush() }
            try await settle()
            progress(
                ImportProgress(
                    path: info.path, records: records, bytes: info.size, totalBytes: info.size, rejections: refusedByLedger, resumed: resumed,
                    committedByAnother: byAnother.read))
            // A retry's batches kept the finished source's reconciliation (and left its completion time) as it is.
            guard retrying != nil else {
                // What another run imported while this one came to it is that run's import: a duplicate here, as it
                // would be had this run begun after that one finished. (Rejected and duplicate records are the same
                // for both.)
                var counts = try await ledger.completeSource(sourceId, now: now)
                counts.imported -= byAnother.imported
                counts.duplicate += byAnother.imported
                return counts
            }
            return ImportCounts(
                read: settled + committed.read, imported: committed.imported, duplicate: settled + committed.duplicate,
                rejected: committed.rejected)
        } catch {
            // A batch still being written may yet commit: it is counted if it does, and the first failure is
            // the one reported.
            try? await settle()
            throw ImportInterrupted(path: info.path, committed: committed, underlying: error, resumed: resumed)
        }
    }

    /// Decodes a batch on `parallelism` tasks, keeping input order.
    public func decode(_ pieces: [RecordSplitter.Piece], path: String) async -> [RecordInput] {
        let decoder = self.decoder
        let slices = max(1, min(parallelism, pieces.count))
        let size = (pieces.count + slices - 1) / slices
        return await withTaskGroup(of: (Int, [RecordInput]).self) { group in
            for slice in 0..<slices {
                let part = Array(pieces[min(pieces.count, slice * size)..<min(pieces.count, (slice + 1) * size)])
                group.addTask {
                    var out: [RecordInput] = []
                    out.reserveCapacity(part.count)
                    for piece in part {
                        let record = await decoder.decode(piece, path: path)
                        out.append(RecordInput(index: piece.index, offset: piece.offset, bytes: piece.bytes, record: record))
                    }
                    return (slice, out)
                }
            }
            var parts = Array(repeating: [RecordInput](), count: slices)
            for await (slice, out) in group { parts[slice] = out }
            return parts.flatMap { $0 }
        }
    }
}
