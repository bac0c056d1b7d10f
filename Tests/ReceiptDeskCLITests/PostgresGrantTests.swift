import Foundation
import Ledger
import LedgerPostgres
import Testing

@testable import ReceiptDeskCLI

/// Logins other than a PostgreSQL ledger's owner, through the real binary: one with no rights on the ledger is told
/// that the ledger is there and who gives them; one that is not the owner may not grant.
///
/// PostgreSQL only: under `CI=true` a missing server fails these tests, never skips them.
@Suite("PostgreSQL ledger: logins without rights, grants by the owner only", .serialized, .ownThreads, .enabled(if: PostgresTestServer.enabled))
struct PostgresGrantTests {
    /// A new ledger made by its owner (the `postgres` superuser) with `import`, and its URL.
    static func ledger() throws -> String {
        let url = try PostgresTestServer.get().createDatabase()
        let run = try Binary.run(
            ["import", "--no-verify", "--ledger", url, "-"], stdin: Data(PostgresImportTests.purchases(3).utf8), limit: .seconds(60))
        #expect(run.status == 0, "\(run.stderr)")
        return url
    }

    /// Creates a LOGIN role (the test cluster trusts its socket) with no rights, and the ledger's URL as that role.
    static func login(_ prefix: String, ownerURL: String) async throws -> (name: String, url: String) {
        let name = "\(prefix)_\(UInt32.random(in: 0...UInt32.max))"
        try await Self.asOwner(ownerURL, "CREATE ROLE \(name) LOGIN")
        return (name, ownerURL.replacing("postgres://postgres@", with: "postgres://\(name)@"))
    }

    static func asOwner(_ ownerURL: String, _ statements: String...) async throws {
        let owner = try await LedgerOptions.open(url: ownerURL, now: currentTimestamp())
        try await owner.database.write { c in for statement in statements { try c.execute(statement) } }
        try await owner.close()
    }

    /// Whether `role` holds `privilege` on `table`, asked as the owner.
    static func holds(_ role: String, _ privilege: String, on table: String, ownerURL: String) async throws -> Bool {
        let owner = try await LedgerOptions.open(url: ownerURL, now: currentTimestamp())
        let held = try await owner.database.read { c in
            try c.scalar("SELECT has_table_privilege(?, ?, ?)", [.text(role), .text(table), .text(privilege)])?.int == 1
        }
        try await owner.close()
        return held
    }

