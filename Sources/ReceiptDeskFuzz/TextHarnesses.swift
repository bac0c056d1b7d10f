import DeskUI
import Entitlements

/// The operator's text files: read as the CLI reads them (UTF-8, invalid bytes replaced).
enum TextHarnesses {
    static func rules(_ bytes: [UInt8]) {
        do {
            _ = try FlagRules.parse(String(decoding: bytes, as: UTF8.self))
        } catch {}
    }

    static func catalog(_ bytes: [UInt8]) {
        do {
            _ = try Catalog.parse(csv: String(decoding: bytes, as: UTF8.self))
        } catch {}
    }

    /// The theme file as `ThemeLoader` reads it, resolved with one parent theme available, then adapted to
    /// every colour depth the dashboard supports.
    static func theme(_ bytes: [UInt8]) {
        do {
            let document = try ThemeLoader.parse(String(decoding: bytes, as: UTF8.self), name: "fuzz")
            let theme = try Theme.resolve(document) { (name: String) throws(ThemeError) -> ThemeDocument? in
                name == "default" ? ThemeDocument(name: "default", palette: ["fg": "#c0c0c0"]) : nil
            }
            for depth in [ColorDepth.none, .ansi8, .ansi16, .indexed256, .trueColor] {
                _ = theme.adapted(to: depth)
            }
        } catch {}
    }
}
