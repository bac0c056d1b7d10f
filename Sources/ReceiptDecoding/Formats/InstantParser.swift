import ReceiptModel

/// Instants as people type them on a command line.
public enum InstantParser {
    /// Milliseconds (`1743494400000`), a date (`2025-03-01`, midnight UTC) or RFC 3339 (`2025-03-01T12:00:00Z`, `+01:00`).
    public static func parse(_ text: String) -> Timestamp? {
        let digits = text.hasPrefix("-") ? text.dropFirst() : text[...]
        if !digits.isEmpty, digits.utf8.allSatisfy(isDigit), let ms = Int64(text) { return Timestamp(millisecondsSince1970: ms) }
        if text.utf8.count == 10, let date = RFC3339.parse(text + "T00:00:00Z") { return date }
        return RFC3339.parse(text)
    }
}
