import Foundation
import Ledger
import LedgerSQLite
import Testing

/// Reads never write, and `--read-only` (or `RECEIPTDESK_READ_ONLY`) refuses every write: checked on the
/// ledger file's bytes, which a write of any kind (rows, counters, migrations) would change.
@Suite("read-only: reads never write, and every write is refused", .serialized, .ownThreads)
struct ReadOnlyTests {
    /// The ledger's bytes. A ledger file that is not there fails the test: two missing files would compare equal.
    static func bytes(_ path: String) throws -> Data {
        let ledger = try #require(FileManager.default.contents(atPath: path), "no ledger file at \(path)")
        // The WAL holds what was not checkpointed yet (there may be none): both files together are the ledger.
        return ledger + (FileManager.default.contents(atPath: path + "-wal") ?? Data())
    }

    @Test("lookup, refunds and the flag queue leave the ledger's bytes as they were")
    func readsRead() throws {
        let path = try LookupCommandTests.ledgerWithHistory()
        let url = "sqlite:\(path)"
        // Rules under which one refund makes a serial refunder: a refresh would store a third flag.
        let rules = ImportCommandTests.temporary("serial.rules")
        writeTestFile(rules, Data("serial-refunder.count = 1\n".utf8))
        let before = try Self.bytes(path)
        for arguments in [
            ["lookup", "500", "--ledger", url], ["lookup", "500", "--ledger", url, "--json"],
            ["refunds", "--ledger", url], ["refunds", "--ledger", url, "--json"], ["refunds", "--ledger", url, "--csv"],
            ["refunds", "--ledger", url, "--rules", rules],
        ] {
            let result = try Binary.run(arguments)
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
        }
        #expect(try Self.bytes(path) == before, "a read command wrote to the ledger")
        // The queue still lists what import found, without a refresh.
        let flags = try Binary.run(["refunds", "--ledger", url, "--json"]).lines
        #expect(flags.count == 2)
        // Linking an account mapping is a write: refused on a read command, done by import.
        let mapping = ImportCommandTests.temporary("customers.csv")
        writeTestFile(mapping, Data("customer_id,kind,value\nacct-9,originalTransactionId,500\n".utf8))
        let refused = try Binary.run(["lookup", "500", "--ledger", url, "--customers", mapping])
        #expect(refused.status == 2)
        #expect(refused.stderr.contains("import --customers"), "\(refused.stderr)")
        #expect(try Self.bytes(path) == before)
        let more = ImportCommandTests.temporary("more.ndjson")
        ImportCommandTests.writeTransactions(count: 2, to: more, prefix: "m")
        let imported = try Binary.run(["import", "--ledger", url, "--customers", mapping, more])
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(try Binary.run(["lookup", "acct-9", "--ledger", url]).status == 0)
        // refunds --refresh is the explicit write.
        #expect(try Binary.run(["refunds", "--refresh", "--rules", rules, "--ledger", url]).status == 0)
        #expect(try Binary.run(["refunds", "--ledger", url, "--json"]).lines.count == 3)
    }

