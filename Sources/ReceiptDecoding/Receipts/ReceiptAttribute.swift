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

    /// The value kept raw for attributes this version does not map: text, integer, or base64; `null` when unused.
    /// Nothing is lost: a value that is neither is kept as the base64 of its bytes. An empty value and an empty
    /// string are both an unused attribute (DESIGN section 2), as they are for the attributes that are mapped.
    var rawJSON: JSONValue {
        if value.isEmpty || isEmptyString { return .null }
        if let integer = lenientInteger { return .number(String(integer)) }
        if let text = lenientText { return .string(text) }
        return .string(Base64.encode(value))
    }

    /// Whether the value is a UTF8String or IA5String of no characters (Apple's receipts carry many).
    private var isEmptyString: Bool {
        guard let node = try? BER.parse(value), node.identifier == .utf8String || node.identifier == .ia5String else {
            return false
        }
        return BERValue.octets(node)?.isEmpty == true
    }
}
