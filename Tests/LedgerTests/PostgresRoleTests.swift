import Entitlements
import Foundation
import Ledger
import LedgerPostgres
import LedgerQueries
import ReceiptModel
import Samples
import Testing

/// The three roles of a team's ledger (`receiptdesk ledger grant`), on a real server: each connects through the
/// real backend and does what its kind may, and what it may not is refused with an error that says so.
///
/// PostgreSQL only: under `CI=true` a missing server fails these tests, never skips them.
@Suite("PostgreSQL roles: importer, agent, viewer", .serialized, .ownThreads, .enabled(if: PostgresTestServer.enabled))
struct PostgresRoleTests {
    /// A fresh ledger (created by its owner, the `postgres` superuser) in a database where PUBLIC holds nothing,
    /// so that every right a role uses is one the grants gave it; and the owner's connection.
    static func hardenedLedger(portable: Bool = false) async throws -> (
        url: String, database: String, owner: PostgresDatabase, server: PostgresTestServer
    ) {
        let server = try PostgresTestServer.get()
        let url = try server.createDatabase()
        let database = try PostgresDatabase.databaseName(url: url, environment: [:])
        let owner = try await PostgresDatabase.connect(url: portable ? withParameter(url, "portable=on") : url, environment: [:])
        _ = try await SQLLedger.open(owner, now: testNow)
        try await owner.write { c in
            try c.execute("REVOKE ALL ON DATABASE \(try PostgresRoles.quoted(database)) FROM PUBLIC")
            try c.execute("REVOKE ALL ON SCHEMA public FROM PUBLIC")
        }
        return (url, database, owner, server)
    }

    /// Creates a LOGIN role (the test cluster trusts its socket) with `kind`'s grants, and its URL.
    static func makeRole(
        _ kind: LedgerRole, name: String, url: String, database: String, owner: PostgresDatabase, server: PostgresTestServer
    ) async throws -> String {
        let statements = try PostgresRoles.grants(kind, to: name, database: database, portable: owner.isPortable)
        try await owner.write { c in
            try c.execute("CREATE ROLE \(try PostgresRoles.quoted(name)) LOGIN")
            for statement in statements { try c.execute(statement) }
        }
        let user = name.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? name
        return "postgres://\(user)@/\(database)?host=\(server.socketDirectory)"
    }

    static func unique(_ prefix: String) -> String { "\(prefix)_\(UInt32.random(in: 0...UInt32.max))" }

    /// 60 subscription transactions: 20 subscriptions of three renewals each, pairs of subscriptions sharing an
    /// appAccountToken (so customers merge), every fifth subscription's first period refunded within an hour.
    static let purchases: String = (0..<20).flatMap { subscription in
        (0..<3).map { period -> String in
            let start: Int64 = 1_760_000_000_000 + Int64(subscription) * 86_400_000 + Int64(period) * 2_592_000_000
            let refund = subscription % 5 == 0 && period == 0 ? #","revocationDate":\#(start + 3_600_000),"revocationReason":0"# : ""
            return #"{"transactionId":"t\#(subscription)-\#(period)","originalTransactionId":"o\#(subscription)","productId":"pro.monthly","#
                + #""type":"Auto-Renewable Subscription","purchaseDate":\#(start),"expiresDate":\#(start + 2_592_000_000),"#
                + #""appAccountToken":"00000000-0000-0000-0000-\#(String(format: "%012d", subscription / 2))","#
                + #""price":9990,"currency":"USD","environment":"Production"\#(refund)}"#
        }
    }.joined(separator: "\n")

