import ReceiptDecoding
import ReceiptModel

/// Writes one batch of decoded records inside one transaction: raw records with their status,
/// transactions merged by id (DESIGN section 3), renewal infos, notifications and customer links.
struct BatchWriter {
    let connection: any SQLConnection
    let now: Timestamp
    static let chunk = 400

    /// Xcode's StoreKit testing and local testing number transactions from 0 again in each app and test session:
    /// a record whose test transaction has an id the ledger holds for another app, product or purchase is refused,
    /// naming both, rather than merged into one transaction no one made. (Signed ids are Apple's and unique; a
    /// universal purchase shows one transaction under two bundle ids, so only test data is held to this.)
    ///
    /// Test data is never signed, so it may not join what signed data holds either: a test transaction with the id of a
    /// signed one, or naming a subscription (`signedSubscriptions`) the ledger holds from signed data, is refused. (A
    /// payload saying `"environment":"Xcode"` skips verification, as DESIGN section 4 says; joined to a real customer's
    /// subscription it added a purchase no signature vouched for.)
    static func reusedTestId(
        _ transactions: [Transaction], _ known: (String) -> Transaction?, signedSubscriptions: Set<String> = []
    ) -> RecordError? {
        // (By index: a `for t in` would copy each transaction, retaining its strings, for every record imported.)
        for index in transactions.indices where transactions[index].environment?.isUnsignedByDesign == true {
            let t = transactions[index]
            let subscription = t.originalTransactionId ?? t.transactionId
            let heldSigned = known(t.transactionId).flatMap { held in held.environment.map { !$0.isUnsignedByDesign } } == true
            if heldSigned || signedSubscriptions.contains(subscription) {
                let what = heldSigned ? "transaction \(t.transactionId)" : "subscription \(subscription)"
                return RecordError(
                    code: "testIdReused",
                    message: "its \(t.environment!.rawValue) transaction \(t.transactionId) names \(what), which the ledger holds from "
                        + "signed data: test data is not signed, so it may not join a signed purchase (import StoreKit test sessions "
                        + "into a ledger of their own)")
            }
            guard let held = known(t.transactionId), held.environment?.isUnsignedByDesign == true else { continue }
            var differs: [String] = []
            func compare(_ name: String, _ a: String?, _ b: String?) {
                if let a, let b, a != b { differs.append("\(name) \(b), where the ledger's has \(a)") }
            }
            compare("bundle", held.bundleId, t.bundleId)
            compare("product", held.productId, t.productId)
            // (To the second: a receipt's dates carry no milliseconds where the signed transaction's do.)
            if let a = held.purchaseDate, let b = t.purchaseDate, a.millisecondsSince1970 / 1000 != b.millisecondsSince1970 / 1000 {
                differs.append("purchase date \(b.iso8601), where the ledger's has \(a.iso8601)")
            }
            guard !differs.isEmpty else { continue }
            return RecordError(
                code: "testIdReused",
                message: "its \(t.environment!.rawValue) transaction \(t.transactionId) has \(differs.joined(separator: "; ")): StoreKit "
                    + "testing numbers transactions anew in each app and session, so this is another purchase with the same id "
                    + "(import one app's test session into a ledger of its own)")
        }
        return nil
    }

    /// A test renewal info (Xcode, local testing) of a subscription the ledger holds under another product only: the
    /// same reused numbering as ``reusedTestId(_:_:)`` (another app's subscription 0), refused rather than joined to a
    /// customer it is not of. `held`: the products stored under each subscription.
    static func reusedTestSubscription(
        _ renewals: [RenewalInfo], _ held: [String: Set<String>], signedSubscriptions: Set<String> = []
    ) -> RecordError? {
        for index in renewals.indices where renewals[index].environment?.isUnsignedByDesign == true {
            let r = renewals[index]
            if let original = r.originalTransactionId, signedSubscriptions.contains(original) {
                return RecordError(
                    code: "testIdReused",
                    message: "its \(r.environment!.rawValue) renewal info names subscription \(original), which the ledger holds from signed "
                        + "data: test data is not signed, so it may not join a signed subscription (import StoreKit test sessions into "
                        + "a ledger of their own)")
            }
            guard let original = r.originalTransactionId, let products = held[original], !products.isEmpty else { continue }
            let named = Array(Set([r.productId, r.autoRenewProductId].compactMap { $0 })).sorted()
            guard !named.isEmpty, !named.contains(where: products.contains) else { continue }
            return RecordError(
                code: "testIdReused",
                message: "its \(r.environment!.rawValue) renewal info of subscription \(original) is for \(named.joined(separator: " / ")), "
                    + "where the ledger's subscription \(original) is \(products.sorted().joined(separator: ", ")): StoreKit testing "
                    + "numbers transactions anew in each app and session (import one app's test session into a ledger of its own)")
        }
        return nil
    }