    @Test("--read-only and RECEIPTDESK_READ_ONLY refuse import, triage, notes and a flag refresh with exit 2; reads still work")
    func writesRefused() throws {
        let path = try LookupCommandTests.ledgerWithHistory()
        let url = "sqlite:\(path)"
        let flag = try #require(
            try Binary.run(["refunds", "--ledger", url, "--json"]).lines.first.map(Binary.json)?["id"] as? String)
        let input = ImportCommandTests.temporary("more.ndjson")
        ImportCommandTests.writeTransactions(count: 3, to: input, prefix: "ro")
        let before = try Self.bytes(path)
        let writes: [(String, [String])] = [
            ("import", ["import", "--ledger", url, input]),
            ("triage", ["triage", flag, "--ack", "--ledger", url]),
            ("note", ["note", "500", "a note", "--ledger", url]),
            ("refunds --refresh", ["refunds", "--refresh", "--ledger", url]),
        ]
        for (name, arguments) in writes {
            for (how, extra, environment) in [
                ("--read-only", ["--read-only"], [String: String]()), ("RECEIPTDESK_READ_ONLY", [], ["RECEIPTDESK_READ_ONLY": "1"]),
            ] {
                let result = try Binary.run(arguments + extra, environment: environment)
                #expect(result.status == 2, "\(name) with \(how): \(result.status) \(result.stderr)")
                #expect(result.stderr.contains("read-only: \(name) writes to the ledger and is refused"), "\(name) with \(how): \(result.stderr)")
            }
        }
        #expect(try Self.bytes(path) == before, "a refused write changed the ledger")
        let read = try Binary.run(["lookup", "500", "--ledger", url, "--read-only", "--json"])
        #expect(read.status == 0, "\(read.stderr)")
        #expect(try Binary.json(read.stdout)["customer"] != nil)
        // Without read-only the same writes go through.
        #expect(try Binary.run(["triage", flag, "--ack", "--ledger", url]).status == 0)
        #expect(try Self.bytes(path) != before)
    }

    @Test("the ledger's stored read-only setting refuses every write from any process, exit 2; off lifts it")
    func storedSetting() throws {
        let path = try LookupCommandTests.ledgerWithHistory()
        let url = "sqlite:\(path)"
        let flag = try #require(
            try Binary.run(["refunds", "--ledger", url, "--json"]).lines.first.map(Binary.json)?["id"] as? String)
        let input = ImportCommandTests.temporary("stored.ndjson")
        ImportCommandTests.writeTransactions(count: 3, to: input, prefix: "st")
        let shown = try Binary.run(["ledger", "read-only", "--ledger", url])
        #expect(shown.status == 0 && shown.stdout.contains("read-only off"), "\(shown.stdout) \(shown.stderr)")
        let set = try Binary.run(["ledger", "read-only", "on", "--ledger", url])
        #expect(set.status == 0 && set.stdout.contains("read-only on"), "\(set.stdout) \(set.stderr)")
        let before = try Self.bytes(path)
        for arguments in [
            ["import", "--ledger", url, input], ["triage", flag, "--ack", "--ledger", url], ["note", "500", "a note", "--ledger", url],
            ["refunds", "--refresh", "--ledger", url],
        ] {
            let result = try Binary.run(arguments)
            #expect(result.status == 2, "\(arguments): \(result.status) \(result.stderr)")
            #expect(result.stderr.contains("this ledger is set read-only"), "\(arguments): \(result.stderr)")
        }
        #expect(try Self.bytes(path) == before, "a write went through a ledger set read-only")
        #expect(try Binary.run(["lookup", "500", "--ledger", url]).status == 0)
        // Lifting it is refused to a process that is itself read-only, and allowed otherwise.
        #expect(try Binary.run(["ledger", "read-only", "off", "--ledger", url], environment: ["RECEIPTDESK_READ_ONLY": "1"]).status == 2)
        #expect(try Binary.run(["ledger", "read-only", "off", "--ledger", url]).status == 0)
        #expect(try Binary.run(["triage", flag, "--ack", "--ledger", url]).status == 0)
    }

    @Test("a ledger set read-only by an older receiptdesk: every open is refused naming the way out, and off upgrades it")
    func olderSchemaSetReadOnly() async throws {
        let path = try LookupCommandTests.ledgerWithHistory()
        let url = "sqlite:\(path)"
        // Back to schema version 10, as a receiptdesk before the v11 index left it, then set read-only.
        let database = try SQLiteDatabase.open(path: path)
        try await database.write { c in
            try c.execute("DROP INDEX flags_rule_status", [])
            try c.execute("DELETE FROM ledger_migrations WHERE id = 'v11-flag-rule-status-index'", [])
            try c.execute("UPDATE ledger_meta SET value = '10' WHERE key = 'schema_version'", [])
        }
        try await database.close()
        #expect(try Binary.run(["ledger", "read-only", "on", "--ledger", url]).status == 0)
        let read = try Binary.run(["lookup", "500", "--ledger", url, "--read-only"])
        #expect(read.status == 3 && read.stderr.contains("receiptdesk ledger read-only off"), "\(read.status) \(read.stderr)")
        let write = try Binary.run(["lookup", "500", "--ledger", url])
        #expect(write.status == 3 && write.stderr.contains("receiptdesk ledger read-only off"), "\(write.status) \(write.stderr)")
        let off = try Binary.run(["ledger", "read-only", "off", "--ledger", url])
        #expect(off.status == 0 && off.stdout.contains("read-only off"), "\(off.stdout) \(off.stderr)")
        let after = try SQLiteDatabase.open(path: path, readOnly: true)
        let (version, index) = try await after.read { c in
            (
                try c.scalar("SELECT value FROM ledger_meta WHERE key = 'schema_version'")?.text,
                try c.scalar("SELECT COUNT(*) FROM sqlite_master WHERE name = 'flags_rule_status'")?.int
            )
        }
        try await after.close()
        #expect(version == String(Schema.version) && index == 1)
        let again = try Binary.run(["lookup", "500", "--ledger", url, "--read-only"])
        #expect(again.status == 0, "\(again.stderr)")
    }
}
