import ArgumentParser
import DeskUI
import Foundation
import Ledger
import ReceiptDecoding

/// Buffered output to a file descriptor (standard output by default), on bytes. A write that fails (a full disk, a
/// closed pipe) drops the rest, and ``check()`` and ``finish()`` throw it: a command whose output is incomplete says
/// so and fails, rather than exit 0 over a cut file (`refunds --csv > report.csv` on a full disk).
final class Output {
    private var buffer: [UInt8] = []
    private let descriptor: Int32
    /// The error of the first write that failed.
    private var failure: Int32?

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
            while failure == nil, written < raw.count {
                let n = Foundation.write(descriptor, raw.baseAddress! + written, raw.count - written)
                if n < 0, errno == EINTR { continue }
                if n <= 0 {
                    failure = n < 0 ? errno : EIO
                    break
                }
                written += n
            }
        }
        buffer.removeAll(keepingCapacity: true)
    }

    /// Throws when a write failed: a pipe closed by its reader (`| head`) ends the command quietly, as SIGPIPE
    /// would (exit 141); any other failure is said, with exit 2.
    func check() throws {
        guard let failure else { return }
        if failure == EPIPE { throw ExitCode(128 + SIGPIPE) }
        throw CLIError.usage("cannot write the output: \(String(cString: strerror(failure))); what was written is incomplete")
    }

    /// Writes what is left, then ``check()``.
    func finish() throws {
        flush()
        try check()
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
