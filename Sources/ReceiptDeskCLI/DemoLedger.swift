import Entitlements
import Foundation
import Ledger
import LedgerSQLite
import ReceiptDecoding
import ReceiptModel
import SwiftASN1
import X509

/// The demo ledger: SampleData imported into a cached SQLite file, so a fresh clone opens a living
/// dashboard (DESIGN section 10, issue 9).
///
/// The cache lives under `$XDG_CACHE_HOME/receiptdesk/` (else `~/.cache/receiptdesk/`), named by a hash
/// of SampleData's contents, so it is rebuilt when SampleData changes and never touches the user's own
/// ledger. The demo's TEST root is trusted for this import only. "Now" is the end of the generated span
/// (`manifest.json`), so the stories look the same next year.
enum DemoLedger {
    /// The opened demo ledger and what to say about it on screen.
    struct Opened {
        let ledger: SQLLedger
        /// The data's own "now": the end of the generated span.
        let now: Timestamp
        /// One line for the DEMO badge: what the data is and its "now".
        let dataDescription: String
        /// The demo app's catalog (products, entitlements), when the set has one.
        let catalogPath: String?
    }

    /// What `manifest.json` says.
    struct Manifest {
        var now: Timestamp
        var from: Timestamp
        var customers: Int
        var seed: String
        var dataFiles: [String]
        var trustRoot: String
        var customerMapping: String?
        var catalog: String?
    }

    /// Opens (building it first when needed) the demo ledger for the SampleData at `sampleDataDirectory`.
    /// `building` is told whether the ledger must be built first (seconds, once per SampleData). The triage done in
    /// the demo stays in its cache until `reset` builds it afresh.
    static func open(
        sampleDataDirectory: String, environment: [String: String], reset: Bool = false, building: (Bool) -> Void = { _ in }
    ) async throws -> Opened {
        let manifest = try readManifest(sampleDataDirectory)
        // The cache is named by SampleData's contents, the schema and this build of receiptdesk (a new build
        // may import or flag differently), so any of them changing builds a fresh demo ledger.
        let hash = CanonicalJSON.sha256Hex(Array((try contentHash(sampleDataDirectory) + "|schema \(Schema.version)|" + buildStamp()).utf8))
        let directory = cacheDirectory(environment: environment)
        let path = directory + "/demo-\(hash.prefix(16)).sqlite"
        let fm = FileManager.default
        if reset || !fm.fileExists(atPath: path) {
            do {
                try fm.createDirectory(atPath: directory, withIntermediateDirectories: true)
            } catch {
                throw CLIError.ledgerUnavailable("cannot create the demo cache directory \(directory): \(error.localizedDescription)")
            }
            // One builder at a time: a second dashboard started meanwhile waits here, then finds it built.
            let lock = Glibc.open(directory + "/demo.lock", O_CREAT | O_RDWR | O_CLOEXEC, 0o644)
            if lock >= 0 { flock(lock, LOCK_EX) }
            defer { if lock >= 0 { Glibc.close(lock) } }
            // (A dashboard that has the old one open keeps reading it; the next one opens the new.)
            if reset { removeDatabase(path) }
            if !fm.fileExists(atPath: path) {
                building(true)
                // Build beside the final name and rename: a killed build leaves only a temporary file behind.
                let temporary = path + ".building-\(ProcessInfo.processInfo.processIdentifier)"
                removeDatabase(temporary)
                do {
                    try await build(sampleDataDirectory: sampleDataDirectory, manifest: manifest, into: temporary)
                    // The ledger is closed: its write-ahead log (if one is left) moves with it, the
                    // shared-memory index is rebuilt on open.
                    try? fm.removeItem(atPath: temporary + "-shm")
                    if fm.fileExists(atPath: temporary + "-wal") { try fm.moveItem(atPath: temporary + "-wal", toPath: path + "-wal") }
                    try fm.moveItem(atPath: temporary, toPath: path)
                } catch {
                    removeDatabase(temporary)
                    throw error
                }
                // Demo ledgers nobody opened for a week belong to SampleData or builds that are gone (one in
                // use by another checkout is opened, so touched, every time it starts).
                let weekAgo = Date().addingTimeInterval(-7 * 86_400)
                for name in (try? fm.contentsOfDirectory(atPath: directory)) ?? []
                where name.hasPrefix("demo-") && name.hasSuffix(".sqlite") && directory + "/" + name != path {
                    let modified = (try? fm.attributesOfItem(atPath: directory + "/" + name)[.modificationDate] as? Date) ?? nil
                    if let modified, modified < weekAgo { removeDatabase(directory + "/" + name) }
                }
            }
        }
        try? fm.setAttributes([.modificationDate: Date()], ofItemAtPath: path)
        let ledger = try await LedgerOptions.open(url: "sqlite:" + path, now: manifest.now)
        let description =
            "DEMO data: \(manifest.customers) generated customers (seed \(manifest.seed)), \(manifest.from.iso8601.prefix(10)) to \(manifest.now.iso8601.prefix(10)); now = \(manifest.now.iso8601); signed by a TEST root, not Apple"
        return Opened(
            ledger: ledger, now: manifest.now, dataDescription: description,
            catalogPath: manifest.catalog.map { sampleDataDirectory + "/" + $0 })
    }

