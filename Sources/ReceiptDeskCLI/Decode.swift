import ArgumentParser
import Foundation
import ReceiptDecoding
import ReceiptModel

/// `receiptdesk decode`: decode and verify files, one result per input record.
struct Decode: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Decode and verify App Store data files, one result per input record.",
        discussion: """
            Reads verifyReceipt responses, Server Notifications V1 and V2, signed transactions and renewal \
            infos, App Store Server API responses and PKCS#7 app receipts, as single documents, JSON arrays or \
            NDJSON. Directories are read recursively. Exits 1 when any record is rejected.
            """
    )

    @Flag(help: "Print one JSON object per record (NDJSON), as DESIGN section 12 specifies.")
    var json = false

    @OptionGroup var verification: VerificationOptions

    @Argument(help: ArgumentHelp("Files or directories to decode (- for standard input).", valueName: "PATH"))
    var paths: [String]

    func run() async throws {
        let decoder = try verification.makeDecoder(now: currentTimestamp())
        let files = try ChunkedFile.expand(paths)
        let output = Output()
        var writer = JSONWriter()
        var rejected = 0
        var total = 0
        for path in files {
            var file = try ChunkedFile(path)
            let before = total
            while let pieces = try file.next() {
                // (Output that cannot be written stops the decoding: the rest would be lost too.)
                try output.check()
                for piece in pieces {
                    let record = await decoder.decode(piece, path: path)
                    total += 1
                    if !record.isOK { rejected += 1 }
                    if json {
                        writer.reset()
                        writer.record(record)
                        writer.newline()
                        output.write(writer.bytes)
                    } else {
                        HumanFormat.record(record, into: output)
                    }
                }
            }
            // (Said, as import says it: "0 records" at the end did not say which file held none.)
            if total == before { FileHandle.standardError.write(Data("\(safe(path)): no records in it\n".utf8)) }
        }
        if !json {
            output.line("\(total) record\(total == 1 ? "" : "s"): \(total - rejected) ok, \(rejected) rejected")
        }
        try output.finish()
        if rejected > 0 { throw CLIError.rejected() }
    }
}

/// The readable form of decoded records: one block per record, dates in UTC.
enum HumanFormat {
    static func record(_ record: DecodedRecord, into out: Output) {
        let head = "\(safe(record.provenance.recordName))  \(record.kind.rawValue)"
        guard let error = record.error else {
            out.line("\(head)  ok  \(record.verification.rawValue)")
            if let notification = record.notification {
                var line = "  notification  \(safe(notification.notificationType.rawValue))"
                if let subtype = notification.subtype { line += "/\(safe(subtype.rawValue))" }
                if let date = notification.signedDate { line += "  signed \(date)" }
                if let environment = notification.environment { line += "  \(safe(environment.rawValue))" }
                if let bundle = notification.bundleId { line += "  bundle \(safe(bundle))" }
                out.line(line)
            }
            if let receipt = record.receipt {
                var line = "  receipt  bundle \(safe(receipt.bundleId ?? "-"))"
                if let type = receipt.receiptType { line += "  type \(safe(type))" }
                if let created = receipt.receiptCreationDate { line += "  created \(created)" }
                line += "  in-app entries \(receipt.inAppCount)"
                out.line(line)
            }
            for t in record.transactions {
                var line = "  transaction \(safe(t.transactionId))  \(safe(t.productId ?? "-"))"
                if let original = t.originalTransactionId, original != t.transactionId { line += "  original \(safe(original))" }
                if let date = t.purchaseDate { line += "  bought \(date)" }
                if let date = t.expiresDate { line += "  expires \(date)" }
                if t.offerDiscountType == .freeTrial { line += "  trial" }
                if t.isUpgraded == true { line += "  upgraded" }
                if let date = t.revocationDate { line += "  REVOKED \(date)" }
                out.line(line)
            }
            for r in record.renewalInfos {
                var line = "  renewal  original \(safe(r.originalTransactionId ?? "-"))"
                if let status = r.autoRenewStatus { line += "  auto-renew \(status == .on ? "on" : status == .off ? "off" : status.description)" }
                if let product = r.autoRenewProductId { line += "  next \(safe(product))" }
                if let intent = r.expirationIntent { line += "  expiration intent \(intent)" }
                if r.isInBillingRetryPeriod == true { line += "  billing retry" }
                out.line(line)
            }
            for warning in record.warnings { out.line("  warning: \(safe(warning))") }
            return
        }
        out.line("\(head)  REJECTED  \(error.code): \(safe(error.message))")
        for warning in record.warnings { out.line("  warning: \(safe(warning))") }
    }
}
