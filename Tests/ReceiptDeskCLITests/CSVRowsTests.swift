import Entitlements
import Foundation
import LedgerQueries
import Testing

@testable import ReceiptDeskCLI

@Suite("the operator's CSV files, read by CSV.swift")
struct CSVRowsTests {
    @Test("quoted fields keep their commas, quotes and line breaks; each row knows the line it starts on")
    func quoting() throws {
        let text = "\u{FEFF}product_id,entitlement\r\n\"pro,annual\",\"say \"\"pro\"\"\"\r\n\n# a comment\nlast , y \n"
        let rows = try CSVRows.parse(text)
        #expect(rows.map(\.fields) == [["product_id", "entitlement"], ["pro,annual", "say \"pro\""], ["last", "y"]])
        #expect(rows.map(\.line) == [1, 2, 5])
    }

    @Test("a catalog product id with a comma, quoted, is one product; a bad value names its line")
    func catalog() throws {
        let catalog = try Catalog.parse(csv: "product_id,entitlement,type\n\"com.example.pro,annual\",pro,auto-renewable\n")
        #expect(catalog.products["com.example.pro,annual"]?.type == .autoRenewableSubscription)
        do {
            _ = try Catalog.parse(csv: "product_id,entitlement\na,x\n\npro.week,pro,non-renewing,zero\n")
            Issue.record("accepted")
        } catch {
            #expect(error.line == 4)
            #expect(error.message.contains("duration_days zero"))
        }
    }

    @Test("customers.csv: quoted values, a header only on the first row, a bad row named by line, external refused as a kind")
    func customerMapping() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("csvrows-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let good = directory.appendingPathComponent("good.csv").path
        try Data("customer_id,kind,value\r\n\"acct,1\",originalTransactionId,100\nacct-2,appAccountToken,\"9f0c\"\n".utf8)
            .write(to: URL(fileURLWithPath: good))
        let mapping = try DataOptions.customerMapping(good)
        #expect(mapping.map(\.account) == ["acct,1", "acct-2"])
        #expect(mapping.map(\.kind) == [.originalTransactionId, .appAccountToken])
        #expect(mapping.map(\.value) == ["100", "9f0c"])

        let bad = directory.appendingPathComponent("bad.csv").path
        try Data("customer_id,kind,value\nacct-1,originalTransactionId,100\nacct-2,external,x\n".utf8).write(to: URL(fileURLWithPath: bad))
        do {
            _ = try DataOptions.customerMapping(bad)
            Issue.record("a row of kind external was accepted")
        } catch let error as CLIError {
            #expect(error.kind == .usage)
            #expect(error.message.contains("line 3"))
        }
    }

    @Test(
        "a CSV that would lose rows or bytes is refused with its line, never read short",
        arguments: [
            ("product_id,entitlement\npro.monthly,\"pro,auto-renewable,,1\npro.yearly,pro\n", 2, "runs over a line end"),
            ("a,b\n\"x\"y,z\nb,c\n", 2, "runs over a line end"),
            ("product_id,entitlement\npro.monthly,pro,auto-renewabel\n", 2, "type auto-renewabel is not"),
            ("product_id,entitlement\npro.monthly,pro\npro.monthly,plus\n", 3, "already defined on line 2"),
            ("pro.monthly,pro,auto-renewable,,1,extra\n", 1, "expected product_id,entitlement"),
            ("pro.monthly,pro,auto-renewable,,-1\n", 1, "price_tier -1 is not a whole number from 0"),
        ])
    func refused(text: String, line: Int, message: String) {
        do {
            let catalog = try Catalog.parse(csv: text)
            Issue.record("accepted: \(catalog.products.keys.sorted())")
        } catch {
            #expect(error.line == line, "\(error)")
            #expect(error.message.contains(message), "\(error)")
        }
    }

    @Test("a comment is a whole line whose first character is #; a value that starts with # is data when quoted or indented")
    func comments() throws {
        let text = "# accounts for the VIP desk\r\ncustomer_id,kind,value\r\n\"#vip-1\",originalTransactionId,100\r\n"
            + " #vip-2,appAccountToken,9f0c\n#vip-3,originalTransactionId,300\nacct-4,originalTransactionId,400 # not a comment\n"
        let rows = try CSVRows.parse(text)
        #expect(rows.map(\.line) == [2, 3, 4, 6])
        #expect(rows.map { $0.fields[0] } == ["customer_id", "#vip-1", "#vip-2", "acct-4"])
        #expect(rows.last?.fields == ["acct-4", "originalTransactionId", "400 # not a comment"])
        // After a byte order mark the first line can still be a comment.
        #expect(try CSVRows.parse("\u{FEFF}# catalog\npro,pro\n").map(\.line) == [2])

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("csvrows-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("customers.csv").path
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        let mapping = try DataOptions.customerMapping(path)
        #expect(mapping.map(\.account) == ["#vip-1", "#vip-2", "acct-4"])
    }

    @Test("a file that is not UTF-8 is refused with the first line that is not")
    func notUTF8() {
        let latin1: [UInt8] = Array("product_id,entitlement\npro,pro\n".utf8) + [0x63, 0x61, 0x66, 0xE9, 0x2C, 0x78, 0x0A]
        do {
            _ = try CSVRows.parse(latin1)
            Issue.record("accepted")
        } catch {
            #expect(error.line == 3)
        }
    }
}
