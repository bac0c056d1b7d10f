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
    ///
    /// Whole groups of four characters go three bytes at a time; a group holding anything else (padding, white
    /// space, a bad byte) goes character by character. The table is read through a pointer taken once: read as
    /// the global per character it cost a `swift_once` call each (4% of a verified import's CPU, perf).
    static func decode(_ input: UnsafeBufferPointer<UInt8>, skipWhitespace: Bool = false) -> [UInt8]? {
        var valid = true
        let output = [UInt8](unsafeUninitializedCapacity: input.count / 4 * 3 + 3) { out, written in
            valid = table.withUnsafeBufferPointer { table in
                decode(input, into: out, count: &written, table: table, skipWhitespace: skipWhitespace)
            }
            if !valid { written = 0 }
        }
        return valid ? output : nil
    }

    private static func decode(
        _ input: UnsafeBufferPointer<UInt8>, into out: UnsafeMutableBufferPointer<UInt8>, count n: inout Int,
        table: UnsafeBufferPointer<UInt8>, skipWhitespace: Bool
    ) -> Bool {
        var accumulator: UInt32 = 0
        var bits = 0
        var padding = 0
        var i = 0
        let end = input.count
        while i < end {
            if bits == 0 && padding == 0 {
                while i + 4 <= end {
                    let a = table[Int(input[i])], b = table[Int(input[i + 1])]
                    let c = table[Int(input[i + 2])], d = table[Int(input[i + 3])]
                    // Every value of the alphabet is below 64; 0xFF marks the rest.
                    if (a | b | c | d) & 0xC0 != 0 { break }
                    out[n] = a << 2 | b >> 4
                    out[n + 1] = b << 4 | c >> 2
                    out[n + 2] = c << 6 | d
                    n += 3
                    i += 4
                }
                if i == end { break }
            }
            let byte = input[i]
            i += 1
            if byte == UInt8(ascii: "=") {
                padding += 1
                continue
            }
            if skipWhitespace && (byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09) { continue }
            if padding > 0 { return false }
            let value = table[Int(byte)]
            if value == 0xFF { return false }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out[n] = UInt8(truncatingIfNeeded: accumulator >> UInt32(bits))
                n += 1
            }
        }
        return bits < 6 && padding <= 2
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
