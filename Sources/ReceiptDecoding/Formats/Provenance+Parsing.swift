import ReceiptModel

extension Provenance {
    /// Parses `path#index` optionally followed by a space and an inner location.
    public init?(parsing text: String) {
        guard let hash = text.lastIndex(of: "#") else { return nil }
        let path = String(text[..<hash])
        let rest = text[text.index(after: hash)...]
        let parts = rest.split(separator: " ", maxSplits: 1)
        guard let first = parts.first, let index = Int(first) else { return nil }
        self.init(path: path, index: index, location: parts.count > 1 ? String(parts[1]) : "")
    }
}
