/// How many terminal cells text takes: East Asian wide and emoji are 2, combining marks and joiners 0,
/// and an emoji sequence (flags, skin tones, ZWJ families) is measured as the one glyph it draws.
public enum DisplayWidth {
    /// The cells one grapheme takes (0, 1 or 2).
    public static func of(_ character: Character) -> Int {
        let scalars = character.unicodeScalars
        guard let first = scalars.first else { return 0 }
        if first.isASCII { return first.value < 0x20 || first.value == 0x7F ? 0 : 1 }
        var regionalIndicators = 0
        for scalar in scalars {
            if scalar.value == 0xFE0F, first.properties.isEmoji { return 2 }
            if scalar.properties.isEmojiPresentation { return 2 }
            if (0x1F1E6...0x1F1FF).contains(scalar.value) { regionalIndicators += 1 }
        }
        if regionalIndicators > 0 { return regionalIndicators >= 2 ? 2 : 1 }
        return scalarWidth(first)
    }

    /// The cells a whole string takes.
    public static func of(_ text: String) -> Int {
        if text.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) { return text.utf8.count }
        var width = 0
        for character in text { width += of(character) }
        return width
    }

    /// The cells one scalar takes on its own: 0 for marks, joiners and variation selectors.
    public static func scalarWidth(_ scalar: Unicode.Scalar) -> Int {
        let value = scalar.value
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format, .control: return 0
        default: break
        }
        if value == 0x200B || value == 0x200D || value == 0xFEFF || (0xFE00...0xFE0F).contains(value) { return 0 }
        if (0x1160...0x11FF).contains(value) { return 0 }  // Hangul medial vowels and finals join the syllable.
        if isWide(value) { return 2 }
        return 1
    }

    /// East Asian Wide and Fullwidth ranges (Unicode's EastAsianWidth W and F, condensed).
    static func isWide(_ value: UInt32) -> Bool {
        switch value {
        case 0x1100...0x115F, 0x231A...0x231B, 0x2329...0x232A, 0x23E9...0x23EC, 0x23F0, 0x23F3, 0x25FD...0x25FE,
            0x2614...0x2615, 0x2648...0x2653, 0x267F, 0x2693, 0x26A1, 0x26AA...0x26AB, 0x26BD...0x26BE, 0x26C4...0x26C5,
            0x26CE, 0x26D4, 0x26EA, 0x26F2...0x26F3, 0x26F5, 0x26FA, 0x26FD, 0x2705, 0x270A...0x270B, 0x2728, 0x274C,
            0x274E, 0x2753...0x2755, 0x2757, 0x2795...0x2797, 0x27B0, 0x27BF, 0x2B1B...0x2B1C, 0x2B50, 0x2B55,
            0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xA000...0xA4CF, 0xA960...0xA97F,
            0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE10...0xFE19, 0xFE30...0xFE6F, 0xFF00...0xFF60, 0xFFE0...0xFFE6,
            0x16FE0...0x16FE4, 0x17000...0x18CFF, 0x1B000...0x1B2FF, 0x1F004, 0x1F0CF, 0x1F18E, 0x1F191...0x1F19A,
            0x1F200...0x1F2FF, 0x1F300...0x1F64F, 0x1F680...0x1F6FF, 0x1F7E0...0x1F7EB, 0x1F90C...0x1F9FF,
            0x1FA70...0x1FAFF, 0x20000...0x2FFFD, 0x30000...0x3FFFD:
            return true
        default:
            return false
        }
    }

    /// The longest prefix of `text` that fits in `width` cells, with `…` when it was cut. A wide
    /// character that would straddle the edge is left out, never split.
    public static func truncate(_ text: String, to width: Int, ellipsis: String = "…") -> String {
        guard width > 0 else { return "" }
        if of(text) <= width { return text }
        let budget = width - of(ellipsis)
        guard budget >= 0 else { return String(repeating: ".", count: width) }
        var out = ""
        var used = 0
        for character in text {
            let w = of(character)
            if used + w > budget { break }
            out.append(character)
            used += w
        }
        return out + ellipsis
    }

    /// The longest suffix of `text` that fits in `width` cells after `…`, when it is cut (a path's file name is
    /// its end). A wide character that would straddle the edge is left out, never split.
    public static func truncateHead(_ text: String, to width: Int, ellipsis: String = "…") -> String {
        guard width > 0 else { return "" }
        if of(text) <= width { return text }
        let budget = width - of(ellipsis)
        guard budget >= 0 else { return String(repeating: ".", count: width) }
        var kept: [Character] = []
        var used = 0
        for character in text.reversed() {
            let w = of(character)
            if used + w > budget { break }
            kept.append(character)
            used += w
        }
        return ellipsis + String(kept.reversed())
    }

    /// `text` cut (at its end, or with `keepEnd` at its start) or padded with spaces to exactly `width` cells.
    public static func fit(
        _ text: String, to width: Int, alignRight: Bool = false, ellipsis: String = "…", keepEnd: Bool = false
    ) -> String {
        let cut = keepEnd ? truncateHead(text, to: width, ellipsis: ellipsis) : truncate(text, to: width, ellipsis: ellipsis)
        let pad = String(repeating: " ", count: max(0, width - of(cut)))
        return alignRight ? pad + cut : cut + pad
    }
}
