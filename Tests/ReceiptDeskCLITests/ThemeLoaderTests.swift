import DeskUI
import Foundation
import Testing

@testable import ReceiptDeskCLI

/// Theme files as the dashboard reads them: real TOML through TOMLKit, `inherits`, roles falling back to
/// their parent scope, the user's directory under XDG_CONFIG_HOME before the bundled one, and a broken
/// theme named with its file and line while the default is used (issue 8).
@Suite("Theme files: inherits, parent scopes, the user's directory, broken themes", .ownThreads)
struct ThemeLoaderTests {
    /// A directory of theme files, removed at the end of the test.
    final class Folder {
        let url: URL

        init() throws {
            url = FileManager.default.temporaryDirectory.appendingPathComponent("rd-themes-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        }

        deinit { try? FileManager.default.removeItem(at: url) }

        var path: String { url.path }

        /// Writes `text` to `relative` (folders created), returning the folder it is in.
        @discardableResult
        func write(_ relative: String, _ text: String) throws -> String {
            let file = url.appendingPathComponent(relative)
            try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(text.utf8).write(to: file)
            return file.deletingLastPathComponent().path
        }
    }

    /// The Themes/ folder of this package.
    static let bundled = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Themes").path

    static let parent = """
        # the parent
        "ui.text" = { fg = "fg" }
        "ui.title" = { fg = "accent", modifiers = ["bold"] }
        "status.ok" = "green"

        [palette]
        fg = "#101010"
        accent = "#00aaff"
        green = "#00ff00"
        """

    static let child = """
        inherits = "parent"
        "ui.text" = { fg = "fg", bg = "panel" }

        [palette]
        accent = "#ff0000"
        panel = "238"
        """

    @Test("inherits: the child's roles win, the parent's other roles stay, and the child's palette colours them")
    func inherits() throws {
        let folder = try Folder()
        try folder.write("parent.toml", Self.parent)
        try folder.write("child.toml", Self.child)
        let theme = try ThemeLoader(directories: [folder.path]).load("child")
        #expect(theme.name == "child")
        // Overridden by the child, with the parent's palette entry for fg and the child's own for panel.
        #expect(theme.style("ui.text") == Style(fg: .rgb(0x10, 0x10, 0x10), bg: .indexed(238)))
        // Only in the parent, but coloured by the child's palette (accent redefined).
        #expect(theme.style("ui.title") == Style(fg: .rgb(0xff, 0, 0), attributes: .bold))
        // Only in the parent, a plain colour string.
        #expect(theme.style("status.ok") == Style(fg: .rgb(0, 0xff, 0)))
        // The parent alone is unchanged by its child.
        let parent = try ThemeLoader(directories: [folder.path]).load("parent")
        #expect(parent.style("ui.title") == Style(fg: .rgb(0, 0xaa, 0xff), attributes: .bold))
        #expect(parent.style("ui.text") == Style(fg: .rgb(0x10, 0x10, 0x10)))
    }

    @Test("the bundled light theme inherits default's roles with its own palette")
    func bundledLightInheritsDefault() throws {
        let loader = ThemeLoader(directories: [Self.bundled])
        let light = try loader.load("light")
        let dark = try loader.load("default")
        // light.toml gives neither role: both come from default.toml, coloured by light's palette.
        #expect(light.style("ui.text") == Style(fg: .rgb(0x1c, 0x1c, 0x1c)))
        #expect(light.style("status.danger") == Style(fg: .rgb(0xc0, 0, 0), attributes: .bold))
        #expect(dark.style("ui.text") != light.style("ui.text"))
        // Given by light.toml itself.
        #expect(light.style("ui.badge") == Style(fg: .rgb(0xff, 0xff, 0xff), bg: .rgb(0, 0x50, 0xa0), attributes: .bold))
    }

    @Test("inherits naming a missing theme, or a loop, is an error naming the theme")
    func inheritsErrors() throws {
        let folder = try Folder()
        try folder.write("orphan.toml", "inherits = \"nowhere\"\n\"ui.text\" = \"red\"\n")
        try folder.write("a.toml", "inherits = \"b\"\n")
        try folder.write("b.toml", "inherits = \"a\"\n")
        let loader = ThemeLoader(directories: [folder.path])
        #expect(throws: ThemeError(theme: "orphan", line: nil, message: "inherits nowhere, which does not exist", path: folder.path + "/orphan.toml")) {
            try loader.load("orphan")
        }
        #expect(throws: ThemeError(theme: "a", line: nil, message: "inherits a in a loop", path: folder.path + "/a.toml")) {
            try loader.load("a")
        }
    }

