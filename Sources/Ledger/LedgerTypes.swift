import ReceiptModel

/// What one import of one source came to: `read N = imported I + duplicate D + rejected R`.
public struct ImportCounts: Hashable, Sendable, CustomStringConvertible {
    public var read: Int
    public var imported: Int
    public var duplicate: Int
    public var rejected: Int

    public init(read: Int = 0, imported: Int = 0, duplicate: Int = 0, rejected: Int = 0) {
        self.read = read
        self.imported = imported
        self.duplicate = duplicate
        self.rejected = rejected
    }

    /// Whether every record read is accounted for.
    public var reconciles: Bool { read == imported + duplicate + rejected }

    public var description: String {
        "read \(read) = imported \(imported) + duplicate \(duplicate) + rejected \(rejected)"
    }

    public static func + (lhs: ImportCounts, rhs: ImportCounts) -> ImportCounts {
        ImportCounts(
            read: lhs.read + rhs.read, imported: lhs.imported + rhs.imported, duplicate: lhs.duplicate + rhs.duplicate,
            rejected: lhs.rejected + rhs.rejected)
    }
}

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
    /// The same content was imported completely before: every record is a duplicate, nothing changes.
    case alreadyImported(ImportCounts)
    /// Import records into this source; records up to `resumeAfter` were committed by an earlier, interrupted run.
    case started(sourceId: Int64, resumeAfter: Int?)
}

/// One decoded record with the bytes it came from, ready to import.
public struct RecordInput: Sendable {
    public var index: Int
    public var offset: Int64
    public var bytes: [UInt8]
    public var record: DecodedRecord

    public init(index: Int, offset: Int64, bytes: [UInt8], record: DecodedRecord) {
        self.index = index
        self.offset = offset
        self.bytes = bytes
        self.record = record
    }
}

/// The figures the overview screen shows.
public struct LedgerOverview: Sendable, Equatable {
    public var transactions: Int
    public var customers: Int
    public var sources: Int
    public var rawRecords: Int
    public var rejectedRecords: Int
    public var revokedTransactions: Int
    public var openFlags: Int
    public var renewalInfos: Int
    public var notifications: Int
}

/// One identifier of a customer.
public struct CustomerIdentifier: Hashable, Sendable {
    /// `originalTransactionId`, `appAccountToken` or `external`.
    public var kind: String
    public var value: String

    public init(kind: String, value: String) {
        self.kind = kind
        self.value = value
    }
}

/// One row of the customer list.
public struct CustomerSummary: Sendable, Equatable {
    public var id: Int64
    public var identifiers: [CustomerIdentifier]
    public var transactionCount: Int
    public var lastPurchase: Timestamp?
    public var latestExpiry: Timestamp?
    public var revokedCount: Int
}

/// Everything the ledger holds about one customer (bounded by the customer, not the ledger).
public struct CustomerRecords: Sendable {
    public var id: Int64
    public var identifiers: [CustomerIdentifier]
    public var transactions: [Transaction]
    public var firstSeen: [String: Timestamp]
    public var renewalInfos: [(info: RenewalInfo, seenAt: Timestamp)]
    public var notifications: [(notification: Notification, seenAt: Timestamp, transactionId: String?)]
}

/// A filter over flags.
public struct FlagQuery: Sendable {
    public var status: String?
    public var rule: String?
    public var since: Timestamp?
    public var customerId: Int64?
    public var after: String?
    public var limit: Int

    public init(status: String? = nil, rule: String? = nil, since: Timestamp? = nil, customerId: Int64? = nil, after: String? = nil, limit: Int = 100) {
        self.status = status
        self.rule = rule
        self.since = since
        self.customerId = customerId
        self.after = after
        self.limit = limit
    }
}

/// One entry of the append-only triage log.
public struct TriageEntry: Sendable, Equatable {
    public var flagId: String?
    public var customerId: Int64?
    public var at: Timestamp
    public var operatorName: String
    public var action: String
    public var note: String?
    public var fromStatus: String?
    public var toStatus: String?
}

/// An imported source, for the imports screen.
public struct SourceSummary: Sendable, Equatable {
    public var id: Int64
    public var path: String
    public var sha256: String
    public var size: Int64
    public var startedAt: Timestamp
    public var completedAt: Timestamp?
    public var counts: ImportCounts
}

/// A rejected record and why.
public struct RejectedRecord: Sendable, Equatable {
    public var id: Int64
    public var sourcePath: String
    public var index: Int
    public var offset: Int64
    public var kind: String
    public var code: String
    public var message: String
    public var raw: [UInt8]
}
