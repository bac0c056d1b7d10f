import Foundation
import ReceiptModel

/// The deterministic sample data generator behind `receiptdesk sample` (issue 9).
///
/// Customers are simulated one at a time from their own random stream (seed, index), written to the data
/// files and forgotten: memory does not grow with the number of customers. The same options always give
/// the same bytes: no clock, no system RNG, deterministic ECDSA, fixed certificates.
public struct SampleGenerator: Sendable {
    /// What to generate.
    public struct Options: Sendable {
        public var customers: Int
        public var seed: UInt64
        /// The seed as the user typed it (recorded in the manifest).
        public var seedName: String
        public var from: Timestamp
        public var to: Timestamp
        /// How customers are spread over the input kinds (weights); the stories' customers are always V2.
        /// Only the format changes with the weights: each customer's random stream is drawn the same way.
        public var formats: [(SampleFormat, Double)] = SampleGenerator.realisticFormats

        public init(customers: Int, seed: UInt64, from: Timestamp = SampleGenerator.defaultFrom, to: Timestamp = SampleGenerator.defaultTo) {
            self.customers = customers
            self.seed = seed
            self.seedName = String(seed)
            self.from = from
            self.to = to
        }

        /// Options for a seed given as text: a decimal number is used as is, any other text is hashed
        /// (FNV-1a, 64 bits), so `--seed demo-1` is as deterministic as `--seed 7`.
        public init(customers: Int, seedText: String, from: Timestamp = SampleGenerator.defaultFrom, to: Timestamp = SampleGenerator.defaultTo) {
            self.init(customers: customers, seed: Self.seed(seedText), from: from, to: to)
            seedName = seedText
        }

        /// The numeric seed for a seed text.
        public static func seed(_ text: String) -> UInt64 {
            if let number = UInt64(text) { return number }
            var hash: UInt64 = 0xCBF2_9CE4_8422_2325
            for byte in text.utf8 {
                hash ^= UInt64(byte)
                hash = hash &* 0x0000_0100_0000_01B3
            }
            return hash
        }
    }

    /// What was written.
    public struct Summary: Sendable {
        public var customers = 0
        public var records = 0
        /// Transactions in the customers' lives (each may appear in several records).
        public var transactions = 0
        public var bytes: Int64 = 0
        /// App receipts written (PKCS#7, in `data/app-receipts.ndjson`).
        public var appReceipts = 0
        public var spikes: [String] = []
        public var stories: [(story: String, id: String)] = []
        /// The data files no customer wrote a record to (few customers: the first are the stories, all V2).
        public var emptyFiles: [String] = []

        public init() {}
    }

    /// The default mix of input kinds: most customers reach the ledger by signed V2 notifications.
    public static let realisticFormats: [(SampleFormat, Double)] = [
        (.notificationsV2, 0.45), (.serverAPI, 0.15), (.verifyReceipt, 0.25), (.notificationsV1, 0.15),
    ]

    /// The seed SampleData/ was generated with (SampleData/README.md): its transaction ids are the lowest block's.
    public static let demoSeed = "demo-1"
    public static let defaultFrom = Timestamp.utc(year: 2025, month: 1, day: 1)
    public static let defaultTo = Timestamp.utc(year: 2025, month: 7, day: 1)

    /// Data files, relative to the output directory: import these.
    public static let dataFiles = [
        "data/notifications-v2.ndjson", "data/server-api.ndjson", "data/verify-receipt.ndjson", "data/notifications-v1.ndjson",
        "data/app-receipts.ndjson",
    ]

    public let options: Options
    /// The bad release day: midnight UTC, three quarters into the span.
    public var releaseDay: Int64 {
        let from = options.from.millisecondsSince1970
        return (from + (options.to.millisecondsSince1970 - from) * 3 / 4) / dayMs * dayMs
    }

    public init(_ options: Options) {
        self.options = options
    }

    /// Simulates customer `index` (pure: the same index always gives the same life).
    public func life(_ index: Int) -> CustomerLife {
        var simulator = LifeSimulator(
            seed: options.seed, index: index, from: options.from.millisecondsSince1970, to: options.to.millisecondsSince1970,
            releaseDay: releaseDay, formats: options.formats)
        return simulator.run()
    }

    /// The bytes one customer adds to each output.
    struct Chunk {
        var files: [[UInt8]] = Array(repeating: [], count: SampleGenerator.dataFiles.count)
        var groundTruth: [UInt8] = []
        var customers: [UInt8] = []
        var refundDays: [(product: String, day: Int64)] = []
        var records = 0
        var transactions = 0
        var appReceipts = 0
        var story: (String, String)?
    }