    /// Returns what became of each record, and whether the batch wrote any row: one that did not (every record
    /// written before, each rejected one refused again with the same code) leaves the ledger as it was.
    /// `refused`: the records the ledger itself refused (a reused test id), named as the importer names a record the
    /// decoder refused ("record #4 (byte 1880): code: message"), for the command to say as it goes.
    /// `written`: the records of the batch whose rows were there already (every one but a retried rejection), by their
    /// stored outcome: in a source begun anew or resumed, another importer of the same file wrote them meanwhile.
    func write(sourceId: Int64, _ records: [RecordInput]) throws -> (
        counts: ImportCounts, wrote: Bool, refused: [String], written: ImportCounts
    ) {
        let c = connection
        // Records are compared by the first 128 bits of their SHA-256.
        let hashes = records.map(\.contentHash)
        var knownHashes = Set<[UInt8]>()
        for row in try c.queryIn(
            "SELECT content_hash FROM raw_records WHERE status = \(RecordStatus.imported.sql) AND content_hash IN (?*)", [],
            list: Set(hashes).map(SQLValue.blob))
        {
            if let hash = row[0].blob { knownHashes.insert(hash) }
        }
        // Existing transactions this batch touches, to merge into.
        var ids = Set<String>()
        for input in records where input.record.isOK {
            for t in input.record.transactions { ids.insert(t.transactionId) }
        }
        // The products the ledger holds under each subscription a test renewal info of this batch names (rare: Xcode
        // and local-testing data), to tell another app's subscription 0 from this one's (``reusedTestId``).
        // And the subscriptions test data names that the ledger holds from signed data (Production, Sandbox), which test
        // data may not join.
        var testOriginals = Set<String>()
        for input in records where input.record.isOK {
            for r in input.record.renewalInfos where r.environment?.isUnsignedByDesign == true {
                if let original = r.originalTransactionId { testOriginals.insert(original) }
            }
            for index in input.record.transactions.indices where input.record.transactions[index].environment?.isUnsignedByDesign == true {
                testOriginals.insert(input.record.transactions[index].originalTransactionId ?? input.record.transactions[index].transactionId)
            }
        }
        var heldProducts: [String: Set<String>] = [:]
        var signedSubscriptions = Set<String>()
        // (A receipt's test transaction may name no original: it is its own.)
        for sql in [
            "SELECT DISTINCT original_transaction_id, product_id, environment FROM transactions WHERE original_transaction_id IN (?*)",
            "SELECT DISTINCT transaction_id, product_id, environment FROM transactions WHERE original_transaction_id IS NULL AND transaction_id IN (?*)",
        ] where !testOriginals.isEmpty {
            for row in try c.queryIn(sql, [], list: testOriginals.map(SQLValue.text)) {
                guard let original = row[0].text else { continue }
                if let product = row[1].text { heldProducts[original, default: []].insert(product) }
                if let environment = row[2].text, !Environment(rawValue: environment).isUnsignedByDesign { signedSubscriptions.insert(original) }
            }
        }
        // Every transaction this batch merges, by id; `touched` once a record of the batch has it (`order` lists
        // those, in first-touch order).
        var pending: [String: (transaction: Transaction, firstSeen: Timestamp, exists: Bool, touched: Bool)] = [:]
        // What each stored transaction contributed to its customer's figures before this batch.
        var before: [String: (key: String, contribution: CustomerStats.Contribution)] = [:]
        // The stored rows as they stand, to write only those this batch changes.
        var storedRows: [String: (transaction: Transaction, kind: RevocationKind?, firstSeen: Timestamp?)] = [:]
        for row in try c.queryIn(
            "SELECT transaction_id, canonical, first_seen_at, revocation_kind FROM transactions WHERE transaction_id IN (?*)", [],
            list: ids.map(SQLValue.text))
        {
            // A stored row that cannot be read is an error naming it: skipping it would make this batch
            // insert the transaction again and fail on the unique key with no word of why.
            let storedId = row[0].text ?? "?"
            let stored: Transaction
            do {
                guard let text = row[1].text else { throw RecordError(code: "missingField", message: "canonical is NULL") }
                stored = try CanonicalJSON.transaction(text)
                guard stored.transactionId == storedId else {
                    throw RecordError(code: "wrongRow", message: "it is the canonical JSON of transaction \(stored.transactionId)")
                }
            } catch {
                throw LedgerError(
                    code: .badRow, message: "the stored transaction \(storedId) holds canonical JSON this receiptdesk cannot read: \(error)")
            }
            pending[stored.transactionId] = (stored, Timestamp(millisecondsSince1970: row[2].int ?? now.millisecondsSince1970), true, false)
            let kind = try row[3].decodeIfPresent(RevocationKind.self, column: "transactions.revocation_kind")
            before[stored.transactionId] = (stored.originalTransactionId ?? stored.transactionId, .init(stored, kind))
            storedRows[stored.transactionId] = (stored, kind, row[2].int.map(Timestamp.init(millisecondsSince1970:)))
        }
        // Raw records a second importer of the same file already wrote are left alone (not counted again), but for
        // one stored as rejected that decodes now (the trust roots or the decoder changed since) or is refused with
        // another code: its row is rewritten in place (`retried`, by record index: the row's id). It must be the
        // same record (its content hash), and a reason worded otherwise under the same code (an instant in it) is
        // left as it is, so that importing a file again changes nothing when nothing decodes differently.
        var alreadyWritten = Set<Int>()
        var retried: [Int: Int64] = [:]
        var storedStatus: [Int: RecordStatus] = [:]
        if let low = records.map(\.index).min(), let high = records.map(\.index).max() {
            // A batch of a retry is the file's rejected records only: its indexes are read one by one, never the
            // whole range between them.
            // (A record refused as too large kept only its first bytes, hashed: how many, to hash as many of it again.)
            let columns = """
                SELECT record_index, status, id, error_code, content_hash,
                    CASE WHEN error_code = 'recordTooLarge' THEN LENGTH(raw) END
                FROM raw_records WHERE source_id = ?
                """
            let stored =
                high - low + 1 == records.count
                ? try c.query(columns + " AND record_index >= ? AND record_index <= ?", [.int(sourceId), .of(low), .of(high)])
                : try c.queryIn(columns + " AND record_index IN (?*)", [.int(sourceId)], list: records.map { .of($0.index) })
            var storedRejections: [Int: (id: Int64, code: String?, hash: [UInt8]?, kept: Int?)] = [:]
            for row in stored {
                guard let index = row[0].int.map(Int.init) else { continue }
                alreadyWritten.insert(index)
                let status = try row[1].decode(RecordStatus.self, column: "raw_records.status")
                storedStatus[index] = status
                if status == .rejected, let id = row[2].int {
                    storedRejections[index] = (id, row[3].text, row[4].blob, row[5].int.map(Int.init))
                }
            }
            for input in records {
                guard let stored = storedRejections[input.index] else { continue }
                // The same record: the same source (the whole file's hash) at the same index, which the splitter's
                // boundaries (no limit moves them) make one record; its bytes checked again, all of them, or, refused
                // as too large under a lower limit, the first ones its row kept (it was then never retried, and a later
                // import counted it nowhere). Its row keeps the hash of those: the triggers let a row change only its
                // outcome, so a file holding the same record again is not found a duplicate by its bytes.
                let same =
                    stored.hash == input.contentHash
                    || (stored.code == "recordTooLarge" && stored.kept.map { kept in
                        kept < input.bytes.count && Array(CanonicalJSON.sha256(Array(input.bytes.prefix(kept))).prefix(16)) == stored.hash
                    } ?? false)
                guard same else { continue }
                // (A test id refused as reused is refused again: the ledger still holds the other purchase.)
                let refusedAgain = input.record.isOK ? stored.code == "testIdReused" : input.record.error?.code == stored.code
                if !refusedAgain {
                    retried[input.index] = stored.id
                    alreadyWritten.remove(input.index)
                }
            }
        }
        // Notifications already stored (by UUID) are not stored twice.
        var knownNotifications = Set<String>()
        let uuids = Array(Set(records.compactMap { $0.record.isOK ? $0.record.notification?.notificationUUID : nil }))
        for row in try c.queryIn(
            "SELECT notification_uuid FROM notifications WHERE notification_uuid IN (?*)", [], list: uuids.map(SQLValue.text))
        {
            if let uuid = row[0].text { knownNotifications.insert(uuid) }
        }
        // Writers are serialised (SQLite's exclusive write transaction, PostgreSQL's advisory lock, or a portable
        // ledger's row lock), so the rows read above are every row another importer wrote: a record among them is theirs.
        let writtenBefore = alreadyWritten
        var written = ImportCounts()
        for index in writtenBefore {
            written.read += 1
            switch storedStatus[index] {
            case .imported: written.imported += 1
            case .duplicate: written.duplicate += 1
            case .rejected, nil: written.rejected += 1
            }
        }
        // Records whose renewal infos or notification refer to their raw row get ids now, in one query.
        var rawIds = try c.reserveIds(
            in: "raw_records",
            count: records.count {
                $0.record.isOK && (!$0.record.renewalInfos.isEmpty || $0.record.notification != nil) && retried[$0.index] == nil
            }
        ).makeIterator()
        var rawRows: [[SQLValue]] = []
        var rawRowsWithId: [[SQLValue]] = []
        /// Rewritten rows of retried records, id first (``retriedColumns``), and how they move their source's counts.
        var rawRowsRetried: [[SQLValue]] = []
        var retriedSource = ImportCounts()
        var renewalRows: [[SQLValue]] = []
        var notificationRows: [[SQLValue]] = []
        var added = (raw: 0, rejected: 0, renewals: 0, notifications: 0)
        var order: [String] = []
        var linker = CustomerLinker(connection: c, now: now)
        var counts = ImportCounts()
        // The new records' outcomes, which an unfinished source's row adds up batch by batch.
        var newRecords = ImportCounts()
        // REFUND_REVERSED notifications in this batch, by transaction (with the stored ones, read below, they say
        // whether a revocation still stands).
        var reversals: [String: Timestamp] = [:]
        var refused: [String] = []
        for (position, input) in records.enumerated() {
            // (The record is read in place, `input.record.x`: a copy of it would retain each of its strings.)
            let hash = hashes[position]
            let status: RecordStatus
            var error = input.record.error
            if !input.record.isOK {
                status = .rejected
            } else if knownHashes.contains(hash) {
                status = .duplicate
            } else if let reused = Self.reusedTestId(
                input.record.transactions, { pending[$0]?.transaction }, signedSubscriptions: signedSubscriptions)
                ?? Self.reusedTestSubscription(input.record.renewalInfos, heldProducts, signedSubscriptions: signedSubscriptions)
            {
                status = .rejected
                error = reused
                refused.append("record #\(input.index) (byte \(input.offset)): \(reused.code): \(reused.message)")
            } else {
                status = .imported
                knownHashes.insert(hash)
            }
            let rawValues: [SQLValue] = [
                .int(sourceId), .of(input.index), .int(input.offset), .text(input.record.kind.rawValue), .of(status),
                .text(input.record.verification.rawValue), .blob(hash), .of(error?.code), .of(error?.message),
                // A rejected record keeps the bytes the decoder kept (a request body's shared secret redacted), else
                // the input's, without a shared secret in them (one the ledger refused decoded whole, its bytes as read).
                error == nil ? .null : .blob(input.record.raw.isEmpty ? RecordDecoder.withoutSecrets(input.bytes) : input.record.raw),
            ]
            let needsId = status == .imported && (!input.record.renewalInfos.isEmpty || input.record.notification != nil)
            var rawId: Int64 = 0
            if let id = retried[input.index] {
                // Its row keeps its id, source, index, offset and hash; the rejection it replaces is counted out
                // below, in the ledger's counters and in its source's reconciliation.
                rawId = id
                rawRowsRetried.append([.int(id)] + Self.retriedColumnIndexes.map { rawValues[$0] })
                retriedSource.rejected -= 1
                switch status {
                case .imported: retriedSource.imported += 1
                case .duplicate: retriedSource.duplicate += 1
                case .rejected: retriedSource.rejected += 1
                }
            } else if needsId {
                // A second importer of the same file may have written this record already: it is theirs.
                guard !writtenBefore.contains(input.index), let id = rawIds.next() else { continue }
                rawId = id
                rawRowsWithId.append([.int(id)] + rawValues)
            } else if !writtenBefore.contains(input.index) {
                // Nothing refers to this row. (A record another importer already wrote is theirs; its transactions
                // merge idempotently.)
                rawRows.append(rawValues)
            }
            if !alreadyWritten.contains(input.index) {
                alreadyWritten.insert(input.index)
                if retried[input.index] == nil {
                    newRecords.read += 1
                    switch status {
                    case .imported: newRecords.imported += 1
                    case .duplicate: newRecords.duplicate += 1
                    case .rejected: newRecords.rejected += 1
                    }
                }
                added.raw += retried[input.index] == nil ? 1 : 0
                added.rejected += (status == .rejected ? 1 : 0) - (retried[input.index] == nil ? 0 : 1)
            }
            counts.read += 1
            switch status {
            case .imported: counts.imported += 1
            case .duplicate: counts.duplicate += 1
            case .rejected: counts.rejected += 1
            }
            guard status == .imported else { continue }
            // (What this record adds to a test subscription is the ledger's from now on; so is a signed subscription,
            // which test data later in the batch may not join.)
            for index in input.record.transactions.indices {
                guard let environment = input.record.transactions[index].environment else { continue }
                let t = input.record.transactions[index]
                if environment.isUnsignedByDesign {
                    if let product = t.productId { heldProducts[t.originalTransactionId ?? t.transactionId, default: []].insert(product) }
                } else if !testOriginals.isEmpty {
                    signedSubscriptions.insert(t.originalTransactionId ?? t.transactionId)
                }
            }

            // When the facts were known: the notification's signing, the receipt's creation or Apple's answer.
            // (Optional chains read the receipt in place; binding it to a name would copy its fields.)
            let recordSeen =
                input.record.notification?.signedDate ?? input.record.receipt?.requestDate
                ?? input.record.receipt?.receiptCreationDate ?? now
            var identity = IdentifierList()
            for t in input.record.transactions {
                let seen = t.signedDate ?? recordSeen
                // Merged in place: a copy out of the dictionary and back costs a copy of the transaction.
                if let slot = pending.index(forKey: t.transactionId) {
                    pending.values[slot].transaction.merge(t, preferOther: true)
                    pending.values[slot].firstSeen = min(pending.values[slot].firstSeen, seen)
                    if !pending.values[slot].touched {
                        pending.values[slot].touched = true
                        order.append(t.transactionId)
                    }
                } else {
                    pending[t.transactionId] = (t, seen, false, true)
                    order.append(t.transactionId)
                }
                identity.add(.originalTransactionId, t.originalTransactionId ?? t.transactionId)
                if let token = t.appAccountToken { identity.add(.appAccountToken, token) }
            }
            for (n, r) in input.record.renewalInfos.enumerated() {
                renewalRows.append([
                    .of(r.originalTransactionId), .of(r.signedDate), .of(r.signedDate ?? recordSeen), .int(rawId),
                    .text(input.canonical.renewalInfos[n]),
                ])
                added.renewals += 1
                if let original = r.originalTransactionId { identity.add(.originalTransactionId, original) }
                if let token = r.appAccountToken { identity.add(.appAccountToken, token) }
            }
            if let n = input.record.notification {
                let transaction = input.record.transactions.first
                let original = transaction?.originalTransactionId ?? n.originalTransactionId
                    ?? input.record.renewalInfos.first?.originalTransactionId
                // A UUID the ledger or this batch holds is not written again: writers are serialised, so the rows
                // go straight in (COPY on PostgreSQL) with no conflict to resolve.
                if n.notificationUUID.map({ knownNotifications.insert($0).inserted }) ?? true {
                    notificationRows.append(
                        [
                            .of(n.notificationUUID), .text(n.version), .text(n.notificationType.rawValue), .of(n.subtype?.rawValue),
                            .of(n.signedDate), .of(recordSeen), .of(original), .of(transaction?.transactionId), .int(rawId),
                            .text(input.canonical.notification ?? CanonicalJSON.encode(n)),
                        ])
                    added.notifications += 1
                }
                if let original = n.originalTransactionId { identity.add(.originalTransactionId, original) }
                if n.notificationType == .refundReversed, let id = transaction?.transactionId {
                    reversals[id] = max(reversals[id] ?? recordSeen, recordSeen)
                }
            }
            linker.link(identity.identifiers)
        }
        // Stored REFUND_REVERSED notifications (this batch's own are in `reversals` already).
        let revokedIds = pending.values.filter { $0.transaction.revocationDate != nil }.map(\.transaction.transactionId)
        for (id, at) in try RevocationKind.storedReversals(c, of: revokedIds) {
            reversals[id] = max(reversals[id] ?? at, at)
        }
        // Every read this batch needs comes before its large writes (on PostgreSQL a read waits for every
        // statement before it): the customer links, then the transactions and customer figures (a recount reads
        // the transactions), then the rows nothing here reads again.
        let link = try linker.flush()
        var changed: [(key: String, contribution: CustomerStats.Contribution?, transaction: Transaction, kind: RevocationKind?)] = []
        var newTransactions = 0
        var refunded = 0
        var perEnvironment: [String?: (transactions: Int, refunded: Int)] = [:]
        var transactionRows: [[SQLValue]] = []
        // Stored transactions this batch changes (a verifyReceipt response repeats every earlier one): key first.
        var updatedRows: [[SQLValue]] = []
        // Stored transactions this batch adds records to and nothing else: key, canonical JSON.
        var canonicalRows: [[SQLValue]] = []
        var json = JSONWriter()
        for id in order {
            guard let entry = pending[id] else { continue }
            let t = entry.transaction
            let kind = RevocationKind(t, reversal: reversals[id])
            if entry.exists {
                // A stored transaction the batch repeats as it stands but for the records it came from (a verifyReceipt
                // response lists every earlier one again) has its canonical JSON rewritten only, which lists them: its
                // indexed columns, unchanged, are not written again (on SQLite each would be taken out of its indexes
                // and put back).
                let held = storedRows[id]
                if let held, held.kind == kind, held.firstSeen == entry.firstSeen, held.transaction.hasSameFields(as: t) {
                    canonicalRows.append([.text(id), .text(CanonicalJSON.encode(t, with: &json))])
                } else {
                    updatedRows.append([.text(id)] + Self.values(t, kind: kind, firstSeen: entry.firstSeen, writer: &json))
                }
            } else {
                transactionRows.append(Self.values(t, kind: kind, firstSeen: entry.firstSeen, writer: &json) + [.text(id)])
            }
            let old = before[id]
            let contribution = CustomerStats.Contribution(t, kind)
            if old == nil { newTransactions += 1 }
            refunded += (contribution.refunded ? 1 : 0) - (old?.contribution.refunded == true ? 1 : 0)
            if let before = old?.contribution {
                perEnvironment[before.environment, default: (0, 0)].transactions -= 1
                perEnvironment[before.environment, default: (0, 0)].refunded -= before.refunded ? 1 : 0
            }
            perEnvironment[contribution.environment, default: (0, 0)].transactions += 1
            perEnvironment[contribution.environment, default: (0, 0)].refunded += contribution.refunded ? 1 : 0
            let key = t.originalTransactionId ?? t.transactionId
            if old?.key != key || old?.contribution != contribution {
                changed.append((key, old?.contribution, t, kind))
            }
        }
        try c.updateRows(in: "transactions", key: "transaction_id", columns: Self.transactionColumns.dropLast(), rows: updatedRows)
        try c.updateRows(in: "transactions", key: "transaction_id", columns: ["canonical"], rows: canonicalRows)
        try c.insertRows(into: "transactions", columns: Self.transactionColumns, rows: transactionRows, onConflict: "")
        try updateStats(link: link, changed: changed, before: before)
        let rawColumns = Self.rawColumns
        // Writers are serialised and every row of this batch's range was read above: none of these can collide.
        try c.insertRows(into: "raw_records", columns: ["id"] + rawColumns, rows: rawRowsWithId, onConflict: "")
        try c.insertRows(into: "raw_records", columns: rawColumns, rows: rawRows, onConflict: "")
        try c.updateRows(in: "raw_records", key: "id", columns: Self.retriedColumns, rows: rawRowsRetried)
        // An unfinished source's counts follow its committed batches, so that the Imports screen shows how far an
        // import (running, or cut short) has come; finishing recounts them from its records. (A finished one's gain
        // records only in a retry that finds more in its bytes than its first import did: the end of an array never
        // closed, which an earlier splitter did not count.)
        if newRecords.read > 0 {
            try c.executeDeferred(
                """
                UPDATE sources SET records_read = records_read + ?, imported = imported + ?, duplicates = duplicates + ?,
                rejected = rejected + ? WHERE id = ?
                """,
                [
                    .of(newRecords.read), .of(newRecords.imported), .of(newRecords.duplicate), .of(newRecords.rejected),
                    .int(sourceId),
                ])
        }
        // A finished source's reconciliation and time follow its rewritten rows in the same transaction, so that a
        // retry cut short leaves them right.
        if !rawRowsRetried.isEmpty {
            try c.executeDeferred(
                """
                UPDATE sources SET imported = imported + ?, duplicates = duplicates + ?, rejected = rejected + ?,
                completed_at = CASE WHEN completed_at < ? THEN ? ELSE completed_at END
                WHERE id = ? AND completed_at IS NOT NULL
                """,
                [
                    .of(retriedSource.imported), .of(retriedSource.duplicate), .of(retriedSource.rejected), .of(now), .of(now),
                    .int(sourceId),
                ])
        }
        try c.insertRows(
            into: "renewal_infos", columns: ["original_transaction_id", "signed_date", "seen_at", "raw_record_id", "canonical"],
            rows: renewalRows, onConflict: "")
        try c.insertRows(
            into: "notifications",
            columns: [
                "notification_uuid", "version", "notification_type", "subtype", "signed_date", "seen_at", "original_transaction_id",
                "transaction_id", "raw_record_id", "canonical",
            ],
            rows: notificationRows, onConflict: "")
        try Counters.add(c, .transactions, newTransactions)
        try Counters.add(c, .refundedTransactions, refunded)
        for (environment, delta) in perEnvironment {
            try Counters.add(c, .transactions, in: environment, delta.transactions)
            try Counters.add(c, .refundedTransactions, in: environment, delta.refunded)
        }
        try Counters.add(c, .rawRecords, added.raw)
        try Counters.add(c, .rejectedRecords, added.rejected)
        try Counters.add(c, .renewalInfos, added.renewals)
        try Counters.add(c, .notifications, added.notifications)
        try c.flush()
        let wrote = [rawRows, rawRowsWithId, rawRowsRetried, transactionRows, updatedRows, canonicalRows, renewalRows, notificationRows].contains {
            !$0.isEmpty
        }
        return (counts, wrote, refused, written)
    }

