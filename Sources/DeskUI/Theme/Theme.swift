/// A theme file as read, before colours are resolved: helix's shape (a palette, semantic roles as
/// dotted scopes, `inherits`). The command line reads the TOML; this type keeps DeskUI free of parsers.
public struct ThemeDocument: Sendable, Equatable {
    /// One role's entry: colours (palette names or colour literals) and modifiers, with the line it was on.
    public struct Entry: Sendable, Equatable {
        public var fg: String?
        public var bg: String?
        public var modifiers: [String]
        public var line: Int?

        public init(fg: String? = nil, bg: String? = nil, modifiers: [String] = [], line: Int? = nil) {
            self.fg = fg
            self.bg = bg
            self.modifiers = modifiers
            self.line = line
        }
    }

    public var name: String
    public var inherits: String?
    public var palette: [String: String]
    /// The line each palette entry is on, so a colour that is not one is blamed on the theme that defines it.
    public var paletteLines: [String: Int]
    public var roles: [String: Entry]
    /// The file it was read from, when it was: two themes of one name (the user's nord over the bundled one) are
    /// told apart by it.
    public var path: String?

    public init(
        name: String, inherits: String? = nil, palette: [String: String] = [:], paletteLines: [String: Int] = [:],
        roles: [String: Entry] = [:], path: String? = nil
    ) {
        self.name = name
        self.path = path
        self.inherits = inherits
        self.palette = palette
        self.paletteLines = paletteLines
        self.roles = roles
    }
}

/// A theme file that cannot be used, with the file and line that are wrong.
public struct ThemeError: Error, Equatable, Sendable, CustomStringConvertible {
    public var theme: String
    public var line: Int?
    public var message: String
    /// The file the mistake is in, when the theme was read from one.
    public var path: String?

    public init(theme: String, line: Int?, message: String, path: String? = nil) {
        self.theme = theme
        self.line = line
        self.message = message
        self.path = path
    }

    /// `FILE:LINE: message` as compilers say it (the file names the theme, and says which of two of one name it
    /// is), else `theme NAME line LINE: message`.
    public var description: String {
        if let path { return "\(path)\(line.map { ":\($0)" } ?? ""): \(message)" }
        return "theme \(theme)\(line.map { " line \($0)" } ?? ""): \(message)"
    }
}

/// Semantic roles mapped to styles. Widgets ask for a role (`ui.text.muted`); a role the theme does
/// not define falls back to its parent scope (`ui.text`), then to the terminal's plain text.
public struct Theme: Sendable, Equatable {
    public var name: String
    public var styles: [String: Style]

    public init(name: String, styles: [String: Style]) {
        self.name = name
        self.styles = styles
    }

    /// The style of a role, falling back through its parent scopes.
    public func style(_ role: String) -> Style {
        var key = Substring(role)
        while true {
            if let style = styles[String(key)] { return style }
            guard let dot = key.lastIndex(of: ".") else { return .plain }
            key = key[..<dot]
        }
    }

    /// Resolves a document (and the chain it inherits) into styles.
    /// - Parameter parent: loads a theme by name for `inherits`.
    public static func resolve(
        _ document: ThemeDocument, parent: (String) throws(ThemeError) -> ThemeDocument?
    ) throws(ThemeError) -> Theme {
        try resolve(document) { (child: ThemeDocument) throws(ThemeError) -> ThemeDocument? in try parent(child.inherits ?? "") }
    }

