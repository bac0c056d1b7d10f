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

    /// The bench's mix of input kinds. A signed V2 notification carries three nested JWS, each with the
    /// whole x5c chain (about 15 KB a record, 77 KB a customer): at the realistic mix a million transactions
    /// are about 10 GB, more than the machine can write and import in the bench's ten minutes. So the volume
    /// is mostly legacy JSON (verifyReceipt responses, V1 notifications), with enough signed customers
    /// that every kind is decoded, verification is measured on a bounded signed subset, and every kind is
    /// imported; the table says which figures are on which kinds.
    static let formats: [(SampleFormat, Double)] = [
        (.notificationsV2, 0.03), (.serverAPI, 0.02), (.verifyReceipt, 0.55), (.notificationsV1, 0.40),
    ]

    /// The mix as text: "V2 3%, ...".
    static var formatsText: String {
        formats.map { "\($0.0.rawValue) \(Int(($0.1 * 100).rounded()))%" }.joined(separator: ", ")
    }

    /// Customers needed for about `transactions` transactions, from the first lives' average.
    static func customers(forTransactions transactions: Int, seed: UInt64) -> Int {
        var options = SampleGenerator.Options(customers: 0, seed: seed)
        options.formats = formats
        let probe = SampleGenerator(options)
        let sample = 400
        let total = (0..<sample).reduce(0) { $0 + probe.life($1).transactionIds.count }
        return max(SampleStory.allCases.count + 1, Int((Double(transactions) * Double(sample) / Double(max(1, total))).rounded(.up)))
    }

    /// Writes about `transactions` transactions of sample data into `directory`, timed.
    static func generate(transactions: Int, into directory: String) throws -> BenchData {
        let seed: UInt64 = 2025
        let customers = customers(forTransactions: transactions, seed: seed)
        var options = SampleGenerator.Options(customers: customers, seed: seed)
        options.formats = formats
        let generator = SampleGenerator(options)
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
