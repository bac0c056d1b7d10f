import Foundation
import Entitlements
import Ledger
import LedgerSQLite
import ReceiptDecoding
import ReceiptModel
import Samples
import Testing

/// One suite, every backend: what a ledger means does not depend on where it is stored.
@Suite("Ledger conformance", .serialized, .ownThreads)
struct LedgerConformanceTests {
    @Test("importing the whole corpus twice: identical counts, the second run all duplicates but the rejected", arguments: Backend.available)
    func corpusTwice(_ backend: Backend) async throws {
        let ledger = try await backend.ledger()
        let files = try Corpus.files
        var first = ImportCounts()
        for file in files { first = first + (try await importFile(file, into: ledger)) }
        #expect(first.reconciles)
        #expect(first.read == files.count)
        #expect(first.rejected == 8)
        // Each refusal, derived from what ../shared/corpus/SOURCES.md says the file holds.
        let expected: [(file: String, code: String, reason: String)] = [
            // {"status":21002} and nothing else: Apple's own error answer, no purchase in it.
            ("aporat__store-receipt-validator/inAppPurchaseInvalidReceiptResponse.json", "appleStatus", "status 21002"),
            // Base64 of an old-style plist with purchase-info: an iOS 6 transaction receipt, a retired format.
            ("apple__app-store-server-library-swift/mock_signed_data/legacyTransaction", "legacyTransactionReceipt", "iOS 6"),
            // The three mock JWS chain to the library's testCA.der, which is not an Apple root.
            ("apple__app-store-server-library-swift/mock_signed_data/renewalInfo", "chainInvalid", "trusted root"),
            ("apple__app-store-server-library-swift/mock_signed_data/testNotification", "chainInvalid", "trusted root"),
            ("apple__app-store-server-library-swift/mock_signed_data/transactionInfo", "chainInvalid", "trusted root"),
            // Xcode's transaction 0 of another app (cyclemaps, 2020) than Apple's xcode/ files' (backyardbirds, 2023):
            // StoreKit testing numbers anew per app, so it is another purchase, not a sighting to merge.
            ("tikhop__TPInAppReceipt/receipt-xcode", "testIdReused", "bundle net.zachariadis.cyclemaps, where the ledger's has com.example.naturelab.backyardbirds.example"),
            // A base64 plist { signature; purchase-info }: the other iOS 6 transaction receipt.
            ("voltrue2__in-app-purchase/apple", "legacyTransactionReceipt", "iOS 6"),
            // A test fixture whose transaction ids are all asterisks: two such purchases would be stored as one.
            ("youknowone__itunes-iap/EXTRACTED_conftest.py_itunes_autorenew_response3.json", "maskedId", "transaction_id is masked"),
        ]
        let rejected = try await ledger.rejectedRecords(after: nil, limit: 100)
            .sorted { $0.sourcePath < $1.sourcePath }
        let prefix = Corpus.root.path + "/"
        #expect(rejected.map { $0.sourcePath.replacingOccurrences(of: prefix, with: "") } == expected.map(\.file))
        #expect(rejected.map(\.code) == expected.map(\.code))
        for (record, expectation) in zip(rejected, expected) {
            #expect(record.message.contains(expectation.reason), "\(expectation.file): \(record.message)")
            #expect(record.index == 0, "each of these files is one record")
        }
        let overview = try await ledger.overview()
        var second = ImportCounts()
        for file in files { second = second + (try await importFile(file, into: ledger)) }
        #expect(second.read == first.read)
        // The rejected records are decoded again, and refused again for the same reasons: their rows stay as
        // they were.
        #expect(second.rejected == first.rejected)
        #expect(second.duplicate == second.read - second.rejected)
        #expect(second.imported == 0)
        #expect(try await ledger.overview() == overview)
        #expect(try await ledger.rejectedRecords(after: nil, limit: 100).sorted { $0.sourcePath < $1.sourcePath } == rejected)
        #expect(overview.sources == files.count)
        #expect(overview.rejectedRecords == first.rejected)
        let sources = try await ledger.sources(after: nil, limit: 100)
        #expect(sources.allSatisfy { $0.counts.reconciles && $0.completedAt != nil })
        try await ledger.close()
    }

    /// A verifyReceipt response that imports, then one whose purchase date is not a number.
    static let importedAndBroken = """
        {"status":0,"latest_receipt_info":[{"transaction_id":"11","original_transaction_id":"10","product_id":"p","purchase_date_ms":"1000"}]}
        {"status":0,"latest_receipt_info":[{"transaction_id":"12","purchase_date_ms":"abc"}]}
        """

    @Test("rejected records keep their reason and raw bytes; the others in the file import", arguments: Backend.available)
    func rejected(_ backend: Backend) async throws {
        let ledger = try await backend.ledger()
        let text = Self.importedAndBroken + "\n" + #"{"status":21007}"#
        let counts = try await importText(text, path: "mixed.ndjson", into: ledger)
        #expect(counts == ImportCounts(read: 3, imported: 1, duplicate: 0, rejected: 2))
        let rejected = try await ledger.rejectedRecords(after: nil, limit: 10)
        #expect(rejected.map(\.code) == ["notANumber", "appleStatus"])
        #expect(rejected[0].index == 1)
        #expect(rejected[0].sourcePath == "mixed.ndjson")
        #expect(String(decoding: try await ledger.rejectedRaw(rejected[0].id), as: UTF8.self).contains("abc"))
        #expect(rejected[0].size == (try await ledger.rejectedRaw(rejected[0].id)).count)
        #expect(try await ledger.transaction("11")?.productId == "p")
        #expect(try await ledger.transaction("12") == nil)
        try await ledger.close()
    }