    @Test("a role the theme does not give falls back to its parent scope, then to plain text")
    func parentScopes() throws {
        let folder = try Folder()
        try folder.write("scopes.toml", """
            "ui.text" = { fg = "#112233", modifiers = ["italic"] }
            "event" = "yellow"
            "event.refunded" = { fg = "red", modifiers = ["bold"] }
            """)
        let theme = try ThemeLoader(directories: [folder.path]).load("scopes")
        let text = Style(fg: .rgb(0x11, 0x22, 0x33), attributes: .italic)
        #expect(theme.style("ui.text") == text)
        #expect(theme.styles["ui.text.muted"] == nil)
        #expect(theme.style("ui.text.muted") == text)
        #expect(theme.style("ui.text.muted.deeper") == text)
        #expect(theme.style("event.renewed") == Style(fg: .ansi(3)))
        #expect(theme.style("event.refunded") == Style(fg: .ansi(1), attributes: .bold))
        // No scope of it given: the terminal's plain text.
        #expect(theme.style("status.ok") == .plain)
        #expect(theme.style("ui") == .plain)
    }

    @Test("a nested table ([ui] with text = ...) is the same as the dotted scope")
    func nestedTables() throws {
        let folder = try Folder()
        try folder.write("dotted.toml", "\"ui.selection\" = { bg = \"blue\", modifiers = [\"bold\"] }\n\"ui.text.muted\" = \"gray\"\n")
        try folder.write("nested.toml", "[ui]\nselection = { bg = \"blue\", modifiers = [\"bold\"] }\n\n[ui.text]\nmuted = \"gray\"\n")
        let loader = ThemeLoader(directories: [folder.path])
        let dotted = try loader.load("dotted")
        let nested = try loader.load("nested")
        #expect(nested.style("ui.selection") == Style(bg: .ansi(4), attributes: .bold))
        #expect(nested.style("ui.text.muted") == Style(fg: .ansi(8)))
        #expect(nested.styles == dotted.styles)
    }

    @Test("the user's directory is $XDG_CONFIG_HOME/receiptdesk/themes, and its themes win over the bundled ones")
    func userDirectory() throws {
        let config = try Folder()
        let home = try Folder()
        try config.write("receiptdesk/themes/default.toml", "\"ui.text\" = \"#abcdef\"\n")
        try config.write("receiptdesk/themes/mine.toml", "inherits = \"default\"\n\"ui.title\" = \"#ff00ff\"\n")
        // A theme in the wrong place (right under XDG_CONFIG_HOME, or under HOME) is not looked at.
        try config.write("receiptdesk/stray.toml", "\"ui.text\" = \"red\"\n")
        try home.write(".config/receiptdesk/themes/homeonly.toml", "\"ui.text\" = \"red\"\n")

        let loader = ThemeLoader(environment: ["XDG_CONFIG_HOME": config.path, "HOME": home.path])
        #expect(loader.directories.first == config.path + "/receiptdesk/themes")
        #expect(loader.directories.contains { FileManager.default.fileExists(atPath: $0 + "/nord.toml") }, "the bundled Themes/ is not searched")
        // The user's default replaces the bundled one, for itself and for what inherits it.
        let userDefault = try loader.load("default")
        #expect(userDefault.style("ui.text") == Style(fg: .rgb(0xab, 0xcd, 0xef)))
        #expect(userDefault.styles.count == 1)
        let mine = try loader.load("mine")
        #expect(mine.style("ui.title") == Style(fg: .rgb(0xff, 0, 0xff)))
        #expect(mine.style("ui.text") == Style(fg: .rgb(0xab, 0xcd, 0xef)))
        #expect(loader.names.contains("mine"))
        #expect(loader.names.contains("solarized-dark"))
        #expect(!loader.names.contains("stray"))
        #expect(!loader.names.contains("homeonly"))
        #expect(throws: ThemeError.self) { try loader.load("homeonly") }
    }

