/// Where a refund flag is in its triage lifecycle. The raw values are what the ledger stores and the
/// JSON output prints (DESIGN section 10).
public enum FlagStatus: String, Hashable, Sendable, CaseIterable {
    /// Found by a rule, nobody has looked at it yet.
    case open
    /// Someone is on it.
    case acknowledged
    /// Dealt with (usually with a note saying how).
    case resolved
}
