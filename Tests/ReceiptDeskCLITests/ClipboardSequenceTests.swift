import CursesBackend
import Foundation
import Testing

/// `y`'s OSC 52 sequence, byte for byte, and its size cap (the end-to-end test in tmux checks it reaches the
/// terminal only on `y`; ids from data are never near the cap, so the cap is checked here).
@Suite("OSC 52: the clipboard sequence and its cap")
struct ClipboardSequenceTests {
    @Test("base64 of the UTF-8, BEL-terminated; in GNU screen wrapped in its passthrough (tmux takes it as it is)")
    func sequence() throws {
        for text in ["", "a", "ab", "abc", "1000000123456789", "çé 漢字 🇫🇷", String(repeating: "x", count: 1_000)] {
            let payload = Data(text.utf8).base64EncodedString()
            #expect(CursesBackend.clipboardSequence(text) == "\u{1B}]52;c;\(payload)\u{07}", "\(text)")
            #expect(CursesBackend.clipboardSequence(text, inScreen: true) == "\u{1B}P\u{1B}]52;c;\(payload)\u{07}\u{1B}\\", "\(text)")
        }
    }

    @Test("up to 64 KiB of UTF-8 is sent; one byte more is refused, counted in bytes, not characters")
    func cap() throws {
        let limit = CursesBackend.clipboardLimit
        #expect(limit == 65_536)
        let atLimit = String(repeating: "a", count: limit)
        let sequence = try #require(CursesBackend.clipboardSequence(atLimit, inScreen: false))
        #expect(sequence.utf8.count == 7 + (limit + 2) / 3 * 4 + 1)
        #expect(CursesBackend.clipboardSequence(atLimit + "a", inScreen: false) == nil)
        // 21,846 two-byte characters are 43,692 bytes: under; 32,769 are 65,538 bytes: over.
        #expect(CursesBackend.clipboardSequence(String(repeating: "é", count: 21_846), inScreen: true) != nil)
        #expect(CursesBackend.clipboardSequence(String(repeating: "é", count: 32_769), inScreen: true) == nil)
    }
}