    /// New transactions add to their customer's figures; a stored transaction whose figures or customer
    /// changed has its customers recounted.
    private func updateStats(
        link: LinkResult, changed: [(key: String, contribution: CustomerStats.Contribution?, transaction: Transaction, kind: RevocationKind?)],
        before: [String: (key: String, contribution: CustomerStats.Contribution)]
    ) throws {
        var additions: [Int64: CustomerStats] = [:]
        var recount = Set<Int64>()
        var keysToResolve = Set<String>()
        for change in changed {
            let identifier = CustomerIdentifier(kind: .originalTransactionId, value: change.key)
            if change.contribution == nil, let owner = link.owner[identifier] {
                additions[owner, default: CustomerStats()].add(.init(change.transaction, change.kind))
                continue
            }
            keysToResolve.insert(change.key)
            if let old = before[change.transaction.transactionId]?.key { keysToResolve.insert(old) }
        }
        for row in try connection.queryIn(
            """
            SELECT COALESCE(cu.merged_into, cu.id) FROM customer_ids ci JOIN customers cu ON cu.id = ci.customer_id
            WHERE ci.kind = \(IdentifierKind.originalTransactionId.sql) AND ci.value IN (?*)
            """, [], list: keysToResolve.map(SQLValue.text))
        {
            if let id = row[0].int { recount.insert(id) }
        }
        try StatsWriter.apply(connection, link: link, additions: additions, recount: recount)
    }

