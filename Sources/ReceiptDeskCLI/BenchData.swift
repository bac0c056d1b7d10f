import Entitlements
import Ledger
import ReceiptDecoding
import ReceiptModel

/// Generated data for `bench`: decoded transaction payloads as NDJSON, with every id kind filled in.
enum BenchData {
    enum IdKind: String, CaseIterable {
        case transactionId, originalTransactionId, webOrderLineItemId, appAccountToken, customerId
    }

    /// The id of kind `kind` for transaction `n`.
    static func id(_ kind: IdKind, _ n: Int) -> String {
        switch kind {
        case .transactionId: "\(4_000_000_000 + n)"
        case .originalTransactionId: "\(4_000_000_000 + n / 12 * 12)"
        case .webOrderLineItemId: "\(5_000_000_000 + n)"
        case .appAccountToken: "00000000-0000-4000-8000-\(String(n / 12, radix: 16).leftPadded(12))"
        case .customerId: "C\(n / 12 + 1)"
        }
    }

    static func transactionsNDJSON(count: Int, offset: Int) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(count * 420)
        for n in offset..<(offset + count) {
            let purchase = 1_700_000_000_000 + Int64(n % 12) * 2_592_000_000 + Int64(n / 12) * 1000
            let line = #"{"transactionId":"\#(id(.transactionId, n))","originalTransactionId":"\#(id(.originalTransactionId, n))","webOrderLineItemId":"\#(id(.webOrderLineItemId, n))","bundleId":"com.example.app","productId":"pro.monthly","subscriptionGroupIdentifier":"21000001","purchaseDate":\#(purchase),"originalPurchaseDate":\#(purchase),"expiresDate":\#(purchase + 2_592_000_000),"quantity":1,"type":"Auto-Renewable Subscription","appAccountToken":"\#(id(.appAccountToken, n))","inAppOwnershipType":"PURCHASED","signedDate":\#(purchase),"environment":"Production","transactionReason":"RENEWAL","storefront":"USA","price":9990,"currency":"USD"\#(n % 97 == 5 ? ",\"revocationDate\":\(purchase + 86_400_000),\"revocationReason\":\(n % 2)" : "")}"#
            out.append(contentsOf: line.utf8)
            out.append(0x0A)
        }
        return out
    }

    static func importBytes(
        _ bytes: [UInt8], path: String, into ledger: SQLLedger, decoder: RecordDecoder, now: Timestamp
    ) async throws -> ImportCounts {
        var splitter = RecordSplitter()
        var chunks: [[RecordSplitter.Piece]] = [bytes.withUnsafeBufferPointer { splitter.feed($0) }, splitter.finish()]
        let info = SourceInfo(path: path, sha256: CanonicalJSON.sha256Hex(bytes), size: Int64(bytes.count))
        return try await Importer(ledger: ledger, decoder: decoder).run(info, now: now) {
            chunks.isEmpty ? nil : chunks.removeFirst()
        }
    }
}

extension String {
    func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}


extension BenchData {
    /// One customer with `count` monthly renewals, a trial, two product changes and a refund.
    static func longHistory(count: Int) -> CustomerHistory {
        var transactions: [Transaction] = []
        let start: Int64 = 1_500_000_000_000
        for i in 0..<count {
            var t = Transaction(transactionId: "\(9_000_000 + i)")
            t.originalTransactionId = "9000000"
            t.webOrderLineItemId = "w\(i)"
            t.productId = i < count / 2 ? "pro.monthly" : "pro.plus.monthly"
            t.subscriptionGroupIdentifier = "G1"
            t.purchaseDate = Timestamp(millisecondsSince1970: start + Int64(i) * 2_592_000_000)
            t.expiresDate = Timestamp(millisecondsSince1970: start + Int64(i + 1) * 2_592_000_000)
            t.type = .autoRenewableSubscription
            if i == 0 { t.offerType = .introductory; t.offerDiscountType = .freeTrial }
            if i == count - 3 { t.revocationDate = t.purchaseDate!.adding(milliseconds: 3_600_000); t.revocationReason = .appIssue }
            transactions.append(t)
        }
        return CustomerHistory(transactions: transactions)
    }
}
