import ReceiptModel

/// Collects warnings while a record is decoded.
final class DecodeNotes {
    var warnings: [String] = []
}

/// Typed, lenient access to the members of one JSON object, with errors that name the field and place.
///
/// Real App Store data sends ids and counters as strings or numbers, booleans as `"true"`, `"1"` or `1`,
/// and dates as integer, string or fractional milliseconds; this reader accepts each of those and rejects
/// anything else with a sentence such as `purchase_date_ms "abc" is not a number in in_app[2]`.
struct Fields {
    let object: JSONObject
    /// Where the object sits in the record, e.g. `in_app[2]`.
    let location: String
    let notes: DecodeNotes

    init(_ object: JSONObject, at location: String, notes: DecodeNotes) {
        self.object = object
        self.location = location
        self.notes = notes
    }

    subscript(key: String) -> JSONValue? { object[key] }

    private var place: String { location.isEmpty ? "" : " in \(location)" }

    func error(_ code: String, _ message: String) -> RecordError {
        RecordError(code: code, message: message + place)
    }

    /// A string or number as text; `null`, absent and the empty string are `nil`, and so is a masked value (`******`,
    /// said in a warning): an original transaction id or a token masked in two records would link them as one
    /// customer.
    func string(_ key: String) throws(RecordError) -> String? {
        guard let value = object[key] else { return nil }
        switch value {
        case .null: return nil
        case .string(let text):
            if isMasked(text) { return maskedAsAbsent(key) }
            return text.isEmpty ? nil : text
        case .number(let literal): return literal
        default: throw error("wrongType", "\(key) is \(value.typeName), expected a string")
        }
    }

    /// A string that must be present.
    func requiredString(_ key: String) throws(RecordError) -> String {
        guard let text = try string(key) else {
            throw error("missingField", "\(key) is required")
        }
        return text
    }

    /// A masked value (`******`) left out: said in a warning, once (a receipt's bundle id is read for it and for each
    /// of its purchases).
    private func maskedAsAbsent<T>(_ key: String) -> T? {
        let warning = "\(key) is masked\(place); treated as absent"
        if !notes.warnings.contains(warning) { notes.warnings.append(warning) }
        return nil
    }

    /// A transaction's id, which must be present and not masked: a purchase is stored and linked by it, and two masked
    /// ones (`******` in an anonymised copy) would read as one purchase. Masked, the record is rejected (`maskedId`).
    func requiredId(_ key: String) throws(RecordError) -> String {
        if case .string(let id) = object[key], isMasked(id) {
            throw RecordError(
                code: "maskedId",
                message: "\(key) is masked (\(id.prefix(8))…)\(place): a purchase is known by its id, and masked ones cannot be told apart")
        }
        return try requiredString(key)
    }

    /// An integer from a number (fractions truncated toward negative infinity) or a numeric string.
    func int64(_ key: String) throws(RecordError) -> Int64? {
        guard let value = object[key] else { return nil }
        switch value {
        case .null: return nil
        case .number(let literal): return try parseInteger(literal, key: key, quoted: false)
        case .string(let text):
            if text.isEmpty { return nil }
            if isMasked(text) { return maskedAsAbsent(key) }
            return try parseInteger(text, key: key, quoted: true)
        case .bool(let flag): return flag ? 1 : 0
        default: throw error("wrongType", "\(key) is \(value.typeName), expected a number")
        }
    }

    /// An `Int` field.
    func int(_ key: String) throws(RecordError) -> Int? {
        guard let value = try int64(key) else { return nil }
        guard let narrow = Int(exactly: value) else {
            throw error("numberOverflow", "\(key) \(value) is out of range")
        }
        return narrow
    }

    /// A timestamp in milliseconds.
    func timestamp(_ key: String) throws(RecordError) -> Timestamp? {
        try int64(key).map(Timestamp.init(millisecondsSince1970:))
    }

    /// A boolean from `true`/`false`, `"true"`/`"false"` (any case), `"1"`/`"0"` or `1`/`0`.
    func bool(_ key: String) throws(RecordError) -> Bool? {
        guard let value = object[key] else { return nil }
        switch value {
        case .null: return nil
        case .bool(let flag): return flag
        case .number(let literal):
            if literal == "1" { return true }
            if literal == "0" { return false }
        case .string(let text):
            switch text.lowercased() {
            case "true", "1", "yes": return true
            case "false", "0", "no": return false
            case "": return nil
            default: break
            }
        default: break
        }
        throw error("wrongType", "\(key) \(describe(value)) is not a boolean")
    }

    /// A legacy date: `NAME_ms` wins; otherwise `NAME` as milliseconds (iOS 6) or `yyyy-MM-dd HH:mm:ss Etc/GMT`.
    func legacyDate(_ date: LegacyDateName) throws(RecordError) -> Timestamp? {
        let name = date.name
        if let ms = try timestamp(date.milliseconds) { return ms }
        guard let value = object[name] else { return nil }
        switch value {
        case .number: return try timestamp(name)
        case .string(let text):
            if text.isEmpty { return nil }
            if text.utf8.allSatisfy(isDigit) { return try timestamp(name) }
            if isMasked(text) { return maskedAsAbsent(name) }
            if let parsed = parseLegacyHumanDate(text) { return parsed }
            throw error("invalidDate", "\(name) \"\(text)\" is not a date Apple sends")
        case .null: return nil
        default: throw error("wrongType", "\(name) is \(value.typeName), expected a date")
        }
    }

    /// An array of strings.
    func stringArray(_ key: String) throws(RecordError) -> [String]? {
        guard let value = object[key] else { return nil }
        if case .null = value { return nil }
        guard case .array(let elements) = value else {
            throw error("wrongType", "\(key) is \(value.typeName), expected an array")
        }
        var out: [String] = []
        for element in elements {
            switch element {
            case .string(let text): out.append(text)
            case .number(let literal): out.append(literal)
            default: throw error("wrongType", "\(key) holds \(element.typeName), expected strings")
            }
        }
        return out
    }

