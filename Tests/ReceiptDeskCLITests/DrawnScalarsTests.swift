import CursesBackend
import Testing

/// What of a cell's grapheme the backend hands to ncurses: a joiner left at the end of a cell joined the next thing
/// the terminal was sent (in tmux the next row began with U+200D and shifted a cell).
@Suite("A cell's scalars as drawn")
struct DrawnScalarsTests {
    @Test("the first scalar and the non-spacing ones after it, never ending with a joiner, at most five", arguments: [
        ("a", ["a"]),
        ("e\u{301}", ["e", "\u{301}"]),
        // A ZWJ family: the man alone (ncurses would keep "👨" and the joiner).
        ("👨\u{200D}👩\u{200D}👧", ["👨"]),
        ("❤\u{FE0F}", ["❤", "\u{FE0F}"]),
        ("👍🏽", ["👍"]),
        ("a\u{301}\u{302}\u{303}\u{304}\u{305}\u{306}", ["a", "\u{301}", "\u{302}", "\u{303}", "\u{304}"]),
        ("\u{200D}", ["\u{200D}"]),
    ])
    func drawn(text: String, expected: [String]) {
        #expect(CursesBackend.drawnScalars(text).map { String($0) } == expected)
    }
}
