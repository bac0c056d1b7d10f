import Ledger

/// What a PostgreSQL role may do to a team's ledger (`receiptdesk ledger grant KIND ROLE`).
public enum LedgerRole: String, CaseIterable, Sendable {
    /// Imports files, links accounts and refreshes refund flags: writes every table an import writes.
    case importer
    /// Reads, and triages flags and notes customers: appends to the triage log and moves a flag's status.
    case agent
    /// Reads only.
    case viewer
}

/// The SQL that gives a PostgreSQL role exactly one ``LedgerRole``'s rights on the ledger's tables.
///
/// Every kind reads everything. The triage log takes INSERT from the agent alone and UPDATE, DELETE or
/// TRUNCATE from no one (its triggers refuse them even to the owner). The stored read-only setting
/// (`ledger_meta`) and the schema (`ledger_migrations`, every CREATE and ALTER) stay the owner's: a role can
/// neither lift the setting nor upgrade the ledger. Writes keep the running totals (`ledger_counters`) and the
/// customer list's figures (`customer_stats`) in step, so a kind that writes may update those; the agent only the
/// columns a triage moves (a flag's status, a customer's open flags, a counter's value). A flag's status moves
/// only with the triage log entry that records it (a trigger, schema v7), so the agent cannot move one unrecorded.
public enum PostgresRoles {
    /// Every table of the ledger's schema (a test compares this with what the migrations create).
    public static let tables = SQLLedger.tables

    /// The identity sequences behind the tables' `id` columns (PostgreSQL names them `TABLE_id_seq`).
    public static let sequences = [
        "sources_id_seq", "raw_records_id_seq", "renewal_infos_id_seq", "notifications_id_seq", "triage_log_id_seq",
    ]

    /// What an import writes (`import`, `refunds --refresh`, account links): rows in, customers merged, flags
    /// refreshed, the figures kept in step, a rejected record's outcome rewritten when a later import of its file
    /// decodes it again (never its source, index or hash). No DELETE but a merged customer's figures row.
    static let importerWrites: [(privileges: String, tables: [String])] = [
        ("INSERT, UPDATE", ["sources", "customers", "customer_ids", "transactions", "flags", "customer_stats"]),
        ("INSERT", ["raw_records", "renewal_infos", "notifications"]),
        ("UPDATE (\(Schema.rewrittenRawRecordColumns.joined(separator: ", ")))", ["raw_records"]),
        ("UPDATE", ["ledger_counters"]),
        ("DELETE", ["customer_stats"]),
    ]

    /// What a triage and a note write, column by column.
    static let agentWrites: [(privileges: String, tables: [String])] = [
        ("INSERT", ["triage_log"]),
        ("UPDATE (status, updated_at)", ["flags"]),
        ("UPDATE (open_flags)", ["customer_stats"]),
        ("UPDATE (value)", ["ledger_counters"]),
    ]

    /// The statements, in order, that make `role` a ledger `kind` and nothing more: they first revoke whatever
    /// the role held on the ledger's tables and sequences, so running them again for another kind changes it.
    ///
    /// Run them as the ledger's owner (or a superuser), after the ledger exists at the current schema version, and
    /// again after an upgrade that adds tables. Creating the role (`CREATE ROLE name LOGIN PASSWORD ...`) and its
    /// authentication are the database administrator's.
    /// - Parameters:
    ///   - kind: what the role may do.
    ///   - role: the role's name, exactly (case and all: it is quoted).
    ///   - schema: the schema that holds the ledger's tables.
    ///   - database: the database, for CONNECT (and TEMPORARY, which the importer's COPY staging tables need);
    ///     `nil` leaves database rights as they are (PostgreSQL gives both to PUBLIC unless revoked).
    /// - Throws: `LedgerError` `usage` when a name cannot be a PostgreSQL identifier.
    ///   - portable: whether the ledger was created with portable SQL (``PortableSQL``): writers (the importer and the
    ///     agent) then lock the row of its writers' table, and none needs TEMPORARY (there are no staging tables).
    public static func grants(
        _ kind: LedgerRole, to role: String, schema: String = "public", database: String? = nil, portable: Bool = false
    ) throws -> [String] {
        let role = try quoted(role, "role")
        let schemaName = try quoted(schema, "schema")
        // The ledger's own names need no checking, only quoting.
        func qualified(_ names: [String]) -> String {
            names.map { "\(schemaName).\(quote($0))" }.joined(separator: ", ")
        }
        let tables = qualified(Self.tables + (portable ? [PortableSQL.writersTable] : []))
        var statements = [
            "REVOKE ALL ON TABLE \(tables) FROM \(role)",
            "REVOKE ALL ON SEQUENCE \(qualified(sequences)) FROM \(role)",
        ]
        if let database {
            let database = try quoted(database, "database")
            statements.append("GRANT CONNECT ON DATABASE \(database) TO \(role)")
            statements.append(
                kind == .importer && !portable
                    ? "GRANT TEMPORARY ON DATABASE \(database) TO \(role)" : "REVOKE TEMPORARY ON DATABASE \(database) FROM \(role)")
        }
        statements.append("GRANT USAGE ON SCHEMA \(schemaName) TO \(role)")
        statements.append("GRANT SELECT ON TABLE \(tables) TO \(role)")
        switch kind {
        case .importer:
            for (privileges, names) in importerWrites {
                statements.append("GRANT \(privileges) ON TABLE \(qualified(names)) TO \(role)")
            }
            // The importer takes ids for a batch's rows from the sequences (nextval) before it inserts them.
            statements.append(
                "GRANT USAGE ON SEQUENCE \(qualified(["sources_id_seq", "raw_records_id_seq", "renewal_infos_id_seq", "notifications_id_seq"])) TO \(role)"
            )
        case .agent:
            for (privileges, names) in agentWrites {
                statements.append("GRANT \(privileges) ON TABLE \(qualified(names)) TO \(role)")
            }
            statements.append("GRANT USAGE ON SEQUENCE \(qualified(["triage_log_id_seq"])) TO \(role)")
        case .viewer:
            break
        }
        if portable && kind != .viewer {
            // SELECT ... FOR UPDATE, the writers' turn, asks for UPDATE on the row it locks.
            statements.append("GRANT UPDATE ON TABLE \(qualified([PortableSQL.writersTable])) TO \(role)")
        }
        return statements
    }

    /// `name` as a PostgreSQL identifier: in double quotes, each `"` doubled, so it is taken exactly as written.
    /// - Throws: `LedgerError` `usage` naming `what` for an empty name, a NUL, or more than 63 bytes (which
    ///   PostgreSQL would cut short, so that the statement would name another role).
    public static func quoted(_ name: String, _ what: String = "identifier") throws -> String {
        guard !name.isEmpty else { throw LedgerError(code: .usage, message: "the \(what) name is empty") }
        guard !name.utf8.contains(0) else { throw LedgerError(code: .usage, message: "the \(what) name holds a NUL character") }
        guard name.utf8.count <= 63 else {
            throw LedgerError(
                code: .usage,
                message: "the \(what) name is \(name.utf8.count) bytes long; PostgreSQL cuts names at 63 bytes, so it would name another")
        }
        return quote(name)
    }

    private static func quote(_ name: String) -> String {
        "\"" + name.replacing("\"", with: "\"\"") + "\""
    }
}
