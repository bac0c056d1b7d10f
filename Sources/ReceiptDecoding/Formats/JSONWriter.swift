import ReceiptModel

/// Writes JSON into a byte buffer: compact, escaped, in the order the caller gives.
///
/// Used for `decode --json` and the other machine-readable outputs, where speed matters and the
/// key order is part of what people read.
public struct JSONWriter: Sendable {
    /// The bytes written so far.
    public private(set) var bytes: [UInt8] = []
    /// Whether a value was written at the current level (the next needs a comma first), and the same for
    /// each enclosing level.
    private var afterValue = false
    private var enclosing: [Bool] = []
    /// When set, object members whose value is absent (`nil`) are left out instead of written as `null`.
    public var omitsAbsentMembers = false

    public init() {}

    /// Starts an object (as a value or as the member `key` of the enclosing object).
    public mutating func beginObject(_ key: String? = nil) {
        prefix(key)
        bytes.append(UInt8(ascii: "{"))
        enclosing.append(afterValue)
        afterValue = false
    }

    public mutating func endObject() {
        afterValue = enclosing.removeLast()
        bytes.append(UInt8(ascii: "}"))
    }

    /// Starts an array.
    public mutating func beginArray(_ key: String? = nil) {
        prefix(key)
        bytes.append(UInt8(ascii: "["))
        enclosing.append(afterValue)
        afterValue = false
    }

    public mutating func endArray() {
        afterValue = enclosing.removeLast()
        bytes.append(UInt8(ascii: "]"))
    }

    /// Writes a string member or element; `nil` writes `null`.
    public mutating func string(_ key: String?, _ value: String?) {
        if value == nil && key != nil && omitsAbsentMembers { return }
        prefix(key)
        if let value { writeString(value) } else { appendLiteral("null") }
    }

    /// Writes an integer member or element; `nil` writes `null`.
    public mutating func int(_ key: String?, _ value: Int64?) {
        if value == nil && key != nil && omitsAbsentMembers { return }
        prefix(key)
        if let value { writeInteger(value) } else { appendLiteral("null") }
    }

    /// Writes an integer member or element.
    public mutating func int(_ key: String?, _ value: Int?) {
        int(key, value.map(Int64.init))
    }

    /// Writes a boolean member or element; `nil` writes `null`.
    public mutating func bool(_ key: String?, _ value: Bool?) {
        if value == nil && key != nil && omitsAbsentMembers { return }
        prefix(key)
        if let value { appendLiteral(value ? "true" : "false") } else { appendLiteral("null") }
    }

    /// Writes `null`.
    public mutating func null(_ key: String?) {
        if key != nil && omitsAbsentMembers { return }
        prefix(key)
        appendLiteral("null")
    }

    /// Writes a number given as its literal text (already valid JSON).
    public mutating func rawNumber(_ key: String?, _ literal: String) {
        prefix(key)
        appendLiteral(literal)
    }

    /// Writes a ``JSONValue`` as it arrived.
    public mutating func value(_ key: String?, _ value: JSONValue) {
        switch value {
        case .null:
            // Raw data keeps its explicit nulls, even when absent fields are left out.
            prefix(key)
            appendLiteral("null")
        case .bool(let flag): bool(key, flag)
        case .number(let literal): rawNumber(key, literal)
        case .string(let text): string(key, text)
        case .array(let elements):
            beginArray(key)
            for element in elements { self.value(nil, element) }
            endArray()
        case .object(let object):
            beginObject(key)
            for member in object { self.value(member.key, member.value) }
            endObject()
        }
    }

    /// Ends the current line (for NDJSON output).
    public mutating func newline() {
        bytes.append(0x0A)
    }

    /// Makes room for `count` bytes in all, so a writer that knows its size grows its buffer once.
    public mutating func reserveCapacity(_ count: Int) {
        bytes.reserveCapacity(count)
    }

    /// Empties the buffer, keeping its capacity.
    public mutating func reset() {
        bytes.removeAll(keepingCapacity: true)
        afterValue = false
        enclosing.removeAll(keepingCapacity: true)
    }

    private mutating func prefix(_ key: String?) {
        if afterValue { bytes.append(UInt8(ascii: ",")) }
        afterValue = true
        if let key {
            writeString(key)
            bytes.append(UInt8(ascii: ":"))
        }
    }

    /// Starts a member whose name is given as its JSON text already, quoted and with its colon (`"price":`),
    /// as the writers of model types keep their names.
    mutating func member(quotedKey: [UInt8]) {
        if afterValue { bytes.append(UInt8(ascii: ",")) }
        afterValue = true
        bytes.append(contentsOf: quotedKey)
    }

    /// Writes an integer's digits (without making a `String` of them).
    mutating func writeInteger(_ value: Int64) {
        var magnitude = value.magnitude
        // 19 digits and a sign at most.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var start = digits.count
            repeat {
                start -= 1
                digits[start] = UInt8(truncatingIfNeeded: magnitude % 10) + UInt8(ascii: "0")
                magnitude /= 10
            } while magnitude > 0
            if value < 0 {
                start -= 1
                digits[start] = UInt8(ascii: "-")
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: digits[start...]))
        }
    }

    mutating func appendLiteral(_ text: String) {
        bytes.append(contentsOf: text.utf8)
    }

    mutating func writeString(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        writeEscaped(text)
        bytes.append(UInt8(ascii: "\""))
    }

    /// Writes a provenance as the string its `description` is, without making that string first (every
    /// transaction the import writes lists its sources).
    mutating func provenance(_ source: Provenance) {
        prefix(nil)
        bytes.append(UInt8(ascii: "\""))
        writeEscaped(source.path)
        bytes.append(UInt8(ascii: "#"))
        writeInteger(Int64(source.index))
        if !source.location.isEmpty {
            bytes.append(UInt8(ascii: " "))
            writeEscaped(source.location)
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// Writes a string's characters, escaped, without quotes.
    private mutating func writeEscaped(_ text: String) {
        // Fast path: most strings need no escaping and are copied in one go.
        let clean = text.utf8.withContiguousStorageIfAvailable { utf8 -> Bool in
            for byte in utf8 where byte < 0x20 || byte == 0x22 || byte == 0x5C || byte == 0x7F { return false }
            bytes.append(contentsOf: utf8)
            return true
        }
        if clean == true { return }
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(0x5C); bytes.append(byte)
            case UInt8(ascii: "\\"): bytes.append(0x5C); bytes.append(byte)
            case 0x0A: bytes.append(0x5C); bytes.append(UInt8(ascii: "n"))
            case 0x0D: bytes.append(0x5C); bytes.append(UInt8(ascii: "r"))
            case 0x09: bytes.append(0x5C); bytes.append(UInt8(ascii: "t"))
            case 0..<0x20, 0x7F:
                let hex = Array("0123456789abcdef".utf8)
                bytes.append(contentsOf: [0x5C, UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
                bytes.append(hex[Int(byte >> 4)])
                bytes.append(hex[Int(byte & 15)])
            default: bytes.append(byte)
            }
        }
    }
}
