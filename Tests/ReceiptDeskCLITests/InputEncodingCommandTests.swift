import Foundation
import Testing

@Suite("receiptdesk decode and import on byte-order-marked and UTF-16 files", .serialized, .ownThreads)
struct InputEncodingCommandTests {
    static let line = #"{"transactionId":"bom-1","originalTransactionId":"bom-o","productId":"pro.monthly","purchaseDate":1700000000000,"expiresDate":1702592000000,"type":"Auto-Renewable Subscription","quantity":1}"#

    static func directory() throws -> String {
        let path = cliScratchDirectory.appendingPathComponent("rd-encoding-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    static func write(_ bytes: [UInt8], _ path: String) {
        writeTestFile(path, Data(bytes))
    }

    @Test("NDJSON behind a UTF-8 byte order mark: every line imported, the offsets true")
    func bomFile() throws {
        let dir = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let second = Self.line.replacingOccurrences(of: "bom-1", with: "bom-2")
        let file = dir + "/bom.ndjson"
        Self.write([0xEF, 0xBB, 0xBF] + Array((Self.line + "\r\n" + second + "\r\n").utf8), file)
        let decoded = try Binary.run(["decode", "--json", file])
        #expect(decoded.status == 0, "\(decoded.stderr)")
        let objects = try decoded.lines.map(Binary.json)
        #expect(objects.count == 2)
        #expect(objects.map { $0["status"] as? String } == ["ok", "ok"])
        let imported = try Binary.run(["import", "--ledger", "sqlite:\(dir)/ledger.sqlite", file])
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stdout.contains("total: read 2 = imported 2 + duplicate 0 + rejected 0"), "\(imported.stdout)")
        let found = try Binary.run(["lookup", "--ledger", "sqlite:\(dir)/ledger.sqlite", "bom-2"])
        #expect(found.status == 0, "\(found.stdout)\(found.stderr)")
    }

    @Test("a UTF-16 file is one record rejected with a message that names UTF-16")
    func utf16File() throws {
        let dir = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let file = dir + "/utf16.ndjson"
        var bytes: [UInt8] = [0xFF, 0xFE]
        for unit in (Self.line + "\r\n" + Self.line + "\r\n").utf16 { bytes += [UInt8(unit & 0xFF), UInt8(unit >> 8)] }
        Self.write(bytes, file)
        let imported = try Binary.run(["import", "--ledger", "sqlite:\(dir)/ledger.sqlite", file])
        #expect(imported.status == 1)
        #expect(imported.stdout.contains("total: read 1 = imported 0 + duplicate 0 + rejected 1"), "\(imported.stdout)")
        #expect(imported.stderr.contains("this file is UTF-16"), "\(imported.stderr)")
        #expect(imported.stderr.contains("convert it to UTF-8"))
    }
}
