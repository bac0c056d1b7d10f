import Entitlements
import Ledger
import LedgerQueries
import Foundation
import Testing

@Suite("stored statuses, actions and kinds read back as enums; an unknown one is an error, never a default")
struct StoredValueTests {
    @Test("every case round-trips through its stored text")
    func roundTrip() throws {
        for status in FlagStatus.allCases { #expect(try SQLValue.of(status).decode(FlagStatus.self, column: "c") == status) }
        for action in TriageAction.allCases { #expect(try SQLValue.of(action).decode(TriageAction.self, column: "c") == action) }
        for kind in IdentifierKind.allCases { #expect(try SQLValue.of(kind).decode(IdentifierKind.self, column: "c") == kind) }
        for status in RecordStatus.allCases { #expect(try SQLValue.of(status).decode(RecordStatus.self, column: "c") == status) }
        #expect(try SQLValue.null.decodeIfPresent(FlagStatus.self, column: "c") == nil)
    }

    @Test("a value this version does not know names its column and value")
    func unknown() {
        do {
            _ = try SQLValue.text("pending").decode(FlagStatus.self, column: "flags.status")
            Issue.record("decoded")
        } catch let error as LedgerError {
            #expect(error.code == .badRow)
            #expect(error.message == "flags.status holds \"pending\", which this receiptdesk does not know")
        } catch {
            Issue.record("\(error)")
        }
        #expect(throws: LedgerError.self) { try SQLValue.null.decode(TriageAction.self, column: "triage_log.action") }
    }

    @Test("each triage action's target status, and the action that reaches each status")
    func actions() {
        #expect(TriageAction.allCases.map(\.target) == [.acknowledged, .resolved, .open, nil])
        for status in FlagStatus.allCases { #expect(TriageAction(toReach: status).target == status) }
    }

    @Test("a stored transaction that cannot be read stops an import naming it, instead of a unique-key failure", arguments: Backend.available)
    func unreadableStoredRow(_ backend: Backend) async throws {
        let ledger = try await backend.ledger()
        let line = #"{"transactionId":"bad-1","productId":"pro","purchaseDate":1735689600000}"#
        #expect(try await importText(line + "\n", path: "a.ndjson", into: ledger).imported == 1)
        try await ledger.database.write { c in try c.execute("UPDATE transactions SET canonical = '{\"transactionId\":1}' WHERE transaction_id = 'bad-1'") }
        do {
            // The same transaction again, one field changed: the stored one must be read to merge.
            _ = try await importText(#"{"transactionId":"bad-1","productId":"pro","purchaseDate":1735689600001}"# + "\n", path: "b.ndjson", into: ledger)
            Issue.record("imported over an unreadable row")
        } catch let error as ImportInterrupted {
            // The batch failed whole: nothing of this run was committed.
            #expect(error.committed == ImportCounts(), "\(error)")
            let cause = try #require(error.underlying as? LedgerError, "\(error)")
            #expect(cause.code == .badRow, "\(cause)")
            #expect(cause.message.contains("bad-1"), "\(cause)")
        }
        try await ledger.close()
    }

    @Test("a PostgreSQL cell that does not read as a whole number is an error naming its column, never NULL",
          arguments: Backend.available.filter { $0 == .postgres })
    func postgresCells(_ backend: Backend) async throws {
        let database = try await backend.database()
        #expect(try await database.read { c in try c.query("SELECT 12::numeric AS n", []) } == [[.int(12)]])
        do {
            _ = try await database.read { c in try c.query("SELECT 1.5::numeric AS half", []) }
            Issue.record("1.5 read as a whole number")
        } catch let error as LedgerError {
            #expect(error.code == .badRow)
            #expect(error.message.contains("half"), "\(error)")
        }
        try await database.close()
    }
}
