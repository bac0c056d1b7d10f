import Foundation
import Ledger

/// A one-line progress bar on standard error: records, bytes, rate and time left.
final class ProgressBar: @unchecked Sendable {
    let enabled: Bool
    private let start = ContinuousClock.now
    private var lastDraw = ContinuousClock.now - .seconds(1)

    init(enabled: Bool) {
        self.enabled = enabled
    }

    func update(_ step: ImportProgress) {
        guard enabled else { return }
        let now = ContinuousClock.now
        guard now - lastDraw > .milliseconds(100) || step.bytes >= step.totalBytes else { return }
        lastDraw = now
        let elapsed = max(0.001, Double((now - start).components.attoseconds) / 1e18 + Double((now - start).components.seconds))
        let fraction = step.totalBytes > 0 ? min(1, Double(step.bytes) / Double(step.totalBytes)) : 1
        let width = 24
        let filled = Int(fraction * Double(width))
        let rate = Double(step.records) / elapsed
        let eta = fraction > 0 ? elapsed * (1 - fraction) / fraction : 0
        let bar = String(repeating: "#", count: filled) + String(repeating: " ", count: width - filled)
        let line = String(
            format: "\r[%@] %3.0f%%  %d records  %.1f/%.1f MB  %.0f rec/s  ETA %.0fs ", bar, fraction * 100, step.records,
            Double(step.bytes) / 1e6, Double(step.totalBytes) / 1e6, rate, eta)
        FileHandle.standardError.write(Data(line.utf8))
    }

    /// What the import is doing before its first batch is in (hashing a large file takes seconds, and its first
    /// batch as long again): said on the bar's line, which the bar then takes over.
    func note(_ text: String) {
        guard enabled else { return }
        // (Kept to one line of a narrow terminal: a line that wraps is not taken back by \r.)
        let text = safe(text)
        let shown = text.count > 76 ? "…" + text.suffix(75) : text
        FileHandle.standardError.write(Data("\r\(shown)\u{1B}[K".utf8))
    }

    func clear() {
        guard enabled else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
    }
}
