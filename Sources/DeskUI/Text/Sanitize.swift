/// Makes text from data safe to draw: nothing in it can move the cursor, change colours, reorder the line or
/// hide. Control characters, escape sequences, bidirectional overrides and invisible format characters are shown
/// escaped as text
/// (`ESC [2J` becomes `\e[2J`), never passed to the terminal.
public enum Sanitize {
    /// ``text(_:)`` as a screen drawn in ASCII shows it: the screens' own "…" (loading…, a date span) as three dots,
    /// not the `?` a terminal that is not UTF-8 gets for every other character that is not ASCII.
    public static func text(_ text: String, ascii: Bool) -> String {
        ascii ? Self.text(text).replacing("…", with: "...") : Self.text(text)
    }

    /// The text with every control, bidi-control and invisible format scalar replaced by a visible escape.
    public static func text(_ text: String) -> String {
        // Fast path: plain printable ASCII needs no work.
        if text.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) { return text }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x1B: out.append(contentsOf: "\\e".unicodeScalars)
            case 0x0A: out.append(contentsOf: "\\n".unicodeScalars)
            case 0x0D: out.append(contentsOf: "\\r".unicodeScalars)
            case 0x09: out.append(contentsOf: "\\t".unicodeScalars)
            // Controls; bidi marks, embeddings, overrides and isolates; and the invisible format characters that
            // hide text or make two ids look alike (zero-width space, word joiner and invisible operators, the
            // deprecated format controls, the byte order mark, soft hyphen, Mongolian vowel separator). The
            // zero-width joiner and non-joiner stay: emoji sequences and scripts need them.
            // (And the line and paragraph separators, the combining grapheme joiner, the Hangul fillers and the tag
            // characters, which draw nothing.)
            case 0x00..<0x20, 0x7F, 0x80..<0xA0, 0xAD, 0x034F, 0x115F, 0x1160, 0x180E, 0x200B, 0x200E, 0x200F, 0x2028, 0x2029,
                0x202A...0x202E, 0x2060...0x2064, 0x2066...0x206F, 0x061C, 0x3164, 0xFEFF, 0xFFA0, 0xFFF9...0xFFFB, 0xE0000...0xE007F:
                out.append(contentsOf: "\\u{\(String(scalar.value, radix: 16))}".unicodeScalars)
            default:
                out.append(scalar)
            }
        }
        return String(out)
    }

    /// Bytes that may not be UTF-8 (a rejected record's raw input), shown as text: valid UTF-8 is kept
    /// (sanitised), every other byte is `\xNN`.
    public static func bytes(_ bytes: [UInt8], limit: Int = 64 * 1024) -> String {
        var out = ""
        var index = 0
        let end = min(bytes.count, limit)
        while index < end {
            let byte = bytes[index]
            let length: Int
            switch byte {
            case 0x00..<0x80: length = 1
            case 0xC2..<0xE0: length = 2
            case 0xE0..<0xF0: length = 3
            case 0xF0..<0xF5: length = 4
            default: length = 0
            }
            if length > 0, index + length <= end,
                let decoded = String(validating: bytes[index..<(index + length)], as: UTF8.self)
            {
                out += text(decoded)
                index += length
            } else {
                let hex = String(byte, radix: 16)
                out += "\\x" + (hex.count == 1 ? "0" + hex : hex)
                index += 1
            }
        }
        if bytes.count > end { out += " … (\(bytes.count - end) more bytes)" }
        return out
    }
}
