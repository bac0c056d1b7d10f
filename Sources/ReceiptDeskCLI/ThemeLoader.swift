import DeskUI
import Foundation
import TOMLKit

/// Finds and reads theme files (TOML, helix's shape) into DeskUI themes.
///
/// Looked up by name in the user's directory (`$XDG_CONFIG_HOME/receiptdesk/themes`, else
/// `~/.config/receiptdesk/themes`) first, then in the `Themes/` folder that ships with ReceiptDesk.
struct ThemeLoader: Sendable {
    let directories: [String]

    init(environment: [String: String]) {
        var directories: [String] = []
        if let config = environment["XDG_CONFIG_HOME"], config.hasPrefix("/") {
            directories.append(config + "/receiptdesk/themes")
        } else if let home = environment["HOME"] {
            directories.append(home + "/.config/receiptdesk/themes")
        }
        if let bundled = BundledFiles.locate("Themes", containing: "default.toml") { directories.append(bundled) }
        self.directories = directories
    }

    init(directories: [String]) {
        self.directories = directories
    }

    /// Every theme name found, sorted.
    var names: [String] {
        var names = Set<String>()
        for directory in directories {
            for file in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] where file.hasSuffix(".toml") {
                names.insert(String(file.dropLast(5)))
            }
        }
        return names.sorted()
    }

    /// Loads a theme and what it inherits.
    func load(_ name: String) throws(ThemeError) -> Theme {
        guard let document = try document(name) else {
            throw ThemeError(theme: name, line: nil, message: "no such theme (have: \(names.joined(separator: ", ")))")
        }
        return try Theme.resolve(document) { (parent: String) throws(ThemeError) -> ThemeDocument? in try self.document(parent) }
    }

    /// Loads a theme, or says why not and gives the built-in one.
    func loadOrDefault(_ name: String) -> (theme: Theme, warning: String?) {
        do {
            return (try load(name), nil)
        } catch {
            if name != "default", let fallback = try? load("default") { return (fallback, "\(error); using default") }
            return (Theme.builtin, "\(error); using the built-in theme")
        }
    }

    private func document(_ name: String) throws(ThemeError) -> ThemeDocument? {
        guard name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }), !name.isEmpty else {
            throw ThemeError(theme: name, line: nil, message: "theme names are letters, digits, - and _")
        }
        for directory in directories {
            let path = directory + "/" + name + ".toml"
            guard let data = FileManager.default.contents(atPath: path) else { continue }
            return try Self.parse(String(decoding: data, as: UTF8.self), name: name)
        }
        return nil
    }

    /// Reads a theme's TOML text.
    static func parse(_ text: String, name: String) throws(ThemeError) -> ThemeDocument {
        let table: TOMLTable
        do {
            table = try TOMLTable(string: text)
        } catch let error as TOMLParseError {
            throw ThemeError(theme: name, line: error.source.begin.line, message: error.description)
        } catch {
            throw ThemeError(theme: name, line: nil, message: "\(error)")
        }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        func line(of key: String) -> Int? {
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
                        throw ThemeError(theme: name, line: line(of: colorName), message: "palette.\(colorName) must be a string colour")
                    }
                    document.palette[colorName] = color
                }
            default:
                try collect(value, scope: key, into: &document, name: name, line: line)
            }
        }
        return document
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
