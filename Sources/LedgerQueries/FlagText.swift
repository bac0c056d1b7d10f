import Entitlements

/// The flag queue's text filter (``FlagQuery/text``, the dashboard's `/`), defined once: the ledger's SQL and the
/// dashboard's preview of the loaded flags both match by it, so that what the preview shows Enter does not take
/// away.
///
/// A flag matches when its id, rule, product, customer (`c` and its number) or detail holds the text, ASCII
/// letters in either case (what SQLite's LIKE folds; other letters as typed), or holds the text with an instant
/// typed as the dashboard shows it, `2025-07-01 02:00`, written as ISO 8601 writes it, `2025-07-01T02:00`.
public enum FlagText {
    /// What the fields are searched for: the text ASCII-lowercased, and its ISO 8601 form when that differs.
    public static func needles(_ text: String) -> [String] {
        let typed = asciiLowercased(text)
        let iso = isoInstants(in: typed)
        return iso == typed ? [typed] : [typed, iso]
    }

    /// The fields of a flag the filter searches, as the ledger holds them (`customer_id` as `c<n>`).
    public static func fields(_ flag: RefundFlag) -> [String] {
        [flag.id, flag.rule, flag.productId ?? "", flag.customerId.map { "c\($0)" } ?? "", flag.detail]
    }

    /// Whether a flag matches the filter's needles.
    public static func matches(_ flag: RefundFlag, _ needles: [String]) -> Bool {
        // Bytes, as LIKE compares (String's contains takes a composed and a decomposed accent for the same letter).
        let fields = fields(flag).map(asciiLowercased)
        return needles.contains { needle in needle.isEmpty || fields.contains { $0.utf8.firstRange(of: needle.utf8) != nil } }
    }

    /// Only `A`-`Z` lowercased, as SQLite's LIKE and the PostgreSQL query compare.
    public static func asciiLowercased(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 >= 0x41 && $0 <= 0x5A }) else { return text }
        return String(decoding: text.utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 0x20 : $0 }, as: UTF8.self)
    }

    /// An instant typed as the dashboard shows it, `2025-07-01 02:00`, as ISO 8601 writes it in a detail (lowercased
    /// as the fields are compared, `2025-07-01t02:00`): the space after a date, before a digit, becomes the `t`.
    static func isoInstants(in text: String) -> String {
        var bytes = Array(text.utf8)
        func digit(_ i: Int) -> Bool { bytes.indices.contains(i) && bytes[i] >= 0x30 && bytes[i] <= 0x39 }
        for i in bytes.indices where i >= 10 && bytes[i] == UInt8(ascii: " ") && digit(i + 1) {
            let date = (i - 10)..<i
            let shape = date.allSatisfy { j in j - date.lowerBound == 4 || j - date.lowerBound == 7 ? bytes[j] == UInt8(ascii: "-") : digit(j) }
            if shape { bytes[i] = UInt8(ascii: "t") }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