    /// Expects `work` to be refused for want of a privilege: a `readOnly` error that names the role and the grant.
    /// `ownersWork`: whether what is refused is the schema owner's alone (the message says so) or a grant's (the
    /// message does not send the person to the owner).
    static func expectRefused(
        _ what: String, as role: String, ownersWork: Bool = false, sourceLocation: SourceLocation = #_sourceLocation,
        _ work: () async throws -> Void
    ) async {
        do {
            try await work()
            Issue.record("\(role) could \(what)", sourceLocation: sourceLocation)
        } catch let error as LedgerError {
            #expect(error.code == .readOnly, "\(what): \(error)", sourceLocation: sourceLocation)
            #expect(error.message.contains("role \"\(role)\""), "\(error.message)", sourceLocation: sourceLocation)
            #expect(error.message.contains("permission denied"), "\(error.message)", sourceLocation: sourceLocation)
            #expect(error.message.contains("receiptdesk ledger grant"), "\(error.message)", sourceLocation: sourceLocation)
            #expect(error.message.contains("owner") == ownersWork, "\(error.message)", sourceLocation: sourceLocation)
        } catch {
            Issue.record("\(what) as \(role) failed with \(error), not a refusal", sourceLocation: sourceLocation)
        }
    }

    @Test("the grants name every table and sequence of the ledger's schema, and nothing else")
    func grantsCoverTheSchema() async throws {
        let server = try PostgresTestServer.get()
        let owner = try await PostgresDatabase.connect(url: try server.createDatabase(), environment: [:])
        _ = try await SQLLedger.open(owner, now: testNow)
        let (tables, sequences, identities) = try await owner.read { c in
            (
                Set(try c.query(
                    "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'", []
                ).compactMap { $0[0].text }),
                // (information_schema.sequences leaves identity sequences out.)
                Set(try c.query(
                    "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind = 'S' AND n.nspname = current_schema()", []
                ).compactMap { $0[0].text }),
                Set(try c.query(
                    """
                    SELECT pg_get_serial_sequence(quote_ident(table_name), 'id') FROM information_schema.columns
                    WHERE table_schema = current_schema() AND column_name = 'id' AND is_identity = 'YES'
                    """, []
                ).compactMap { $0[0].text })
            )
        }
        #expect(tables == Set(PostgresRoles.tables))
        #expect(sequences == Set(PostgresRoles.sequences))
        #expect(identities == Set(PostgresRoles.sequences.map { "public.\($0)" }))
        try await owner.close()
    }

    @Test("names are quoted: case, spaces and double quotes are kept; an empty, NUL or over-long name is refused")
    func quoting() throws {
        #expect(try PostgresRoles.quoted("Desk \"Agent\"") == #""Desk ""Agent""""#)
        #expect(try PostgresRoles.quoted("ana") == #""ana""#)
        let grants = try PostgresRoles.grants(.viewer, to: "x\"; DROP TABLE flags; --", database: "led\"ger")
        #expect(grants.contains(#"GRANT CONNECT ON DATABASE "led""ger" TO "x""; DROP TABLE flags; --""#))
        for bad in ["", "a\u{0}b", String(repeating: "é", count: 32)] {
            #expect(throws: LedgerError.self) { try PostgresRoles.grants(.agent, to: bad) }
        }
        // Only the importer may make the temporary tables its COPY stages rows in.
        #expect(try PostgresRoles.grants(.importer, to: "i", database: "d").contains(#"GRANT TEMPORARY ON DATABASE "d" TO "i""#))
        #expect(try PostgresRoles.grants(.agent, to: "a", database: "d").contains(#"REVOKE TEMPORARY ON DATABASE "d" FROM "a""#))
        // Portable SQL: no staging tables, and the writers (importer, agent) lock the writers' row.
        let portableImporter = try PostgresRoles.grants(.importer, to: "i", database: "d", portable: true)
        #expect(portableImporter.contains(#"REVOKE TEMPORARY ON DATABASE "d" FROM "i""#))
        #expect(portableImporter.contains(#"GRANT UPDATE ON TABLE "public"."ledger_writers" TO "i""#), "\(portableImporter)")
        #expect(try PostgresRoles.grants(.agent, to: "a", portable: true).contains(#"GRANT UPDATE ON TABLE "public"."ledger_writers" TO "a""#))
        #expect(!(try PostgresRoles.grants(.viewer, to: "v", portable: true).contains { $0.hasPrefix("GRANT UPDATE") }))
    }

