/// A fixed set of member names, asked for every member of every object the decoders read.
///
/// A name matches as it is spelled: UTF-8 length first, as ``JSONObject``'s lookup does, so a canonically
/// equivalent spelling of another length is another name (the names the decoders keep are ASCII).
///
/// Names are grouped by their UTF-8 length, so `contains` compares a key only with the few names of its
/// length (a byte comparison) instead of hashing it: `Set<String>` lookups, two per member of each legacy
/// transaction, were 6% of an import's CPU (`perf record`, docs/PERFORMANCE.md).
struct KeySet: Sendable, ExpressibleByArrayLiteral {
    /// `byLength[n]` holds the names of `n` bytes.
    private var byLength: [[String]] = []

    init(_ names: some Sequence<String>) {
        for name in names where !contains(name) {
            let length = name.utf8.count
            if byLength.count <= length { byLength += Array(repeating: [], count: length + 1 - byLength.count) }
            byLength[length].append(name)
        }
    }

    init(arrayLiteral names: String...) {
        self.init(names)
    }

    func contains(_ key: String) -> Bool {
        let length = key.utf8.count
        guard length < byLength.count else { return false }
        for name in byLength[length] where name == key { return true }
        return false
    }

    /// The names of both sets.
    func union(_ other: KeySet) -> KeySet {
        KeySet(Array(byLength.joined()) + other.byLength.joined())
    }
}
