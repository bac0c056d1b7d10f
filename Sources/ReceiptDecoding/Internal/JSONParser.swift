import ReceiptModel

/// A bounded JSON parser over UTF-8 bytes (RFC 8259), producing ``JSONValue``.
///
/// It works on bytes, never `Character`s, keeps number literals as text, validates UTF-8 in strings,
/// and refuses nesting deeper than ``maxDepth`` so hostile input cannot exhaust the stack.
struct JSONParser {
    static let maxDepth = 64

    private let bytes: UnsafeBufferPointer<UInt8>
    private var index: Int
    private var depth = 0

    private init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
        self.index = 0
    }

    /// Parses exactly one JSON value (surrounding white space allowed).
    static func parse(_ bytes: UnsafeBufferPointer<UInt8>) throws(RecordError) -> JSONValue {
        var parser = JSONParser(bytes)
        parser.skipWhitespace()
        if parser.index == bytes.count {
            throw RecordError(code: "emptyInput", message: "the record is empty")
        }
        let value = try parser.parseValue()
        parser.skipWhitespace()
        if parser.index != bytes.count {
            throw parser.failure("unexpected \(parser.describeByte()) after the JSON value")
        }
        return value
    }

    /// Parses one JSON value from an array of bytes.
    static func parse(_ bytes: [UInt8]) throws(RecordError) -> JSONValue {
        try bytes.withUnsafeBufferPointer { buffer throws(RecordError) in try parse(buffer) }
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private func failure(_ what: String) -> RecordError {
        RecordError(code: "invalidJSON", message: "\(what) at byte \(index)")
    }

    private func truncated() -> RecordError {
        RecordError(code: "truncatedJSON", message: "the JSON ends early at byte \(index): the record is truncated")
    }

    private func describeByte() -> String {
        guard index < bytes.count else { return "end of input" }
        let byte = bytes[index]
        if byte >= 0x21 && byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
        return "byte 0x\(String(byte, radix: 16))"
    }

    private mutating func parseValue() throws(RecordError) -> JSONValue {
        guard index < bytes.count else { throw truncated() }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
        default: throw failure("unexpected \(describeByte())")
        }
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(RecordError) {
        let count = literal.utf8CodeUnitCount
        guard index + count <= bytes.count else { throw truncated() }
        let start = literal.utf8Start
        for offset in 0..<count where bytes[index + offset] != start[offset] {
            throw failure("invalid literal")
        }
        index += count
    }

    private mutating func enter() throws(RecordError) {
        depth += 1
        if depth > Self.maxDepth {
            throw RecordError(
                code: "nestingTooDeep", message: "JSON nests deeper than \(Self.maxDepth) levels at byte \(index)")
        }
    }

    private mutating func parseObject() throws(RecordError) -> JSONValue {
        try enter()
        index += 1
        var object = JSONObject()
        skipWhitespace()
        guard index < bytes.count else { throw truncated() }
        if bytes[index] == UInt8(ascii: "}") {
            index += 1
            depth -= 1
            return .object(object)
        }
        object.members.reserveCapacity(16)
        while true {
            skipWhitespace()
            guard index < bytes.count else { throw truncated() }
            guard bytes[index] == UInt8(ascii: "\"") else { throw failure("expected a member name, found \(describeByte())") }
            let key = try parseString()
            skipWhitespace()
            guard index < bytes.count else { throw truncated() }
            guard bytes[index] == UInt8(ascii: ":") else { throw failure("expected ':' after \"\(key)\"") }
            index += 1
            skipWhitespace()
            let value = try parseValue()
            object.members.append(JSONObject.Member(key: key, value: value))
            skipWhitespace()
            guard index < bytes.count else { throw truncated() }
            switch bytes[index] {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"):
                index += 1
                depth -= 1
                return .object(object)
            default: throw failure("expected ',' or '}' in an object, found \(describeByte())")
            }
        }
    }

    private mutating func parseArray() throws(RecordError) -> JSONValue {
        try enter()
        index += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        guard index < bytes.count else { throw truncated() }
        if bytes[index] == UInt8(ascii: "]") {
            index += 1
            depth -= 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try parseValue())
            skipWhitespace()
            guard index < bytes.count else { throw truncated() }
            switch bytes[index] {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"):
                index += 1
                depth -= 1
                return .array(elements)
            default: throw failure("expected ',' or ']' in an array, found \(describeByte())")
            }
        }
    }

    private mutating func parseNumber() throws(RecordError) -> String {
        let start = index
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count else { throw truncated() }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else if isDigit(bytes[index]) {
            while index < bytes.count && isDigit(bytes[index]) { index += 1 }
        } else {
            throw failure("invalid number")
        }
        if index < bytes.count && bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard index < bytes.count else { throw truncated() }
            guard isDigit(bytes[index]) else { throw failure("invalid number") }
            while index < bytes.count && isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count && (bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E")) {
            index += 1
            if index < bytes.count && (bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-")) {
                index += 1
            }
            guard index < bytes.count else { throw truncated() }
            guard isDigit(bytes[index]) else { throw failure("invalid number") }
            while index < bytes.count && isDigit(bytes[index]) { index += 1 }
        }
        if index - start > 64 { throw failure("number literal longer than 64 characters") }
        return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
    }

    /// Whether any of eight bytes is a quote, a backslash, a control character (< 0x20) or not ASCII (>= 0x80).
    /// Exact for the eight together (the tests of one byte at a time decide which).
    @inline(__always) static func needsLook(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        func hasZero(_ v: UInt64) -> UInt64 { (v &- ones) & ~v & highs }
        let control = (word &- ones &* 0x20) & ~word & highs
        return (control | hasZero(word ^ (ones &* 0x22)) | hasZero(word ^ (ones &* 0x5C)) | (word & highs)) != 0
    }

    private mutating func parseString() throws(RecordError) -> String {
        index += 1
        let start = index
        var ascii = true
        // Fast path: no escapes. Eight bytes at a time while none of them ends the string, escapes, is a control
        // character or is not ASCII (a JWS inside a notification is thousands of such bytes).
        while index < bytes.count {
            if index + 8 <= bytes.count,
                !Self.needsLook(UnsafeRawPointer(bytes.baseAddress! + index).loadUnaligned(as: UInt64.self))
            {
                index += 8
                continue
            }
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let slice = UnsafeBufferPointer(rebasing: bytes[start..<index])
                index += 1
                // ASCII needs no validation; anything else must be valid UTF-8, not repaired.
                if ascii { return String(decoding: slice, as: UTF8.self) }
                guard let string = String(validating: slice, as: UTF8.self) else {
                    throw RecordError(code: "invalidUTF8", message: "a string before byte \(index) is not valid UTF-8")
                }
                return string
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw failure("control character in a string") }
            if byte >= 0x80 { ascii = false }
            index += 1
        }
        guard index < bytes.count else { throw truncated() }
        var scratch = Array(UnsafeBufferPointer(rebasing: bytes[start..<index]))
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                guard let string = String(validating: scratch, as: UTF8.self) else {
                    throw RecordError(code: "invalidUTF8", message: "a string before byte \(index) is not valid UTF-8")
                }
                return string
            case UInt8(ascii: "\\"):
                index += 1
                guard index < bytes.count else { throw truncated() }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""): scratch.append(0x22)
                case UInt8(ascii: "\\"): scratch.append(0x5C)
                case UInt8(ascii: "/"): scratch.append(0x2F)
                case UInt8(ascii: "b"): scratch.append(0x08)
                case UInt8(ascii: "f"): scratch.append(0x0C)
                case UInt8(ascii: "n"): scratch.append(0x0A)
                case UInt8(ascii: "r"): scratch.append(0x0D)
                case UInt8(ascii: "t"): scratch.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try parseHex4()
                    if (0xD800...0xDBFF).contains(scalar) {
                        guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"),
                            bytes[index + 1] == UInt8(ascii: "u")
                        else { throw failure("unpaired UTF-16 surrogate") }
                        index += 2
                        let low = try parseHex4()
                        guard (0xDC00...0xDFFF).contains(low) else { throw failure("unpaired UTF-16 surrogate") }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else if (0xDC00...0xDFFF).contains(scalar) {
                        throw failure("unpaired UTF-16 surrogate")
                    }
                    guard let unicode = Unicode.Scalar(scalar) else { throw failure("invalid \\u escape") }
                    scratch.append(contentsOf: UTF8.encode(unicode)!)
                default: throw failure("invalid escape")
                }
            default:
                if byte < 0x20 { throw failure("control character in a string") }
                scratch.append(byte)
                index += 1
            }
        }
        throw truncated()
    }

    private mutating func parseHex4() throws(RecordError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw truncated() }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw failure("invalid \\u escape")
            }
            value = value << 4 | digit
            index += 1
        }
        return value
    }
}

@inline(__always) func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }
