import ArgumentParser
import ReceiptDecoding
import ReceiptModel

/// Parses `--at`: ISO 8601 or milliseconds.
func parseInstant(_ text: String, option: String) throws -> Timestamp {
    guard let instant = InstantParser.parse(text) else {
        throw ValidationError("\(option) takes ISO 8601 (2025-03-01, 2025-03-01T12:00:00Z) or milliseconds, not \(text)")
    }
    return instant
}