    @Test("a user theme inherits a bundled one")
    func userThemeInheritsBundled() throws {
        let config = try Folder()
        try config.write("receiptdesk/themes/mine.toml", "inherits = \"nord\"\n\"ui.title\" = \"#ff00ff\"\n")
        let loader = ThemeLoader(environment: ["XDG_CONFIG_HOME": config.path])
        let mine = try loader.load("mine")
        #expect(mine.style("ui.title") == Style(fg: .rgb(0xff, 0, 0xff)))
        // default.toml's role, nord's red.
        #expect(mine.style("status.danger") == Style(fg: .rgb(0xbf, 0x61, 0x6a), attributes: .bold))
        #expect(mine.style("ui.text") == (try ThemeLoader(directories: [Self.bundled]).load("nord")).style("ui.text"))
    }

    @Test("without XDG_CONFIG_HOME (or with a relative one) the user's directory is ~/.config/receiptdesk/themes")
    func homeDirectory() throws {
        let home = try Folder()
        try home.write(".config/receiptdesk/themes/homeonly.toml", "\"ui.text\" = \"red\"\n")
        for environment in [["HOME": home.path], ["HOME": home.path, "XDG_CONFIG_HOME": "relative/config"]] {
            let loader = ThemeLoader(environment: environment)
            #expect(loader.directories.first == home.path + "/.config/receiptdesk/themes")
            #expect(try loader.load("homeonly").style("ui.text") == Style(fg: .ansi(1)))
        }
    }

    struct Broken: CustomTestStringConvertible, Sendable {
        var what: String
        var text: String
        var line: Int
        var testDescription: String { what }
    }

    static let broken: [Broken] = [
        Broken(what: "TOML syntax", text: "# a comment\n\"ui.text\" = { fg = \"red\" }\n\"ui.title\" = { fg = \n\"status.ok\" = \"green\"\n", line: 3),
        Broken(what: "an unclosed string", text: "\"ui.text\" = \"red\"\n\n\n\"ui.title\" = \"blue\n", line: 4),
        Broken(what: "a colour that is neither a palette name nor a colour", text: "\"ui.text\" = \"red\"\n\"ui.title\" = { fg = \"nosuch\" }\n", line: 2),
        Broken(what: "an unknown modifier", text: "\"ui.text\" = \"red\"\n\n\"status.ok\" = { fg = \"green\", modifiers = [\"blinking\"] }\n", line: 3),
        Broken(what: "a role that is a number", text: "\"ui.text\" = \"red\"\n\"ui.title\" = 7\n", line: 2),
        Broken(what: "a palette entry that is a number", text: "[palette]\nfg = \"#000000\"\nred = 12\n", line: 3),
        Broken(what: "inherits that is not a name", text: "\n\ninherits = 3\n", line: 3),
        Broken(what: "a colour in a nested table", text: "[ui]\ntitle = \"blue\"\ntext = \"nosuch\"\n", line: 3),
    ]

    @Test("a broken theme is named with its line, and the default is used", arguments: broken)
    func brokenTheme(_ broken: Broken) throws {
        let folder = try Folder()
        try folder.write("broken.toml", broken.text)
        try folder.write("default.toml", "\"ui.text\" = \"#abcdef\"\n")
        let loader = ThemeLoader(directories: [folder.path, Self.bundled])
        let error = #expect(throws: ThemeError.self) { try loader.load("broken") }
        #expect(error?.theme == "broken")
        #expect(error?.line == broken.line, "\(error.map(String.init(describing:)) ?? "")")
        let (theme, warning) = loader.loadOrDefault("broken")
        #expect(theme == (try loader.load("default")))
        #expect(theme.style("ui.text") == Style(fg: .rgb(0xab, 0xcd, 0xef)))
        #expect(warning?.hasPrefix("\(folder.path)/broken.toml:\(broken.line): ") == true, "\(warning ?? "no warning")")
        #expect(warning?.hasSuffix("; using default") == true)
        // Without any theme files, the default is the built-in theme, said by no warning; another name still is.
        let none = ThemeLoader(directories: [])
        #expect(none.loadOrDefault("default") == (Theme.builtin, nil))
        #expect(none.loadOrDefault("nord").warning?.hasPrefix("theme nord: no such theme") == true)
    }

