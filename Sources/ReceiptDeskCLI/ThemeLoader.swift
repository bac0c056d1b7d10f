import DeskUI
import Foundation
import TOMLKit

/// Finds and reads theme files (TOML, helix's shape) into DeskUI themes.
///
/// Looked up by name in the user's directory (`$XDG_CONFIG_HOME/receiptdesk/themes`, else
/// `~/.config/receiptdesk/themes`) first, then in the `Themes/` folder that ships with ReceiptDesk, then among the
/// same themes built into the binary (``BundledThemes``: a binary installed away from its source tree has them too).
struct ThemeLoader: Sendable {
    let directories: [String]
    /// The user's home, written `~` at the start of a theme file's path in an error (a status line has 80 columns).
    let home: String?

    init(environment: [String: String]) {
        if let home = environment["HOME"], home.hasPrefix("/"), home != "/" {
            self.home = home.hasSuffix("/") ? String(home.dropLast()) : home
        } else {
            home = nil
        }
        var directories: [String] = []
        if let config = environment["XDG_CONFIG_HOME"], config.hasPrefix("/") {
            directories.append(config + "/receiptdesk/themes")
        } else if let home = environment["HOME"] {
            directories.append(home + "/.config/receiptdesk/themes")
        }
        if let bundled = BundledFiles.locate("Themes", containing: "default.toml") { directories.append(bundled) }
        directories.append(Self.builtIn)
        self.directories = directories
    }

    /// The place of the themes built into the binary in the search path, as a path names it.
    static let builtIn = "(built into receiptdesk)"

    init(directories: [String], home: String? = nil) {
        self.directories = directories
        self.home = home
    }

