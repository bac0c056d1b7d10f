import ReceiptModel

/// Instants as people type them on a command line.
public enum InstantParser {
    /// Milliseconds (`1743494400000`), a date (`2025-03-01`, midnight UTC), RFC 3339 (`2025-03-01T12:00:00Z`,
    /// `+01:00`), or an instant as the dashboard and `lookup` show one (`2025-03-01 12:00`, with or without
    /// seconds or the `T`), which is UTC as everything they show.
    public static func parse(_ text: String) -> Timestamp? {
        let digits = text.hasPrefix("-") ? text.dropFirst() : text[...]
        if !digits.isEmpty, digits.utf8.allSatisfy(isDigit), let ms = Int64(text) { return Timestamp(millisecondsSince1970: ms) }
        if text.utf8.count == 10, let date = RFC3339.parse(text + "T00:00:00Z") { return date }
        // To the minute, as shown: RFC 3339 wants the seconds (it takes the space, and no zone as UTC, itself).
        let bytes = Array(text.utf8)
        if bytes.count == 16, [UInt8(ascii: " "), UInt8(ascii: "T"), UInt8(ascii: "t")].contains(bytes[10]), isDigit(bytes[15]) {
            return RFC3339.parse(text + ":00")
        }
        return RFC3339.parse(text)
    }
}
