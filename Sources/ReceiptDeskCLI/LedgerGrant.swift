import ArgumentParser
import Foundation
import Ledger
import LedgerPostgres

extension LedgerRole: ExpressibleByArgument {}

/// `receiptdesk ledger grant importer|agent|viewer ROLE`: a PostgreSQL role's rights on a team's ledger.
struct GrantRole: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "grant",
        abstract: "Give a PostgreSQL role the rights of an importer, an agent or a viewer on the ledger.",
        discussion: """
            importer: reads, imports (and refunds --refresh, account links). agent: reads, triages flags and notes \
            customers. viewer: reads. Nobody may change or delete the triage log, set or lift the ledger's read-only \
            setting, or upgrade its schema: that stays with the ledger's owner, who runs this command (after the \
            ledger exists, and again after an upgrade). The role must exist (CREATE ROLE name LOGIN PASSWORD ...); \
            whatever it held on the ledger's tables before is revoked first. --print shows the SQL instead, without \
            connecting (for a ledger created with portable SQL, give the URL its ?portable=on).
            """
    )

    @Argument(help: "importer, agent or viewer.")
    var kind: LedgerRole

    @Argument(help: "The PostgreSQL role, exactly as created (it is quoted: case counts).")
    var role: String

    @Flag(name: .customLong("print"), help: "Print the SQL (for psql) instead of running it; connects to nothing.")
    var printOnly = false

    @Option(help: "The schema that holds the ledger (default: the connection's current schema; with --print, public).")
    var schema: String?

    @OptionGroup var source: LedgerOptions

    func validate() throws {
        if !source.files.isEmpty { throw ValidationError("ledger grant gives rights on a PostgreSQL ledger, not on --files") }
    }

    func run() async throws {
        let url = LedgerOptions.ledgerURL(explicit: source.ledger)
        let lowered = url.lowercased()
        guard lowered.hasPrefix("postgres://") || lowered.hasPrefix("postgresql://") else {
            throw CLIError.usage("ledger grant needs a PostgreSQL ledger (--ledger postgres://...): roles are PostgreSQL's")
        }
        if printOnly {
            let database: String
            do {
                database = try PostgresDatabase.databaseName(url: url)
            } catch let error as LedgerError {
                throw CLIError.usage(error.message)
            }
            let portable = PostgresDatabase.requestsPortable(url: url)
            for statement in try statements(schema: schema ?? "public", database: database, portable: portable) {
                print(statement + ";")
            }
            return
        }
        if source.readOnly { throw LedgerOptions.refuse("ledger grant") }
        let database = try await LedgerOptions.connect(url: url)
        do {
            try await grant(database, url: url)
            try await database.close()
        } catch {
            try? await database.close()
            if let error = error as? LedgerError { throw CLIError.ledgerUnavailable(error.message) }
            throw error
        }
    }

    private func grant(_ database: any SQLDatabase, url: String) async throws {
        let role = self.role
        let names = try await database.read { c in
            try c.query(
                "SELECT current_database(), current_schema(), (SELECT COUNT(*) FROM pg_roles WHERE rolname = ?)", [.text(role)]
            ).first ?? []
        }
        guard names.count == 3, let databaseName = names[0].text else {
            throw CLIError.ledgerUnavailable("the server did not say which database it is in")
        }
        let current = names[1].text
        // Who may grant is asked first: opening the ledger for writing (below) would upgrade one of an older schema,
        // and a login that is not its owner was refused by the upgrade's first ALTER, a message about a table.
        // (A schema named that is the connection's own is as none named: a ledger not there yet is made below.)
        if schema != nil && schema != current {
            try await Self.checkOwner(of: database, schema: schema, url: url)
        } else {
            let holds: Bool
            do {
                holds = try await SQLLedger.holdsLedger(database)
            } catch let error as LedgerError where error.code == .permissionDenied {
                // A login with no rights on the ledger at all (it can connect, nothing more) may not grant either:
                // said as to any other login not its owner (it was told to have itself granted a kind, exit 3, which
                // would not let it grant).
                if let reached = try await SQLLedger.ledgerOutOfReach(database) {
                    try await Self.checkOwner(of: database, schema: reached, url: url)
                }
                throw error
            }
            if holds { try await Self.checkOwner(of: database, schema: schema, url: url) }
        }
        guard names[2].int == 1 else {
            let quoted = (try? PostgresRoles.quoted(role)) ?? role
            throw CLIError.usage(
                "there is no PostgreSQL role \(quoted) (names are exact, case included); create it first: CREATE ROLE \(quoted) LOGIN PASSWORD '...'")
        }
        guard let target = schema ?? current else {
            throw CLIError.usage("the connection has no current schema to grant on (its search_path names none it may use): give --schema")
        }
        if target == current {
            // Opened for writing, so that a ledger not yet at this build's schema is created or upgraded first (by
            // the owner, who runs this) and every table granted on exists. (A ledger in another schema than the
            // connection's is not this connection's to create or upgrade: that schema's owner opens it.)
            _ = try await SQLLedger.open(database, now: currentTimestamp())
            // (Again: the ledger may have been made just now, by this login.)
            try await Self.checkOwner(of: database, schema: target, url: url)
        } else {
            // The grants name this build's tables: a ledger of another schema version there would be refused a table
            // it lacks (or keep one this build does not know ungranted), so it is said instead.
            let table = try PostgresRoles.quoted(target) + ".ledger_meta"
            let stored = try await database.read { c in
                try c.scalar("SELECT value FROM \(table) WHERE key = 'schema_version'")?.text
            }
            guard stored == String(Schema.version) else {
                throw CLIError.ledgerUnavailable(
                    "the ledger in schema \(target) has schema version \(stored ?? "unknown") and this receiptdesk grants on version "
                        + "\(Schema.version): open it once with this receiptdesk as its owner, connected with \(target) first on the "
                        + "search_path, then grant")
            }
        }
        let portable = (database as? PostgresDatabase)?.isPortable ?? false
        let statements = try statements(schema: target, database: databaseName, portable: portable)
        try await database.write { c in
            for statement in statements { try c.execute(statement) }
        }
        print(safe("\(redact(url)): \(role) is now a ledger \(kind.rawValue) (\(statements.count) statements)"))
    }

    /// Refuses (exit 2, before any statement runs) a login that neither owns the ledger's tables (nor is a member of
    /// their owner) nor is a superuser: PostgreSQL would refuse its first REVOKE or GRANT with a message about a
    /// column or a sequence that says nothing of who may grant.
    /// `schema` nil is the connection's current schema.
    static func checkOwner(of database: any SQLDatabase, schema: String?, url: String) async throws {
        let tables = PostgresRoles.tables.map { "'\($0)'" }.joined(separator: ", ")
        let row = try await database.read { c in
            try c.query(
                """
                SELECT current_user::text, (SELECT rolsuper FROM pg_roles WHERE rolname = current_user),
                (SELECT pg_get_userbyid(c.relowner)::text FROM pg_class c WHERE c.relnamespace = n.oid AND c.relname = 'ledger_meta'),
                (SELECT COUNT(*) FROM pg_class c WHERE c.relnamespace = n.oid AND c.relkind IN ('r', 'p') AND c.relname IN (\(tables))
                 AND NOT pg_has_role(c.relowner, 'MEMBER'))
                FROM pg_namespace n WHERE n.nspname = COALESCE(?, current_schema())
                """, [schema.map { .text($0) } ?? .null]
            ).first
        }
        guard let row, let owner = row[2].text else {
            throw CLIError.usage(
                "\(schema.map { "schema \($0)" } ?? "the current schema") of \(redact(url)) holds no ReceiptDesk ledger to grant rights on")
        }
        let login = row[0].text ?? "?"
        guard row[1].int == 1 || row[3].int == 0 else {
            throw CLIError.usage(
                "only the ledger's owner (\"\(owner)\") or a superuser may grant rights on it, and the PostgreSQL role \"\(login)\" "
                    + "is neither: connect as the owner (--ledger with its login); nothing was changed")
        }
    }

    private func statements(schema: String, database: String, portable: Bool) throws -> [String] {
        do {
            return try PostgresRoles.grants(kind, to: role, schema: schema, database: database, portable: portable)
        } catch let error as LedgerError {
            throw CLIError.usage(error.message)
        }
    }
}
