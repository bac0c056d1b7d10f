import DeskUI
import Foundation
import Testing

@testable import ReceiptDeskCLI

/// Theme files that aborted the process (an assertion in toml++, under TOMLKit) when the theme fuzz harness
/// (scripts/fuzz) fed them to `ThemeLoader.parse`; each is now refused with its line. The files in
/// Fixtures/fuzz/theme are the fuzzer's inputs and also seed its next runs.
@Suite("Fuzzing regressions: theme files the TOML parser asserted on", .ownThreads)
struct ThemeFuzzRegressionTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/fuzz/theme")

    struct Case: CustomTestStringConvertible, Sendable {
        let file: String
        let line: Int
        let message: String
        var testDescription: String { file }
    }

    static let header = "a table name starts with a letter, a digit, -, _ or a quote"
    static let element = "an array element starts with a value, not with \"}\" or a non-ASCII character"

    static let fixtureCases = [
        // `"coverage.paid" = { modifiers = [ }` on line 24.
        Case(file: "crash-a7ea2f2c1b7f0dc18aec8f81a08ef2e8552d59f8", line: 24, message: element),
        // `[[` then a carriage return.
        Case(file: "crash-4eac3f6e50f04b5f0fa359ce209600b162252c99", line: 1, message: header),
        // `[\xFFalette]`: the byte became U+FFFD when the file was read.
        Case(file: "header-replacement-character", line: 2, message: header),
    ]

    @Test("each theme input that crashed the fuzzer is refused with its line", arguments: fixtureCases)
    func fixture(_ testCase: Case) throws {
        let data = try Data(contentsOf: Self.fixtures.appendingPathComponent(testCase.file))
        let text = String(decoding: data, as: UTF8.self)
        #expect(throws: ThemeError(theme: "fuzz", line: testCase.line, message: testCase.message)) {
            try ThemeLoader.parse(text, name: "fuzz")
        }
    }

    @Test(
        "headers and array elements the parser asserts on are refused",
        arguments: [
            ("[!]\n", 1, header), ("x = 1\n\n[[[a]]]\n", 3, header), ("[\n", 1, header), ("[ \t\u{E9}]\n", 1, header),
            ("a = [}]\n", 1, element), ("a = [1, }]\n", 1, element), ("a = [\n  # none\n  }]\n", 3, element),
            ("a = { b = [[}]] }\n", 1, element), ("a = [\u{2028}]\n", 1, element),
            ("\u{FEFF}[!]\n", 1, header),
        ])
    func refused(_ text: String, _ line: Int, _ message: String) {
        #expect(throws: ThemeError(theme: "t", line: line, message: message)) {
            try ThemeLoader.parse(text, name: "t")
        }
    }

    @Test(
        "valid TOML that merely looks like those cases is left to the parser",
        arguments: [
            "a = \"[}\"\n", "\"[!]\" = \"x\"\n", "# [!]\n", "a = [\n  [1],\n  [2, 3],\n]\n", "a = []\n",
            "a = \"\"\"\n[!]\n\"\"\"\n", "a = '''\n[}\n'''\n", "[\"q\" . 'r']\n", "[[a.b]] # [}\n", "a = [ \"}\" ]\n",
            "a = [1, 2,]\n", "[ ui ]\n", "a = \"\"\"x\"\"\"\"\n[b]\n",
        ])
    func allowed(_ text: String) {
        #expect(ThemeLoader.parserAssertion(in: text) == nil)
    }

    @Test("every bundled theme passes the check")
    func bundled() throws {
        let directory = Self.fixtures.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Themes")
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".toml") }
        #expect(names.count >= 6)
        for name in names {
            let text = try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
            #expect(ThemeLoader.parserAssertion(in: text) == nil, "\(name)")
        }
    }
}