    /// A raw row's columns, in the order of its values.
    static let rawColumns = [
        "source_id", "record_index", "byte_offset", "kind", "status", "verification", "content_hash", "error_code", "error_message", "raw",
    ]
    static let retriedColumns = Schema.rewrittenRawRecordColumns
    /// Where ``retriedColumns`` are in a raw row's values.
    private static let retriedColumnIndexes = retriedColumns.map { rawColumns.firstIndex(of: $0)! }

    static let transactionColumns = [
        "original_transaction_id", "web_order_line_item_id", "app_account_token", "product_id", "type", "purchase_date",
        "expires_date", "revocation_date", "revocation_reason", "revocation_kind", "environment", "price", "currency", "signed_date",
        "verification", "first_seen_at", "canonical", "transaction_id",
    ]

    /// A transaction's columns in ``transactionColumns`` order, without the last (`transaction_id`).
    /// (`writer` is the buffer its canonical JSON is written in, kept for the batch.)
    static func values(_ t: Transaction, kind: RevocationKind?, firstSeen: Timestamp, writer: inout JSONWriter) -> [SQLValue] {
        [
            .of(t.originalTransactionId), .of(t.webOrderLineItemId), .of(t.appAccountToken), .of(t.productId),
            .of(t.type?.rawValue), .of(t.purchaseDate), .of(t.expiresDate), .of(t.revocationDate),
            .of(t.revocationReason?.rawValue), .of(kind?.rawValue), .of(t.environment?.rawValue), .of(t.price), .of(t.currency), .of(t.signedDate),
            .text(t.verification.rawValue), .of(firstSeen), .text(CanonicalJSON.encode(t, with: &writer)),
        ]
    }
}

