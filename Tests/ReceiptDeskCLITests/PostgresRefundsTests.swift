import Foundation
import Ledger
import LedgerQueries
import Testing

@testable import ReceiptDeskCLI

/// `receiptdesk refunds` over a PostgreSQL ledger of more flags than one page (1,000), on a throwaway cluster of the
/// test's own: the list across the page boundary, and a server lost between pages.
@Suite("Refunds: a PostgreSQL queue longer than a page", .ownThreads)
struct PostgresRefundsTests {
    @Test("refunds lists a queue of more than a page once each, in order, and a server lost between pages keeps the pages written and says where the list stops")
    func pagesOnAServer() async throws {
        guard PostgresTestServer.enabled else { return }
        let server = try PostgresTestServer.makePrivate()
        defer { server.stop() }
        let url = try server.createDatabase()
        let file = ImportCommandTests.temporary("pg-refunds.ndjson")
        writeTestFile(file, Data(PostgresImportTests.purchases(1_500, refunded: true).utf8))
        let imported = try Binary.run(["import", "--no-verify", "--ledger", url, file], limit: .seconds(240))
        #expect(imported.status == 0, "\(imported.stderr)")

        // The queue as one read sees it.
        let ledger = try await LedgerOptions.open(url: url, now: currentTimestamp())
        let all = try await ledger.flags(FlagQuery(limit: 100_000)).map(\.id)
        try await ledger.close()
        #expect(all.count > 1_000 && all.count < 2_000, "\(all.count) flags")

        // Across the page boundary: every flag once, in the queue's order, in each format.
        let json = try Binary.run(["refunds", "--ledger", url, "--json", "--limit", "100000"], limit: .seconds(120))
        #expect(json.status == 0, "\(json.stderr)")
        #expect(try json.lines.map { try Binary.json($0)["id"] as? String } == all)
        let csv = try Binary.run(["refunds", "--ledger", url, "--csv", "--limit", "100000"], limit: .seconds(120))
        #expect(csv.status == 0 && csv.lines.count == all.count + 1, "\(csv.lines.count) lines: \(csv.stderr)")
        #expect(csv.lines.dropFirst().allSatisfy { !$0.hasPrefix(csv.lines[0]) }, "the header once")
        let cut = try Binary.run(["refunds", "--ledger", url, "--json", "--limit", "1001"], limit: .seconds(120))
        #expect(try cut.lines.map { try Binary.json($0)["id"] as? String } == Array(all.prefix(1_001)))
        #expect(cut.stderr.contains("showing the newest 1001 flags; more match"), "\(cut.stderr)")

        // A server lost between pages: the first page is read and being written (its 260 KB fill the pipe, which this
        // test does not read yet) when the server stops; the second page's read fails.
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Binary.path)
        process.arguments = ["refunds", "--ledger", url, "--json", "--limit", "100000"]
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let descriptor = out.fileHandleForReading.fileDescriptor
        // (F_GETPIPE_SZ, Linux's: the pipe's capacity, full once the binary waits on it.)
        let capacity = fcntl(descriptor, 1032)
        try #require(capacity > 0)
        var waiting: Int32 = 0
        let deadline = ContinuousClock.now + .seconds(120)
        while waiting < capacity, process.isRunning, ContinuousClock.now < deadline {
            _ = ioctl(descriptor, UInt(FIONREAD), &waiting)
            if waiting < capacity { pause(for: .milliseconds(20)) }
        }
        #expect(waiting == capacity, "the binary did not fill the pipe: \(waiting) of \(capacity) bytes")
        try server.stopServer()
        let written = out.fileHandleForReading.readDataToEndOfFile()
        let said = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()

        #expect(process.terminationStatus == ExitStatus.ledgerUnavailable, "\(said)")
        let lines = String(decoding: written, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        // The whole first page, each line whole, and nothing after it.
        #expect(lines.last == "", "the output ends with a whole line")
        #expect(try lines.dropLast().map { try Binary.json(String($0))["id"] as? String } == Array(all.prefix(1_000)))
        #expect(said.contains("receiptdesk: the list stops after 1000 flags: the ledger failed reading the next page\n"), "\(said)")
        #expect(said.contains("cannot reach the PostgreSQL ledger"), "\(said)")
    }
}