    /// Imports every data file of the set into a new SQLite ledger at `path`, links `customers.csv`, and
    /// refreshes the refund flags at the data's "now". The ledger is closed when this returns.
    static func build(sampleDataDirectory directory: String, manifest: Manifest, into path: String) async throws {
        let now = manifest.now
        let ledger = try await SQLLedger.open(try SQLiteDatabase.open(path: path), now: now)
        do {
            let decoder = try decoder(trusting: directory + "/" + manifest.trustRoot, now: now)
            let paths = manifest.dataFiles.map { directory + "/" + $0 }
            let counts = try await ImportRun(ledger: ledger, decoder: decoder, rules: FlagRules(), quiet: true).run(paths: paths, now: now)
            if counts.rejected > 0 {
                throw CLIError.ledgerUnavailable("SampleData has \(counts.rejected) records the demo cannot import; regenerate it")
            }
            if let mapping = manifest.customerMapping {
                try await DataOptions.linkCustomers(directory + "/" + mapping, into: ledger, now: now)
            }
            try await ledger.refreshFlags(rules: FlagRules(), now: now)
        } catch {
            try? await ledger.close()
            throw error
        }
        try await ledger.close()
    }

    /// A decoder that trusts Apple's roots and the demo's TEST root, judging validity at each signedDate.
    static func decoder(trusting rootPath: String, now: Timestamp) throws -> RecordDecoder {
        guard let data = FileManager.default.contents(atPath: rootPath) else {
            throw CLIError.ledgerUnavailable("the demo trust root \(rootPath) is missing")
        }
        let demoRoot: Certificate
        do {
            demoRoot = try Certificate(pemEncoded: String(decoding: data, as: UTF8.self))
        } catch {
            throw CLIError.ledgerUnavailable("\(rootPath) is not a PEM certificate")
        }
        let roots = [try Certificate(derEncoded: AppleRoots.rootCAG3DER), demoRoot]
        let policy = VerificationPolicy(trustRoots: roots, validationTime: .signedDate)
        return RecordDecoder(verifier: JWSVerifier(policy: policy), receiptRoots: [AppleRoots.incRootDER, demoRoot.derBytes], now: now)
    }

    /// Reads `manifest.json`.
    static func readManifest(_ directory: String) throws -> Manifest {
        let path = directory + "/manifest.json"
        guard let data = FileManager.default.contents(atPath: path),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let now = (object["now"] as? NSNumber)?.int64Value
        else {
            throw CLIError.ledgerUnavailable("\(path) is missing or has no \"now\": regenerate SampleData (see SampleData/README.md)")
        }
        return Manifest(
            now: Timestamp(millisecondsSince1970: now),
            from: Timestamp(millisecondsSince1970: (object["from"] as? NSNumber)?.int64Value ?? now),
            customers: (object["customers"] as? NSNumber)?.intValue ?? 0,
            seed: object["seed"] as? String ?? "?",
            dataFiles: object["data"] as? [String] ?? [],
            trustRoot: object["trustRoot"] as? String ?? "test-root.pem",
            customerMapping: object["customerMapping"] as? String,
            catalog: object["catalog"] as? String)
    }

    /// SHA-256 over every file of SampleData (names and contents), in name order.
    static func contentHash(_ directory: String) throws -> String {
        let fm = FileManager.default
        guard let names = fm.enumerator(atPath: directory)?.compactMap({ $0 as? String }) else {
            throw CLIError.ledgerUnavailable("cannot read \(directory)")
        }
        var summary: [UInt8] = []
        for name in names.sorted() {
            var isDirectory: ObjCBool = false
            guard fm.fileExists(atPath: directory + "/" + name, isDirectory: &isDirectory), !isDirectory.boolValue,
                let data = fm.contents(atPath: directory + "/" + name)
            else { continue }
            summary += Array(name.utf8) + [0] + Array(CanonicalJSON.sha256Hex([UInt8](data)).utf8) + [0x0A]
        }
        return CanonicalJSON.sha256Hex(summary)
    }

    /// This executable's size and modification time: a new build of receiptdesk.
    static func buildStamp() -> String {
        guard let executable = Bundle.main.executablePath,
            let attributes = try? FileManager.default.attributesOfItem(atPath: executable)
        else { return "unknown build" }
        let size = (attributes[.size] as? NSNumber)?.int64Value ?? 0
        let modified = (attributes[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0
        return "\(size)@\(Int64(modified))"
    }

    /// `$XDG_CACHE_HOME/receiptdesk`, or `~/.cache/receiptdesk`.
    static func cacheDirectory(environment: [String: String]) -> String {
        if let cache = environment["XDG_CACHE_HOME"], cache.hasPrefix("/") { return cache + "/receiptdesk" }
        return (environment["HOME"] ?? NSHomeDirectory()) + "/.cache/receiptdesk"
    }

    /// Finds `SampleData/` (with its manifest) beside the package: walking up from the executable, then
    /// from the current directory.
    static func locateSampleData() -> String? {
        var starts: [String] = []
        if let executable = Bundle.main.executablePath { starts.append((executable as NSString).resolvingSymlinksInPath) }
        if let first = CommandLine.arguments.first, first.contains("/") {
            starts.append(URL(fileURLWithPath: first).standardizedFileURL.resolvingSymlinksInPath().path)
        }
        starts.append(FileManager.default.currentDirectoryPath)
        for start in starts {
            var directory = URL(fileURLWithPath: start).standardizedFileURL
            for _ in 0..<12 {
                let candidate = directory.appendingPathComponent("SampleData")
                if FileManager.default.fileExists(atPath: candidate.appendingPathComponent("manifest.json").path) {
                    return candidate.path
                }
                let parent = directory.deletingLastPathComponent()
                if parent.path == directory.path { break }
                directory = parent
            }
        }
        return nil
    }

    private static func removeDatabase(_ path: String) {
        for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }
}

extension Certificate {
    /// The certificate's DER.
    fileprivate var derBytes: [UInt8] {
        var serializer = DER.Serializer()
        try! serializer.serialize(self)
        return serializer.serializedBytes
    }
}
