import ArgumentParser
import Foundation
import ReceiptDecoding
import ReceiptModel

/// Parses `--at` and its kind: `now`, ISO 8601 or milliseconds. A bare integer that reads as a date before 1973
/// but as seconds would be a plausible one is still milliseconds, and (with `warn`) standard error says so.
func parseInstant(_ text: String, option: String, now: Timestamp = currentTimestamp(), warn: Bool = true) throws -> Timestamp {
    guard let instant = InstantParser.parse(text, now: now) else {
        throw ValidationError(
            "\(option) takes now, a date or an instant (2025-03-01, 2025-03-01 12:00 in UTC, 2025-03-01T12:00:00+01:00) or milliseconds, not \(text)")
    }
    if warn, let seconds = InstantParser.secondsMisread(text) {
        FileHandle.standardError.write(
            Data(
                ("receiptdesk: \(option) \(text) is read as milliseconds, \(instant.iso8601); for seconds, give "
                    + "\(seconds.millisecondsSince1970) (\(seconds.iso8601))\n").utf8))
    }
    return instant
}

/// What to add to ArgumentParser's "Missing value for '--at <TIME>'" when the word after the option was a negative
/// number, which it reads as an option of its own: how to give it (`--at=-5`).
func negativeValueHint(_ message: String, arguments: [String]) -> String? {
    guard let option = message.firstMatch(of: #/Missing value for '(--[a-z-]+)/#)?.1 else { return nil }
    guard let position = arguments.firstIndex(of: String(option)), position + 1 < arguments.count else { return nil }
    let value = arguments[position + 1]
    guard value.count > 1, value.hasPrefix("-"), value.dropFirst().first?.isNumber == true else { return nil }
    return "receiptdesk: \(value) after \(option) is read as an option; give a value that starts with - as \(option)=\(value)"
}
