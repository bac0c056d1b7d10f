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
    if warn, let meant = likelyMeant(text) {
        FileHandle.standardError.write(
            Data(("receiptdesk: \(option) \(text) is read as milliseconds, \(instant.iso8601); \(meant)\n").utf8))
    }
    return instant
}

/// What a bare integer read as milliseconds before 1973 was more likely meant as, and how to give that: a day written
/// without dashes (`20250701`), a year (`2025`), or seconds since 1970. Nil for anything else.
func likelyMeant(_ text: String) -> String? {
    guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
    let digits = Array(text)
    if digits.count == 8, let year = Int(String(digits[0..<4])), (1970...2099).contains(year) {
        let day = "\(String(digits[0..<4]))-\(String(digits[4..<6]))-\(String(digits[6..<8]))"
        if InstantParser.parse(day) != nil { return "for the day \(day), give \(day)" }
    }
    if digits.count == 4, let year = Int(text), (1970...2099).contains(year) { return "for the start of \(year), give \(year)-01-01" }
    if let seconds = InstantParser.secondsMisread(text) {
        return "for seconds, give \(seconds.millisecondsSince1970) (\(seconds.iso8601))"
    }
    return nil
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