    @Test(
        "a file imported again decodes its rejected records again: a root added since imports them, a new reason replaces the old",
        arguments: Backend.available)
    func rejectedRetried(_ backend: Backend) async throws {
        let ledger = try await backend.ledger()
        let ca = try TestCA()
        let signer = JWSSigner(ca: ca)
        let transaction = #"{"transactionId":"3000000101","originalTransactionId":"3000000100","productId":"pro.monthly","purchaseDate":1740816000000,"expiresDate":1743494400000,"signedDate":1740816000000,"environment":"Production"}"#
        let notification = #"{"notificationType":"DID_RENEW","notificationUUID":"5a1e0000-0000-4000-8000-000000000001","version":"2.0","signedDate":1740816000000,"data":{"environment":"Production","bundleId":"com.example","signedTransactionInfo":"\#(signer.sign(json: transaction))"}}"#
        let lines = [
            #"{"status":0,"latest_receipt_info":[{"transaction_id":"3000000201","original_transaction_id":"3000000200","product_id":"p","purchase_date_ms":"1000"}]}"#,
            signedHistoryRecord(transaction, signedBy: signer),
            signedNotificationRecord(notification, signedBy: signer),
            #"{"status":0,"latest_receipt_info":[{"transaction_id":"12","purchase_date_ms":"abc"}]}"#,
        ]
        let bytes = Array(lines.joined(separator: "\n").utf8)
        func rejections() async throws -> [RejectedRecord] { try await ledger.rejectedRecords(after: nil, limit: 10) }

        // Without the test root: the two signed records are refused.
        var counts = try await importBytes(bytes, path: "signed.ndjson", into: ledger, decoder: try testDecoder(), batchSize: 2)
        #expect(counts == ImportCounts(read: 4, imported: 1, duplicate: 0, rejected: 3))
        let first = try await rejections()
        #expect(first.map(\.code) == ["chainInvalid", "chainInvalid", "notANumber"])
        try await expectFiguresAgree(ledger)

        // Again, the same way, a day later: nothing changes (not even the last import's time or the change signal),
        // the three are counted rejected again.
        let overview = try await ledger.overview()
        let change = try await ledger.changeToken()
        let sources = try await ledger.sources(after: nil, limit: 10)
        counts = try await importBytes(
            bytes, path: "signed.ndjson", into: ledger, decoder: try testDecoder(), batchSize: 2, now: testNow.adding(milliseconds: 86_400_000))
        #expect(counts == ImportCounts(read: 4, imported: 0, duplicate: 1, rejected: 3))
        #expect(try await rejections() == first)
        #expect(try await ledger.overview() == overview)
        #expect(try await ledger.changeToken() == change)
        #expect(try await ledger.sources(after: nil, limit: 10) == sources)

        // With the root but only sandbox data allowed: refused for another reason, which replaces the first in place.
        counts = try await importBytes(
            bytes, path: "signed.ndjson", into: ledger, decoder: try testDecoder(extraRoots: [ca.rootDER], environment: .sandbox), batchSize: 2)
        #expect(counts == ImportCounts(read: 4, imported: 0, duplicate: 1, rejected: 3))
        let second = try await rejections()
        #expect(second.map(\.id) == first.map(\.id))
        #expect(second.map(\.code) == ["wrongEnvironment", "wrongEnvironment", "notANumber"])
        #expect(second.last == first.last)
        try await expectFiguresAgree(ledger)

        // With the root: both are imported (the notification's row keeps its id, which it refers to); the
        // broken record stays rejected as it was, and the source's stored reconciliation follows.
        counts = try await importBytes(bytes, path: "signed.ndjson", into: ledger, decoder: try testDecoder(extraRoots: [ca.rootDER]), batchSize: 2)
        #expect(counts == ImportCounts(read: 4, imported: 2, duplicate: 1, rejected: 1))
        #expect(try await rejections() == [first[2]])
        #expect(try await ledger.transaction("3000000101")?.verification == .verified)
        let overviewAfter = try await ledger.overview()
        #expect(overviewAfter.notifications == 1 && overviewAfter.rejectedRecords == 1 && overviewAfter.transactions == 2)
        let source = try #require(try await ledger.sources(after: nil, limit: 10).first)
        #expect(source.counts == ImportCounts(read: 4, imported: 3, duplicate: 0, rejected: 1))
        #expect(source.completedAt == testNow && source.startedAt == sources[0].startedAt)
        #expect(try await ledger.sources(after: nil, limit: 10).count == 1)
        let notificationRow = try await ledger.database.read { c in
            try c.query(
                "SELECT r.id, r.status FROM notifications n JOIN raw_records r ON r.id = n.raw_record_id", [])
        }
        #expect(notificationRow.map { $0[0].int } == [second[1].id])
        #expect(notificationRow.map { $0[1].text } == ["imported"])
        try await expectFiguresAgree(ledger)
        try await ledger.close()
    }

    @Test("a raw record is the ledger's account of what came in: an imported one never changes, a rejected one only its outcome", arguments: Backend.available)
    func rawRecordsOutcomeOnly(_ backend: Backend) async throws {
        let ledger = try await backend.ledger()
        try await importText(Self.importedAndBroken, path: "two.ndjson", into: ledger)
        let portable = try await ledger.database.read { c in c.portableSQL }
        // Portable SQL has no triggers (docs/SCALING.md): there the importer role's column rights guard it.
        guard !portable else { return }
        for statement in [
            "UPDATE raw_records SET status = 'rejected' WHERE record_index = 0",
            "UPDATE raw_records SET error_message = 'edited' WHERE record_index = 0",
            "UPDATE raw_records SET record_index = 7 WHERE record_index = 1",
            "UPDATE raw_records SET content_hash = content_hash || content_hash WHERE record_index = 1",
        ] {
            do {
                try await ledger.database.write { c in try c.execute(statement) }
                Issue.record("the ledger's owner could \(statement)")
            } catch let error as LedgerError {
                #expect(error.message.contains("a raw record changes only its outcome"), "\(statement): \(error.message)")
            }
        }
        try await ledger.database.write { c in
            try c.execute("UPDATE raw_records SET error_message = 'reworded' WHERE record_index = 1")
        }
        #expect(try await ledger.rejectedRecords(after: nil, limit: 10).map(\.message) == ["reworded"])
        try await ledger.close()
    }

