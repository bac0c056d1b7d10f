import ReceiptModel
import SwiftASN1

/// One attribute of an app receipt's payload, or of an in-app purchase receipt inside it.
///
/// ```
/// ReceiptAttribute ::= SEQUENCE {
///     type    INTEGER,
///     version INTEGER,
///     value   OCTET STRING }
/// ```
/// The value's octets are themselves DER: an INTEGER, a UTF8String or an IA5String (dates are
/// RFC 3339 text), or for type 17 a SET OF ReceiptAttribute (one in-app purchase).
struct ReceiptAttribute {
    let type: Int
    let value: [UInt8]

    /// Reads a `SET OF ReceiptAttribute` (BER or DER).
    static func parseSet(_ bytes: [UInt8], context: String) throws(RecordError) -> [ReceiptAttribute] {
        let root: ASN1Node
        do {
            root = try BER.parse(bytes)
        } catch {
            throw RecordError(code: "malformed", message: "\(context) is not a BER SET of attributes")
        }
        guard root.identifier == .set, case .constructed(let children) = root.content else {
            throw RecordError(code: "malformed", message: "\(context) is not a SET of attributes")
        }
        var attributes: [ReceiptAttribute] = []
        for child in children {
            guard child.identifier == .sequence, case .constructed(let parts) = child.content else {
                throw RecordError(code: "malformed", message: "an attribute in \(context) is not a SEQUENCE")
            }
            let nodes = Array(parts)
            guard nodes.count >= 3, let type = BERValue.integer(nodes[0]), let narrow = Int(exactly: type) else {
                throw RecordError(code: "malformed", message: "an attribute in \(context) lacks type, version and value")
            }
            guard nodes[2].identifier == .octetString, let value = BERValue.octets(nodes[2]) else {
                throw RecordError(
                    code: "malformedAttribute", message: "attribute \(type) in \(context) has no OCTET STRING value")
            }
            attributes.append(ReceiptAttribute(type: narrow, value: value))
        }
        return attributes
    }

    /// The value as an integer; `nil` when the value is empty (an unused attribute).
    /// - Throws: `malformedAttribute` when the value is not one BER INTEGER that fits in 64 bits.
    func integer(context: String) throws(RecordError) -> Int64? {
        if value.isEmpty { return nil }
        guard let node = try? BER.parse(value), node.identifier == .integer else {
            throw malformed("is not an INTEGER", context: context)
        }
        guard let integer = BERValue.integer(node) else { throw malformed("does not fit in 64 bits", context: context) }
        return integer
    }

    /// The value as text (UTF8String or IA5String); `nil` when the value or the string is empty (unused).
    /// - Throws: `malformedAttribute` when the value is another type or not UTF-8.
    func text(context: String) throws(RecordError) -> String? {
        if value.isEmpty { return nil }
        guard let node = try? BER.parse(value), node.identifier == .utf8String || node.identifier == .ia5String,
            let octets = BERValue.octets(node)
        else { throw malformed("is not a UTF8String or IA5String", context: context) }
        if octets.isEmpty { return nil }
        guard let text = String(validating: octets, as: UTF8.self) else { throw malformed("is not UTF-8", context: context) }
        return text
    }

    /// The value as an RFC 3339 date; `nil` when empty.
    func date(context: String) throws(RecordError) -> Timestamp? {
        guard let text = try text(context: context) else { return nil }
        guard let date = RFC3339.parse(text) else {
            throw RecordError(code: "invalidDate", message: "attribute \(type) \"\(text.prefix(40))\" is not an RFC 3339 date in \(context)")
        }
        return date
    }

    private func malformed(_ what: String, context: String) -> RecordError {
        RecordError(code: "malformedAttribute", message: "attribute \(type) in \(context) \(what); the receipt is damaged")
    }

    // For unmapped attributes a value that is not an integer or text is no error: it is kept as base64.
    private var lenientInteger: Int64? {
        do { return try integer(context: "") } catch { return nil }
    }
    private var lenientText: String? {
        do { return try text(context: "") } catch { return nil }
    }

    /// The value kept raw for attributes this version does not map: text, integer, or base64.
    /// Nothing is lost: a value that is neither is kept as the base64 of its bytes.
    var rawJSON: JSONValue {
        if value.isEmpty { return .null }
        if let integer = lenientInteger { return .number(String(integer)) }
        if let text = lenientText { return .string(text) }
        return .string(Base64.encode(value))
    }
}

/// Helpers over BER nodes.
enum BERValue {
    /// A primitive INTEGER's value when it fits in 64 bits.
    static func integer(_ node: ASN1Node) -> Int64? {
        guard node.identifier == .integer, case .primitive(let bytes) = node.content, !bytes.isEmpty, bytes.count <= 8
        else { return nil }
        var value: Int64 = (bytes.first! & 0x80) != 0 ? -1 : 0
        for byte in bytes { value = value << 8 | Int64(byte) }
        return value
    }

    /// The octets of a primitive node, or of a constructed (chunked, BER) string.
    static func octets(_ node: ASN1Node) -> [UInt8]? {
        switch node.content {
        case .primitive(let bytes): return Array(bytes)
        case .constructed(let children):
            var out: [UInt8] = []
            for child in children {
                guard let part = octets(child) else { return nil }
                out.append(contentsOf: part)
            }
            return out
        }
    }

    /// The children of a constructed node.
    static func children(_ node: ASN1Node) -> [ASN1Node] {
        if case .constructed(let children) = node.content { return Array(children) }
        return []
    }
}

/// RFC 3339 dates as receipts write them: `2020-07-22T18:33:15Z`, with or without fractions,
/// with `Z`, `+01:00` or `+0100`.
enum RFC3339 {
    static func parse(_ text: String) -> Timestamp? {
        let b = Array(text.utf8)
        guard b.count >= 19, b[4] == UInt8(ascii: "-"), b[7] == UInt8(ascii: "-"),
            b[10] == UInt8(ascii: "T") || b[10] == UInt8(ascii: "t") || b[10] == UInt8(ascii: " "),
            b[13] == UInt8(ascii: ":"), b[16] == UInt8(ascii: ":")
        else { return nil }
        func number(_ range: Range<Int>) -> Int64? { decimal(b, range) }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
            (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        var i = 19
        var millis: Int64 = 0
        if i < b.count, b[i] == UInt8(ascii: ".") {
            i += 1
            var digits = 0
            while i < b.count, isDigit(b[i]) {
                if digits < 3 { millis = millis * 10 + Int64(b[i] - 0x30) }
                digits += 1
                i += 1
            }
            guard digits > 0 else { return nil }
            if digits < 3 { for _ in digits..<3 { millis *= 10 } }
        }
        var offsetMinutes: Int64 = 0
        if i == b.count {
            // No zone: receipts mean UTC.
        } else if b[i] == UInt8(ascii: "Z") || b[i] == UInt8(ascii: "z") {
            i += 1
        } else if b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") {
            let sign: Int64 = b[i] == UInt8(ascii: "-") ? -1 : 1
            guard let hours = number((i + 1)..<(i + 3)) else { return nil }
            var next = i + 3
            if next < b.count, b[next] == UInt8(ascii: ":") { next += 1 }
            guard let minutes = number(next..<(next + 2)) else { return nil }
            offsetMinutes = sign * (hours * 60 + minutes)
            i = next + 2
        } else {
            return nil
        }
        guard i == b.count else { return nil }
        let local = Timestamp.utc(
            year: year, month: month, day: day, hour: hour, minute: minute, second: second, millisecond: millis)
        return local.adding(milliseconds: -offsetMinutes * 60_000)
    }
}
