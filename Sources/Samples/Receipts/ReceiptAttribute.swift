import ReceiptModel
import SwiftASN1

/// One attribute of an app receipt's payload, or of an in-app purchase receipt inside it, as the
/// generator writes it (Apple's "Receipt Fields").
///
/// ```
/// ReceiptAttribute ::= SEQUENCE {
///     type    INTEGER,
///     version INTEGER,
///     value   OCTET STRING }
/// ```
/// The value's octets are DER themselves: an INTEGER, a UTF8String, an IA5String (dates, RFC 3339) or,
/// for type 17, a SET OF ReceiptAttribute (one in-app purchase). An unused field is written the way
/// Apple's receipts write it: an empty string, or the integer 0.
struct ReceiptAttribute: DERSerializable {
    var type: Int
    var version = 1
    /// The DER of the value.
    var value: [UInt8]

    func serialize(into coder: inout DER.Serializer) throws {
        try coder.appendConstructedNode(identifier: .sequence) { coder in
            try coder.serialize(type)
            try coder.serialize(version)
            try coder.serialize(ASN1OctetString(contentBytes: value[...]))
        }
    }

    /// An INTEGER value.
    static func integer(_ type: Int, _ value: Int64) -> ReceiptAttribute {
        ReceiptAttribute(type: type, value: der { try $0.serialize(value) })
    }

    /// A UTF8String value; an empty string when `text` is nil.
    static func utf8(_ type: Int, _ text: String?) -> ReceiptAttribute {
        ReceiptAttribute(type: type, value: der { try $0.serialize(ASN1UTF8String(text ?? "")) })
    }

    /// An RFC 3339 date as an IA5String (`2025-03-01T07:00:00Z`, with milliseconds when there are
    /// any); an empty string when `milliseconds` is nil.
    static func date(_ type: Int, _ milliseconds: Int64?) -> ReceiptAttribute {
        let text = milliseconds.map { Timestamp(millisecondsSince1970: $0).iso8601 } ?? ""
        return ReceiptAttribute(type: type, value: der { try $0.serialize(ASN1IA5String(text)) })
    }

    /// Raw octets (the opaque value, the SHA-1 hash).
    static func octets(_ type: Int, _ bytes: [UInt8], version: Int = 1) -> ReceiptAttribute {
        ReceiptAttribute(type: type, version: version, value: bytes)
    }

    /// A nested `SET OF ReceiptAttribute` (type 17: one in-app purchase receipt).
    static func set(_ type: Int, _ attributes: [ReceiptAttribute]) -> ReceiptAttribute {
        ReceiptAttribute(type: type, value: der { try $0.serializeSetOf(attributes) })
    }

    /// The DER of a `SET OF ReceiptAttribute`, in DER's order.
    static func derSet(_ attributes: [ReceiptAttribute]) -> [UInt8] {
        der { try $0.serializeSetOf(attributes) }
    }

    // The generator's values are always encodable (ASCII dates and identifiers): a failure here is a bug.
    private static func der(_ write: (inout DER.Serializer) throws -> Void) -> [UInt8] {
        var serializer = DER.Serializer()
        do {
            try write(&serializer)
        } catch {
            preconditionFailure("receipt attribute not encodable: \(error)")
        }
        return serializer.serializedBytes
    }
}
