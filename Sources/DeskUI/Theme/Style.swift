/// A terminal colour as a theme names it.
public enum Color: Hashable, Sendable {
    /// The terminal's own colour (transparent background, the user's foreground).
    case `default`
    /// One of the 16 ANSI colours (0-7 normal, 8-15 bright).
    case ansi(Int)
    /// One of the 256 indexed colours.
    case indexed(Int)
    /// 24-bit colour.
    case rgb(UInt8, UInt8, UInt8)

    /// The ANSI names a theme may use.
    static let names = [
        "black", "red", "green", "yellow", "blue", "magenta", "cyan", "white", "gray", "light-red", "light-green",
        "light-yellow", "light-blue", "light-magenta", "light-cyan", "light-white",
    ]

    /// Parses `default`, an ANSI name, `#rrggbb` or a 256-colour index (`"238"`).
    public init?(parsing text: String) {
        let text = text.lowercased()
        if text == "default" || text == "reset" {
            self = .default
        } else if let index = Self.names.firstIndex(of: text) {
            self = .ansi(index)
        } else if text == "bright-black" || text == "grey" {
            self = .ansi(8)
        } else if text.hasPrefix("#"), text.count == 7, let value = UInt32(text.dropFirst(), radix: 16) {
            self = .rgb(UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF))
        } else if let index = Int(text), (0...255).contains(index) {
            self = .indexed(index)
        } else {
            return nil
        }
    }

    /// The colour as the terminal can show it: the nearest of its 256, 16 or 8 colours, or nil when it has none.
    public func degraded(to depth: ColorDepth) -> Color? {
        switch (self, depth) {
        case (_, .none): return nil
        case (.default, _): return .default
        case (.rgb, .trueColor): return self
        case (.rgb(let r, let g, let b), .indexed256): return .indexed(Self.nearest256(r, g, b))
        case (.rgb(let r, let g, let b), _): return Color.ansi(Self.nearestANSI(r, g, b)).degraded(to: depth)
        case (.indexed(let i), .trueColor), (.indexed(let i), .indexed256): return i < 16 ? .ansi(i) : .indexed(i)
        case (.indexed(let i), _):
            if i < 16 { return Color.ansi(i).degraded(to: depth) }
            let (r, g, b) = Self.rgbOf256(i)
            return Color.ansi(Self.nearestANSI(r, g, b)).degraded(to: depth)
        case (.ansi(let i), .ansi8): return .ansi(i % 8)
        case (.ansi, _): return self
        }
    }

    static func nearest256(_ r: UInt8, _ g: UInt8, _ b: UInt8) -> Int {
        func level(_ v: UInt8) -> Int { v < 48 ? 0 : v < 115 ? 1 : (Int(v) - 35) / 40 }
        let (lr, lg, lb) = (level(r), level(g), level(b))
        let cube = 16 + 36 * lr + 6 * lg + lb
        let average = (Int(r) + Int(g) + Int(b)) / 3
        let gray = average > 238 ? 23 : max(0, (average - 3) / 10)
        let steps = [0, 95, 135, 175, 215, 255]
        func distance(_ a: (Int, Int, Int)) -> Int {
            (a.0 - Int(r)) * (a.0 - Int(r)) + (a.1 - Int(g)) * (a.1 - Int(g)) + (a.2 - Int(b)) * (a.2 - Int(b))
        }
        let grayValue = 8 + 10 * gray
        return distance((steps[lr], steps[lg], steps[lb])) <= distance((grayValue, grayValue, grayValue)) ? cube : 232 + gray
    }

    static func rgbOf256(_ i: Int) -> (UInt8, UInt8, UInt8) {
        if i >= 232 {
            let v = UInt8(8 + 10 * (i - 232))
            return (v, v, v)
        }
        let steps: [UInt8] = [0, 95, 135, 175, 215, 255]
        let n = i - 16
        return (steps[n / 36], steps[n / 6 % 6], steps[n % 6])
    }

    static let ansiRGB: [(Int, Int, Int)] = [
        (0, 0, 0), (205, 0, 0), (0, 205, 0), (205, 205, 0), (0, 0, 238), (205, 0, 205), (0, 205, 205), (229, 229, 229),
        (127, 127, 127), (255, 0, 0), (0, 255, 0), (255, 255, 0), (92, 92, 255), (255, 0, 255), (0, 255, 255),
        (255, 255, 255),
    ]

    static func nearestANSI(_ r: UInt8, _ g: UInt8, _ b: UInt8) -> Int {
        var best = 0
        var bestDistance = Int.max
        for (index, c) in ansiRGB.enumerated() {
            let d = (c.0 - Int(r)) * (c.0 - Int(r)) + (c.1 - Int(g)) * (c.1 - Int(g)) + (c.2 - Int(b)) * (c.2 - Int(b))
            if d < bestDistance {
                bestDistance = d
                best = index
            }
        }
        return best
    }
}

