import Foundation
import Testing

/// A terminal whose locale is not UTF-8 reads UTF-8's bytes in its own charset, where 0x80-0x9F are C1 controls
/// (0x9B is CSI in ISO 8859-1): data that is not ASCII must reach it as `?`, never as those bytes (issue 8).
@Suite("Dashboard in a terminal that is not UTF-8 (tmux)", .serialized, .ownThreads)
struct NonUTF8LocaleTests {
    @Test("non-ASCII data is drawn as ? and no byte above 0x7F reaches the terminal")
    func nonASCIIDataIsReplaced() throws {
        guard TmuxSession.available() else { return }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("rd-latin1-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        // U+00DB is C3 9B in UTF-8: 9B is CSI to an ISO 8859-1 terminal. 名 is a wide character.
        let line = #"{"transactionId":"7001","originalTransactionId":"7001","productId":"x\u00db2Jy\u540d","purchaseDate":1740900000000,"type":"Non-Consumable","environment":"Production","price":990,"currency":"EUR"}"#
        let data = directory.appendingPathComponent("latin1.ndjson")
        try Data((line + "\n").utf8).write(to: data)
        let url = "sqlite:" + directory.appendingPathComponent("ledger.sqlite").path
        let imported = try Binary.run(["import", "--no-verify", "--ledger", url, data.path])
        #expect(imported.status == 0, "\(imported.stderr)")

        let tmux = try TmuxSession(arguments: ["--ledger", url], width: 100, height: 30, environment: ["LANG": "C", "LC_ALL": "C"])
        defer { tmux.kill() }
        tmux.waitFor(text: "customers")
        try tmux.type(":customer 7001")
        try tmux.keys("Enter")
        tmux.waitFor(text: "x?2Jy??")
        try tmux.keys("Q")
        #expect(tmux.exitStatus() == 0)
        let raw = tmux.outputThroughExit()
        #expect(!raw.isEmpty)
        let high = raw.filter { $0 >= 0x80 }
        #expect(high.isEmpty, "bytes above 0x7F reached a terminal that is not UTF-8: \(Set(high).sorted().prefix(10).map { String($0, radix: 16) })")
    }
}
