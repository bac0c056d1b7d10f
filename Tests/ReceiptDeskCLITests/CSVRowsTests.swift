import Entitlements
import Foundation
import LedgerQueries
import Testing

@testable import ReceiptDeskCLI

@Suite("the operator's CSV files, read by CSV.swift")
struct CSVRowsTests {
    @Test("quoted fields keep their commas, quotes and line breaks; each row knows the line it starts on")
    func quoting() {
        let text = "\u{FEFF}product_id,entitlement\r\n\"pro,annual\",\"say \"\"pro\"\"\"\r\n\n# a comment\n\"multi\nline\",x\nlast , y \n"
        let rows = CSVRows.parse(text)
        #expect(rows.map(\.fields) == [["product_id", "entitlement"], ["pro,annual", "say \"pro\""], ["multi\nline", "x"], ["last", "y"]])
        #expect(rows.map(\.line) == [1, 2, 5, 7])
    }

    @Test("a catalog product id with a comma, quoted, is one product; a bad value names its line")
    func catalog() throws {
        let catalog = try Catalog.parse(csv: "product_id,entitlement,type\n\"com.example.pro,annual\",pro,auto-renewable\n")
        #expect(catalog.products["com.example.pro,annual"]?.type == .autoRenewableSubscription)
        #expect(throws: CatalogError.self) { try Catalog.parse(csv: "product_id,entitlement\n\"a\nb\",x\npro.week,pro,non-renewing,zero\n") }
        do {
            _ = try Catalog.parse(csv: "product_id,entitlement\n\"a\nb\",x\npro.week,pro,non-renewing,zero\n")
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
}
