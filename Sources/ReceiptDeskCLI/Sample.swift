import ArgumentParser
import Foundation
import ReceiptModel
import Samples

/// `receiptdesk sample`: a deterministic, realistic data set of any size, in every input kind.
struct Sample: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Generate a realistic sample data set (deterministic for a seed), signed with the TEST root.",
        discussion: """
            Writes OUT/data/*.ndjson (V2 and V1 notifications, verifyReceipt responses, App Store Server API \
            responses, signed PKCS#7 app receipts as an app posts them), OUT/customers.csv, OUT/catalog.csv, \
            OUT/ground-truth.ndjson (expected entitlement states and flags), OUT/manifest.json ("now" is the end \
            of the span) and OUT/test-root.pem. The same \
            arguments always give the same bytes. Signed data verifies only with --trust-root OUT/test-root.pem: \
            the root is a public TEST root, never Apple's.
            """
    )

    @Option(help: "How many customers.")
    var customers = 300

    @Option(help: "Random seed: a number or any text (text is hashed).")
    var seed = "1"

    @Option(help: ArgumentHelp("Output directory.", valueName: "DIR"))
    var out: String

    @Option(help: ArgumentHelp("Start of the span: ISO 8601 or milliseconds (default 2025-01-01).", valueName: "DATE"))
    var from: String?

    @Option(help: ArgumentHelp("End of the span, the data's \"now\" (default 2025-07-01).", valueName: "DATE"))
    var to: String?

    func validate() throws {
        guard customers >= 0 else { throw ValidationError("--customers must be 0 or more") }
        // (An empty one wrote the sample into /: its files are named under it, "" + "/catalog.csv".)
        guard !out.isEmpty else { throw ValidationError("--out needs the directory to write the sample into (. for this one)") }
        let span = try range()
        // Checked: instants near the ends of Int64 must not overflow the subtraction.
        let (length, overflow) = span.to.millisecondsSince1970.subtractingReportingOverflow(span.from.millisecondsSince1970)
        guard !overflow, length >= 14 * 86_400_000 else {
            throw ValidationError("--to must be at least 14 days after --from")
        }
        guard length <= 5 * 366 * 86_400_000 else {
            throw ValidationError("the span may be at most five years")
        }
    }

    private func range() throws -> (from: Timestamp, to: Timestamp) {
        let start = try from.map { try parseInstant($0, option: "--from") } ?? SampleGenerator.defaultFrom
        let end = try to.map { try parseInstant($0, option: "--to") } ?? SampleGenerator.defaultTo
        return (start, end)
    }

    /// The directory a path is in, as `dirname` says it (`x` is in `.`, `a/b/` in `a`, `/x` in `/`). (Foundation's
    /// `deletingLastPathComponent` trapped on a one-character path: `sample --out x` crashed.)
    static func directory(of path: String) -> String {
        var trimmed = Substring(path)
        while trimmed.count > 1, trimmed.last == "/" { trimmed = trimmed.dropLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return "." }
        var head = trimmed[..<slash]
        while head.count > 1, head.last == "/" { head = head.dropLast() }
        return head.isEmpty ? "/" : String(head)
    }

    func run() async throws {
        let span = try range()
        let generator = SampleGenerator(.init(customers: customers, seedText: seed, from: span.from, to: span.to))
        let clock = ContinuousClock()
        var summary = SampleGenerator.Summary()
        // The nearest part of the path that is there must be a directory (`--out FILE/sub` named a file's child).
        var existing = out
        while !FileManager.default.fileExists(atPath: existing), existing != "/", existing != "." {
            existing = Self.directory(of: existing)
        }
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: existing, isDirectory: &isDirectory), !isDirectory.boolValue {
            throw CLIError.usage(
                existing == out
                    ? "--out \(safe(out)) is not a directory: name a directory to write the sample into (it is created if needed)"
                    : "--out \(safe(out)): \(safe(existing)) is not a directory")
        }
        let elapsed: Duration
        do {
            elapsed = try clock.measure { summary = try generator.write(to: out) }
        } catch let error as CocoaError {
            // Foundation's own words name neither the path nor the cause ("The operation could not be completed").
            let posix = (error.userInfo[NSUnderlyingErrorKey] as? NSError).flatMap { $0.domain == NSPOSIXErrorDomain ? Int32($0.code) : nil }
            let cause = posix.map { String(cString: strerror($0)) } ?? (error.userInfo[NSFilePathErrorKey] as? String).map { "cannot write \(safe($0))" } ?? "\(error.code)"
            throw CLIError.usage("cannot write the sample into \(safe(out)): \(cause)")
        }
        let secondsTaken = max(seconds(elapsed), 1e-9)
        print(
            "\(summary.customers) customers, \(summary.records) records (\(summary.appReceipts) app receipts), \(String(format: "%.1f", Double(summary.bytes) / 1e6)) MB in \(String(format: "%.2f", secondsTaken)) s (\(Int(Double(summary.customers) / secondsTaken)) customers/s), peak RSS \(peakResidentMegabytes().map { String(format: "%.1f", $0) } ?? "?") MB"
        )
        print("now (end of span): \(span.to.iso8601) = \(span.to.millisecondsSince1970)")
        print("trust root: \(out)/test-root.pem (a TEST root, not Apple's)")
        if !summary.emptyFiles.isEmpty {
            // (Five customers are all stories, sent as V2 notifications: four of the five files were empty without a word.)
            let stories = SampleStory.allCases.count
            let why =
                summary.customers == 0
                ? "no customers"
                : summary.customers <= stories
                ? "the \(summary.customers) \(summary.customers == 1 ? "customer is a story" : "customers are all stories"), sent as V2 notifications"
                : "the first \(stories) customers are the stories, sent as V2 notifications, and the rest are drawn from the mix"
            print(
                "empty: \(summary.emptyFiles.joined(separator: ", ")) (\(why); 30 customers or more usually fill every file)")
        }
        for (story, id) in summary.stories { print("story: \(story): \(id)") }
        for spike in summary.spikes { print("spike: \(spike)") }
    }
}