extension Schema {
    /// The columns of `raw_records` that importing a rejected record again rewrites; its source, index, offset and
    /// hash never change (a PostgreSQL importer role may UPDATE these columns only).
    public static let rewrittenRawRecordColumns = ["kind", "status", "verification", "error_code", "error_message", "raw"]
}

/// A record's customer identifiers, each once: a verifyReceipt response names the same original transaction and
/// token for every renewal, and the linker hashes each identifier it is given several times.
struct IdentifierList {
    private(set) var identifiers: [CustomerIdentifier] = []
    /// The identifiers once there are too many to search one by one.
    private var seen: Set<CustomerIdentifier> = []
    private static let searched = 16

    mutating func add(_ kind: IdentifierKind, _ value: String) {
        let identifier = CustomerIdentifier(kind: kind, value: value)
        if identifiers.count < Self.searched {
            guard !identifiers.contains(identifier) else { return }
            identifiers.append(identifier)
            if identifiers.count == Self.searched { seen = Set(identifiers) }
        } else if seen.insert(identifier).inserted {
            identifiers.append(identifier)
        }
    }
}

/// Incremental connected components of identifiers (DESIGN section 5), kept in `customer_ids`.
///
/// Each group of identifiers seen together joins one customer; when a group touches several
/// customers they merge into the oldest, and the others point to it (`merged_into`).
struct CustomerLinker {
    let connection: any SQLConnection
    let now: Timestamp
    private var groups: [[CustomerIdentifier]] = []

