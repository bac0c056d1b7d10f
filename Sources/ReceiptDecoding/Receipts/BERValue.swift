import SwiftASN1

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
