import Entitlements

/// The kinds of identifier a customer is known by. The raw values are what the ledger stores.
public enum IdentifierKind: String, Hashable, Sendable, CaseIterable {
    /// The first transaction of a purchase chain: every renewal carries it.
    case originalTransactionId
    /// The UUID the app set on the purchase.
    case appAccountToken
    /// The account id in your own system, from a `customers.csv` mapping.
    case external
}

/// An entry of the append-only triage log. The raw values are what the log stores and `triage` takes.
public enum TriageAction: String, Hashable, Sendable, CaseIterable {
    /// Acknowledge: someone is on it.
    case ack
    case resolve
    /// Back to open (also how an acknowledgement or a resolution is undone).
    case reopen
    /// A note about a customer; moves no flag.
    case note

    /// The status a flag is in after this action; nil for a note.
    public var target: FlagStatus? {
        switch self {
        case .ack: .acknowledged
        case .resolve: .resolved
        case .reopen: .open
        case .note: nil
        }
    }

    /// The action that moves a flag to `status`.
    public init(toReach status: FlagStatus) {
        switch status {
        case .acknowledged: self = .ack
        case .resolved: self = .resolve
        case .open: self = .reopen
        }
    }
}

/// What became of one input record on import. The raw values are what the ledger stores.
public enum RecordStatus: String, Hashable, Sendable, CaseIterable {
    case imported
    case duplicate
    case rejected
}
