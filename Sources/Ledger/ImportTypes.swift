import LedgerQueries
import ReceiptDecoding
import ReceiptModel

/// An input file about to be imported, identified by its content.
public struct SourceInfo: Sendable {
    public var path: String
    public var sha256: String
    public var size: Int64

    public init(path: String, sha256: String, size: Int64) {
        self.path = path
        self.sha256 = sha256
        self.size = size
    }
}

/// How an import of a source begins.
public enum SourceStart: Sendable, Equatable {
    /// The same content was imported completely before and none of its records was rejected: every record is a
    /// duplicate, nothing changes.
    case alreadyImported(ImportCounts)
    /// Import records into this source; records up to `resumeAfter` were committed by an earlier, interrupted run.
    case started(sourceId: Int64, resumeAfter: Int?)
    /// The same content was imported completely before and these records of it (indexes, ascending) were
    /// rejected: decode them again (the trust roots or the decoder may have changed since) and import what now
    /// decodes; every other record of the `records` it held is a duplicate, and one past them is new to it (a
    /// splitter that finds more in the same bytes: the end of an array never closed).
    case retrying(sourceId: Int64, rejected: [Int], records: Int)
}

/// One decoded record with the bytes it came from, ready to import.
///
/// A class, so that passing a batch of them between the decoding tasks and the writer, and reading one in the
/// writer, shares it: a decoded record holds dozens of strings, and each copy of one retained every one.
public final class RecordInput: Sendable {
    public let index: Int
    public let offset: Int64
    public let bytes: [UInt8]
    public let record: DecodedRecord
    /// The first 128 bits of the bytes' SHA-256, which records are compared by: computed here, in the task
    /// that decodes the record, rather than in the one writer.
    public let contentHash: [UInt8]
    /// The canonical JSON of the record's renewal infos (in the record's order) and of its notification,
    /// written here for the same reason; empty for a rejected record. (Not its transactions': a verifyReceipt
    /// response repeats every earlier one, so the writer encodes each transaction once per batch instead.)
    public let canonical: Canonical

    public struct Canonical: Sendable {
        public var renewalInfos: [String] = []
        public var notification: String?
    }

    public init(index: Int, offset: Int64, bytes: [UInt8], record: DecodedRecord) {
        self.index = index
        self.offset = offset
        self.bytes = bytes
        self.record = record
        contentHash = Array(CanonicalJSON.sha256(bytes).prefix(16))
        var canonical = Canonical()
        if record.isOK {
            canonical.renewalInfos = record.renewalInfos.map(CanonicalJSON.encode)
            canonical.notification = record.notification.map(CanonicalJSON.encode)
        }
        self.canonical = canonical
    }
}
