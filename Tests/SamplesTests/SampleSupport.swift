import Foundation
import Ledger
import LedgerSQLite
import ReceiptModel
import Samples

@testable import ReceiptDeskCLI

/// Where this test process's sample sets go: one directory, removed when the process exits (a run generates about
/// 200 MB of them, which every run left behind).
let samplesScratchDirectory: String = {
    let path = NSTemporaryDirectory() + "receiptdesk-samples-tests-\(ProcessInfo.processInfo.processIdentifier)"
    try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    atexit { try? FileManager.default.removeItem(atPath: samplesScratchDirectory) }
    return path
}()

/// Generated sample sets in temporary directories, and the demo ledger built from them.
enum SampleSupport {
    static func temporaryDirectory(_ name: String) -> String {
        let path = samplesScratchDirectory + "/" + name
        try? FileManager.default.removeItem(atPath: path)
        return path
    }

    /// Generates `customers` customers with `seed` into a new directory.
    static func generate(_ name: String, customers: Int, seed: UInt64) throws -> (directory: String, summary: SampleGenerator.Summary) {
        let directory = temporaryDirectory(name)
        let summary = try SampleGenerator(.init(customers: customers, seed: seed)).write(to: directory)
        return (directory, summary)
    }

    /// Builds the demo ledger from a generated set (as `receiptdesk` with no ledger does) and opens it.
    static func ledger(for directory: String) async throws -> (ledger: SQLLedger, now: Timestamp) {
        let manifest = try DemoLedger.readManifest(directory)
        let path = directory + "/ledger.sqlite"
        try await DemoLedger.build(sampleDataDirectory: directory, manifest: manifest, into: path)
        return (try await SQLLedger.open(try SQLiteDatabase.open(path: path), now: manifest.now), manifest.now)
    }

    /// The lines of an NDJSON file as JSON objects.
    static func objects(_ path: String) throws -> [[String: Any]] {
        let text = String(decoding: try Data(contentsOf: URL(fileURLWithPath: path)), as: UTF8.self)
        return try text.split(separator: "\n").map {
            try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any]
        }
    }

    /// The package root, from this file's path.
    static var packageRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }
}