    @Test("a palette entry's error is on its own line, not on a role's line that uses the same name")
    func paletteLineNotARoleLine() throws {
        let folder = try Folder()
        try folder.write("clash.toml", "\"status.danger\" = \"red\"\n\n[palette]\nred = 12\n")
        let loader = ThemeLoader(directories: [folder.path, Self.bundled])
        let error = #expect(throws: ThemeError.self) { try loader.load("clash") }
        // `"red"` on line 1 is a value; the palette entry it names is defined on line 4.
        #expect(error?.line == 4, "\(error.map(String.init(describing:)) ?? "")")
    }

    @Test("a palette colour that is not one is the mistake of the theme whose palette says it, not of the role using it")
    func paletteMistakeInTheChild() throws {
        let folder = try Folder()
        // The user's walk: the bundled default's roles use "cyan"; the child's palette makes it no colour.
        try folder.write("badpal.toml", "inherits=\"default\"\n[palette]\ncyan=\"nopal\"\n")
        let loader = ThemeLoader(directories: [folder.path, Self.bundled])
        let error = #expect(throws: ThemeError.self) { try loader.load("badpal") }
        #expect(error?.theme == "badpal", "\(error.map(String.init(describing:)) ?? "")")
        #expect(error?.line == 3)
        #expect(error?.message.hasPrefix("palette.cyan: nopal is not a colour") == true, "\(error?.message ?? "")")
        // A role of the child's own naming a colour that is neither is still blamed on the role's line.
        try folder.write("badrole.toml", "inherits = \"default\"\n\n\"ui.title\" = \"nocolour\"\n")
        let role = #expect(throws: ThemeError.self) { try loader.load("badrole") }
        #expect(role?.theme == "badrole" && role?.line == 3, "\(role.map(String.init(describing:)) ?? "")")
    }

    @Test("a user theme inheriting its own name inherits the next theme of that name down the search path; loops still fail")
    func inheritsItsOwnName() throws {
        let config = try Folder()
        try config.write("receiptdesk/themes/nord.toml", "inherits = \"nord\"\n\"ui.title\" = \"#ff00ff\"\n")
        // The user's default tweaks the bundled one; a theme inheriting "default" gets the tweak and the rest.
        try config.write("receiptdesk/themes/default.toml", "inherits = \"default\"\n\"ui.text\" = \"#abcdef\"\n")
        try config.write("receiptdesk/themes/mine.toml", "inherits = \"default\"\n")
        try config.write("receiptdesk/themes/alone.toml", "inherits = \"alone\"\n")
        let loader = ThemeLoader(environment: ["XDG_CONFIG_HOME": config.path])
        let bundled = ThemeLoader(directories: [Self.bundled])
        let nord = try loader.load("nord")
        #expect(nord.name == "nord")
        #expect(nord.style("ui.title") == Style(fg: .rgb(0xff, 0, 0xff)))
        // The other roles are the bundled nord's, which inherits default: the user's default, tweaked in turn.
        let bundledNord = try bundled.load("nord")
        #expect(nord.style("status.danger") == bundledNord.style("status.danger"))
        #expect(nord.style("ui.border") == bundledNord.style("ui.border"))
        #expect(nord.style("ui.text") == Style(fg: .rgb(0xab, 0xcd, 0xef)))
        #expect(loader.loadOrDefault("nord").warning == nil)
        let mine = try loader.load("mine")
        #expect(mine.style("ui.text") == Style(fg: .rgb(0xab, 0xcd, 0xef)))
        #expect(mine.style("ui.title") == (try bundled.load("default")).style("ui.title"))
        // Nothing of that name below it: said, not a loop.
        let alone = #expect(throws: ThemeError.self) { try loader.load("alone") }
        #expect(alone?.theme == "alone" && alone?.message.contains("loop") == false, "\(alone.map(String.init(describing:)) ?? "")")
    }

