/// Where a record came from: the input, its position, and the place inside it.
///
/// Every figure on screen can be traced back through this to the bytes it came from.
public struct Provenance: Hashable, Sendable, CustomStringConvertible {
    /// The input's path as given (or a label such as `-` for standard input).
    public var path: String
    /// The record's index within the input, from 0.
    public var index: Int
    /// The byte offset of the record's first byte in the input.
    public var byteOffset: Int64
    /// Where inside the record, e.g. `in_app[3]` or `data.signedTransactionInfo`; empty for the whole record.
    public var location: String

    /// Creates a provenance.
    public init(path: String, index: Int, byteOffset: Int64 = 0, location: String = "") {
        self.path = path
        self.index = index
        self.byteOffset = byteOffset
        self.location = location
    }

    /// `path#index`, the record's short name.
    public var recordName: String { "\(path)#\(index)" }

    /// `path#index` followed by the inner location when there is one.
    public var description: String { location.isEmpty ? recordName : "\(recordName) \(location)" }

    /// The same record, at an inner location.
    public func at(_ location: String) -> Provenance {
        var copy = self
        copy.location = self.location.isEmpty ? location : "\(self.location).\(location)"
        return copy
    }
}

/// How far a record's origin was checked.
public enum Verification: String, Hashable, Sendable, CaseIterable {
    /// The signature and its certificate chain were checked against a trusted root.
    case verified
    /// The data carries no signature by design (Xcode and local testing), or a signature nobody can check.
    case unsigned
    /// Verification was turned off (`--no-verify`).
    case skipped
    /// The signature or chain did not verify.
    case failed
    /// Plain JSON that never carries a signature (verifyReceipt responses, V1 notifications).
    case notApplicable

    /// Rank used when merging: a verified source wins over anything else.
    public var trustRank: Int {
        switch self {
        case .verified: 4
        case .notApplicable: 2
        case .unsigned: 1
        case .skipped: 1
        case .failed: 0
        }
    }
}
