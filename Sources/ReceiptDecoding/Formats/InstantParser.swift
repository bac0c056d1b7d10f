import ReceiptModel

/// Instants as people type them on a command line.
public enum InstantParser {
    /// Milliseconds (`1743494400000`), a date (`2025-03-01`, midnight UTC), RFC 3339 (`2025-03-01T12:00:00Z`,
    /// `+01:00`), or an instant as the dashboard and `lookup` show one (`2025-03-01 12:00`, with or without
    /// seconds or the `T`), which is UTC as everything they show.
    /// The same, and `now` (any case) for the instant given: the help of `--at` says "default: now", and a person
    /// types what it says. The core reads no clock, so the caller hands it in.
    public static func parse(_ text: String, now: Timestamp) -> Timestamp? {
        text.lowercased() == "now" ? now : parse(text)
    }

    /// A bare integer is milliseconds; when it lands before 1973 and read as seconds it would fall in 2000-2099, it
    /// was likely meant as seconds: that instant (the integer times 1000), for a warning. The reading is unchanged.
    public static func secondsMisread(_ text: String) -> Timestamp? {
        guard !text.isEmpty, text.utf8.allSatisfy(isDigit), let value = Int64(text), value < 100_000_000_000 else { return nil }
        let seconds = value * 1000
        return (946_684_800_000..<4_102_444_800_000).contains(seconds) ? Timestamp(millisecondsSince1970: seconds) : nil
    }

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