    @Test("an error names the file it is in, with its line; a file under HOME is written from ~")
    func errorsNameTheFile() throws {
        let folder = try Folder()
        try folder.write("broken.toml", "\"ui.text\" = \"red\"\n\"ui.title\" = { fg = \"nosuch\" }\n")
        try folder.write("child.toml", "inherits = \"broken\"\n")
        let loader = ThemeLoader(directories: [folder.path, Self.bundled])
        for name in ["broken", "child"] {
            let error = #expect(throws: ThemeError.self) { try loader.load(name) }
            let text = error.map(String.init(describing:)) ?? ""
            #expect(text.hasPrefix(folder.path + "/broken.toml:2: ui.title: nosuch is neither"), "\(text)")
        }
        let missingParent = try Folder()
        try missingParent.write("orphan.toml", "inherits = \"nowhere\"\n")
        let orphan = #expect(throws: ThemeError.self) { try ThemeLoader(directories: [missingParent.path]).load("orphan") }
        #expect(orphan.map(String.init(describing:)) == missingParent.path + "/orphan.toml: inherits nowhere, which does not exist")

        let home = try Folder()
        try home.write(".config/receiptdesk/themes/bad.toml", "\"ui.text\" = \"nosuch\"\n")
        let warning = ThemeLoader(environment: ["HOME": home.path]).loadOrDefault("bad").warning ?? ""
        #expect(warning.hasPrefix("~/.config/receiptdesk/themes/bad.toml:1: ui.text: nosuch is neither"), "\(warning)")
        #expect(warning.hasSuffix("; using default"))
    }

    @Test("a theme's warning says what matters within 80 columns; --theme takes a file's path")
    func shortWarningsAndPaths() throws {
        let loader = ThemeLoader(directories: [Self.bundled])
        // What is wrong and what is used instead come before the list of names, which may be cut.
        let missing = try #require(loader.loadOrDefault("nosuch").warning)
        #expect(missing.prefix(80).contains("theme nosuch: no such theme") && missing.prefix(80).contains("using default"), "\(missing)")
        #expect(missing.contains("solarized-dark"))
        let badName = try #require(loader.loadOrDefault("no such").warning)
        #expect(badName.count <= 80 && badName.hasPrefix("theme no such: ") && badName.hasSuffix("; using default"), "\(badName)")
        // A path is read as the file it names, inheriting by name from the search path.
        for path in [Self.bundled + "/nord.toml", Self.bundled + "/../Themes/light.toml"] {
            let (theme, warning) = loader.loadOrDefault(path)
            #expect(warning == nil, "\(warning ?? "")")
            #expect(theme == (try loader.load(path.hasSuffix("nord.toml") ? "nord" : "light")))
        }
        let folder = try Folder()
        let gone = loader.loadOrDefault(folder.path + "/gone.toml")
        #expect(gone.theme == (try loader.load("default")))
        #expect(gone.warning == folder.path + "/gone.toml: no such file; using default")
        // Not a file to read: a directory, a FIFO (that would wait forever) or more than a theme would ever be.
        try folder.write("big.toml", String(repeating: "# a comment\n", count: 200_000))
        #expect(mkfifo(folder.path + "/fifo.toml", 0o600) == 0)
        try FileManager.default.createDirectory(atPath: folder.path + "/dir.toml", withIntermediateDirectories: true)
        for name in ["big.toml", "fifo.toml", "dir.toml"] {
            let warning = loader.loadOrDefault(folder.path + "/" + name).warning
            #expect(warning?.hasPrefix(folder.path + "/" + name + ": not") == true, "\(warning ?? "")")
        }
    }