    /// `arguments` as a login with no rights: the ledger is said to be there, with the grant that opens it.
    static func expectNoRights(_ arguments: [String], url: String, role: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let run = try Binary.run(arguments + ["--ledger", url], stdin: Data(PostgresImportTests.purchases(1).utf8), limit: .seconds(60))
        #expect(run.status == 3, "\(arguments): \(run.stderr)", sourceLocation: sourceLocation)
        #expect(
            run.stderr.contains("the PostgreSQL role \"\(role)\" has no rights on the ReceiptDesk ledger this database holds"),
            "\(arguments): \(run.stderr)", sourceLocation: sourceLocation)
        #expect(run.stderr.contains("owned by \"postgres\""), "\(arguments): \(run.stderr)", sourceLocation: sourceLocation)
        #expect(
            run.stderr.contains("receiptdesk ledger grant viewer|agent|importer \(role) --ledger"), "\(arguments): \(run.stderr)",
            sourceLocation: sourceLocation)
        #expect(!run.stderr.contains("holds no ReceiptDesk ledger"), "\(arguments): \(run.stderr)", sourceLocation: sourceLocation)
    }

    @Test("a login with no grant is told the ledger is there, that it has no rights on it, and the grant its owner runs")
    func loginWithoutRights() async throws {
        let url = try Self.ledger()
        let nobody = try await Self.login("rd_nobody", ownerURL: url)
        let reads = [["lookup", "C1"], ["refunds"], ["triage", "x", "--ack"], ["note", "C1", "hello"], ["import", "--no-verify", "-"]]
        for arguments in reads { try Self.expectNoRights(arguments, url: nobody.url, role: nobody.name) }
        #expect(try await !Self.holds(nobody.name, "SELECT", on: "ledger_meta", ownerURL: url))
        // Where PUBLIC may not even use the schema, the role's search path holds no schema at all: the same.
        try await Self.asOwner(url, "REVOKE ALL ON SCHEMA public FROM PUBLIC")
        for arguments in [["lookup", "C1"], ["import", "--no-verify", "-"]] {
            try Self.expectNoRights(arguments, url: nobody.url, role: nobody.name)
        }
        // Its owner grants as the message says; then it reads.
        let grant = try Binary.run(["ledger", "grant", "viewer", nobody.name, "--ledger", url], limit: .seconds(60))
        #expect(grant.status == 0, "\(grant.stderr)")
        let lookup = try Binary.run(["refunds", "--ledger", nobody.url], limit: .seconds(60))
        #expect(lookup.status == 0, "\(lookup.stderr)")
    }

    @Test("a login the database refuses CONNECT to is told the grant that gives it; after it, the login reads")
    func loginWithoutConnect() async throws {
        let url = try Self.ledger()
        let database = try #require(url.split(separator: "?")[0].split(separator: "/").last.map(String.init))
        try await Self.asOwner(url, "REVOKE CONNECT ON DATABASE \(database) FROM PUBLIC")
        let reader = try await Self.login("rd_noconnect", ownerURL: url)
        let run = try Binary.run(["lookup", "C1", "--ledger", reader.url], limit: .seconds(60))
        #expect(run.status == 3, "\(run.stderr)")
        #expect(
            run.stderr.contains("permission denied for database")
                && run.stderr.contains(
                    "(receiptdesk ledger grant viewer|agent|importer \(reader.name) --ledger URL, run by the database's owner or a superuser, gives it CONNECT)"),
            "\(run.stderr)")
        #expect(try Binary.run(["ledger", "grant", "viewer", reader.name, "--ledger", url], limit: .seconds(60)).status == 0)
        let after = try Binary.run(["refunds", "--ledger", reader.url], limit: .seconds(60))
        #expect(after.status == 0, "\(after.stderr)")
    }

    @Test("a write beyond a role's grant is refused before any work, naming the role and the grant: import, refresh, triage")
    func writesBeyondTheGrant() async throws {
        let url = try Self.ledger()
        let viewer = try await Self.login("rd_view", ownerURL: url)
        let etl = try await Self.login("rd_etl", ownerURL: url)
        let ana = try await Self.login("rd_ana", ownerURL: url)
        for (kind, role) in [("viewer", viewer.name), ("importer", etl.name), ("agent", ana.name)] {
            #expect(try Binary.run(["ledger", "grant", kind, role, "--ledger", url], limit: .seconds(60)).status == 0)
        }
        func refused(_ arguments: [String], as login: (name: String, url: String), kind: String, _ what: String) throws {
            // (A file of records all rejected: the viewer's import of it exited 1, as if it had been recorded.)
            let run = try Binary.run(arguments + ["--ledger", login.url], stdin: Data("not json\n".utf8), limit: .seconds(60))
            #expect(run.status == 2, "\(arguments): \(run.stderr)")
            #expect(
                run.stderr.contains(
                    "the PostgreSQL role \"\(login.name)\" may not \(what) this ledger: nothing was written. An \(kind) may: "
                        + "receiptdesk ledger grant \(kind) \(login.name) --ledger URL, run by the ledger's owner, makes it one in place of the kind it is now"),
                "\(arguments): \(run.stderr)")
        }
        try refused(["import", "--no-verify", "-"], as: viewer, kind: "importer", "import into")
        try refused(["refunds", "--refresh"], as: viewer, kind: "importer", "refresh the flags of")
        try refused(["note", "C1", "called back"], as: viewer, kind: "agent", "write notes in")
        try refused(["import", "--no-verify", "-"], as: ana, kind: "importer", "import into")
        // An importer's triage was answered about the flag ("no flag", "reopen it first"), which it may not triage at all.
        try refused(["triage", "quick-refund:nosuch", "--ack"], as: etl, kind: "agent", "triage")
        try refused(["triage", "quick-refund:nosuch", "--ack"], as: viewer, kind: "agent", "triage")
        // Within the grant, the command goes on to its own answer.
        let triage = try Binary.run(["triage", "quick-refund:nosuch", "--ack", "--ledger", ana.url], limit: .seconds(60))
        #expect(triage.status == 1 && triage.stderr.contains("no flag"), "\(triage.stderr)")
        let imported = try Binary.run(
            ["import", "--no-verify", "--ledger", etl.url, "-"], stdin: Data(PostgresImportTests.purchases(2).utf8), limit: .seconds(60))
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(try Binary.run(["refunds", "--refresh", "--ledger", etl.url], limit: .seconds(60)).status == 0)
    }

    @Test("ledger grant by a login that is not the ledger's owner nor a superuser is refused up front: exit 2, nothing changed")
    func grantByOthersRefused() async throws {
        let url = try Self.ledger()
        let etl = try await Self.login("rd_etl", ownerURL: url)
        let ana = try await Self.login("rd_ana", ownerURL: url)
        let target = try await Self.login("rd_target", ownerURL: url)
        for (kind, role) in [("importer", etl.name), ("agent", ana.name)] {
            let run = try Binary.run(["ledger", "grant", kind, role, "--ledger", url], limit: .seconds(60))
            #expect(run.status == 0, "\(run.stderr)")
        }
        // (rd_target has no rights on the ledger at all: it was told to have itself granted a kind, exit 3.)
        for login in [etl, ana, target] {
            let run = try Binary.run(["ledger", "grant", "agent", login.name == target.name ? etl.name : target.name, "--ledger", login.url], limit: .seconds(60))
            #expect(run.status == 2, "\(login.name): \(run.stderr)")
            #expect(
                run.stderr.contains(
                    "only the ledger's owner (\"postgres\") or a superuser may grant rights on it, and the PostgreSQL role \"\(login.name)\" is neither"),
                "\(login.name): \(run.stderr)")
            #expect(!run.stderr.contains("permission denied"), "\(login.name): \(run.stderr)")
        }
        #expect(try await !Self.holds(target.name, "INSERT", on: "triage_log", ownerURL: url))
        #expect(try await !Self.holds(target.name, "SELECT", on: "flags", ownerURL: url))
        // The etl login's own rights are as its grant left them.
        #expect(try await Self.holds(etl.name, "INSERT", on: "transactions", ownerURL: url))
    }

    /// Runs `statements` as the cluster's superuser on `url`'s database, without opening a ledger there.
    static func asSuperuser(_ url: String, _ statements: String...) async throws {
        let database = try await PostgresDatabase.connect(url: url)
        try await database.write { c in for statement in statements { try c.execute(statement) } }
        try await database.close()
    }

    /// The schemas of `url`'s database that hold a ledger (its `ledger_meta`), asked of the catalog.
    static func ledgerSchemas(_ url: String) async throws -> [String] {
        let database = try await PostgresDatabase.connect(url: url)
        let names = try await database.read { c in
            try c.query(
                "SELECT n.nspname::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relname = 'ledger_meta' ORDER BY 1",
                []
            ).compactMap { $0[0].text }
        }
        try await database.close()
        return names
    }

    @Test("a ledger in a schema the login's search_path names first, without USAGE on it: said to be there; the owner grants with --schema")
    func ledgerSchemaSkippedBySearchPath() async throws {
        let admin = try PostgresTestServer.get().createDatabase()
        let name = String(admin.split(separator: "?")[0].split(separator: "/").last!)
        let suffix = UInt32.random(in: 0...UInt32.max)
        let owner = "rd_teamown_\(suffix)", reader = "rd_teamread_\(suffix)"
        try await Self.asSuperuser(
            admin, "CREATE ROLE \(owner) LOGIN", "CREATE SCHEMA team AUTHORIZATION \(owner)",
            "ALTER ROLE \(owner) IN DATABASE \(name) SET search_path = team", "CREATE ROLE \(reader) LOGIN",
            "ALTER ROLE \(reader) IN DATABASE \(name) SET search_path = team, public")
        let made = try Binary.run(
            ["import", "--no-verify", "--ledger", admin.replacing("postgres://postgres@", with: "postgres://\(owner)@"), "-"],
            stdin: Data(PostgresImportTests.purchases(3).utf8), limit: .seconds(60))
        #expect(made.status == 0, "\(made.stderr)")
        #expect(try await Self.ledgerSchemas(admin) == ["team"])
        // The reader's current schema is public (team is skipped: no USAGE); the ledger in team is said to be there.
        let readerURL = admin.replacing("postgres://postgres@", with: "postgres://\(reader)@")
        for arguments in [["lookup", "C1"], ["import", "--no-verify", "-"]] {
            let run = try Binary.run(arguments + ["--ledger", readerURL], stdin: Data(PostgresImportTests.purchases(1).utf8), limit: .seconds(60))
            #expect(run.status == 3, "\(arguments): \(run.stderr)")
            #expect(
                run.stderr.contains(
                    "the PostgreSQL role \"\(reader)\" has no rights on the ReceiptDesk ledger this database holds (schema team, owned by \"\(owner)\")"),
                "\(arguments): \(run.stderr)")
        }
        // A superuser whose current schema is public grants on team's ledger: no ledger is made in public.
        let grant = try Binary.run(["ledger", "grant", "viewer", reader, "--schema", "team", "--ledger", admin], limit: .seconds(60))
        #expect(grant.status == 0, "\(grant.stderr)")
        #expect(try await Self.ledgerSchemas(admin) == ["team"])
        let refunds = try Binary.run(["refunds", "--ledger", readerURL], limit: .seconds(60))
        #expect(refunds.status == 0, "\(refunds.stderr)")
        // That ledger at another schema version than this build's: said, not granted table by table.
        try await Self.asSuperuser(
            admin, "DELETE FROM team.ledger_migrations WHERE id = 'v12-upgraded-refunds'",
            "UPDATE team.ledger_meta SET value = '11' WHERE key = 'schema_version'")
        let older = try Binary.run(["ledger", "grant", "viewer", reader, "--schema", "team", "--ledger", admin], limit: .seconds(60))
        #expect(older.status == 3, "\(older.stderr)")
        #expect(older.stderr.contains("the ledger in schema team has schema version 11"), "\(older.stderr)")
        // --schema naming the connection's own schema is as none named: an empty database gets its ledger, then the grant.
        let empty = try PostgresTestServer.get().createDatabase()
        let made2 = try Binary.run(["ledger", "grant", "viewer", reader, "--schema", "public", "--ledger", empty], limit: .seconds(60))
        #expect(made2.status == 0, "\(made2.stderr)")
        #expect(try await Self.ledgerSchemas(empty) == ["public"])
    }

    @Test("ledger grant by a login that is not the owner, on a ledger of an older schema: refused as any other, not upgraded")
    func grantByOthersOnOlderSchema() async throws {
        let url = try Self.ledger()
        let etl = try await Self.login("rd_etl_old", ownerURL: url)
        let target = try await Self.login("rd_target_old", ownerURL: url)
        #expect(try Binary.run(["ledger", "grant", "importer", etl.name, "--ledger", url], limit: .seconds(60)).status == 0)
        // Back to schema version 11, as a receiptdesk before v12 left it.
        try await Self.asOwner(
            url, "DELETE FROM ledger_migrations WHERE id = 'v12-upgraded-refunds'",
            "UPDATE ledger_meta SET value = '11' WHERE key = 'schema_version'")
        let run = try Binary.run(["ledger", "grant", "agent", target.name, "--ledger", etl.url], limit: .seconds(60))
        #expect(run.status == 2, "\(run.stderr)")
        #expect(
            run.stderr.contains("only the ledger's owner (\"postgres\") or a superuser may grant rights on it"), "\(run.stderr)")
        let database = try await PostgresDatabase.connect(url: url)
        let version = try await database.read { c in try c.scalar("SELECT value FROM ledger_meta WHERE key = 'schema_version'")?.text }
        try await database.close()
        #expect(version == "11")
        #expect(try await !Self.holds(target.name, "INSERT", on: "triage_log", ownerURL: url))
    }
}
