import DeskUI
import Foundation
import Ledger
import ReceiptDecoding

/// Buffered output to a file descriptor (standard output by default), on bytes.
final class Output {
    private var buffer: [UInt8] = []
    private let descriptor: Int32

    init(descriptor: Int32 = STDOUT_FILENO) {
        self.descriptor = descriptor
        buffer.reserveCapacity(1 << 16)
    }

    func write(_ bytes: [UInt8]) {
        buffer.append(contentsOf: bytes)
        if buffer.count >= 1 << 16 { flush() }
    }

    func write(_ text: String) {
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= 1 << 16 { flush() }
    }

    func line(_ text: String = "") {
        write(text)
        buffer.append(0x0A)
    }

    func flush() {
        var written = 0
        buffer.withUnsafeBytes { raw in
            while written < raw.count {
                let n = Foundation.write(descriptor, raw.baseAddress! + written, raw.count - written)
                if n <= 0 { break }
                written += n
            }
        }
        buffer.removeAll(keepingCapacity: true)
    }

    deinit { flush() }
}

/// Text from data, safe to print: control characters, escapes and bidi controls are shown escaped
/// (`\e[2J` as text), never sent; the same rule as the dashboard's cells (`Sanitize`).
func safe(_ text: String) -> String { Sanitize.text(text) }

/// An id as pasted, without the white space around it or one pair of quotes (`'…'`, `"…"`, `` `…` ``, `“…”`) a
/// copy from a chat or a log brings along: ids hold none of them.
func trimmedPaste(_ text: String) -> String {
    var id = Substring(text).drop(while: \.isWhitespace)
    // (And the punctuation a sentence puts after it: "family-revoke:1500," — flag ids end in a letter or digit.)
    while let last = id.last, last.isWhitespace || ",.;".contains(last) { id = id.dropLast() }
    for (open, close) in [("'", "'"), ("\"", "\""), ("`", "`"), ("“", "”"), ("‘", "’")] as [(Character, Character)]
    where id.count > 2 && id.first == open && id.last == close {
        return String(id.dropFirst().dropLast())
    }
    return String(id)
}
