import ArgumentParser
import ReceiptDecoding
import ReceiptModel

/// Parses `--at`: ISO 8601 or milliseconds.
func parseInstant(_ text: String, option: String) throws -> Timestamp {
    guard let instant = InstantParser.parse(text) else {
        throw ValidationError("\(option) takes a date or an instant (2025-03-01, 2025-03-01 12:00 in UTC, 2025-03-01T12:00:00+01:00) or milliseconds, not \(text)")
    }
    return instant
}
