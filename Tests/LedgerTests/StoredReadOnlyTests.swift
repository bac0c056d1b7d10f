import Entitlements
import Foundation
import Ledger
import LedgerQueries
import ReceiptModel
import Testing

/// The setting stored in the ledger (`receiptdesk ledger read-only on`), on every backend.
@Suite("the ledger's stored read-only setting", .serialized, .ownThreads)
struct StoredReadOnlyTests {
    @Test("set by one process, it refuses every write of another already open; lifting it lets them through", arguments: Backend.available)
    func refusesEveryWrite(_ backend: Backend) async throws {
        let (first, second) = try await backend.twoConnections()
        let admin = try await SQLLedger.open(first, now: testNow)
        let agent = try await SQLLedger.open(second, now: testNow)
        let flag = RefundFlag(
            id: "quick-refund:t1", rule: "quick-refund", severity: .high, customerId: nil, transactionId: "t1", productId: "pro",
            amount: 990, currency: "USD", at: testNow, detail: "refunded soon after purchase")
        try await agent.saveFlags([flag], now: testNow)
        #expect(try await agent.isSetReadOnly() == false)

        try await admin.setReadOnly(true)
        #expect(try await agent.isSetReadOnly())
        let writes: [(String, () async throws -> Void)] = [
            ("triage", { _ = try await agent.triage(flagId: flag.id, action: .ack, operatorName: "ana", note: nil, now: testNow) }),
            ("note", { try await agent.noteCustomer(1, operatorName: "ana", note: "n", now: testNow) }),
            ("flags", { try await agent.saveFlags([flag], now: testNow) }),
            ("link", { try await agent.linkExternal("acct", kind: .originalTransactionId, value: "o1", now: testNow) }),
            ("import", { _ = try await importText(#"{"transactionId":"t9","productId":"p"}"#, path: "ro.json", into: agent) }),
        ]
        for (name, write) in writes {
            do {
                try await write()
                Issue.record("\(name) went through a ledger set read-only")
            } catch let error as LedgerError {
                #expect(error.code == .readOnly, "\(name): \(error)")
            }
        }
        #expect(try await agent.triageLog(flagId: nil, customerId: nil).isEmpty)
        #expect(try await agent.flags(FlagQuery()).map(\.status) == [.open])
        #expect(try await agent.overview().sources == 0)

        try await admin.setReadOnly(false)
        _ = try await agent.triage(flagId: flag.id, action: .ack, operatorName: "ana", note: nil, now: testNow)
        #expect(try await agent.flags(FlagQuery()).map(\.status) == [.acknowledged])
        try await admin.close()
        try await agent.close()
    }

    @Test("a ledger set read-only is not upgraded by a newer build until the setting is lifted", arguments: Backend.available)
    func notUpgradedWhileSet(_ backend: Backend) async throws {
        let (first, second) = try await backend.twoConnections()
        let admin = try await SQLLedger.open(first, now: testNow)
        try await admin.setReadOnly(true)
        // As a ledger the previous release wrote: migration v4 not applied.
        try await first.write { c in try undoMigrationV4(c) }
        do {
            _ = try await SQLLedger.open(second, now: testNow)
            Issue.record("a ledger set read-only was upgraded")
        } catch let error as LedgerError {
            #expect(error.code == .readOnly)
            #expect(error.message.contains("read-only off"), "\(error.message)")
        }
        #expect(try await first.read { c in try c.scalar("SELECT value FROM ledger_meta WHERE key = 'schema_version'")?.text } == "3")
        // The setting itself is read and lifted as the ledger is; then the next open upgrades it.
        let settings = try await SQLLedger.openForSettings(second)
        #expect(try await settings.isSetReadOnly())
        try await settings.setReadOnly(false)
        _ = try await SQLLedger.open(second, now: testNow)
        #expect(try await first.read { c in try c.scalar("SELECT value FROM ledger_meta WHERE key = 'schema_version'")?.text } == String(Schema.version))

        // Lifted with the upgrade (`ledger read-only off`): both in one transaction. A failing upgrade leaves the
        // setting on: here the v4 migration meets a column it adds already there.
        try await admin.setReadOnly(true)
        try await first.write { c in try undoMigrationV4(c) }
        try await first.write { c in try c.execute("ALTER TABLE transactions ADD COLUMN revocation_kind TEXT", []) }
        await #expect(throws: (any Error).self) { try await settings.setReadOnly(false, upgradingAt: testNow) }
        #expect(try await settings.isSetReadOnly())
        #expect(try await first.read { c in try c.scalar("SELECT value FROM ledger_meta WHERE key = 'schema_version'")?.text } == "3")
        try await first.write { c in try c.execute("ALTER TABLE transactions DROP COLUMN revocation_kind", []) }
        try await settings.setReadOnly(false, upgradingAt: testNow)
        #expect(try await !settings.isSetReadOnly())
        #expect(try await first.read { c in try c.scalar("SELECT value FROM ledger_meta WHERE key = 'schema_version'")?.text } == String(Schema.version))
        try await admin.close()
        try await settings.close()
    }
}