    /// Resolves a document (and the chain it inherits) into styles.
    /// - Parameter parentOf: loads the theme a document's `inherits` names, knowing which document asks: a theme
    ///   that inherits its own name means the next one of that name (the bundled theme a user's file of its name
    ///   tweaks), which only the loader knows how to find.
    public static func resolve(
        _ document: ThemeDocument, parentOf: (ThemeDocument) throws(ThemeError) -> ThemeDocument?
    ) throws(ThemeError) -> Theme {
        var chain = [document]
        // A theme is the file it was read from: one name may be two themes, the one inheriting the other.
        var seen: Set<String> = [document.path ?? document.name]
        while let child = chain.last, let name = child.inherits {
            guard let next = try parentOf(child) else {
                let message =
                    name == child.name
                    ? "inherits \(name), its own name, and no other theme of that name comes after it"
                    : "inherits \(name), which does not exist"
                throw ThemeError(theme: child.name, line: nil, message: message, path: child.path)
            }
            guard seen.insert(next.path ?? next.name).inserted else {
                throw ThemeError(theme: document.name, line: nil, message: "inherits \(name) in a loop", path: document.path)
            }
            chain.append(next)
        }
        // Each palette name's colour, from the last theme of the chain that gives it: a colour there that is not
        // one is that theme's mistake, on its line, whichever theme's role uses the name.
        var palette: [String: (value: String, theme: ThemeDocument)] = [:]
        for doc in chain.reversed() {
            for (name, value) in doc.palette { palette[name] = (value, doc) }
        }
        var styles: [String: Style] = [:]
        for doc in chain.reversed() {
            for (role, entry) in doc.roles {
                func color(_ name: String?) throws(ThemeError) -> Color {
                    guard let name else { return .default }
                    if let (value, owner) = palette[name] {
                        guard let color = Color(parsing: value) else {
                            throw ThemeError(
                                theme: owner.name, line: owner.paletteLines[name],
                                message: "palette.\(name): \(value) is not a colour (#rrggbb, 0-255, an ANSI name, default)",
                                path: owner.path)
                        }
                        return color
                    }
                    guard let color = Color(parsing: name) else {
                        throw ThemeError(
                            theme: doc.name, line: entry.line,
                            message: "\(role): \(name) is neither a palette name nor a colour (#rrggbb, 0-255, an ANSI name, default)",
                            path: doc.path)
                    }
                    return color
                }
                var attributes: Attributes = []
                for modifier in entry.modifiers {
                    guard let attribute = Attributes(modifier: modifier) else {
                        throw ThemeError(
                            theme: doc.name, line: entry.line,
                            message: "\(role): unknown modifier \(modifier) (bold, dim, italic, underlined, reversed)", path: doc.path)
                    }
                    attributes.insert(attribute)
                }
                styles[role] = Style(fg: try color(entry.fg), bg: try color(entry.bg), attributes: attributes)
            }
        }
        return Theme(name: document.name, styles: styles)
    }

    /// The theme as a terminal with `depth` colours shows it. Without colour, roles keep meaning through
    /// attributes alone: reverse for the selection, bold for titles, dim for muted, underline for problems.
    public func adapted(to depth: ColorDepth) -> Theme {
        var adapted = Theme(name: name, styles: [:])
        for (role, style) in styles {
            if depth == .none {
                adapted.styles[role] = Style(attributes: style.attributes.union(Self.monoAttributes(role)))
            } else if depth == .ansi8 {
                adapted.styles[role] = Self.eightColour(role, style)
            } else {
                adapted.styles[role] = Style(
                    fg: style.fg.degraded(to: depth) ?? .default, bg: style.bg.degraded(to: depth) ?? .default,
                    attributes: style.attributes)
            }
        }
        if depth == .none {
            for role in Self.roles where adapted.styles[role] == nil {
                let mono = Self.monoAttributes(role)
                if !mono.isEmpty { adapted.styles[role] = Style(attributes: mono) }
            }
        }
        return adapted
    }

    /// Eight colours: a bright colour is its dark one in bold, grey is white dimmed (not black, which would
    /// vanish on a dark background), and the selection is reverse video (its dark background would be black).
    static func eightColour(_ role: String, _ style: Style) -> Style {
        var attributes = style.attributes
        var fg = style.fg.degraded(to: .ansi16) ?? .default
        var bg = style.bg.degraded(to: .ansi16) ?? .default
        if case .ansi(let i) = fg, i >= 8 {
            fg = .ansi(i == 8 ? 7 : i - 8)
            attributes.insert(i == 8 ? .dim : .bold)
        }
        if case .ansi(let i) = bg, i >= 8 { bg = i == 8 ? .default : .ansi(i - 8) }
        if role == "ui.selection" {
            return Style(attributes: attributes.union(.reverse))
        }
        return Style(fg: fg, bg: bg, attributes: attributes)
    }

