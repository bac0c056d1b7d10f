import Foundation
import Samples

/// The bench's data: a sample set written by the same generator as `receiptdesk sample`, and the ids to
/// look its customers up by.
struct BenchData {
    /// The kinds of id `lookup` accepts that the generated data carries.
    enum IdKind: String, CaseIterable {
        case transactionId, originalTransactionId, webOrderLineItemId, appAccountToken, externalId
    }

    let directory: String
    let generator: SampleGenerator
    let summary: SampleGenerator.Summary
    let customersPerSecond: Double

    /// Customers needed for about `transactions` transactions, from the first lives' average.
    static func customers(forTransactions transactions: Int, seed: UInt64) -> Int {
        let probe = SampleGenerator(.init(customers: 0, seed: seed))
        let sample = 400
        let total = (0..<sample).reduce(0) { $0 + probe.life($1).transactionIds.count }
        return max(SampleStory.allCases.count + 1, Int((Double(transactions) * Double(sample) / Double(max(1, total))).rounded(.up)))
    }

    /// Writes about `transactions` transactions of sample data into `directory`, timed.
    static func generate(transactions: Int, into directory: String) throws -> BenchData {
        let seed: UInt64 = 2025
        let customers = customers(forTransactions: transactions, seed: seed)
        let generator = SampleGenerator(.init(customers: customers, seed: seed))
        var summary = SampleGenerator.Summary()
        let elapsed = try ContinuousClock().measure { summary = try generator.write(to: directory) }
        return BenchData(
            directory: directory, generator: generator, summary: summary,
            customersPerSecond: Double(summary.customers) / max(seconds(elapsed), 1e-9))
    }

    /// `count` ids of `kind`, spread over the customers (deterministic).
    func ids(_ kind: IdKind, count: Int) -> [String] {
        var out: [String] = []
        var step = 0
        while out.count < count && step < count * 20 {
            let index = (step &* 7919) % max(1, summary.customers)
            step += 1
            let life = generator.life(index)
            // A customer who bought nothing left no record to find.
            guard !life.transactionIds.isEmpty else { continue }
            let id: String?
            switch kind {
            case .transactionId: id = life.transactionIds.last
            case .originalTransactionId: id = life.firstOriginalTransactionId
            case .webOrderLineItemId: id = life.webOrderLineItemIds.last
            case .appAccountToken: id = life.token
            case .externalId: id = life.externalId
            }
            if let id { out.append(id) }
        }
        return out
    }
}
