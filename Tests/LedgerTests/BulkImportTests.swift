import Foundation
import Ledger
import LedgerPostgres
import LedgerQueries
import ReceiptDecoding
import ReceiptModel
import Samples
import Testing

/// Imports in batches large enough that PostgreSQL loads rows with COPY (SQLite inserts them one by one):
/// both backends must store the same rows, and keep idempotency, resume and two importers.
@Suite("Bulk import: COPY on PostgreSQL, the same rows as SQLite", .serialized, .ownThreads)
struct BulkImportTests {
    /// Every generated file plus one of awkward text (escapes COPY must keep) and rejected records (raw bytes).
    static func inputs() throws -> [(path: String, bytes: [UInt8])] {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("rd-bulk-\(UUID().uuidString)")
            .path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        _ = try SampleGenerator(.init(customers: 200, seed: 11)).write(to: directory)
        var out: [(String, [UInt8])] = []
        for name in try FileManager.default.contentsOfDirectory(atPath: directory + "/data").sorted() {
            guard let data = FileManager.default.contents(atPath: directory + "/data/" + name) else {
                throw Corpus.MissingFile(path: directory + "/data/" + name)
            }
            out.append(("data/\(name)", [UInt8](data)))
        }
        var lines: [String] = []
        for i in 0..<120 {
            // Product ids with a backslash, a tab, a newline, a quote and non-ASCII text, through JSON escapes.
            lines.append(
                #"{"transactionId":"w\#(i)","originalTransactionId":"wo\#(i / 3)","productId":"odd\\path\ttab\nline\"q\"é🙂 \#(i)","purchaseDate":\#(1_740_000_000_000 + i),"type":"Consumable","quantity":1}"#
            )
            // A rejected record whose raw bytes hold a tab, a backslash and bytes that are not UTF-8 text.
            if i % 3 == 0 { lines.append("{\"transactionId\":\t\"bad\\\(i)\" \u{1}") }
        }
        out.append(("awkward.ndjson", Array(lines.joined(separator: "\n").utf8) + [0xff, 0xfe]))
        return out
    }

    /// One decoder for the suite (its chain cache is shared, as an import's is). Should making it fail, each test
    /// that decodes fails with the error; the run goes on.
    private static let madeDecoder = Result { try testDecoder(extraRoots: [SampleCA.rootDER]) }
    static func decoder() throws -> RecordDecoder { try madeDecoder.get() }

    /// What a ledger holds, as rows that do not depend on the order ids were handed out in.
    static func contents(_ ledger: SQLLedger) async throws -> [String: [[SQLValue]]] {
        let queries = [
            "transactions":
                "SELECT transaction_id, original_transaction_id, product_id, purchase_date, revocation_date, first_seen_at, canonical FROM transactions ORDER BY transaction_id",
            "raw":
                "SELECT s.path, r.record_index, r.byte_offset, r.kind, r.status, r.verification, r.content_hash, r.error_code, r.raw FROM raw_records r JOIN sources s ON s.id = r.source_id ORDER BY s.path, r.record_index",
            "renewals":
                "SELECT s.path, r.record_index, n.original_transaction_id, n.signed_date, n.seen_at, n.canonical FROM renewal_infos n JOIN raw_records r ON r.id = n.raw_record_id JOIN sources s ON s.id = r.source_id ORDER BY 1, 2, 6",
            "notifications":
                "SELECT s.path, r.record_index, n.notification_uuid, n.notification_type, n.seen_at, n.transaction_id, n.canonical FROM notifications n JOIN raw_records r ON r.id = n.raw_record_id JOIN sources s ON s.id = r.source_id ORDER BY 1, 2",
            "customers": "SELECT kind, value, customer_id FROM customer_ids ORDER BY kind, value",
            "stats": "SELECT * FROM customer_stats ORDER BY customer_id",
            "counters": "SELECT name, value FROM ledger_counters WHERE name <> 'change' ORDER BY name",
        ]
        var out: [String: [[SQLValue]]] = [:]
        for (name, sql) in queries {
            out[name] = try await ledger.database.read { c in try c.query(sql, []) }
        }
        return out
    }