    /// Without colour. (Not reverse video for the coverage strip's paid days: a full block in reverse is drawn in
    /// the background's colour, so paid time showed as blank.)
    static func monoAttributes(_ role: String) -> Attributes {
        switch role {
        case "ui.selection", "ui.badge", "ui.badge.demo", "ui.prompt.cursor", "ui.tab.active": return .reverse
        case "ui.title", "ui.header", "ui.footer.key", "status.danger", "entitlement.active", "entitlement.owned", "coverage.paid":
            return .bold
        case "ui.text.muted", "ui.border", "entitlement.expired", "entitlement.none", "coverage.gap": return .dim
        case "status.warn", "entitlement.revoked", "entitlement.retry", "event.refunded", "coverage.refund": return .underline
        default: return []
        }
    }

    /// Every role the dashboard draws with (themes may define any subset).
    public static let roles: [String] = [
        "ui.text", "ui.text.muted", "ui.accent", "ui.selection", "ui.border", "ui.title", "ui.header", "ui.footer",
        "ui.footer.key", "ui.badge", "ui.badge.demo", "ui.prompt", "ui.prompt.cursor", "ui.tab.active", "ui.mark",
        "status.ok", "status.warn", "status.danger",
        "entitlement.active", "entitlement.grace", "entitlement.retry", "entitlement.expired", "entitlement.revoked",
        "entitlement.owned", "entitlement.none",
        "coverage.paid", "coverage.trial", "coverage.grace", "coverage.retry", "coverage.gap", "coverage.refund",
        "event", "event.purchase", "event.subscribed", "event.renewed", "event.trialStarted", "event.trialConverted",
        "event.offerRedeemed", "event.upgraded", "event.downgraded", "event.crossgraded", "event.autoRenewDisabled",
        "event.autoRenewEnabled", "event.billingIssue", "event.gracePeriodStarted", "event.billingRecovered",
        "event.expired", "event.lapsed", "event.resubscribed", "event.refunded", "event.refundDeclined",
        "event.refundReversed", "event.familyRevoked", "event.consumptionRequested", "event.priceIncrease",
        "event.renewalExtended",
    ]

    /// The theme used when no theme file can be read: readable on dark and light backgrounds alike.
    public static let builtin: Theme = {
        func s(_ fg: Color, _ attributes: Attributes = []) -> Style { Style(fg: fg, attributes: attributes) }
        return Theme(
            name: "builtin",
            styles: [
                "ui.text": .plain, "ui.text.muted": s(.ansi(8)), "ui.accent": s(.ansi(6), .bold),
                "ui.selection": Style(attributes: .reverse), "ui.border": s(.ansi(8)), "ui.title": s(.ansi(6), .bold),
                "ui.header": Style(attributes: [.bold, .underline]), "ui.footer": s(.ansi(8)), "ui.footer.key": s(.ansi(6), .bold),
                "ui.badge": Style(fg: .ansi(0), bg: .ansi(6), attributes: .bold),
                "ui.badge.demo": Style(fg: .ansi(0), bg: .ansi(3), attributes: .bold),
                "ui.prompt": .plain, "ui.prompt.cursor": Style(attributes: .reverse), "ui.mark": s(.ansi(3), .bold),
                "ui.tab.active": Style(attributes: [.reverse, .bold]),
                "status.ok": s(.ansi(2)), "status.warn": s(.ansi(3)), "status.danger": s(.ansi(1), .bold),
                "entitlement.active": s(.ansi(2), .bold), "entitlement.owned": s(.ansi(2), .bold),
                "entitlement.grace": s(.ansi(3), .bold), "entitlement.retry": s(.ansi(3)),
                "entitlement.expired": s(.ansi(8)), "entitlement.revoked": s(.ansi(1), .bold), "entitlement.none": s(.ansi(8)),
                "coverage.paid": s(.ansi(2)), "coverage.trial": s(.ansi(6)), "coverage.grace": s(.ansi(3)),
                "coverage.retry": s(.ansi(3)), "coverage.gap": s(.ansi(8)), "coverage.refund": s(.ansi(1), .bold),
                "event.refunded": s(.ansi(1), .bold), "event.familyRevoked": s(.ansi(1)), "event.autoRenewDisabled": s(.ansi(3)),
                "event.billingIssue": s(.ansi(3)), "event.expired": s(.ansi(8)), "event.refundReversed": s(.ansi(2)),
            ])
    }()
}
