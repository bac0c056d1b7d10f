import Testing
import ReceiptModel

@testable import DeskUI

@Suite("Text: sanitising and display width")
struct TextTests {
    @Test("control characters, escape sequences and bidi overrides are shown escaped", arguments: [
        ("\u{1B}[2J", "\\e[2J"),
        ("a\u{1B}]52;c;ZXZpbA==\u{07}b", "a\\e]52;c;ZXZpbA==\\u{7}b"),
        ("line\nbreak\ttab\r", "line\\nbreak\\ttab\\r"),
        ("\u{202E}gnp.exe", "\\u{202e}gnp.exe"),
        ("\u{9B}31m", "\\u{9b}31m"),
        ("DIR\u{200B}X", "DIR\\u{200b}X"), ("\u{FEFF}id", "\\u{feff}id"), ("a\u{2060}b\u{AD}c", "a\\u{2060}b\\u{ad}c"),
        ("👨\u{200D}👩\u{200D}👧", "👨\u{200D}👩\u{200D}👧"), ("id\u{E0041}\u{2028}", "id\\u{e0041}\\u{2028}"),
        ("plain", "plain"),
        ("café 日本", "café 日本"),
    ])
    func sanitise(input: String, shown: String) {
        #expect(Sanitize.text(input) == shown)
    }

    @Test("environments in a list column: short names, never a word cut short (Xcod, Loca)")
    func environmentLabels() {
        #expect([.production, .sandbox, .xcode, .localTesting, nil].map(environmentLabel) == ["prod", "sbx", "xc", "lt", "-"])
        #expect(environmentLabel(.unknown("Staging")) == "Stag")
    }

    @Test("invalid UTF-8 bytes are shown as \\xNN, valid text kept")
    func bytes() {
        #expect(Sanitize.bytes([0x61, 0xFF, 0x1B, 0x62, 0xE6, 0x97, 0xA5]) == "a\\xff\\eb日")
    }

    @Test("display width per grapheme", arguments: [
        ("abc", 3), ("日本", 4), ("e\u{301}", 1), ("👍", 2), ("👍🏽", 2), ("👨‍👩‍👧", 2), ("🇫🇷", 2), ("한글", 4),
        ("\u{200B}", 0), ("ｱ", 1), ("Ａ", 2), ("☕", 2), ("✓", 1),
    ])
    func width(text: String, cells: Int) {
        #expect(DisplayWidth.of(text) == cells)
    }

    @Test("truncation never splits a wide character and marks the cut")
    func truncation() {
        #expect(DisplayWidth.truncate("日本語テキスト", to: 6) == "日本…")
        #expect(DisplayWidth.truncate("日本語", to: 5) == "日本…")
        #expect(DisplayWidth.fit("日本語", to: 4) == "日… ")
        #expect(DisplayWidth.fit("ab", to: 4, alignRight: true) == "  ab")
        // A path keeps its end (the file name).
        #expect(DisplayWidth.truncateHead("/work/SampleData/data/app-receipts.ndjson", to: 21) == "…/app-receipts.ndjson")
        #expect(DisplayWidth.truncateHead("データ/日本語", to: 8) == "…/日本語")
        // A wide character that would straddle the cut is left out: 6 cells hold … and two of them.
        #expect(DisplayWidth.truncateHead("データ/日本語", to: 6) == "…本語")
        #expect(DisplayWidth.truncateHead("short", to: 6) == "short")
        #expect(DisplayWidth.fit("/a/b/c.ndjson", to: 14, keepEnd: true) == "/a/b/c.ndjson ")
        #expect(DisplayWidth.fit("/a/b/c.ndjson", to: 12, keepEnd: true) == "…/b/c.ndjson")
    }

    @Test("wrapping cuts by display width; by words at the last space that fits, else mid-word; control characters escaped first")
    func wrapping() {
        #expect(wrapped("x5c does not chain to a trusted root", width: 12, words: true) == ["x5c does not", "chain to a", "trusted root"])
        #expect(wrapped("abcdefghijklmnop qr", width: 8, words: true) == ["abcdefgh", "ijklmnop", "qr"])
        #expect(wrapped("abcdefghij", width: 4) == ["abcd", "efgh", "ij"])
        #expect(wrapped("日本語の", width: 5) == ["日本", "語の"])
        #expect(wrapped("a\u{1B}[2J", width: 3) == ["a\\e", "[2J"])
        #expect(wrapped("", width: 4) == [""])
    }

    @Test("instants the core writes read as the dashboard shows them; seconds and milliseconds only when not zero", arguments: [
        ("grace period until 2025-07-14T11:00:00Z", "grace period until 2025-07-14 11:00"),
        ("paid through 2020-11-25T08:31:02Z; renews", "paid through 2020-11-25 08:31:02; renews"),
        ("at 2025-01-01T00:00:00.250Z and 2025-01-02T10:30:00Z", "at 2025-01-01 00:00:00.250 and 2025-01-02 10:30"),
        ("id 12025-07-14T11:00:00Z", "id 12025-07-14T11:00:00Z"),
        ("bought promo-2025-07-14T11:00:00Z (consumable)", "bought promo-2025-07-14T11:00:00Z (consumable)"),
        ("until 2025-07-14T11:00:00Z5 and (2025-07-14T11:00:00Z).", "until 2025-07-14T11:00:00Z5 and (2025-07-14 11:00)."),
        ("ended 2025-07-14T11:00:00Z.", "ended 2025-07-14 11:00."),
        ("expired 2025-06-03T11:04:48.824Z: the customer turned renewal off", "expired 2025-06-03 11:04:48.824: the customer turned renewal off"),
        ("2025-07-14T11:00:00 no zone", "2025-07-14T11:00:00 no zone"),
        ("2025-07-14T11:00Z", "2025-07-14T11:00Z"),
        ("no instant here", "no instant here"),
    ])
    func instants(text: String, shown: String) {
        #expect(Format.instants(in: text) == shown)
        // To the minute, for a line that would be cut otherwise: the same with seconds and milliseconds dropped.
        let minute = shown.replacing(#/(\d{4}-\d{2}-\d{2} \d{2}:\d{2}):\d{2}(\.\d{3})?/#) { $0.output.1 }
        #expect(Format.instants(in: text, toMinute: true) == String(minute))
    }

    @Test("the buffer pads a wide character at the right edge instead of splitting it")
    func bufferEdge() {
        var buffer = ScreenBuffer(width: 5, height: 1)
        buffer.put("ab日本", x: 0, y: 0)
        #expect(buffer.line(0) == "ab日 ")
        #expect(buffer[3, 0].isContinuation)
        #expect(buffer[4, 0].text == " ")
    }

    @Test("overwriting half of a wide character clears the other half")
    func bufferOverwrite() {
        var buffer = ScreenBuffer(width: 4, height: 1)
        buffer.put("日本", x: 0, y: 0)
        buffer.put("x", x: 1, y: 0)
        #expect(buffer.line(0) == " x本")
    }

    @Test("text written to the buffer is sanitised")
    func bufferSanitises() {
        var buffer = ScreenBuffer(width: 20, height: 1)
        buffer.put("p\u{1B}[2Jq", x: 0, y: 0)
        #expect(buffer.line(0).hasPrefix("p\\e[2Jq"))
        #expect(!buffer.cells.contains { $0.text.unicodeScalars.contains { $0.value < 0x20 } })
    }
}