/// How many colours the terminal shows.
public enum ColorDepth: Int, Sendable, Comparable {
    /// No colour (`NO_COLOR`, `TERM=vt100`): attributes alone.
    case none = 0
    case ansi8 = 8
    case ansi16 = 16
    case indexed256 = 256
    case trueColor = 16_777_216

    public static func < (lhs: ColorDepth, rhs: ColorDepth) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The depth for a number of colours the terminal reports.
    public init(colors: Int) {
        switch colors {
        case ..<8: self = .none
        case ..<16: self = .ansi8
        case ..<256: self = .ansi16
        default: self = .indexed256
        }
    }
}

/// Text attributes.
public struct Attributes: OptionSet, Hashable, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let bold = Attributes(rawValue: 1)
    public static let dim = Attributes(rawValue: 2)
    public static let italic = Attributes(rawValue: 4)
    public static let underline = Attributes(rawValue: 8)
    public static let reverse = Attributes(rawValue: 16)

    /// Parses a helix-style modifier name.
    public init?(modifier: String) {
        switch modifier.lowercased() {
        case "bold": self = .bold
        case "dim": self = .dim
        case "italic": self = .italic
        case "underlined", "underline": self = .underline
        case "reversed", "reverse": self = .reverse
        default: return nil
        }
    }
}

/// How a cell looks: colours and attributes, resolved from a theme role.
public struct Style: Hashable, Sendable {
    public var fg: Color
    public var bg: Color
    public var attributes: Attributes

    public init(fg: Color = .default, bg: Color = .default, attributes: Attributes = []) {
        self.fg = fg
        self.bg = bg
        self.attributes = attributes
    }

    public static let plain = Style()

    /// This style drawn on a bar of style `base`, as the header's breadcrumbs and badges are: a style that sets only
    /// a foreground (or attributes) takes the bar's background and attributes too, so the bar has no hole; one with a
    /// background of its own (or reverse video, which makes one) is drawn as it is. A foreground that would hardly
    /// show on the bar's background (contrast under 2:1, high-contrast's light cyan title on its white bar) gives way to
    /// the bar's own foreground.
    public func on(_ base: Style) -> Style {
        guard bg == .default, !attributes.contains(.reverse) else { return self }
        var fg = fg == .default ? base.fg : fg
        if let ratio = Color.contrast(fg, base.bg), ratio < 2 { fg = base.fg }
        return Style(fg: fg, bg: base.bg, attributes: attributes.union(base.attributes))
    }
}

extension Color {
    /// The colour's red, green and blue as xterm shows them; nil for the terminal's own, which is not known.
    var rgb: (UInt8, UInt8, UInt8)? {
        switch self {
        case .default: return nil
        case .ansi(let i): return Self.rgb(ansi: i)
        case .indexed(let i) where i < 16: return Self.rgb(ansi: i)
        case .indexed(let i): return Self.rgbOf256(max(16, min(255, i)))
        case .rgb(let r, let g, let b): return (r, g, b)
        }
    }

    /// One of the sixteen ANSI colours as xterm shows it.
    private static func rgb(ansi i: Int) -> (UInt8, UInt8, UInt8) {
        let c = ansiRGB[max(0, min(15, i))]
        return (UInt8(c.0), UInt8(c.1), UInt8(c.2))
    }

    /// The contrast ratio of two colours (WCAG's, 1 to 21), or nil when either is the terminal's own.
    static func contrast(_ a: Color, _ b: Color) -> Double? {
        guard let a = a.rgb, let b = b.rgb else { return nil }
        func luminance(_ c: (UInt8, UInt8, UInt8)) -> Double {
            // sRGB to linear light: ((x + 0.055) / 1.055)^2.4, the power as a square times a fifth root (Newton's,
            // from 1, above the root in (0, 1]): DeskUI has no libm.
            func channel(_ v: UInt8) -> Double {
                let x = Double(v) / 255
                guard x > 0.03928 else { return x / 12.92 }
                let square = (x + 0.055) / 1.055 * ((x + 0.055) / 1.055)
                var root = 1.0
                for _ in 0..<30 { root -= (root * root * root * root * root - square) / (5 * root * root * root * root) }
                return square * root
            }
            return 0.2126 * channel(c.0) + 0.7152 * channel(c.1) + 0.0722 * channel(c.2)
        }
        let (la, lb) = (luminance(a), luminance(b))
        return (max(la, lb) + 0.05) / (min(la, lb) + 0.05)
    }
}