    @Test("a bulk import stores exactly what SQLite stores; the same records again are all duplicates")
    func sameRowsAsSQLite() async throws {
        let inputs = try Self.inputs()
        let decoder = try Self.decoder()
        var stored: [Backend: [String: [[SQLValue]]]] = [:]
        for backend in Backend.available {
            let ledger = try await backend.ledger()
            var counts = ImportCounts()
            for input in inputs {
                counts =
                    counts
                    + (try await importBytes(
                        input.bytes, path: input.path, into: ledger, decoder: decoder, batchSize: 500))
            }
            #expect(counts.reconciles)
            #expect(counts.rejected >= 40)
            let contents = try await Self.contents(ledger)
            #expect((contents["transactions"]?.count ?? 0) > 500)
            #expect((contents["notifications"]?.count ?? 0) > 100)
            #expect((contents["renewals"]?.count ?? 0) > 100)
            let awkward = try #require(try await ledger.transaction("w7"))
            #expect(awkward.productId == "odd\\path\ttab\nline\"q\"é🙂 7")
            let rejected = try await ledger.rejectedRecords(after: nil, limit: 1000).filter {
                $0.sourcePath == "awkward.ndjson"
            }
            #expect(rejected.count == 41)
            let raw = try await ledger.rejectedRaw(try #require(rejected.first { $0.index == 1 }).id)
            #expect(raw == Array("{\"transactionId\":\t\"bad\\0\" \u{1}".utf8))

            // The same records in files with other contents (a trailing newline): nothing new.
            let overview = try await ledger.overview()
            var again = ImportCounts()
            for input in inputs {
                again =
                    again
                    + (try await importBytes(
                        input.bytes + [10], path: "again/" + input.path, into: ledger, decoder: decoder,
                        batchSize: 500))
            }
            #expect(again.imported == 0)
            #expect(again.duplicate == counts.imported)
            var after = try await ledger.overview()
            after.sources = overview.sources
            after.rawRecords = overview.rawRecords
            after.rejectedRecords = overview.rejectedRecords
            #expect(after == overview)
            #expect(try await Self.contents(ledger)["transactions"] == contents["transactions"])
            if backend.isPostgres {
                // Stored transactions changed by a later record went through COPY into a staging table and one
                // UPDATE; new rows, notifications among them (their known UUIDs left out by the importer), straight
                // in; portable SQL makes no temporary table at all.
                let staged = try await ledger.database.read { c in
                    try c.query("SELECT relname FROM pg_class WHERE relpersistence = 't'", []).compactMap { $0.first?.text }
                }
                if backend == .postgresPortable {
                    #expect(staged.isEmpty, "\(staged)")
                } else {
                    #expect(staged.contains { $0.hasPrefix("receiptdesk_stage_transactions_") }, "\(staged)")
                    #expect(!staged.contains { $0.hasPrefix("receiptdesk_stage_notifications_") }, "\(staged)")
                }
            }
            stored[backend] = contents
            try await ledger.close()
        }
        if let sqlite = stored[.sqlite] {
            for backend in [Backend.postgres, .postgresPortable] {
                guard let postgres = stored[backend] else { continue }
                for name in sqlite.keys.sorted() {
                    #expect(sqlite[name] == postgres[name], "\(name) differs between SQLite and \(backend)")
                }
            }
        }
    }

    @Test(
        "a batch that changes many stored customers' figures updates each of them (PostgreSQL: one UPDATE from COPY)",
        arguments: Backend.available)
    func bulkCustomerUpdates(_ backend: Backend) async throws {
        let customers = 45  // above the backend's bulk threshold
        func line(_ id: String, original: Int, purchase: Int64, refunded: Bool = false) -> String {
            let revocation = refunded ? #","revocationDate":\#(purchase + 1_000),"revocationReason":0"# : ""
            return #"{"transactionId":"\#(id)","originalTransactionId":"o\#(original)","productId":"gems","purchaseDate":\#(purchase),"type":"Consumable","quantity":1,"environment":"Production"\#(revocation)}"#
        }
        let first = (0..<customers).map { line("a\($0)", original: $0, purchase: 1_740_000_000_000) }
        // A later purchase for every customer, and a refund for every third one.
        let second = (0..<customers).map { line("b\($0)", original: $0, purchase: 1_741_000_000_000 + Int64($0), refunded: $0 % 3 == 0) }
        let ledger = try await backend.ledger()
        _ = try await importBytes(Array(first.joined(separator: "\n").utf8), path: "first.ndjson", into: ledger, batchSize: 500)
        let counts = try await importBytes(Array(second.joined(separator: "\n").utf8), path: "second.ndjson", into: ledger, batchSize: 500)
        #expect(counts.imported == customers)
        let rows = try await ledger.database.read { c in
            try c.query(
                """
                SELECT ci.value, s.transaction_count, s.last_purchase, s.refunds FROM customer_stats s
                JOIN customer_ids ci ON ci.customer_id = s.customer_id AND ci.kind = 'originalTransactionId' ORDER BY ci.value
                """, [])
        }
        #expect(rows.count == customers)
        for row in rows {
            let index = Int64(row[0].text?.dropFirst() ?? "") ?? -1
            #expect(row[1].int == 2, "\(row[0]) counts \(row[1]) transactions")
            #expect(row[2].int == 1_741_000_000_000 + index, "\(row[0]) last purchase")
            #expect(row[3].int == (index % 3 == 0 ? 1 : 0), "\(row[0]) refunds")
        }
        try await ledger.close()
    }

    @Test(
        "a file imported again with the root its records lacked rewrites each rejected row in place (PostgreSQL: one UPDATE from COPY)",
        arguments: Backend.available)
    func bulkRetry(_ backend: Backend) async throws {
        let count = 60  // above the backend's bulk threshold
        let ca = try TestCA()
        let signer = JWSSigner(ca: ca)
        let lines = (0..<count).map { n in
            signedHistoryRecord(
                #"{"transactionId":"s\#(n)","originalTransactionId":"s\#(n)","productId":"gems","purchaseDate":1740000000000,"type":"Consumable","quantity":1,"environment":"Production","signedDate":1740000000000}"#,
                signedBy: signer)
        }
        // A broken record between them: decoded again, refused again, left as it was; and one that imports the first
        // time, so that the retry's batch is not one run of indexes.
        let broken = #"{"status":0,"latest_receipt_info":[{"transaction_id":"x","purchase_date_ms":"abc"}]}"#
        let fine = #"{"status":0,"latest_receipt_info":[{"transaction_id":"y","original_transaction_id":"y","product_id":"p","purchase_date_ms":"1000"}]}"#
        let bytes = Array((lines.prefix(30) + [broken] + lines.dropFirst(30).prefix(10) + [fine] + lines.dropFirst(40)).joined(separator: "\n").utf8)
        let ledger = try await backend.ledger()
        #expect(try await importBytes(bytes, path: "signed.ndjson", into: ledger, batchSize: 500).rejected == count + 1)
        let before = try await ledger.rejectedRecords(after: nil, limit: 100)
        let fineRow = try await ledger.database.read { c in try c.query("SELECT * FROM raw_records WHERE record_index = 41", []) }
        let counts = try await importBytes(
            bytes, path: "signed.ndjson", into: ledger, decoder: try testDecoder(extraRoots: [ca.rootDER]), batchSize: 500,
            now: testNow.adding(milliseconds: 60_000))
        #expect(counts == ImportCounts(read: count + 2, imported: count, duplicate: 1, rejected: 1))
        let rows = try await ledger.database.read { c in
            try c.query(
                "SELECT id, record_index, status, verification, error_code, raw IS NULL FROM raw_records WHERE record_index <> 41 ORDER BY record_index",
                [])
        }
        #expect(rows.map { $0[0].int } == before.sorted { $0.index < $1.index }.map(\.id), "every row kept its id")
        for row in rows where row[1].int != 30 {
            #expect(row[2].text == "imported" && row[3].text == "verified" && row[4].isNull && row[5].int == 1, "\(row)")
        }
        #expect(try await ledger.database.read { c in try c.query("SELECT * FROM raw_records WHERE record_index = 41", []) } == fineRow)
        #expect(try await ledger.rejectedRecords(after: nil, limit: 100) == [before.first { $0.index == 30 }!])
        #expect(try await ledger.overview().transactions == count + 1)
        let source = try #require(try await ledger.sources(after: nil, limit: 10).first)
        #expect(source.counts == ImportCounts(read: count + 2, imported: count + 1, rejected: 1))
        #expect(source.completedAt == testNow.adding(milliseconds: 60_000), "the source's time moves with what its retry imported")
        try await expectFiguresAgree(ledger)
        try await ledger.close()
    }

    @Test(
        "a batch that changes many stored transactions updates each of them (PostgreSQL: one UPDATE from COPY)",
        arguments: Backend.available)
    func bulkTransactionUpdates(_ backend: Backend) async throws {
        let count = 60  // above the backend's bulk threshold
        func line(_ n: Int, refunded: Bool, signed: Int64 = 1_740_000_000_000) -> String {
            let revocation = refunded ? #","revocationDate":1740000100000,"revocationReason":1"# : ""
            return #"{"transactionId":"t\#(n)","originalTransactionId":"o\#(n)","productId":"gems","purchaseDate":1740000000000,"type":"Consumable","quantity":1,"environment":"Production","storefront":"USA","signedDate":\#(signed)\#(revocation)}"#
        }
        let ledger = try await backend.ledger()
        _ = try await importBytes(
            Array((0..<count).map { line($0, refunded: false) }.joined(separator: "\n").utf8), path: "first.ndjson", into: ledger,
            batchSize: 500)
        // The same transactions again, every other one refunded since: each stored row is merged and written back.
        let counts = try await importBytes(
            Array((0..<count).map { line($0, refunded: $0 % 2 == 0, signed: 1_740_000_200_000) }.joined(separator: "\n").utf8),
            path: "second.ndjson",
            into: ledger, batchSize: 500)
        #expect(counts.imported == count)
        let rows = try await ledger.database.read { c in
            try c.query("SELECT transaction_id, revocation_date, revocation_kind, canonical FROM transactions ORDER BY transaction_id", [])
        }
        #expect(rows.count == count)
        for row in rows {
            let n = Int(row[0].text?.dropFirst() ?? "") ?? -1
            let refunded = n % 2 == 0
            #expect(row[1].int == (refunded ? 1_740_000_100_000 : nil), "\(row[0])")
            #expect(row[2].text == (refunded ? "refund" : nil), "\(row[0])")
            let canonical = try CanonicalJSON.transaction(try #require(row[3].text))
            #expect((canonical.revocationDate != nil) == refunded, "\(row[0])")
            #expect(canonical.storefront == "USA", "\(row[0])")
            #expect(canonical.signedDate?.millisecondsSince1970 == 1_740_000_200_000, "\(row[0])")
        }
        #expect(try await ledger.overview().refundedTransactions == count / 2)
        try await ledger.close()
    }

    @Test(
        "an import into tables PostgreSQL has no statistics for gives them some after its first batch, with autovacuum off",
        arguments: Backend.available.filter(\.isPostgres))
    func statisticsAfterFirstBatch(_ backend: Backend) async throws {
        let ledger = try await backend.ledger()
        let tables = ["raw_records", "transactions", "customer_ids", "customers", "customer_stats", "notifications"]
        // Only the import can give them statistics: autovacuum may not come by during the test.
        try await ledger.database.write { c in
            for table in tables { try c.execute("ALTER TABLE \(table) SET (autovacuum_enabled = false)", []) }
        }
        func analyzed() async throws -> [String] {
            try await ledger.database.read { c in
                try c.query(
                    "SELECT DISTINCT tablename::text FROM pg_stats WHERE schemaname = current_schema() ORDER BY 1", []
                ).compactMap { $0.first?.text }
            }
        }
        #expect(try await analyzed() == [])
        let input = try #require(try Self.inputs().first { $0.path.contains("verify-receipt") })
        // Under the 1,000 records after which the command line's import refreshes the statistics at its end.
        let lines = input.bytes.split(separator: 10).prefix(40).joined(separator: [10])
        _ = try await importBytes(Array(lines), path: input.path, into: ledger, decoder: try Self.decoder(), batchSize: 10)
        let stats = try await analyzed()
        let expected = backend == .postgresPortable ? [] : ["customer_ids", "customer_stats", "customers", "raw_records", "transactions"]
        #expect(stats == expected, "\(stats)")
        try await ledger.close()
    }

    @Test(
        "statistics of a table another session holds locked are skipped, not waited for (the writers' lock is held meanwhile)",
        .enabled(if: PostgresTestServer.enabled))
    func statisticsSkipLockedTables() async throws {
        let server = try PostgresTestServer.get()
        let url = try server.createDatabase()
        let ledger = try await SQLLedger.open(PostgresDatabase.connect(url: url), now: testNow)
        defer { Task { try? await ledger.close() } }
        // Another session holds customers in the lock ANALYZE needs, for 20 s (psql, in the background).
        let pid = try server.background(
            "BEGIN; LOCK TABLE customers IN SHARE UPDATE EXCLUSIVE MODE; SELECT pg_sleep(20); COMMIT",
            database: try PostgresDatabase.databaseName(url: url))
        defer { PostgresTestServer.end(pid) }
        let held = try await PostgresTestServer.waitForLock(
            "relation = 'customers'::regclass AND mode = 'ShareUpdateExclusiveLock'", seenBy: ledger)
        try #require(held, "psql did not take the lock")
        let input = try #require(try Self.inputs().first { $0.path.contains("verify-receipt") })
        let lines = input.bytes.split(separator: 10).prefix(40).joined(separator: [10])
        let counts = try await importBytes(Array(lines), path: input.path, into: ledger, decoder: try Self.decoder(), batchSize: 10)
        #expect(counts.read == 40 && counts.reconciles)
        // Done while the lock is still held: psql has not finished.
        var status: Int32 = 0
        #expect(waitpid(pid, &status, WNOHANG) == 0, "the import waited for the lock to go")
        let analyzed = try await ledger.database.read { c in
            try c.query("SELECT DISTINCT tablename::text FROM pg_stats WHERE schemaname = current_schema() ORDER BY 1", []).compactMap { $0.first?.text }
        }
        #expect(analyzed.contains("raw_records") && !analyzed.contains("customers"), "\(analyzed)")
    }

    @Test(
        "a bulk import cut after some batches resumes, and two importers of one file share it",
        arguments: Backend.available)
    func resumeAndTwoImporters(_ backend: Backend) async throws {
        let inputs = try Self.inputs()
        let input = try #require(inputs.first { $0.path.contains("notifications-v2") })
        var splitter = RecordSplitter()
        let pieces = splitter.feed(input.bytes) + splitter.finish()
        try #require(pieces.count > 500)
        let info = SourceInfo(
            path: input.path, sha256: CanonicalJSON.sha256Hex(input.bytes), size: Int64(input.bytes.count))

        // Resume: two batches of 200 committed, the source never completed, then a whole run.
        let ledger = try await backend.ledger()
        guard case .started(let id, nil) = try await ledger.beginSource(info, now: testNow) else {
            Issue.record("expected a new source")
            return
        }
        let decoder = try Self.decoder()
        let importer = Importer(ledger: ledger, decoder: decoder, batchSize: 200)
        for start in [0, 200] {
            let batch = await importer.decode(Array(pieces[start..<start + 200]), path: input.path)
            _ = try await ledger.importBatch(sourceId: id, batch, now: testNow)
        }
        #expect(try await ledger.beginSource(info, now: testNow) == .started(sourceId: id, resumeAfter: 399))
        // The unfinished source says how far its committed batches came.
        let cut = try #require(try await ledger.sources(after: nil, limit: 10).first { $0.id == id })
        #expect(cut.completedAt == nil && cut.counts.read == 400 && cut.counts.reconciles, "\(cut.counts)")
        var once: [[RecordSplitter.Piece]]? = [pieces]
        let resumed = try await importer.run(info, now: testNow) {
            defer { once = nil }
            return once?.first
        }
        #expect(resumed.read == pieces.count)
        #expect(resumed.reconciles)
        #expect(try await ledger.sources(after: nil, limit: 10).first { $0.id == id }?.counts == resumed)
        let whole = try await Self.contents(ledger)
        try await ledger.close()

        // Two importers of the same file at once, on two connections, against a fresh ledger.
        let (first, second) = try await backend.twoConnections()
        let a = try await SQLLedger.open(first, now: testNow)
        let b = try await SQLLedger.open(second, now: testNow)
        async let countsA = importBytes(input.bytes, path: input.path, into: a, decoder: decoder, batchSize: 150)
        async let countsB = importBytes(input.bytes, path: input.path, into: b, decoder: decoder, batchSize: 150)
        let (ca, cb) = try await (countsA, countsB)
        #expect(ca.read == pieces.count && cb.read == pieces.count)
        #expect(ca.reconciles && cb.reconciles)
        let shared = try await Self.contents(a)
        #expect(shared["raw"]?.count == pieces.count)
        for name in ["transactions", "raw", "renewals", "notifications", "customers", "counters"] {
            #expect(shared[name] == whole[name], "\(name): two importers stored other rows than one resumed importer")
        }
        try await a.close()
        try await b.close()
    }

    @Test(
        "a run that finds its batch committed by another run of the same file meanwhile counts those records as duplicates: each record is imported by one run",
        arguments: Backend.available)
    func concurrentRunCountsTheOthersRecordsAsDuplicates(_ backend: Backend) async throws {
        let input = try #require(try Self.inputs().first { $0.path == "awkward.ndjson" })
        var splitter = RecordSplitter()
        let pieces = splitter.feed(input.bytes) + splitter.finish()
        let info = SourceInfo(path: input.path, sha256: CanonicalJSON.sha256Hex(input.bytes), size: Int64(input.bytes.count))
        let decoder = try Self.decoder()
        let (first, second) = try await backend.twoConnections()
        let a = try await SQLLedger.open(first, now: testNow)
        let b = try await SQLLedger.open(second, now: testNow)
        // B begins the source (nothing committed: it starts from the first record), then, asked for its records, waits
        // while A imports the whole file: B's one batch finds every record committed (as two `import`s of one file
        // started a second apart did, one batch covering the file).
        let began = DispatchSemaphore(value: 0)
        let aDone = DispatchSemaphore(value: 0)
        let runB = Task(executorPreference: ThreadPerJobExecutor.shared) { () throws -> ImportCounts in
            var once: [[RecordSplitter.Piece]]? = [pieces]
            return try await Importer(ledger: b, decoder: decoder, batchSize: pieces.count).run(info, now: testNow) {
                if once != nil {
                    began.signal()
                    aDone.wait()
                }
                defer { once = nil }
                return once?.first
            }
        }
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                began.wait()
                done.resume()
            }
        }
        let countsA: ImportCounts
        do {
            defer { aDone.signal() }
            countsA = try await importBytes(input.bytes, path: input.path, into: a, decoder: decoder, batchSize: 50)
        }
        let countsB = try await runB.value
        #expect(countsA.read == pieces.count && countsA.reconciles && countsA.imported > 0 && countsA.rejected > 0, "\(countsA)")
        // B imported nothing: what A imported is a duplicate for B, what A rejected B rejects too.
        #expect(
            countsB == ImportCounts(read: pieces.count, imported: 0, duplicate: countsA.imported + countsA.duplicate, rejected: countsA.rejected),
            "\(countsB) beside \(countsA)")
        // The file's own reconciliation is the one run's that wrote its records.
        let stored = try #require(try await a.sources(after: nil, limit: 10).first { $0.path == input.path })
        #expect(stored.counts == countsA, "\(stored.counts)")
        #expect(try await Self.contents(a)["raw"]?.count == pieces.count)
        try await a.close()
        try await b.close()
    }
}
