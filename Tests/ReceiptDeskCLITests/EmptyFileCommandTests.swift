import Foundation
import Testing

@testable import ReceiptDeskCLI

@Suite("receiptdesk decode and import on empty files", .serialized, .ownThreads)
struct EmptyFileCommandTests {
    static func directory() throws -> String {
        let path = cliScratchDirectory.appendingPathComponent("rd-empty-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    static func write(_ bytes: [UInt8], _ path: String) {
        writeTestFile(path, Data(bytes))
    }

    @Test("an empty file holds zero records: read 0, nothing rejected, exit 0")
    func emptyFile() throws {
        let dir = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        Self.write([], dir + "/empty.ndjson")
        Self.write(Array(" \n\n".utf8), dir + "/blank.ndjson")
        let imported = try Binary.run(["import", "--ledger", "sqlite:\(dir)/ledger.sqlite", dir + "/empty.ndjson", dir + "/blank.ndjson"])
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stdout.contains("total: read 0 = imported 0 + duplicate 0 + rejected 0"), "\(imported.stdout)")
        #expect(!imported.stderr.contains("emptyInput"))
        // Each says why it held none; a directory with nothing in it is said too.
        #expect(imported.stderr.contains("\(dir)/empty.ndjson: empty, no records"), "\(imported.stderr)")
        #expect(imported.stderr.contains("\(dir)/blank.ndjson: white space only, no records"), "\(imported.stderr)")
        try FileManager.default.createDirectory(atPath: dir + "/nothing", withIntermediateDirectories: true)
        let none = try Binary.run(["import", "--ledger", "sqlite:\(dir)/ledger.sqlite", dir + "/nothing"])
        #expect(none.status == 0 && none.stderr.contains("receiptdesk: \(dir)/nothing is a directory with no file in it"), "\(none.stderr)")
        let decoded = try Binary.run(["decode", dir + "/empty.ndjson"])
        #expect(decoded.status == 0)
        #expect(decoded.stdout.contains("0 records: 0 ok, 0 rejected"), "\(decoded.stdout)")
        // Which file held none is said, as import says it; the output stays the records.
        let both = try Binary.run(["decode", "--json", dir + "/empty.ndjson", dir + "/blank.ndjson"])
        #expect(both.status == 0 && both.stdout.isEmpty, "\(both.stdout)")
        #expect(
            both.stderr == ["empty", "blank"].map { "\(dir)/\($0).ndjson: no records in it\n" }.joined(),
            "\(both.stderr)")
    }

    @Test("the files `sample` writes import without a rejection, the empty ones included")
    func sampleImports() throws {
        let dir = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let sample = try Binary.run(["sample", "--customers", "5", "--out", dir + "/data"])
        #expect(sample.status == 0, "\(sample.stderr)")
        let empty = try FileManager.default.contentsOfDirectory(atPath: dir + "/data/data").filter {
            (try? FileManager.default.attributesOfItem(atPath: dir + "/data/data/" + $0)[.size] as? Int) == 0
        }
        #expect(!empty.isEmpty, "five customers no longer leave a file empty: this test needs one")
        // Said, with why: five customers are all stories, sent as V2 notifications.
        #expect(
            sample.stdout.contains(
                "empty: data/server-api.ndjson, data/verify-receipt.ndjson, data/notifications-v1.ndjson (the 5 customers are all stories, "
                    + "sent as V2 notifications; 30 customers or more usually fill every file)"), "\(sample.stdout)")
        let fuller = try Binary.run(["sample", "--customers", "40", "--out", dir + "/fuller"])
        #expect(fuller.status == 0 && !fuller.stdout.contains("empty:"), "\(fuller.stdout)")
        // Where it cannot write: the path and the reason, exit 2 (it printed Foundation's "NSCocoaErrorDomain error 512").
        let onFile = try Binary.run(["sample", "--customers", "1", "--out", dir + "/data/customers.csv"])
        #expect(onFile.status == 2 && onFile.stderr.contains("--out \(dir)/data/customers.csv is not a directory: name a directory"), "\(onFile.stderr)")
        let underFile = try Binary.run(["sample", "--customers", "1", "--out", dir + "/data/customers.csv/inner/more"])
        #expect(
            underFile.status == 2 && underFile.stderr.contains("--out \(dir)/data/customers.csv/inner/more: \(dir)/data/customers.csv is not a directory"),
            "\(underFile.stderr)")
        #expect(!underFile.stderr.contains("NSCocoaErrorDomain") && !underFile.stderr.contains("could not be completed"), "\(underFile.stderr)")
        // No directory at all is a usage error (it wrote the sample into /).
        let none = try Binary.run(["sample", "--customers", "1", "--out", ""], directory: dir)
        #expect(none.status == 2 && none.stderr.contains("--out needs the directory to write the sample into"), "\(none.stderr)")
        // A relative path of one character, not there yet (it crashed: Foundation's deletingLastPathComponent trapped on it).
        for relative in ["x", "y/z/"] {
            let short = try Binary.run(["sample", "--customers", "1", "--out", relative], directory: dir)
            #expect(short.status == 0 && FileManager.default.fileExists(atPath: "\(dir)/\(relative)/catalog.csv"), "\(relative): \(short.stderr)")
        }
        #expect(
            [("x", "."), ("x/", "."), ("a/b", "a"), ("a/b/", "a"), ("/x", "/"), ("/", "/"), ("a//b", "a"), ("./x", ".")].allSatisfy {
                Sample.directory(of: $0.0) == $0.1
            })
        let imported = try Binary.run([
            "import", "--ledger", "sqlite:\(dir)/ledger.sqlite", "--trust-root", dir + "/data/test-root.pem", dir + "/data/data",
        ])
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stdout.contains("+ rejected 0"), "\(imported.stdout)")
        for name in empty {
            #expect(imported.stderr.contains("\(name): read 0 = imported 0 + duplicate 0 + rejected 0"), "\(imported.stderr)")
        }
    }
}
