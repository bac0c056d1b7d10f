/// Byte-level base64 and base64url decoding, without Foundation and without per-character `String` work.
enum Base64 {
    private static let table: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (i, c) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8.enumerated() {
            table[Int(c)] = UInt8(i)
        }
        table[Int(UInt8(ascii: "+"))] = 62
        table[Int(UInt8(ascii: "/"))] = 63
        table[Int(UInt8(ascii: "-"))] = 62
        table[Int(UInt8(ascii: "_"))] = 63
        return table
    }()

    /// Decodes standard or URL-safe base64 (padding optional); ASCII white space is skipped when `skipWhitespace`.
    /// Returns `nil` for any other byte or an impossible length.
    static func decode(_ input: UnsafeBufferPointer<UInt8>, skipWhitespace: Bool = false) -> [UInt8]? {
        var output: [UInt8] = []
        output.reserveCapacity(input.count * 3 / 4 + 3)
        var accumulator: UInt32 = 0
        var bits = 0
        var padding = 0
        for byte in input {
            if byte == UInt8(ascii: "=") {
                padding += 1
                continue
            }
            if skipWhitespace && (byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09) { continue }
            if padding > 0 { return nil }
            let value = table[Int(byte)]
            if value == 0xFF { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
            }
        }
        if bits >= 6 || padding > 2 { return nil }
        return output
    }

    /// Decodes base64 from an array of bytes.
    static func decode(_ input: [UInt8], skipWhitespace: Bool = false) -> [UInt8]? {
        input.withUnsafeBufferPointer { decode($0, skipWhitespace: skipWhitespace) }
    }

    /// Decodes base64 from a string.
    static func decode(_ input: String, skipWhitespace: Bool = false) -> [UInt8]? {
        var input = input
        return input.withUTF8 { decode($0, skipWhitespace: skipWhitespace) }
    }

    /// Encodes bytes as standard base64 with padding.
    static func encode(_ input: some Collection<UInt8>) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        var out: [UInt8] = []
        out.reserveCapacity((input.count + 2) / 3 * 4)
        var iterator = input.makeIterator()
        while let b0 = iterator.next() {
            let b1 = iterator.next()
            let b2 = iterator.next()
            let n = UInt32(b0) << 16 | UInt32(b1 ?? 0) << 8 | UInt32(b2 ?? 0)
            out.append(alphabet[Int(n >> 18 & 63)])
            out.append(alphabet[Int(n >> 12 & 63)])
            out.append(b1 == nil ? UInt8(ascii: "=") : alphabet[Int(n >> 6 & 63)])
            out.append(b2 == nil ? UInt8(ascii: "=") : alphabet[Int(n & 63)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