    func chunk(_ index: Int, jws: SampleJWS, envelope: SignedReceiptEnvelope) -> Chunk {
        let life = life(index)
        let to = options.to.millisecondsSince1970
        let emitter = LifeEmitter(life: life, jws: jws, to: to)
        var chunk = Chunk()
        switch life.format {
        case .notificationsV2: emitter.notificationsV2(into: &chunk.files[0])
        case .serverAPI: emitter.serverAPI(into: &chunk.files[1])
        case .verifyReceipt: emitter.verifyReceipts(into: &chunk.files[2])
        case .notificationsV1:
            var receipts: [UInt8] = []
            emitter.notificationsV1(into: &chunk.files[3], receipts: &receipts)
            chunk.files[2] = receipts
        }
        // Some customers' apps also sent their app receipt (a channel of its own, whatever the format).
        let receiptPlan = life.appReceiptPlan(seed: options.seed, to: to)
        if let receiptPlan {
            emitter.appReceipt(receiptPlan, envelope: envelope, into: &chunk.files[4])
            chunk.appReceipts = 1
        }
        chunk.records = chunk.files.reduce(0) { $0 + lineCount($1) }
        chunk.transactions = life.transactions.count
        if let external = life.externalId {
            var seen = Set<String>()
            for t in life.transactions where seen.insert(t.original).inserted {
                chunk.customers.append(contentsOf: "\(external),originalTransactionId,\(t.original)\n".utf8)
            }
        }
        var truth = JSONText()
        truth.string("customer", life.lookupId)
        truth.string("lookup", life.token != nil ? "appAccountToken" : "external")
        truth.int("index", Int64(index))
        truth.string("format", life.format.rawValue)
        truth.string("environment", life.environment)
        truth.string("story", life.story)
        truth.string("originalTransactionId", life.firstOriginalTransactionId)
        truth.int("appReceiptCreated", receiptPlan?.createdAt)
        let instants = life.instants(to: to).map { at -> String in
            var states = JSONText()
            for (name, state) in life.expectedStates(at: at).sorted(by: { $0.key < $1.key }) { states.string(name, state) }
            var instant = JSONText()
            instant.int("at", at)
            instant.raw("entitlements", states.closed)
            instant.raw("flags", Self.jsonStrings(life.expectedFlags(at: at)))
            return instant.closed
        }
        truth.raw("instants", "[" + instants.joined(separator: ",") + "]")
        // The flags at the end of the data, as the ledger stores them (the last instant's, repeated).
        truth.raw("flags", Self.jsonStrings(life.expectedFlags()))
        chunk.groundTruth = Array((truth.closed + "\n").utf8)
        chunk.refundDays = life.refundDays
        if let story = life.story { chunk.story = (story, life.firstOriginalTransactionId ?? life.lookupId) }
        return chunk
    }

    /// A JSON array of strings that need no escaping.
    static func jsonStrings(_ values: [String]) -> String {
        "[" + values.map { "\"\($0)\"" }.joined(separator: ",") + "]"
    }

    /// Writes the data set into `directory` (created if needed): data files, customers.csv, catalog.csv,
    /// ground-truth.ndjson, manifest.json and the test root.
    @discardableResult
    public func write(to directory: String) throws -> Summary {
        let fm = FileManager.default
        try fm.createDirectory(atPath: directory + "/data", withIntermediateDirectories: true)
        func open(_ name: String) throws -> BufferedFile { try BufferedFile(path: directory + "/" + name) }
        let files = try Self.dataFiles.map(open)
        let truth = try open("ground-truth.ndjson")
        let customers = try open("customers.csv")
        try customers.write(Array("customer_id,kind,value\n".utf8))
        let sink = BlockSink(files: files, truth: truth, customers: customers)
        let jws = SampleJWS()
        let envelope = SignedReceiptEnvelope(signer: jws.signer)
        let block = 128
        var start = 0
        var pending: [Chunk] = []
        repeat {
            let count = max(0, min(block, options.customers - start))
            let chunks = ChunkBox(count: count)
            let first = start
            let previous = pending
            // The block before is written while this one is made: iteration 0 writes it, each other one makes a
            // customer (so both threads stay busy whatever each life costs). Written in order: the output does not
            // depend on timing.
            DispatchQueue.concurrentPerform(iterations: count + 1) { i in
                if i == 0 {
                    sink.write(previous)
                } else {
                    chunks.set(i - 1, chunk(first + i - 1, jws: jws, envelope: envelope))
                }
            }
            if let error = sink.error { throw error }
            pending = chunks.values
            start += count
        } while !pending.isEmpty
        var summary = sink.summary
        let spikes = sink.spikes
        summary.spikes = spikes.spikes()
        var spikeLine = JSONText()
        spikeLine.raw("spikes", "[" + summary.spikes.map { "\"\($0)\"" }.joined(separator: ",") + "]")
        try truth.write(Array((spikeLine.closed + "\n").utf8))
        for file in files + [truth, customers] {
            try file.close()
            summary.bytes += file.written
        }
        summary.emptyFiles = zip(Self.dataFiles, files).filter { $0.1.written == 0 }.map(\.0)
        try Data(SampleCatalog.catalogCSV.utf8).write(to: URL(fileURLWithPath: directory + "/catalog.csv"))
        try Data(SampleCA.rootPEM.utf8).write(to: URL(fileURLWithPath: directory + "/test-root.pem"))
        var manifest = JSONText()
        manifest.string("generator", "receiptdesk sample")
        manifest.int("formatVersion", 1)
        manifest.string("seed", options.seedName)
        manifest.int("customers", Int64(options.customers))
        manifest.int("from", options.from.millisecondsSince1970)
        manifest.int("to", options.to.millisecondsSince1970)
        manifest.int("now", options.to.millisecondsSince1970)
        manifest.int("releaseDay", releaseDay)
        manifest.string("spikeProduct", SampleCatalog.filters.id)
        manifest.string("trustRoot", "test-root.pem")
        manifest.string("catalog", "catalog.csv")
        manifest.string("customerMapping", "customers.csv")
        manifest.string("groundTruth", "ground-truth.ndjson")
        if !options.formats.elementsEqual(Self.realisticFormats, by: { $0 == $1 }) {
            var mix = JSONText()
            for (format, weight) in options.formats { mix.raw(format.rawValue, String(weight)) }
            manifest.raw("formats", mix.closed)
        }
        manifest.raw("data", "[" + Self.dataFiles.map { "\"\($0)\"" }.joined(separator: ",") + "]")
        try Data((manifest.closed + "\n").utf8).write(to: URL(fileURLWithPath: directory + "/manifest.json"))
        return summary
    }
}

