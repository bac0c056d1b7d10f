/// The kind of an input record (DESIGN section 12).
public enum RecordKind: String, Hashable, Sendable, CaseIterable {
    case verifyReceipt, notificationV1, notificationV2, signedTransaction, signedRenewalInfo, appReceipt
    case serverAPIResponse, unknown
}

/// Why a record was rejected: a stable code, a sentence a person can act on, and where.
public struct RecordError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The stable code, such as `truncatedJSON` or `chainInvalid`.
    public var code: String
    /// What is wrong and, where it helps, what to do.
    public var message: String

    public init(code: String, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }
}

/// One input record after decoding: what it held, or why it was rejected, with its provenance.
public struct DecodedRecord: Sendable {
    public var provenance: Provenance
    public var kind: RecordKind
    public var verification: Verification
    public var transactions: [Transaction]
    public var renewalInfos: [RenewalInfo]
    public var notification: Notification?
    public var receipt: AppReceipt?
    /// Set when the record is rejected.
    public var error: RecordError?
    /// Things a person should know that did not stop the record (masked values, placeholders).
    public var warnings: [String]
    /// The record's bytes as read, kept for rejected records so nothing is lost.
    public var raw: [UInt8]

    /// Creates an accepted, empty record.
    public init(provenance: Provenance, kind: RecordKind, verification: Verification = .notApplicable) {
        self.provenance = provenance
        self.kind = kind
        self.verification = verification
        self.transactions = []
        self.renewalInfos = []
        self.warnings = []
        self.raw = []
    }

    /// Creates a rejected record.
    public static func rejected(
        _ provenance: Provenance, kind: RecordKind, verification: Verification = .notApplicable,
        error: RecordError, raw: [UInt8]
    ) -> DecodedRecord {
        var record = DecodedRecord(provenance: provenance, kind: kind, verification: verification)
        record.error = error
        record.raw = raw
        return record
    }

    /// Whether the record was accepted.
    public var isOK: Bool { error == nil }
}