    /// Every theme name found, sorted.
    var names: [String] {
        var names = Set<String>()
        for directory in directories {
            if directory == Self.builtIn { names.formUnion(BundledThemes.texts.keys) }
            for file in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] where file.hasSuffix(".toml") {
                names.insert(String(file.dropLast(5)))
            }
        }
        return names.sorted()
    }

    /// Loads a theme and what it inherits: a theme's name, or a theme file's path (with a `/`, or ending in `.toml`).
    /// - Throws: the mistake, in the file it is in (the theme's own or one it inherits), with its line.
    func load(_ name: String) throws(ThemeError) -> Theme {
        guard let theme = try loadIfThere(name) else {
            throw ThemeError(theme: name, line: nil, message: "no such theme (have: \(names.joined(separator: ", ")))")
        }
        return theme
    }

    /// Loads a theme, or says why not and gives the built-in one.
    func loadOrDefault(_ name: String) -> (theme: Theme, warning: String?) {
        // No theme files at all (a binary run away from its Themes/ folder): the built-in theme is the default, and
        // nothing is wrong to say so about (a broken default.toml is still said).
        if name == "default", (try? document(name)) == .some(nil) { return (Theme.builtin, nil) }
        func fallback() -> (theme: Theme, using: String) {
            if name != "default", let theme = try? load("default") { return (theme, "using default") }
            return (Theme.builtin, "using the built-in theme")
        }
        do {
            if let theme = try loadIfThere(name) { return (theme, nil) }
            // What is wrong and what is drawn instead before the names there are, which a status line may cut.
            let (theme, using) = fallback()
            return (theme, "theme \(name): no such theme, \(using) (have: \(names.joined(separator: ", ")))")
        } catch {
            let (theme, using) = fallback()
            return (theme, "\(error); \(using)")
        }
    }

    /// A theme and what it inherits, or nil when there is no theme of the name.
    private func loadIfThere(_ name: String) throws(ThemeError) -> Theme? {
        do {
            // A path: the file it names (given on the command line by the person running it, so no more trusted or
            // less than a theme in their own directory), what it inherits looked up by name.
            let isPath = name.contains("/") || name.hasSuffix(".toml")
            guard let document = isPath ? try file(name) : try document(name) else { return nil }
            return try Theme.resolve(document) { (child: ThemeDocument) throws(ThemeError) -> ThemeDocument? in
                // A theme inheriting its own name inherits the next file of that name down the search path (helix's
                // rule): the user's nord.toml with `inherits = "nord"` tweaks the bundled nord.
                let parent = child.inherits ?? ""
                return try self.document(parent, after: parent == child.name ? child.path : nil)
            }
        } catch {
            var error = error
            if let home, let path = error.path, path.hasPrefix(home + "/") { error.path = "~" + path.dropFirst(home.count) }
            throw error
        }
    }

    /// The theme file of a name: the first in the search path, or with `after`, the first in a directory after the
    /// one that file is in (the whole search path when it is in none of them).
    private func document(_ name: String, after: String? = nil) throws(ThemeError) -> ThemeDocument? {
        guard name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }), !name.isEmpty else {
            throw ThemeError(theme: name, line: nil, message: "not a name (letters, digits, -, _) or a path")
        }
        let paths = directories.map { $0 + "/" + name + ".toml" }
        for path in paths.dropFirst(after.flatMap { paths.firstIndex(of: $0) }.map { $0 + 1 } ?? 0) {
            guard let text = try Self.read(path, theme: name) else { continue }
            return try Self.parse(text, name: name, path: path)
        }
        return nil
    }

    /// The theme file at a path (relative to the current directory), named after the file.
    private func file(_ given: String) throws(ThemeError) -> ThemeDocument {
        // A ~ typed at `:theme`, where no shell expands it, is $HOME (Foundation's own would take the account's).
        let given = expandingHome(given, environment: home.map { ["HOME": $0] } ?? [:])
        let path = URL(fileURLWithPath: given).standardizedFileURL.path
        let name = URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
        guard let text = try Self.read(path, theme: name) else {
            throw ThemeError(theme: name, line: nil, message: "no such file", path: path)
        }
        return try Self.parse(text, name: name, path: path)
    }

    /// The largest theme file read: the bundled ones are 3 KB.
    static let maximumSize = 1 << 20

    /// A theme file's text, or nil when there is none. A FIFO or device (which would wait, or never end) and a
    /// file larger than ``maximumSize`` are refused.
    private static func read(_ path: String, theme: String) throws(ThemeError) -> String? {
        if path.hasPrefix(builtIn + "/") {
            // (Its text without the file's last line break, which the string leaves out.)
            return BundledThemes.texts[String(path.dropFirst(builtIn.count + 1).dropLast(".toml".count))].map { $0 + "\n" }
        }
        let target = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: target) else { return nil }
        guard attributes[.type] as? FileAttributeType == .typeRegular else {
            throw ThemeError(theme: theme, line: nil, message: "not a regular file", path: path)
        }
        guard let size = attributes[.size] as? NSNumber, size.intValue <= maximumSize else {
            throw ThemeError(theme: theme, line: nil, message: "not a theme: over \(maximumSize >> 20) MB", path: path)
        }
        guard let data = FileManager.default.contents(atPath: target) else {
            throw ThemeError(theme: theme, line: nil, message: "cannot be read", path: path)
        }
        return String(decoding: data.prefix(maximumSize), as: UTF8.self)
    }

    /// Reads a theme's TOML text.
    /// - Parameter path: the file it is from, kept in the document and named by its errors.
    static func parse(_ text: String, name: String, path: String? = nil) throws(ThemeError) -> ThemeDocument {
        do {
            var document = try parseText(text, name: name)
            document.path = path
            return document
        } catch {
            var error = error
            error.path = path
            throw error
        }
    }

    private static func parseText(_ text: String, name: String) throws(ThemeError) -> ThemeDocument {
        if let refused = parserAssertion(in: text) {
            throw ThemeError(theme: name, line: refused.line, message: refused.message)
        }
        let table: TOMLTable
        do {
            table = try TOMLTable(string: text)
        } catch let error as TOMLParseError {
            throw ThemeError(theme: name, line: error.source.begin.line, message: error.description)
        } catch {
            throw ThemeError(theme: name, line: nil, message: "\(error)")
        }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        /// The line that defines `key` (dotted from the top of the file): `key = ...` or `"key" = ...`, or the
        /// rest of it under its table (`[palette]` then `red = ...`), or its table header; else the first line
        /// naming it (a value that uses the name is not its definition, so it is only the last resort).
        func line(of key: String) -> Int? {
            var section = ""
            for (index, raw) in lines.enumerated() {
                let text = raw.trimmingCharacters(in: .whitespaces)
                if text.hasPrefix("[") {
                    section = text.trimmingCharacters(in: CharacterSet(charactersIn: "[] \t"))
                    if section == key { return index + 1 }
                    continue
                }
                let prefix = section.isEmpty ? "" : section + "."
                guard key.hasPrefix(prefix) else { continue }
                let rest = String(key.dropFirst(prefix.count))
                for candidate in ["\"\(rest)\"", rest] where text.hasPrefix(candidate) {
                    if text.dropFirst(candidate.count).drop(while: { $0 == " " || $0 == "\t" }).first == "=" { return index + 1 }
                }
            }
            let last = key.split(separator: ".").last.map(String.init) ?? key
            if let index = lines.firstIndex(where: { $0.contains("\"\(key)\"") }) { return index + 1 }
            if let index = lines.firstIndex(where: { $0.trimmingCharacters(in: .whitespaces).hasPrefix(key + " ") || $0.trimmingCharacters(in: .whitespaces).hasPrefix(key + "=") }) { return index + 1 }
            return lines.firstIndex { $0.trimmingCharacters(in: .whitespaces).hasPrefix(last) }.map { $0 + 1 }
        }
        var document = ThemeDocument(name: name)
        for key in table.keys {
            let value = table[key]!
            switch key {
            case "inherits":
                guard let parent = value.string else {
                    throw ThemeError(theme: name, line: line(of: key), message: "inherits takes a theme name")
                }
                document.inherits = parent
            case "palette":
                guard let palette = value.table else {
                    throw ThemeError(theme: name, line: line(of: key), message: "[palette] must be a table of name = \"#rrggbb\"")
                }
                for colorName in palette.keys {
                    guard let color = palette[colorName]?.string else {
                        throw ThemeError(theme: name, line: line(of: "palette.\(colorName)"), message: "palette.\(colorName) must be a string colour")
                    }
                    document.palette[colorName] = color
                    document.paletteLines[colorName] = line(of: "palette.\(colorName)")
                }
            default:
                try collect(value, scope: key, into: &document, name: name, line: line)
            }
        }
        return document
    }

    /// Finds what the TOML parser under TOMLKit (toml++ 3) asserts on, aborting the process instead of
    /// reporting an error (found by fuzzing): a table header whose name starts with neither a bare-key character
    /// nor a quote (`[!]`, `[[[a]]]`, `[` alone), and an array element that starts with `}` or a non-ASCII
    /// character (`[}]`, `[1, }]`, U+2028). Strings and comments are skipped; the input is otherwise unchecked.
    /// - Returns: the line and the reason, for the first one found.
    static func parserAssertion(in text: String) -> (line: Int, message: String)? {
        let bytes = Array(text.utf8)
        let quote = UInt8(ascii: "\"")
        let apostrophe = UInt8(ascii: "'")
        var i = 0
        var line = 1
        var lineStart = true
        var open: [UInt8] = []
        var expectingElement = false
        func isBlank(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0D }
        func startsName(_ byte: UInt8) -> Bool {
            (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x30 && byte <= 0x39)
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") || byte == quote || byte == apostrophe
        }
        /// Moves past the string that starts at `i`, counting the lines inside it.
        func skipString() {
            let delimiter = bytes[i]
            let triple = i + 2 < bytes.count && bytes[i + 1] == delimiter && bytes[i + 2] == delimiter
            i += triple ? 3 : 1
            while i < bytes.count {
                let byte = bytes[i]
                if byte == 0x0A {
                    if !triple { return }
                    line += 1
                } else if byte == UInt8(ascii: "\\") && delimiter == quote {
                    if i + 1 < bytes.count, bytes[i + 1] == 0x0A { line += 1 }
                    i += 1
                } else if byte == delimiter {
                    if !triple {
                        i += 1
                        return
                    }
                    if i + 2 < bytes.count && bytes[i + 1] == delimiter && bytes[i + 2] == delimiter {
                        i += 3
                        // Up to two more quotes belong to the string.
                        while i < bytes.count, bytes[i] == delimiter { i += 1 }
                        return
                    }
                }
                i += 1
            }
        }
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { i = 3 }
        while i < bytes.count {
            let byte = bytes[i]
            if byte == 0x0A {
                line += 1
                lineStart = true
                i += 1
                continue
            }
            if isBlank(byte) {
                i += 1
                continue
            }
            if byte == UInt8(ascii: "#") {
                while i < bytes.count, bytes[i] != 0x0A { i += 1 }
                continue
            }
            if expectingElement {
                expectingElement = false
                if byte == UInt8(ascii: "}") || byte >= 0x80 {
                    return (line, "an array element starts with a value, not with \"}\" or a non-ASCII character")
                }
            }
            let wasLineStart = lineStart
            lineStart = false
            switch byte {
            case quote, apostrophe:
                skipString()
                continue
            case UInt8(ascii: "[") where open.isEmpty && wasLineStart:
                // Inside the brackets only spaces and tabs are skipped (`[[\r` asserts too).
                var j = i + 1
                while j < bytes.count, bytes[j] == 0x20 || bytes[j] == 0x09 { j += 1 }
                if j < bytes.count, bytes[j] == UInt8(ascii: "[") {
                    j += 1
                    while j < bytes.count, bytes[j] == 0x20 || bytes[j] == 0x09 { j += 1 }
                }
                guard j < bytes.count, startsName(bytes[j]) || bytes[j] == UInt8(ascii: "]") else {
                    return (line, "a table name starts with a letter, a digit, -, _ or a quote")
                }
                // The rest of the header: its quoted names may hold brackets.
                i = j
                while i < bytes.count, bytes[i] != 0x0A, bytes[i] != UInt8(ascii: "#") {
                    if bytes[i] == quote || bytes[i] == apostrophe { skipString() } else { i += 1 }
                }
                continue
            case UInt8(ascii: "["):
                open.append(byte)
                expectingElement = true
            case UInt8(ascii: "{"):
                open.append(byte)
            case UInt8(ascii: "]"), UInt8(ascii: "}"):
                if !open.isEmpty { open.removeLast() }
            case UInt8(ascii: ","):
                expectingElement = open.last == UInt8(ascii: "[")
            default:
                break
            }
            i += 1
        }
        return nil
    }

    private static let entryKeys: Set<String> = ["fg", "bg", "modifiers"]

    private static func collect(
        _ value: TOMLValueConvertible, scope: String, into document: inout ThemeDocument, name: String, line: (String) -> Int?
    ) throws(ThemeError) {
        if let colour = value.string {
            document.roles[scope] = ThemeDocument.Entry(fg: colour, line: line(scope))
            return
        }
        guard let table = value.table else {
            throw ThemeError(theme: name, line: line(scope), message: "\(scope) must be a colour or { fg, bg, modifiers }")
        }
        let keys = Set(table.keys)
        if keys.isSubset(of: entryKeys) {
            var entry = ThemeDocument.Entry(line: line(scope))
            if let fg = table["fg"] {
                guard let text = fg.string else { throw ThemeError(theme: name, line: line(scope), message: "\(scope).fg must be a string") }
                entry.fg = text
            }
            if let bg = table["bg"] {
                guard let text = bg.string else { throw ThemeError(theme: name, line: line(scope), message: "\(scope).bg must be a string") }
                entry.bg = text
            }
            if let modifiers = table["modifiers"] {
                guard let array = modifiers.array else {
                    throw ThemeError(theme: name, line: line(scope), message: "\(scope).modifiers must be a list of names")
                }
                for item in array {
                    guard let text = item.string else {
                        throw ThemeError(theme: name, line: line(scope), message: "\(scope).modifiers must be a list of names")
                    }
                    entry.modifiers.append(text)
                }
            }
            document.roles[scope] = entry
            return
        }
        // A nested table: `[ui]` with `text = ...` inside, the same as "ui.text".
        for key in table.keys { try collect(table[key]!, scope: scope + "." + key, into: &document, name: name, line: line) }
    }
}

/// Files that ship beside the binary (Themes/, SampleData/): found next to the package the binary was
/// built in, or from the current directory upwards.
enum BundledFiles {
    static func locate(_ folder: String, containing file: String) -> String? {
        var starts: [URL] = [URL(fileURLWithPath: FileManager.default.currentDirectoryPath)]
        let executable = URL(fileURLWithPath: CommandLine.arguments.first ?? "").resolvingSymlinksInPath()
        starts.append(executable.deletingLastPathComponent())
        if let resolved = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            starts.append(URL(fileURLWithPath: resolved).deletingLastPathComponent())
        }
        for start in starts {
            var directory = start
            for _ in 0..<8 {
                let candidate = directory.appendingPathComponent(folder)
                if FileManager.default.fileExists(atPath: candidate.appendingPathComponent(file).path) { return candidate.path }
                let parent = directory.deletingLastPathComponent()
                if parent.path == directory.path { break }
                directory = parent
            }
        }
        return nil
    }
}