    @Test(
        "importer imports; agent triages and notes; viewer reads; each is refused the rest, and no one changes the triage log",
        arguments: [false, true])
    func eachRoleDoesItsPart(portable: Bool) async throws {
        let (url, database, owner, server) = try await Self.hardenedLedger(portable: portable)
        #expect(owner.isPortable == portable)
        let importerName = Self.unique("rd_importer")
        // A name that needs its quotes: capitals, a space and a double quote.
        let agentName = Self.unique("RD agent \"A\"")
        let viewerName = Self.unique("rd_viewer")
        let importer = try await SQLLedger.open(
            PostgresDatabase.connect(
                url: try await Self.makeRole(.importer, name: importerName, url: url, database: database, owner: owner, server: server),
                environment: [:]),
            now: testNow)
        let agent = try await SQLLedger.open(
            PostgresDatabase.connect(
                url: try await Self.makeRole(.agent, name: agentName, url: url, database: database, owner: owner, server: server),
                environment: [:]),
            now: testNow)
        let viewer = try await SQLLedger.open(
            PostgresDatabase.connect(
                url: try await Self.makeRole(.viewer, name: viewerName, url: url, database: database, owner: owner, server: server),
                environment: [:]),
            now: testNow)

        // The importer: an import large enough for COPY, merges, flags, an account link.
        let counts = try await importBytes(Array(Self.purchases.utf8), path: "team.ndjson", into: importer, batchSize: 100)
        #expect(counts.imported == 60 && counts.rejected == 0, "\(counts)")
        // Imported again: all duplicates (the same source), then a second file that merges two customers.
        #expect(try await importText(Self.purchases, path: "team.ndjson", into: importer).duplicate == 60)
        try await importText(
            #"{"transactionId":"t-bridge","originalTransactionId":"o2","productId":"pro.monthly","appAccountToken":"00000000-0000-0000-0000-000000000000","purchaseDate":1760000000000,"environment":"Production"}"#,
            path: "bridge.json", into: importer)
        // A signed record refused for want of its root, then accepted when the file is imported again with it: its
        // rejected row is rewritten (UPDATE on raw_records).
        let ca = try TestCA()
        let signed = Array(
            signedHistoryRecord(
                #"{"transactionId":"t-signed","originalTransactionId":"o-signed","productId":"pro.monthly","purchaseDate":1760000000000,"environment":"Production"}"#,
                signedBy: JWSSigner(ca: ca)
            ).utf8)
        #expect(try await importBytes(signed, path: "signed.json", into: importer).rejected == 1)
        #expect(try await importBytes(signed, path: "signed.json", into: importer, decoder: try testDecoder(extraRoots: [ca.rootDER])).imported == 1)
        #expect(try await importer.overview().rejectedRecords == 0)
        let found = try await importer.refreshFlags(rules: FlagRules(), now: testNow).flags
        #expect(found.contains { $0.rule == "quick-refund" }, "\(found.map(\.id))")
        try await importer.linkExternal("acct-7", kind: .originalTransactionId, value: "o7", now: testNow)
        await Self.expectRefused("triage", as: importerName) {
            _ = try await importer.triage(flagId: found[0].id, action: .ack, operatorName: "imp", note: nil, now: testNow)
        }
        await Self.expectRefused("note", as: importerName) {
            try await importer.noteCustomer(1, operatorName: "imp", note: "n", now: testNow)
        }
        await Self.expectRefused("set the ledger read-only", as: importerName, ownersWork: true) { try await importer.setReadOnly(true) }

        // The viewer reads everything the dashboard shows, and writes nothing.
        let overview = try await viewer.overview()
        #expect(overview.transactions == 62)
        let customers = try await viewer.customers(CustomerQuery(limit: 100))
        #expect(customers.total == overview.customers && customers.total == 10, "\(customers.total) \(overview.customers)")
        let flags = try await viewer.flags(FlagQuery())
        #expect(flags.map(\.id).sorted() == found.map(\.id).sorted())
        let flagged = try #require(flags.first { $0.customerId != nil })
        #expect(try await viewer.customerRecords(flagged.customerId!).id == flagged.customerId)
        // What each says of itself, so the dashboard hides the keys a viewer would only be refused.
        let viewerRole = try await viewer.role()
        let agentRole = try await agent.role()
        let importerRole = try await importer.role()
        #expect(viewerRole?.name == viewerName && viewerRole?.mayTriage == false)
        #expect(agentRole?.name == agentName && agentRole?.mayTriage == true)
        #expect(importerRole?.mayTriage == false)
        await Self.expectRefused("triage", as: viewerName) {
            _ = try await viewer.triage(flagId: flagged.id, action: .ack, operatorName: "view", note: nil, now: testNow)
        }
        await Self.expectRefused("note", as: viewerName) {
            try await viewer.noteCustomer(flagged.customerId!, operatorName: "view", note: "n", now: testNow)
        }
        await Self.expectRefused("import", as: viewerName) {
            try await importText(#"{"transactionId":"v1","productId":"p"}"#, path: "viewer.json", into: viewer)
        }
        // A refresh that finds nothing new writes nothing, so there is nothing to refuse (in portable SQL the writers'
        // turn is a row lock, which asks for UPDATE); a new flag is refused.
        if portable {
            await Self.expectRefused("refresh flags", as: viewerName) { try await viewer.refreshFlags(rules: FlagRules(), now: testNow) }
        } else {
            let token = try await viewer.changeToken()
            _ = try await viewer.refreshFlags(rules: FlagRules(), now: testNow)
            #expect(try await viewer.changeToken() == token)
        }
        await Self.expectRefused("save a flag", as: viewerName) {
            try await viewer.saveFlags(
                [
                    RefundFlag(
                        id: "quick-refund:viewer", rule: "quick-refund", severity: .high, customerId: flagged.customerId,
                        transactionId: "t0-0", productId: "pro.monthly", amount: 9990, currency: "USD", at: testNow, detail: "d")
                ], now: testNow)
        }

        // The agent triages and notes (the flag, the customer's open flags and the change counter move) ...
        let change = try await agent.changeToken()
        let openBefore = try await agent.overview().openFlags
        let acked = try await agent.triage(flagId: flagged.id, action: .ack, operatorName: "ana", note: "called", now: testNow)
        #expect(acked.status == .acknowledged)
        try await agent.noteCustomer(flagged.customerId!, operatorName: "ana", note: "refund explained", now: testNow)
        #expect(try await viewer.overview().openFlags == openBefore - 1)
        #expect(try await viewer.changeToken() > change)
        #expect(try await viewer.triageLog(flagId: nil, customerId: nil).map(\.note) == ["called", "refund explained"])
        // ... never moves a flag without the log entry that records the move (a trigger; portable SQL has none) ...
        if !portable {
            do {
                try await agent.database.write { c in try c.execute("UPDATE flags SET status = 'resolved' WHERE id = ?", [.text(flagged.id)]) }
                Issue.record("the agent moved a flag without a triage log entry")
            } catch let error as LedgerError {
                #expect(error.message.contains("moves only with the triage log entry"), "\(error.message)")
            }
            #expect(try await viewer.flags(FlagQuery()).first { $0.id == flagged.id }?.status == .acknowledged)
        }
        // ... and imports nothing.
        await Self.expectRefused("import", as: agentName) {
            try await importText(#"{"transactionId":"a1","productId":"p"}"#, path: "agent.json", into: agent)
        }
        // (A refresh that finds nothing new only bumps the change counter, which a triage bumps too; a new flag is refused.)
        let newFlag = RefundFlag(
            id: "quick-refund:agent", rule: "quick-refund", severity: .high, customerId: flagged.customerId, transactionId: "t0-0",
            productId: "pro.monthly", amount: 9990, currency: "USD", at: testNow, detail: "d")
        await Self.expectRefused("save a flag", as: agentName) { try await agent.saveFlags([newFlag], now: testNow) }
        await Self.expectRefused("link an account", as: agentName) {
            try await agent.linkExternal("acct-9", kind: .originalTransactionId, value: "o9", now: testNow)
        }
        await Self.expectRefused("lift the read-only setting", as: agentName, ownersWork: true) { try await agent.setReadOnly(false) }
        #expect(try await viewer.overview().transactions == 62)

        // The triage log: INSERT only, for everyone. The roles lack the privilege; the owner meets the triggers.
        for (name, ledger) in [(importerName, importer), (agentName, agent), (viewerName, viewer)] {
            for statement in ["UPDATE triage_log SET note = 'rewritten'", "DELETE FROM triage_log", "TRUNCATE triage_log"] {
                await Self.expectRefused(statement, as: name) { try await ledger.database.write { c in try c.execute(statement) } }
            }
        }
        // (Portable SQL has no triggers: there the owner alone could, docs/SCALING.md.)
        for statement in ["UPDATE triage_log SET note = 'rewritten'", "DELETE FROM triage_log", "TRUNCATE triage_log"] where !portable {
            do {
                try await owner.write { c in try c.execute(statement) }
                Issue.record("the owner could \(statement)")
            } catch let error as LedgerError {
                #expect(error.message.contains("append-only"), "\(error.message)")
            }
        }
        #expect(try await viewer.triageLog(flagId: nil, customerId: nil).count == 2)

        for ledger in [importer, agent, viewer] { try await ledger.close() }
        try await owner.close()
    }

    @Test("granting another kind takes the old rights away: an agent made a viewer can no longer triage")
    func regrantChangesKind() async throws {
        let (url, database, owner, server) = try await Self.hardenedLedger()
        let name = Self.unique("rd_changing")
        let roleURL = try await Self.makeRole(.importer, name: name, url: url, database: database, owner: owner, server: server)
        let ledger = try await SQLLedger.open(PostgresDatabase.connect(url: roleURL, environment: [:]), now: testNow)
        try await importText(Self.purchases, path: "team.ndjson", into: ledger)
        let flag = try #require(try await ledger.refreshFlags(rules: FlagRules(), now: testNow).flags.first)
        for kind in [LedgerRole.agent, .viewer] {
            let statements = try PostgresRoles.grants(kind, to: name, database: database)
            try await owner.write { c in for statement in statements { try c.execute(statement) } }
        }
        await Self.expectRefused("triage", as: name) {
            _ = try await ledger.triage(flagId: flag.id, action: .ack, operatorName: "x", note: nil, now: testNow)
        }
        await Self.expectRefused("import", as: name) {
            try await importText(#"{"transactionId":"x1","productId":"p"}"#, path: "x.json", into: ledger)
        }
        #expect(try await ledger.flags(FlagQuery()).count > 0)
        // A role with no grants at all cannot read: a permissionDenied error that names it.
        try await owner.write { c in try c.execute("REVOKE ALL ON TABLE \(PostgresRoles.tables.joined(separator: ", ")) FROM \(try PostgresRoles.quoted(name))") }
        do {
            _ = try await ledger.overview()
            Issue.record("a role without grants read the ledger")
        } catch let error as LedgerError {
            #expect(error.code == .permissionDenied, "\(error)")
            #expect(error.message.contains(name) && error.message.contains("ledger grant viewer"), "\(error.message)")
        }
        try await ledger.close()
        try await owner.close()
    }
}