    @Test("a source an earlier splitter read fewer records in (an array's missing end) gains the new one in a retry, stored and counted", arguments: Backend.available)
    func retryFindsMore(_ backend: Backend) async throws {
        let ledger = try await backend.ledger()
        // An array cut after its third element, the second a stray number (rejected: the source is retried when imported
        // again).
        let element = { (n: Int) in #"{"transactionId":"m\#(n)","originalTransactionId":"m\#(n)","productId":"p","purchaseDate":1740000000000}"# }
        let bytes = Array("[\(element(0)), 7, \(element(2)),".utf8)
        let info = SourceInfo(path: "cut.json", sha256: CanonicalJSON.sha256Hex(bytes), size: Int64(bytes.count))
        var splitter = RecordSplitter()
        let pieces = splitter.feed(bytes) + splitter.finish()
        #expect(pieces.map(\.unclosedArray) == [false, false, false, true])
        // As an earlier receiptdesk imported it: without the array's missing end.
        var earlier: [[RecordSplitter.Piece]] = [Array(pieces.prefix(3))]
        let importer = Importer(ledger: ledger, decoder: try testDecoder(), batchSize: 2)
        let first = try await importer.run(info, now: testNow) { earlier.isEmpty ? nil : earlier.removeFirst() }
        #expect(first == ImportCounts(read: 3, imported: 2, rejected: 1))
        // Now: the stray number again (rejected again), the two records a duplicate each, and the missing end new.
        var now: [[RecordSplitter.Piece]] = [pieces]
        let again = try await importer.run(info, now: testNow) { now.isEmpty ? nil : now.removeFirst() }
        #expect(again == ImportCounts(read: 4, imported: 0, duplicate: 2, rejected: 2), "\(again)")
        let source = try #require(try await ledger.sources(after: nil, limit: 10).first)
        #expect(source.counts == ImportCounts(read: 4, imported: 2, rejected: 2), "\(source.counts)")
        let rejected = try await ledger.rejectedRecords(after: nil, limit: 10)
        #expect(rejected.map(\.index) == [1, 3] && rejected.last?.code == "truncatedJSON", "\(rejected)")
        try await expectFiguresAgree(ledger)
        // A third import finds nothing new.
        var once: [[RecordSplitter.Piece]] = [pieces]
        #expect(try await importer.run(info, now: testNow) { once.isEmpty ? nil : once.removeFirst() } == ImportCounts(read: 4, duplicate: 2, rejected: 2))
        #expect(try await ledger.sources(after: nil, limit: 10).first?.counts == ImportCounts(read: 4, imported: 2, rejected: 2))
        try await ledger.close()
    }

    @Test("a retry cut short after one batch leaves the source's reconciliation right, and running it again finishes it", arguments: Backend.available)
    func retryInterrupted(_ backend: Backend) async throws {
        let ledger = try await backend.ledger()
        let ca = try TestCA()
        let signer = JWSSigner(ca: ca)
        let lines = (0..<3).map { n in
            signedHistoryRecord(
                #"{"transactionId":"k\#(n)","originalTransactionId":"k\#(n)","productId":"p","purchaseDate":1740000000000,"environment":"Production"}"#,
                signedBy: signer)
        }
        let bytes = Array(lines.joined(separator: "\n").utf8)
        #expect(try await importBytes(bytes, path: "k.ndjson", into: ledger).rejected == 3)
        let info = SourceInfo(path: "k.ndjson", sha256: CanonicalJSON.sha256Hex(bytes), size: Int64(bytes.count))
        guard case .retrying(let sourceId, let rejected, records: 3) = try await ledger.beginSource(info, now: testNow) else {
            Issue.record("expected a retry")
            return
        }
        #expect(rejected == [0, 1, 2])
        // The first record's batch commits, then the importer dies.
        var splitter = RecordSplitter()
        let pieces = splitter.feed(bytes) + splitter.finish()
        let importer = Importer(ledger: ledger, decoder: try testDecoder(extraRoots: [ca.rootDER]))
        _ = try await ledger.importBatch(sourceId: sourceId, await importer.decode([pieces[0]], path: "k.ndjson"), now: testNow)
        try await expectFiguresAgree(ledger)
        #expect(try await ledger.sources(after: nil, limit: 10).map(\.counts) == [ImportCounts(read: 3, imported: 1, rejected: 2)])
        #expect(try await ledger.beginSource(info, now: testNow) == .retrying(sourceId: sourceId, rejected: [1, 2], records: 3))
        let counts = try await importBytes(bytes, path: "k.ndjson", into: ledger, decoder: try testDecoder(extraRoots: [ca.rootDER]))
        #expect(counts == ImportCounts(read: 3, imported: 2, duplicate: 1, rejected: 0))
        #expect(try await ledger.beginSource(info, now: testNow) == .alreadyImported(ImportCounts(read: 3, duplicate: 3)))
        #expect(try await ledger.overview().transactions == 3)
        try await expectFiguresAgree(ledger)
        try await ledger.close()
    }

    @Test("records refused as too large are imported when the file is imported again under a higher limit, and counted either way", arguments: Backend.available)
    func oversizeRetried(_ backend: Backend) async throws {
        let ledger = try await backend.ledger()
        let small = #"{"transactionId":"z1","originalTransactionId":"z1","productId":"p","purchaseDate":1740000000000,"type":"Non-Consumable","quantity":1}"#
        let big = #"{"transactionId":"z2","originalTransactionId":"z2","productId":""# + String(repeating: "x", count: 3_000)
            + #"","purchaseDate":1740000000000,"type":"Non-Consumable","quantity":1}"#
        let bytes = Array([small, big, big.replacingOccurrences(of: "z2", with: "z3")].joined(separator: "\n").utf8)
        #expect(try await importBytes(bytes, path: "big.ndjson", into: ledger, maxRecordBytes: 1_024) == ImportCounts(read: 3, imported: 1, rejected: 2))
        // Again under the same limit: refused again, and counted as such (not left out of the count).
        #expect(try await importBytes(bytes, path: "big.ndjson", into: ledger, maxRecordBytes: 1_024) == ImportCounts(read: 3, duplicate: 1, rejected: 2))
        // Under a limit they fit: imported.
        #expect(try await importBytes(bytes, path: "big.ndjson", into: ledger) == ImportCounts(read: 3, imported: 2, duplicate: 1))
        #expect(try await ledger.sources(after: nil, limit: 10).map(\.counts) == [ImportCounts(read: 3, imported: 3)])
        #expect(try await importBytes(bytes, path: "big.ndjson", into: ledger) == ImportCounts(read: 3, duplicate: 3))
        #expect(try await ledger.overview().transactions == 3)
        try await expectFiguresAgree(ledger)
        try await ledger.close()
    }

    @Test("the same transaction from several sources is one, and a verified sighting wins", arguments: Backend.available)
    func mergeAcrossSources(_ backend: Backend) async throws {
        let ledger = try await backend.ledger()
        let ca = try TestCA()
        let legacy = #"{"status":0,"latest_receipt_info":[{"transaction_id":"2000000101","original_transaction_id":"2000000100","product_id":"legacy.name","purchase_date_ms":"1740816000000","quantity":"1","is_trial_period":"true"}]}"#
        try await importText(legacy, path: "legacy.json", into: ledger)
        let jws = JWSSigner(ca: ca).sign(json: #"{"transactionId":"2000000101","originalTransactionId":"2000000100","productId":"pro.monthly","purchaseDate":1740816000000,"expiresDate":1743494400000,"signedDate":1740816000000,"environment":"Production","price":9990,"currency":"EUR"}"#)
        try await importBytes(Array(jws.utf8), path: "signed.jws", into: ledger, decoder: try testDecoder(extraRoots: [ca.rootDER]))
        let t = try #require(try await ledger.transaction("2000000101"))
        #expect(t.verification == .verified)
        #expect(t.productId == "pro.monthly")
        #expect(t.price == 9990)
        #expect(t.offerDiscountType == .freeTrial)  // filled from the legacy sighting
        #expect(Set(t.sources.map(\.path)) == ["legacy.json", "signed.jws"])
        #expect(try await ledger.overview().transactions == 1)
        try await ledger.close()
    }

    @Test("a display id of a customer merged into another finds the other, and says it was merged", arguments: Backend.available)
    func mergedDisplayId(_ backend: Backend) async throws {
        let ledger = try await backend.ledger()
        try await importText(#"{"transactionId":"t1","originalTransactionId":"o1","appAccountToken":"tok-A","productId":"pro","purchaseDate":1000}"#, path: "a.ndjson", into: ledger)
        try await importText(#"{"transactionId":"t2","originalTransactionId":"o2","appAccountToken":"tok-B","productId":"pro","purchaseDate":2000}"#, path: "b.ndjson", into: ledger)
        let first = try #require(try await ledger.customerId(matching: "o1"))
        let second = try #require(try await ledger.customerId(matching: "o2"))
        #expect(first != second)
        #expect(try await ledger.customerId(pasted: "C\(second)") == PastedMatch(customer: second, matched: "C\(second)"))
        // A renewal of o2 bought under tok-A: one customer, the younger merged into the older.
        try await importText(#"{"transactionId":"t3","originalTransactionId":"o2","appAccountToken":"tok-A","productId":"pro","purchaseDate":3000}"#, path: "c.ndjson", into: ledger)
        let merged = try #require(try await ledger.customerId(pasted: " c\(second) "))
        #expect(merged.customer == first && merged.mergedFrom == second, "\(merged)")
        #expect(merged.mergedSaid == "C\(second) was merged into C\(first) (a record named ids of both)")
        // The customer's own display id, or another of its ids, says nothing of a merge.
        #expect(try await ledger.customerId(pasted: "C\(first)")?.mergedFrom == nil)
        #expect(try await ledger.customerId(pasted: "o2")?.mergedFrom == nil)
        try await ledger.close()
    }

    @Test("a customer is found by every id kind, and records sharing an id join one customer", arguments: Backend.available)
    func customerLookup(_ backend: Backend) async throws {
        let ledger = try await backend.ledger()
        let first = #"{"transactionId":"t1","originalTransactionId":"o1","webOrderLineItemId":"w1","appAccountToken":"tok-A","productId":"pro","purchaseDate":1000}"#
        let second = #"{"transactionId":"t2","originalTransactionId":"o2","appAccountToken":"tok-A","productId":"lite","purchaseDate":2000}"#
        let other = #"{"transactionId":"t9","originalTransactionId":"o9","appAccountToken":"06d470ed-b18d-4a8c-9fd5-e3eed7b2311d","productId":"pro","purchaseDate":3000}"#
        try await importText(first + "\n" + other, path: "a.ndjson", into: ledger)
        let before = try await ledger.customerId(matching: "o1")
        let stranger = try await ledger.customerId(matching: "t9")
        #expect(before != nil && stranger != nil && before != stranger)
        try await importText(second, path: "b.ndjson", into: ledger)
        #expect(try await ledger.linkExternal("account-42", kind: .originalTransactionId, value: "o2", now: testNow))
        // A token mapped in upper case is the stored token (it made a customer of its own); an id no record carries is
        // linked, and said to be new.
        #expect(try await ledger.linkExternal("account-9", kind: .appAccountToken, value: "06D470ED-B18D-4A8C-9FD5-E3EED7B2311D", now: testNow))
        #expect(try await ledger.customerId(matching: "account-9") == stranger)
        let ids = ["t1", "o1", "w1", "tok-A", "t2", "o2", "account-42"]
        var found = Set<Int64>()
        for id in ids { found.insert(try #require(try await ledger.customerId(matching: id), "\(id)")) }
        #expect(found.count == 1)
        #expect(found.first == before)
        #expect(try await ledger.customerId(matching: "nobody") == nil)
        // An id pasted with what surrounded it in a message is found without it, and says by which id; matching
        // (which `note` writes by) takes ids only as they are.
        for (pasted, id) in [("#t1,", "t1"), ("\"o1\"", "o1"), (" (tok-A). ", "tok-A"), ("account-42:", "account-42"), ("\u{201C}w1\u{201D}", "w1")] {
            let found = try await ledger.customerId(pasted: pasted)
            #expect(found?.customer == before && found?.matched == id, "\(pasted)")
            #expect(try await ledger.customerId(matching: pasted) == nil, "\(pasted)")
        }
        #expect(try await ledger.customerId(pasted: "t9")?.matched == "t9")
        // An app account token in upper case (Swift's uuidString) is the same token; other ids keep their case.
        #expect(try await ledger.customerId(matching: "06D470ED-B18D-4A8C-9FD5-E3EED7B2311D") == stranger)
        #expect(try await ledger.customerId(pasted: "\"06D470ED-B18D-4A8C-9FD5-E3EED7B2311D\"")?.customer == stranger)
        #expect(try await ledger.customerId(matching: "TOK-A") == nil)
        #expect(try await ledger.customerId(matching: "T9") == nil)
        #expect(try await ledger.customerId(pasted: "#,.") == nil)
        // Words around an id (a label, a sentence): the id inside, the longest word first; an id of several words
        // is found whole first.
        for (pasted, id, customer) in [
            ("Transaction ID: t9", "t9", stranger), ("my token is (tok-A).", "tok-A", before), ("order o1 and t9", "o1", before),
        ] {
            let found = try await ledger.customerId(pasted: pasted)
            #expect(found?.customer == customer && found?.matched == id, "\(pasted)")
        }
        #expect(try await ledger.customerId(pasted: "no such id here") == nil)
        // A text naming two customers says the other, by its id.
        #expect(
            try await ledger.customerId(pasted: "order o1 and t9")
                == PastedMatch(customer: try #require(before), matched: "o1", others: [("t9", try #require(stranger))]))
        #expect(try await ledger.customerId(pasted: "order o1 and t1")?.others.isEmpty == true, "the same customer's ids")
        // The longest word first, whatever its place; at most six words are tried; a display id among words is a word.
        #expect(try await ledger.customerId(pasted: "t9 account-42")?.matched == "account-42")
        #expect(try await ledger.customerId(pasted: "one two three four five six t9") == nil)
        let display = try #require(try await ledger.customerId(matching: "t9")).description
        #expect(try await ledger.customerId(pasted: "C\(display)") != nil)
        #expect(try await ledger.customerId(pasted: "hi from C\(display) support") == nil)
        try await ledger.linkExternal("acct t9", kind: .originalTransactionId, value: "o1", now: testNow)
        #expect(try await ledger.customerId(pasted: " acct t9 ")?.customer == before)
        // The fewest characters taken off win: "(acct-9.)" is the customer of "acct-9.", not of "acct-9"; "#vip," is
        // "#vip"'s.
        try await ledger.linkExternal("acct-9.", kind: .originalTransactionId, value: "o9", now: testNow)
        try await ledger.linkExternal("acct-9", kind: .originalTransactionId, value: "o1", now: testNow)
        try await ledger.linkExternal("#vip", kind: .originalTransactionId, value: "o9", now: testNow)
        #expect(try await ledger.customerId(pasted: "(acct-9.)")?.customer == stranger)
        #expect(try await ledger.customerId(pasted: "(acct-9)")?.customer == before)
        let vip = try await ledger.customerId(pasted: "#vip,")
        #expect(vip?.customer == stranger && vip?.matched == "#vip")
        let customer = try #require(found.first)
        let records = try await ledger.customerRecords(customer)
        #expect(records.transactions.map(\.transactionId) == ["t1", "t2"])
        #expect(Set(records.identifiers.map(\.kind)) == [.originalTransactionId, .appAccountToken, .external])
        #expect(try await ledger.overview().customers == 2)
        let page = try await ledger.customers(CustomerQuery(limit: 1))
        #expect(page.rows.count == 1 && page.total == 2 && page.next != nil)
        let next = try await ledger.customers(CustomerQuery(after: page.next, limit: 10))
        #expect(next.rows.count == 1 && next.rows[0].id != page.rows[0].id && next.next == nil)
        let filtered = try await ledger.customers(CustomerQuery(filter: "tok-", limit: 10))
        #expect(filtered.rows.map(\.id) == [customer] && filtered.total == 1)
        #expect(try await !ledger.linkExternal("account-5", kind: .originalTransactionId, value: "o-none", now: testNow))
        #expect(try await ledger.customerId(matching: "account-5") != nil)
        // Xcode's transaction 2 is found by "2", but a short number among words is a count, not that customer.
        try await importText(#"{"transactionId":"2","originalTransactionId":"2","productId":"pro","purchaseDate":4000}"#, path: "xcode.ndjson", into: ledger)
        let xcode = try #require(try await ledger.customerId(pasted: " 2 ")?.customer)
        #expect(xcode != before && xcode != stranger)
        #expect(try await ledger.customerId(pasted: "charged 2 times for o1") == PastedMatch(customer: try #require(before), matched: "o1"))
        #expect(try await ledger.customerId(pasted: "charged (2) times") == nil)
        #expect(try await ledger.customerId(pasted: "transaction 20000 for o1")?.matched == "o1")
        try await ledger.close()
    }

    @Test("a record naming more subscriptions and tokens than its list searches one by one joins them all into one customer", arguments: Backend.available)
    func manyIdentifiersInOneRecord(_ backend: Backend) async throws {
        let ledger = try await backend.ledger()
        // 25 subscriptions in one verifyReceipt response, three renewals each, with tokens that repeat: more
        // identifiers than a record's list searches one by one.
        var entries: [String] = []
        for subscription in 0..<25 {
            for renewal in 0..<3 {
                let id = 700_000 + subscription * 10 + renewal
                entries.append(
                    #"{"transaction_id":"\#(id)","original_transaction_id":"\#(700_000 + subscription * 10)","app_account_token":"tok-\#(subscription % 7)","product_id":"pro","purchase_date_ms":"\#(1_000 + id)"}"#
                )
            }
        }
        let response = #"{"status":0,"latest_receipt_info":["# + entries.joined(separator: ",") + "]}"
        let counts = try await importText(response, path: "many.ndjson", into: ledger)
        #expect(counts.imported == 1)
        let customer = try #require(try await ledger.customerId(matching: "700000"))
        for subscription in 0..<25 {
            #expect(try await ledger.customerId(matching: "\(700_000 + subscription * 10 + 2)") == customer)
        }
        let records = try await ledger.customerRecords(customer)
        #expect(records.transactions.count == 75)
        // Every identifier of the record reached the linker (25 subscriptions, 7 tokens: 32, more than 16).
        #expect(records.identifiers.filter { $0.kind == .originalTransactionId }.count == 25)
        #expect(records.identifiers.filter { $0.kind == .appAccountToken }.count == 7)
        #expect(try await ledger.overview().customers == 1)
        try await ledger.close()
    }

    @Test("notifications, renewal infos and their timing are kept per customer", arguments: Backend.available)
    func notificationsAndRenewals(_ backend: Backend) async throws {
        let ledger = try await backend.ledger()
        let file = Corpus.root.appendingPathComponent("imdhemy__laravel-in-app-purchases/appstore-server-notification.json").path
        #expect(try await importFile(file, into: ledger).imported == 1)
        let customer = try #require(try await ledger.customerId(matching: "1000000723811158"))
        let records = try await ledger.customerRecords(customer)
        #expect(records.transactions.count == 54)
        #expect(records.renewalInfos.count == 1)
        #expect(records.notifications.count == 1)
        #expect(records.notifications.first?.notification.notificationType == .didChangeRenewalStatus)
        #expect(records.notifications.first?.seenAt.millisecondsSince1970 == 1_606_293_002_000)
        try await ledger.close()
    }

    @Test(
        "a notification UUID sent again with other content is stored once: within a batch large enough for COPY, and in a later file",
        arguments: Backend.available)
    func notificationSentAgain(_ backend: Backend) async throws {
        let ledger = try await backend.ledger()
        let ca = try TestCA()
        let signer = JWSSigner(ca: ca)
        func notification(_ uuid: Int, signed: Int) -> String {
            let payload = #"{"notificationType":"TEST","notificationUUID":"5a1e0000-0000-4000-8000-\#(String(format: "%012d", uuid))","version":"2.0","signedDate":\#(1_740_816_000_000 + signed),"data":{"environment":"Production","bundleId":"com.example"}}"#
            return signedNotificationRecord(payload, signedBy: signer)
        }
        // 40 records, over the 32 rows PostgreSQL sends with COPY: UUID 0 four times, each time signed at another instant.
        let first = (0..<40).map { notification($0 % 10 == 0 ? 0 : $0, signed: $0) }
        let decoder = try testDecoder(extraRoots: [ca.rootDER])
        var counts = try await importBytes(Array(first.joined(separator: "\n").utf8), path: "first.ndjson", into: ledger, decoder: decoder, batchSize: 100)
        #expect(counts == ImportCounts(read: 40, imported: 40, duplicate: 0, rejected: 0))
        // Again in a later file, with one new UUID.
        let second = [notification(0, signed: 1_000), notification(40, signed: 1_001)]
        counts = try await importBytes(Array(second.joined(separator: "\n").utf8), path: "second.ndjson", into: ledger, decoder: decoder, batchSize: 100)
        #expect(counts.read == 2 && counts.rejected == 0)
        let stored = try await ledger.database.read { c in
            try c.query("SELECT notification_uuid, signed_date FROM notifications ORDER BY notification_uuid", [])
        }
        #expect(stored.count == 38)
        // The first sighting is the one kept.
        #expect(stored.first?[1].int == 1_740_816_000_000)
        #expect(Set(stored.compactMap { $0[0].text }).count == 38)
        try await expectFiguresAgree(ledger)
        try await ledger.close()
    }

    @Test("a serial refunder's flag found again under its merged customer's number is the same flag, its triage kept", arguments: Backend.available)
    func serialRefunderMerged(_ backend: Backend) async throws {
        let ledger = try await backend.ledger()
        func flag(_ customer: Int64) -> RefundFlag {
            RefundFlag(
                id: "serial-refunder:C\(customer):t1", rule: "serial-refunder", severity: .high, customerId: customer, transactionId: "t3",
                productId: "coins", amount: 990, currency: "USD", at: testNow, detail: "3 refunds within 60 days: t1, t2, t3")
        }
        try await ledger.saveFlags([flag(62)], now: testNow)
        _ = try await ledger.triage(flagId: flag(62).id, action: .ack, operatorName: "ana", note: nil, now: testNow.adding(milliseconds: 1000))
        // C62 merged into C2: the rules name the customer anew.
        try await ledger.saveFlags([flag(2)], now: testNow.adding(milliseconds: 2000))
        let all = try await ledger.flags(FlagQuery(rule: "serial-refunder"))
        #expect(all.map(\.id) == [flag(62).id])
        #expect(all.first?.status == .acknowledged && all.first?.customerId == 2)
        #expect(try await ledger.overview().openFlags == 0)
        try await ledger.close()
    }

    @Test("flags move open -> acknowledged -> resolved -> open, every change in an append-only log", arguments: Backend.available)
    func triage(_ backend: Backend) async throws {
        let ledger = try await backend.ledger()
        let flag = RefundFlag(
            id: "quick-refund:t1", rule: "quick-refund", severity: .high, customerId: nil, transactionId: "t1",
            productId: "pro", amount: 9990, currency: "USD", at: testNow, detail: "refunded 3 h after purchase")
        try await ledger.saveFlags([flag], now: testNow)
        try await ledger.saveFlags([flag], now: testNow)  // found again: no second flag, status kept
        #expect(try await ledger.flags(FlagQuery(status: .open)).map(\.id) == ["quick-refund:t1"])
        // Restated with another instant (a spike's alarm, now raised at its refund, once at the day's midnight): moved.
        var moved = flag
        moved.at = testNow.adding(milliseconds: 500)
        try await ledger.saveFlags([moved], now: testNow)
        #expect(try await ledger.flags(FlagQuery(status: .open)).map(\.at) == [moved.at], "on \(backend)")
        try await ledger.saveFlags([flag], now: testNow)
        #expect(try await ledger.flags(FlagQuery(status: .open)).map(\.at) == [flag.at], "on \(backend)")
        _ = try await ledger.triage(flagId: flag.id, action: .ack, operatorName: "ana", note: nil, now: testNow.adding(milliseconds: 1000))
        try await ledger.saveFlags([flag], now: testNow)
        #expect(try await ledger.flags(FlagQuery(status: .acknowledged)).count == 1)
        let resolved = try await ledger.triage(
            flagId: flag.id, action: .resolve, operatorName: "ana", note: "customer confirmed an accidental purchase",
            now: testNow.adding(milliseconds: 2000))
        #expect(resolved.status == .resolved)
        // A resolved flag is reopened, not acknowledged: refused, nothing written.
        do {
            _ = try await ledger.triage(flagId: flag.id, action: .ack, operatorName: "bo", note: nil, now: testNow.adding(milliseconds: 2500))
            Issue.record("a resolved flag was acknowledged on \(backend)")
        } catch let error as LedgerError {
            #expect(error.code == .usage && error.message.contains("reopen it first"), "\(error)")
        }
        _ = try await ledger.triage(flagId: flag.id, action: .reopen, operatorName: "bo", note: "again", now: testNow.adding(milliseconds: 3000))
        await #expect(throws: LedgerError.self) {
            _ = try await ledger.triage(flagId: flag.id, action: .reopen, operatorName: "bo", note: nil, now: testNow)
        }
        await #expect(throws: LedgerError.self) {
            _ = try await ledger.triage(flagId: "missing", action: .ack, operatorName: "bo", note: nil, now: testNow)
        }
        // An undo expecting the status its own change set leaves a flag someone changed since as it is.
        let stale = try await ledger.triageChange(
            flagId: flag.id, action: .resolve, operatorName: "ana", note: "undo of acknowledged", now: testNow.adding(milliseconds: 4000),
            expecting: .acknowledged)
        #expect(stale.from == .open && stale.flag.status == .open)
        let log = try await ledger.triageLog(flagId: flag.id, customerId: nil)
        #expect(log.map(\.action) == [.ack, .resolve, .reopen])
        #expect(log.map(\.toStatus) == [.acknowledged, .resolved, .open])
        #expect(log[1].note == "customer confirmed an accidental purchase")
        #expect(log[2].operatorName == "bo")
        // Refused by the database itself, with its own words (not by some unrelated error).
        func refused(_ sql: String, saying phrase: String) async {
            do {
                try await ledger.database.write { c in try c.execute(sql) }
                Issue.record("\(sql) was allowed on \(backend)")
            } catch {
                #expect("\(error)".contains(phrase), "\(sql): \(error)")
            }
        }
        // Portable SQL has no triggers: there the log is append-only by the roles' rights (PostgresRoleTests).
        if backend != .postgresPortable {
            await refused("UPDATE triage_log SET note = 'rewritten'", saying: "append-only")
            await refused("DELETE FROM triage_log", saying: "append-only")
        }
        if backend == .postgres { await refused("TRUNCATE triage_log", saying: "append-only") }
        // A status moved without the log entry that records it is refused; with one, it moves.
        if backend != .postgresPortable {
            await refused("UPDATE flags SET status = 'acknowledged' WHERE id = '\(flag.id)'", saying: "moves only with the triage log entry")
        }
        await refused(
            "INSERT INTO triage_log (flag_id, at, operator, action) VALUES ('x', 0, 'eve', 'delete')",
            saying: backend.isPostgres ? "triage_log_action" : "only known actions")
        #expect(try await ledger.triageLog(flagId: flag.id, customerId: nil).count == 3)
        // Acknowledged, resolved, then the resolve undone: acknowledged again (an undo may acknowledge a resolved
        // flag, which `a` may not).
        _ = try await ledger.triage(flagId: flag.id, action: .ack, operatorName: "cy", note: nil, now: testNow.adding(milliseconds: 5000))
        _ = try await ledger.triage(flagId: flag.id, action: .resolve, operatorName: "cy", note: "done", now: testNow.adding(milliseconds: 6000))
        let undone = try await ledger.triageChange(
            flagId: flag.id, action: .ack, operatorName: "cy", note: "undo of resolve", now: testNow.adding(milliseconds: 7000),
            expecting: .resolved)
        #expect(undone.from == .resolved && undone.flag.status == .acknowledged)
        // A writer whose clock was read before another's change that went in first (two triage commands at once): its
        // entry is stamped no earlier than the one it follows, so the log reads in order.
        _ = try await ledger.triage(flagId: flag.id, action: .resolve, operatorName: "dee", note: nil, now: testNow.adding(milliseconds: 6500))
        let stamps = try await ledger.triageLog(flagId: flag.id, customerId: nil).map(\.at.millisecondsSince1970)
        #expect(stamps == stamps.sorted(), "\(stamps)")
        #expect(stamps.last == testNow.adding(milliseconds: 7000).millisecondsSince1970)
        try await ledger.close()
    }

    /// PostgreSQL shows a rewrite of a row even when its value is the same (a new `xmin`); SQLite does not.
    @Test("opening a ledger whose schema is current writes nothing", arguments: Backend.available.filter(\.isPostgres))
    func openingOnlyReads(_ backend: Backend) async throws {
        let database = try await backend.database()
        _ = try await SQLLedger.open(database, now: testNow)
        func version() async throws -> String? {
            try await database.read { c in try c.scalar("SELECT xmin::text FROM ledger_meta WHERE key = 'schema_version'")?.text }
        }
        let before = try #require(try await version())
        let token = try await SQLLedger.open(database, now: testNow).changeToken()
        _ = try await SQLLedger.open(database, now: testNow.adding(milliseconds: 1000))
        #expect(try await version() == before, "the second open rewrote the schema version")
        #expect(try await SQLLedger.open(database, now: testNow).changeToken() == token)
        try await database.close()
    }

    @Test("a ledger from a newer schema version is refused and left as it was", arguments: Backend.available)
    func newerSchema(_ backend: Backend) async throws {
        let database = try await backend.database()
        let ledger = try await SQLLedger.open(database, now: testNow)
        try await database.write { c in try c.execute("UPDATE ledger_meta SET value = '99' WHERE key = 'schema_version'") }
        await #expect(throws: LedgerError.self) { _ = try await SQLLedger.open(database, now: testNow) }
        let stored = try await database.read { c in try c.scalar("SELECT value FROM ledger_meta WHERE key = 'schema_version'")?.text }
        #expect(stored == "99")
        try await ledger.close()
    }

    @Test("an interrupted import resumes after its last committed batch", arguments: Backend.available)
    func resume(_ backend: Backend) async throws {
        let ledger = try await backend.ledger()
        let lines = (0..<10).map { #"{"transactionId":"r\#($0)","originalTransactionId":"o\#($0)","productId":"p","purchaseDate":\#($0)}"# }
        let bytes = Array(lines.joined(separator: "\n").utf8)
        var splitter = RecordSplitter()
        let pieces = splitter.feed(bytes) + splitter.finish()
        let info = SourceInfo(path: "r.ndjson", sha256: CanonicalJSON.sha256Hex(bytes), size: Int64(bytes.count))
        // Simulate a crash: the first 4 records committed, the source never completed.
        guard case .started(let id, nil) = try await ledger.beginSource(info, now: testNow) else {
            Issue.record("expected a new source")
            return
        }
        let importer = Importer(ledger: ledger, decoder: try testDecoder(), batchSize: 4)
        _ = try await ledger.importBatch(sourceId: id, await importer.decode(Array(pieces.prefix(4)), path: "r.ndjson"), now: testNow)
        #expect(try await ledger.beginSource(info, now: testNow) == .started(sourceId: id, resumeAfter: 3))
        var once: [[RecordSplitter.Piece]]? = [pieces]
        let counts = try await importer.run(info, now: testNow) { defer { once = nil }; return once?.first }
        #expect(counts == ImportCounts(read: 10, imported: 10, duplicate: 0, rejected: 0))
        #expect(try await ledger.overview().transactions == 10)
        try await ledger.close()
    }

    @Test(
        "a stored transaction a later response repeats as it stands gains the record and no other column; one it changes is written",
        arguments: Backend.available)
    func unchangedNotRewritten(_ backend: Backend) async throws {
        let ledger = try await backend.ledger()
        func entry(_ id: String, _ extra: String = "") -> String {
            #"{"transaction_id":"\#(id)","original_transaction_id":"4000000100","product_id":"pro.monthly","purchase_date_ms":"\#(id)000","expires_date_ms":"\#(id)999"\#(extra)}"#
        }
        func response(_ entries: String...) -> String { #"{"status":0,"latest_receipt_info":["# + entries.joined(separator: ",") + "]}" }
        _ = try await importText(response(entry("1740816")), path: "first.json", into: ledger)
        // Every UPDATE of a transactions row that sets its indexed columns (the product among them), counted by a
        // trigger of the test's own.
        let counting =
            backend.isPostgres
            ? [
                "CREATE TABLE test_updates (n INTEGER NOT NULL)", "INSERT INTO test_updates VALUES (0)",
                """
                CREATE FUNCTION test_count_update() RETURNS trigger AS $$
                BEGIN UPDATE test_updates SET n = n + 1; RETURN NULL; END $$ LANGUAGE plpgsql
                """,
                "CREATE TRIGGER test_count_update AFTER UPDATE OF product_id ON transactions FOR EACH ROW EXECUTE FUNCTION test_count_update()",
            ]
            : [
                "CREATE TABLE test_updates (n INTEGER NOT NULL)", "INSERT INTO test_updates VALUES (0)",
                "CREATE TRIGGER test_count_update AFTER UPDATE OF product_id ON transactions BEGIN UPDATE test_updates SET n = n + 1; END",
            ]
        for statement in counting { try await ledger.database.write { c in try c.execute(statement) } }
        func updates() async throws -> Int64 { try await ledger.database.read { c in try c.scalar("SELECT n FROM test_updates")?.int ?? -1 } }
        // The renewal's response lists the first purchase again, unchanged: its row gains the record it is in, and
        // nothing else of it is written.
        let second = try await importText(response(entry("1740816"), entry("1743494")), path: "second.json", into: ledger)
        #expect(second.imported == 1)
        #expect(try await updates() == 0)
        #expect(try await ledger.overview().transactions == 2)
        #expect(try await ledger.transaction("1740816")?.sources.map(\.path) == ["first.json", "second.json"])
        // The next lists it refunded: that row is written, and reads refunded.
        _ = try await importText(
            response(entry("1740816", #","cancellation_date_ms":"1741000000000","cancellation_reason":"1""#), entry("1743494")),
            path: "third.json", into: ledger)
        #expect(try await updates() == 1)
        #expect(try await ledger.transaction("1740816")?.revocationDate == Timestamp(millisecondsSince1970: 1_741_000_000_000))
        #expect(try await ledger.transaction("1743494")?.revocationDate == nil)
        try await ledger.close()
    }
}