    init(connection: any SQLConnection, now: Timestamp) {
        self.connection = connection
        self.now = now
    }

    mutating func link(_ identifiers: [CustomerIdentifier]) {
        if !identifiers.isEmpty { groups.append(identifiers) }
    }

    mutating func flush() throws -> LinkResult {
        guard !groups.isEmpty else { return LinkResult() }
        let c = connection
        let all = Array(Set(groups.joined()))
        var owner: [CustomerIdentifier: Int64] = [:]
        for row in try c.queryIn(
            """
            SELECT ci.kind, ci.value, COALESCE(cu.merged_into, ci.customer_id) FROM customer_ids ci
            JOIN customers cu ON cu.id = ci.customer_id WHERE ci.value IN (?*)
            """, [], list: all.map { SQLValue.text($0.value) })
        {
            if let value = row[1].text, let id = row[2].int {
                owner[CustomerIdentifier(kind: try row[0].decode(IdentifierKind.self, column: "customer_ids.kind"), value: value)] = id
            }
        }
        let stored = Set(owner.keys)
        var nextId = (try c.scalar("SELECT MAX(id) FROM customers")?.int ?? 0) + 1
        var parent: [Int64: Int64] = [:]
        func find(_ id: Int64) -> Int64 {
            var root = id
            while let up = parent[root], up != root { root = up }
            return root
        }
        var created: [Int64] = []
        var dirty = Set<CustomerIdentifier>()
        for group in groups {
            var roots = Set(group.compactMap { owner[$0] }.map(find))
            if roots.isEmpty {
                roots.insert(nextId)
                created.append(nextId)
                nextId += 1
            }
            let target = roots.min()!
            for other in roots where other != target { parent[other] = target }
            for identifier in group where owner[identifier].map(find) != target {
                owner[identifier] = target
                dirty.insert(identifier)
            }
        }
        try c.insertRows(into: "customers", columns: ["id", "created_at"], rows: created.map { [.int($0), .of(now)] }, onConflict: "")
        var result = LinkResult(created: created)
        for (loser, _) in parent {
            let root = find(loser)
            result.merges.append((loser, root))
            try c.execute("UPDATE customers SET merged_into = ? WHERE id = ? OR merged_into = ?", [.int(root), .int(loser), .int(loser)])
            try c.execute("UPDATE customer_ids SET customer_id = ? WHERE customer_id = ?", [.int(root), .int(loser)])
            try c.execute("UPDATE flags SET customer_id = ? WHERE customer_id = ?", [.int(root), .int(loser)])
        }
        // Identifiers seen for the first time go straight in (writers are serialised and every stored row for
        // these values was read above); the few that move to another customer are upserted.
        let row = { (identifier: CustomerIdentifier) -> [SQLValue] in
            [.of(identifier.kind), .text(identifier.value), .int(find(owner[identifier]!))]
        }
        try c.insertRows(
            into: "customer_ids", columns: ["kind", "value", "customer_id"], rows: dirty.subtracting(stored).map(row), onConflict: "")
        try c.insertRows(
            into: "customer_ids", columns: ["kind", "value", "customer_id"], rows: dirty.intersection(stored).map(row),
            onConflict: "ON CONFLICT (value, kind) DO UPDATE SET customer_id = excluded.customer_id")
        for (identifier, id) in owner { result.owner[identifier] = find(id) }
        groups.removeAll()
        return result
    }
}

/// Splits `items` for `IN (...)` lists that stay under every backend's parameter limit.
func chunks<T>(_ items: [T], size: Int = BatchWriter.chunk) -> [[T]] {
    stride(from: 0, to: items.count, by: size).map { Array(items[$0..<min($0 + size, items.count)]) }
}