    /// The members whose names are not in `known`, kept raw.
    func unknownMembers(_ known: KeySet) -> JSONObject {
        var extra = JSONObject()
        for member in object where !known.contains(member.key) { extra.members.append(member) }
        return extra
    }

    /// The members whose names are in `keys`, kept raw in input order.
    func members(in keys: KeySet) -> JSONObject {
        var kept = JSONObject()
        for member in object where keys.contains(member.key) { kept.members.append(member) }
        return kept
    }

    private func describe(_ value: JSONValue) -> String {
        switch value {
        case .string(let text): "\"\(text.prefix(40))\""
        case .number(let literal): literal
        case .bool(let flag): String(flag)
        default: value.typeName
        }
    }

    private func parseInteger(_ text: String, key: String, quoted: Bool) throws(RecordError) -> Int64 {
        // The value as an error shows it: built only for an error (every integer of every record comes here).
        var shown: String { quoted ? "\"\(text.prefix(40))\"" : String(text.prefix(40)) }
        var negative = false
        var value: Int64 = 0
        var sawDigit = false
        var iterator = text.utf8.makeIterator()
        var byte = iterator.next()
        if byte == UInt8(ascii: "-") {
            negative = true
            byte = iterator.next()
        }
        while let current = byte, isDigit(current) {
            sawDigit = true
            let digit = Int64(current - 0x30)
            let (times, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times.addingReportingOverflow(negative ? -digit : digit)
            if overflow1 || overflow2 {
                throw error("numberOverflow", "\(key) \(shown) does not fit in 64 bits")
            }
            value = sum
            byte = iterator.next()
        }
        guard sawDigit else { throw error("notANumber", "\(key) \(shown) is not a number") }
        guard let rest = byte else { return value }
        // Fractional milliseconds (Xcode): floor the value; anything else is not a number.
        if rest == UInt8(ascii: ".") {
            var hasFraction = false
            var fractionDigits = 0
            while let next = iterator.next() {
                guard isDigit(next) else { throw error("notANumber", "\(key) \(shown) is not a number") }
                fractionDigits += 1
                if next != UInt8(ascii: "0") { hasFraction = true }
            }
            guard fractionDigits > 0 else { throw error("notANumber", "\(key) \(shown) is not a number") }
            return negative && hasFraction ? value - 1 : value
        }
        if rest == UInt8(ascii: "e") || rest == UInt8(ascii: "E"), !quoted, let double = Double(text) {
            guard double.isFinite, double.magnitude < 9.2e18 else {
                throw error("numberOverflow", "\(key) \(shown) does not fit in 64 bits")
            }
            return Int64(double.rounded(.down))
        }
        throw error("notANumber", "\(key) \(shown) is not a number")
    }
}

/// A legacy date's member names: `NAME`, and `NAME_ms`, made once (a name of 16 bytes or more is not a
/// small string, so `name + "_ms"` allocated at every date of every record).
struct LegacyDateName: Sendable {
    let name: String
    let milliseconds: String

    init(_ name: String) {
        self.name = name
        self.milliseconds = name + "_ms"
    }

    static let purchaseDate = LegacyDateName("purchase_date")
    static let originalPurchaseDate = LegacyDateName("original_purchase_date")
    static let expiresDate = LegacyDateName("expires_date")
    static let cancellationDate = LegacyDateName("cancellation_date")
    static let gracePeriodExpiresDate = LegacyDateName("grace_period_expires_date")
    static let receiptCreationDate = LegacyDateName("receipt_creation_date")
    static let requestDate = LegacyDateName("request_date")
    static let expirationDate = LegacyDateName("expiration_date")
    static let preorderDate = LegacyDateName("preorder_date")
    static let autoRenewStatusChangeDate = LegacyDateName("auto_renew_status_change_date")
}

/// A value masked by whoever published the data (`******`).
func isMasked(_ text: String) -> Bool {
    !text.isEmpty && text.utf8.allSatisfy { $0 == UInt8(ascii: "*") }
}

/// Parses Apple's legacy human date `2021-03-01 07:00:00 Etc/GMT` (GMT/UTC zones only).
func parseLegacyHumanDate(_ text: String) -> Timestamp? {
    let bytes = Array(text.utf8)
    guard bytes.count >= 19, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
        bytes[10] == UInt8(ascii: " ") || bytes[10] == UInt8(ascii: "T"), bytes[13] == UInt8(ascii: ":"),
        bytes[16] == UInt8(ascii: ":")
    else { return nil }
    let zone = String(decoding: bytes[19...], as: UTF8.self).trimmingSpaces()
    guard ["Etc/GMT", "GMT", "UTC", "Z", ""].contains(zone) else { return nil }
    func number(_ range: Range<Int>) -> Int64? { decimal(bytes, range) }
    guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
        let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
        (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
    else { return nil }
    return Timestamp.utc(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
}

extension String {
    func trimmingSpaces() -> String {
        var scalars = Substring(self)
        while scalars.first == " " { scalars.removeFirst() }
        while scalars.last == " " { scalars.removeLast() }
        return String(scalars)
    }
}

/// The decimal number in `bytes[range]`, or `nil` when the range is out of bounds or holds a non-digit.
func decimal(_ bytes: [UInt8], _ range: Range<Int>) -> Int64? {
    guard range.upperBound <= bytes.count else { return nil }
    var value: Int64 = 0
    for i in range {
        guard isDigit(bytes[i]) else { return nil }
        value = value * 10 + Int64(bytes[i] - 0x30)
    }
    return value
}