    @Test("a broken parent is named with its line; a broken default falls back to the built-in theme")
    func brokenParentAndDefault() throws {
        let folder = try Folder()
        try folder.write("default.toml", "\"ui.text\" = \"red\"\n\"ui.title\" = { modifiers = [\"shiny\"] }\n")
        try folder.write("child.toml", "inherits = \"default\"\n\"ui.text\" = \"blue\"\n")
        let loader = ThemeLoader(directories: [folder.path])
        #expect(throws: ThemeError(theme: "default", line: 2, message: "ui.title: unknown modifier shiny (bold, dim, italic, underlined, reversed)",
            path: folder.path + "/default.toml")) {
            try loader.load("child")
        }
        let (theme, warning) = loader.loadOrDefault("child")
        #expect(theme == Theme.builtin)
        #expect(warning?.hasPrefix("\(folder.path)/default.toml:2: ") == true, "\(warning ?? "no warning")")
        #expect(warning?.hasSuffix("; using the built-in theme") == true)
        let (same, named) = loader.loadOrDefault("default")
        #expect(same == Theme.builtin)
        #expect(named?.hasPrefix("\(folder.path)/default.toml:2: ") == true)
    }

    @Test("every bundled theme loads, and a missing one names the ones there are")
    func bundledThemes() throws {
        let loader = ThemeLoader(directories: [Self.bundled])
        #expect(Set(loader.names).isSuperset(of: ["default", "light", "solarized-dark", "nord", "high-contrast", "mono"]))
        for name in loader.names {
            let theme = try loader.load(name)
            #expect(theme.name == name)
            #expect(!theme.styles.isEmpty, "\(name)")
        }
        let (theme, warning) = loader.loadOrDefault("nosuch")
        #expect(theme == (try loader.load("default")))
        #expect(warning?.hasPrefix("theme nosuch: no such theme, using default (have: default, high-contrast, light, ") == true, "\(warning ?? "")")
    }

    @Test("a ~ typed at :theme or :export (no shell expands it) is $HOME, not the account's home")
    func tildeIsHome() throws {
        let home = try Folder()
        try home.write("t1.toml", "inherits = \"default\"\n")
        let loader = ThemeLoader(directories: [ThemeLoader.builtIn], home: home.path)
        #expect(try loader.load("~/t1.toml").name == "t1")
        #expect(expandingHome("~/queue.csv", environment: ["HOME": home.path]) == home.path + "/queue.csv")
        #expect(expandingHome("~", environment: ["HOME": home.path]) == home.path)
        #expect(expandingHome("a/~/b.csv", environment: ["HOME": home.path]) == "a/~/b.csv")
        #expect(expandingHome("~other/b.csv", environment: ["HOME": home.path]) == "~other/b.csv")
    }

    @Test("the binary carries Themes/ as they are (scripts/embed-themes writes them), and a loader with no Themes/ on disk loads them")
    func builtInThemes() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.bundled).filter { $0.hasSuffix(".toml") }
        #expect(Set(BundledThemes.texts.keys) == Set(files.map { String($0.dropLast(5)) }), "run scripts/embed-themes")
        for file in files {
            let text = try String(contentsOfFile: Self.bundled + "/" + file, encoding: .utf8)
            #expect(BundledThemes.texts[String(file.dropLast(5))].map { $0 + "\n" } == text, "\(file) differs from the built-in one: run scripts/embed-themes")
        }
        // Installed away from its source tree: only the user's directory, which has none, and the built-in ones.
        let empty = try Folder()
        let loader = ThemeLoader(directories: [empty.path, ThemeLoader.builtIn])
        #expect(loader.names == ["default", "high-contrast", "light", "mono", "nord", "solarized-dark"])
        for name in loader.names { #expect(try loader.load(name) == (try ThemeLoader(directories: [Self.bundled]).load(name)), "\(name)") }
        // A user theme inheriting a built-in one, by name.
        try empty.write("mine.toml", "inherits = \"nord\"\n\"ui.accent\" = { fg = \"red\" }\n")
        #expect(try loader.load("mine").styles != (try loader.load("nord")).styles)
        #expect(loader.loadOrDefault("nosuch").warning?.contains("(have: default, high-contrast, light, mine, mono, nord, solarized-dark)") == true)
    }
}