/// Where blocks of customers are written, in order, from one worker at a time; the first error stops the writing.
private final class BlockSink: @unchecked Sendable {
    let files: [BufferedFile]
    let truth: BufferedFile
    let customers: BufferedFile
    var spikes = SpikeCounter()
    var summary = SampleGenerator.Summary()
    var error: (any Error)?

    init(files: [BufferedFile], truth: BufferedFile, customers: BufferedFile) {
        (self.files, self.truth, self.customers) = (files, truth, customers)
    }

    func write(_ chunks: [SampleGenerator.Chunk]) {
        guard error == nil else { return }
        do {
            for chunk in chunks {
                for (file, bytes) in zip(files, chunk.files) { try file.write(bytes) }
                try truth.write(chunk.groundTruth)
                try customers.write(chunk.customers)
                spikes.add(chunk.refundDays)
                summary.records += chunk.records
                summary.transactions += chunk.transactions
                summary.appReceipts += chunk.appReceipts
                if let story = chunk.story { summary.stories.append(story) }
            }
            summary.customers += chunks.count
        } catch {
            self.error = error
        }
    }
}

/// Results of one block, filled by the workers at distinct indices.
private final class ChunkBox: @unchecked Sendable {
    private var slots: [SampleGenerator.Chunk?]
    private let lock = NSLock()

    init(count: Int) { slots = Array(repeating: nil, count: count) }

    func set(_ index: Int, _ chunk: SampleGenerator.Chunk) {
        lock.lock()
        slots[index] = chunk
        lock.unlock()
    }

    var values: [SampleGenerator.Chunk] { slots.map { $0! } }
}

/// The number of line feeds in `bytes` (memchr: a byte-at-a-time count was a tenth of the generator's time).
func lineCount(_ bytes: [UInt8]) -> Int {
    bytes.withUnsafeBufferPointer { buffer in
        guard var next = buffer.baseAddress else { return 0 }
        let end = next + buffer.count
        var count = 0
        while next < end, let found = memchr(next, 0x0A, end - next) {
            count += 1
            next = UnsafePointer(found.assumingMemoryBound(to: UInt8.self)) + 1
        }
        return count
    }
}

/// An output file with a write buffer.
final class BufferedFile {
    private let handle: FileHandle
    private var buffer: [UInt8] = []
    private(set) var written: Int64 = 0
    private static let capacity = 1 << 20

    init(path: String) throws {
        // Opened by the system call itself, so that its reason (permission denied, not a directory) is the one given:
        // the command names it.
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path, NSUnderlyingErrorKey: NSError(domain: NSPOSIXErrorDomain, code: Int(errno))])
        }
        self.handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        buffer.reserveCapacity(Self.capacity)
    }

    func write(_ bytes: [UInt8]) throws {
        written += Int64(bytes.count)
        if buffer.count + bytes.count <= Self.capacity {
            buffer.append(contentsOf: bytes)
            return
        }
        // A large chunk goes out from where it is, after what is buffered: one copy fewer.
        try flush()
        try bytes.withUnsafeBytes { try handle.write(contentsOf: UnsafeRawBufferPointer($0)) }
    }

    func flush() throws {
        guard !buffer.isEmpty else { return }
        try buffer.withUnsafeBytes { try handle.write(contentsOf: UnsafeRawBufferPointer($0)) }
        buffer.removeAll(keepingCapacity: true)
    }

    func close() throws {
        try flush()
        try handle.close()
    }
}
