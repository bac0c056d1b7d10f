import ReceiptModel

/// Transactions of one record, merged by `transactionId` in first-seen order.
struct TransactionSet {
    private(set) var ordered: [Transaction] = []
    private var index: [String: Int] = [:]

    /// Adds a sighting; a later sighting of the same id wins field by field (latest_receipt_info over in_app).
    mutating func add(_ transaction: Transaction, source: Provenance) {
        var transaction = transaction
        transaction.sources = [source]
        if let existing = index[transaction.transactionId] {
            ordered[existing].merge(transaction, preferOther: true)
        } else {
            index[transaction.transactionId] = ordered.count
            ordered.append(transaction)
        }
    }
}
