import ReceiptModel

/// The ledger's schema: strict tables, the indexes the queries need, versioned migrations by string id.
///
/// Migrations are never edited once shipped; a new one is appended. A ledger whose schema is newer
/// than this build knows is refused, not modified.
public enum Schema {
    /// The schema version this build writes.
    public static let version = 12

    /// A migration: an id that never changes, and its statements (with `{INT}`, `{PK}`, `{BLOB}`).
    struct Migration: Sendable {
        let id: String
        let statements: [String]
        let sqliteOnly: [String]
        let postgresOnly: [String]
        /// PostgreSQL triggers and their functions: left out of a ledger created with portable SQL (``PortableSQL``),
        /// whose triage log is append-only by its roles' rights alone.
        var postgresTriggers: [String] = []
        /// Runs after the statements: fills what they created from the rows a ledger already holds.
        var fill: (@Sendable (any SQLConnection) throws -> Void)? = nil
    }

    static let migrations: [Migration] = [
        Migration(
            id: "v1-ledger",
            statements: [
                """
                CREATE TABLE sources (
                    id {PK},
                    path TEXT NOT NULL,
                    sha256 TEXT NOT NULL UNIQUE,
                    size {INT} NOT NULL CHECK (size >= 0),
                    started_at {INT} NOT NULL,
                    completed_at {INT},
                    records_read {INT} NOT NULL DEFAULT 0,
                    imported {INT} NOT NULL DEFAULT 0,
                    duplicates {INT} NOT NULL DEFAULT 0,
                    rejected {INT} NOT NULL DEFAULT 0,
                    CHECK (completed_at IS NULL OR records_read = imported + duplicates + rejected)
                )
                """,
                """
                CREATE TABLE raw_records (
                    id {PK},
                    source_id {INT} NOT NULL REFERENCES sources(id),
                    record_index {INT} NOT NULL,
                    byte_offset {INT} NOT NULL,
                    kind TEXT NOT NULL,
                    status TEXT NOT NULL CHECK (status IN ('imported', 'duplicate', 'rejected')),
                    verification TEXT NOT NULL,
                    content_hash {BLOB} NOT NULL,
                    error_code TEXT,
                    error_message TEXT,
                    raw {BLOB},
                    UNIQUE (source_id, record_index)
                )
                """,
                "CREATE INDEX raw_records_content ON raw_records (content_hash)",
                "CREATE INDEX raw_records_rejected ON raw_records (id) WHERE status = 'rejected'",
                """
                CREATE TABLE customers (
                    id {INT} PRIMARY KEY,
                    created_at {INT} NOT NULL,
                    merged_into {INT} REFERENCES customers(id)
                )
                """,
                """
                CREATE TABLE customer_ids (
                    kind TEXT NOT NULL,
                    value TEXT NOT NULL,
                    customer_id {INT} NOT NULL REFERENCES customers(id),
                    PRIMARY KEY (value, kind)
                )
                """,
                "CREATE INDEX customers_merged ON customers (merged_into)",
                "CREATE INDEX customer_ids_customer ON customer_ids (customer_id)",
                """
                CREATE TABLE transactions (
                    transaction_id TEXT PRIMARY KEY,
                    original_transaction_id TEXT,
                    web_order_line_item_id TEXT,
                    app_account_token TEXT,
                    product_id TEXT,
                    type TEXT,
                    purchase_date {INT},
                    expires_date {INT},
                    revocation_date {INT},
                    revocation_reason {INT},
                    environment TEXT,
                    price {INT},
                    currency TEXT,
                    signed_date {INT},
                    verification TEXT NOT NULL,
                    first_seen_at {INT} NOT NULL,
                    canonical TEXT NOT NULL
                )
                """,
                "CREATE INDEX transactions_original ON transactions (original_transaction_id)",
                "CREATE INDEX transactions_web_order ON transactions (web_order_line_item_id) WHERE web_order_line_item_id IS NOT NULL",
                "CREATE INDEX transactions_token ON transactions (app_account_token) WHERE app_account_token IS NOT NULL",
                "CREATE INDEX transactions_refunds ON transactions (product_id, revocation_date) WHERE revocation_date IS NOT NULL",
                """
                CREATE TABLE renewal_infos (
                    id {PK},
                    original_transaction_id TEXT,
                    signed_date {INT},
                    seen_at {INT} NOT NULL,
                    raw_record_id {INT} NOT NULL REFERENCES raw_records(id),
                    canonical TEXT NOT NULL
                )
                """,
                "CREATE INDEX renewal_infos_original ON renewal_infos (original_transaction_id, seen_at)",
                """
                CREATE TABLE notifications (
                    id {PK},
                    notification_uuid TEXT UNIQUE,
                    version TEXT NOT NULL,
                    notification_type TEXT NOT NULL,
                    subtype TEXT,
                    signed_date {INT},
                    seen_at {INT} NOT NULL,
                    original_transaction_id TEXT,
                    transaction_id TEXT,
                    raw_record_id {INT} NOT NULL REFERENCES raw_records(id),
                    canonical TEXT NOT NULL
                )
                """,
                "CREATE INDEX notifications_original ON notifications (original_transaction_id, seen_at)",
                """
                CREATE TABLE flags (
                    id TEXT PRIMARY KEY,
                    rule TEXT NOT NULL,
                    severity TEXT NOT NULL,
                    status TEXT NOT NULL CHECK (status IN ('open', 'acknowledged', 'resolved')),
                    customer_id {INT},
                    transaction_id TEXT,
                    product_id TEXT,
                    amount {INT},
                    currency TEXT,
                    at {INT} NOT NULL,
                    detail TEXT NOT NULL,
                    updated_at {INT} NOT NULL
                )
                """,
                "CREATE INDEX flags_status ON flags (status, at)",
                "CREATE INDEX flags_rule ON flags (rule, at)",
                """
                CREATE TABLE triage_log (
                    id {PK},
                    flag_id TEXT REFERENCES flags(id),
                    customer_id {INT},
                    at {INT} NOT NULL,
                    operator TEXT NOT NULL,
                    action TEXT NOT NULL,
                    note TEXT,
                    from_status TEXT,
                    to_status TEXT
                )
                """,
                "CREATE INDEX triage_log_flag ON triage_log (flag_id, id)",
                "CREATE INDEX triage_log_customer ON triage_log (customer_id, id)",
            ],
            sqliteOnly: [
                "CREATE TRIGGER triage_log_no_update BEFORE UPDATE ON triage_log BEGIN SELECT RAISE(ABORT, 'the triage log is append-only'); END",
                "CREATE TRIGGER triage_log_no_delete BEFORE DELETE ON triage_log BEGIN SELECT RAISE(ABORT, 'the triage log is append-only'); END",
            ],
            postgresOnly: [],
            postgresTriggers: [
                """
                CREATE FUNCTION triage_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN RAISE EXCEPTION 'the triage log is append-only'; END $$
                """,
                "CREATE TRIGGER triage_log_no_change BEFORE UPDATE OR DELETE ON triage_log FOR EACH ROW EXECUTE FUNCTION triage_log_append_only()",
            ]
        ),
        Migration(
            id: "v2-read-side",
            statements: [
                // The customer list's figures per surviving customer, kept by every write (CustomerStats).
                """
                CREATE TABLE customer_stats (
                    customer_id {INT} PRIMARY KEY REFERENCES customers(id),
                    transaction_count {INT} NOT NULL DEFAULT 0,
                    last_purchase {INT},
                    last_activity {INT} NOT NULL DEFAULT 0,
                    latest_expiry {INT},
                    live_expiry {INT},
                    refunds {INT} NOT NULL DEFAULT 0,
                    environments TEXT NOT NULL DEFAULT '',
                    in_production {INT} NOT NULL DEFAULT 0 CHECK (in_production IN (0, 1)),
                    in_sandbox {INT} NOT NULL DEFAULT 0 CHECK (in_sandbox IN (0, 1)),
                    open_flags {INT} NOT NULL DEFAULT 0 CHECK (open_flags >= 0)
                )
                """,
                // One index per sort, so a page is a range scan; the filter columns ride along so rows a filter
                // skips are never read. Customers with open flags are few: their own small indexes.
                "CREATE INDEX customer_stats_activity ON customer_stats (last_activity DESC, customer_id, in_production, in_sandbox, open_flags, live_expiry)",
                "CREATE INDEX customer_stats_refunds ON customer_stats (refunds DESC, customer_id, in_production, in_sandbox, open_flags, live_expiry)",
                "CREATE INDEX customer_stats_live ON customer_stats (live_expiry, in_production, in_sandbox, open_flags)",
                "CREATE INDEX customer_stats_flagged ON customer_stats (customer_id) WHERE open_flags > 0",
                "CREATE INDEX customer_stats_flagged_activity ON customer_stats (last_activity DESC, customer_id) WHERE open_flags > 0",
                "CREATE INDEX customer_stats_flagged_refunds ON customer_stats (refunds DESC, customer_id) WHERE open_flags > 0",
                // Running totals and the change signal.
                "CREATE TABLE ledger_counters (name TEXT PRIMARY KEY, value {INT})",
                // Refunds per day over every product.
                "CREATE INDEX transactions_revoked ON transactions (revocation_date) WHERE revocation_date IS NOT NULL",
                // Open flags per customer; the flag queue newest first; counts by severity.
                "CREATE INDEX flags_customer ON flags (customer_id, status)",
                "CREATE INDEX flags_at ON flags (at DESC, id)",
                "CREATE INDEX flags_severity ON flags (severity, status)",
            ],
            sqliteOnly: [],
            postgresOnly: [
                // Prefix filters compare in byte order whatever the database's collation (Queries.customers).
                #"CREATE INDEX customer_ids_value_bytes ON customer_ids (value COLLATE "C")"#
            ],
            fill: { c in
                try StatsWriter.fill(c)
                try Counters.fill(
                    c,
                    [
                        ("change", "SELECT 0"),
                        ("transactions", "SELECT COUNT(*) FROM transactions"),
                        ("customers", "SELECT COUNT(*) FROM customers WHERE merged_into IS NULL"),
                        ("sources", "SELECT COUNT(*) FROM sources"),
                        ("raw_records", "SELECT COUNT(*) FROM raw_records"),
                        ("rejected_records", "SELECT COUNT(*) FROM raw_records WHERE status = 'rejected'"),
                        ("revoked_transactions", "SELECT COUNT(*) FROM transactions WHERE revocation_date IS NOT NULL"),
                        ("open_flags", "SELECT COUNT(*) FROM flags WHERE status = 'open'"),
                        ("renewal_infos", "SELECT COUNT(*) FROM renewal_infos"),
                        ("notifications", "SELECT COUNT(*) FROM notifications"),
                        ("last_import", "SELECT MAX(COALESCE(completed_at, started_at)) FROM sources"),
                    ])
            }
        ),
        Migration(
            id: "v3-flag-environment",
            statements: [
                // The environment of the refund a flag is about, so the queue filters by it.
                "ALTER TABLE flags ADD COLUMN environment TEXT",
                "CREATE INDEX flags_environment_at ON flags (environment, at DESC, id)",
                """
                UPDATE flags SET environment = (SELECT t.environment FROM transactions t WHERE t.transaction_id = flags.transaction_id)
                WHERE transaction_id IS NOT NULL
                """,
            ],
            // The triage log takes only the actions and statuses this build writes (what it reads back
            // must be one of them), and PostgreSQL's TRUNCATE, which row triggers do not see, is refused too.
            sqliteOnly: [
                """
                CREATE TRIGGER triage_log_known_values BEFORE INSERT ON triage_log
                WHEN NEW.action NOT IN ('ack', 'resolve', 'reopen', 'note')
                    OR COALESCE(NEW.from_status, 'open') NOT IN ('open', 'acknowledged', 'resolved')
                    OR COALESCE(NEW.to_status, 'open') NOT IN ('open', 'acknowledged', 'resolved')
                BEGIN SELECT RAISE(ABORT, 'the triage log takes only known actions and statuses'); END
                """
            ],
            postgresOnly: [
                "ALTER TABLE triage_log ADD CONSTRAINT triage_log_action CHECK (action IN ('ack', 'resolve', 'reopen', 'note'))",
                """
                ALTER TABLE triage_log ADD CONSTRAINT triage_log_statuses
                CHECK (COALESCE(from_status, 'open') IN ('open', 'acknowledged', 'resolved') AND COALESCE(to_status, 'open') IN ('open', 'acknowledged', 'resolved'))
                """,
            ],
            postgresTriggers: [
                "CREATE TRIGGER triage_log_no_truncate BEFORE TRUNCATE ON triage_log FOR EACH STATEMENT EXECUTE FUNCTION triage_log_append_only()"
            ]
        ),
        Migration(
            id: "v4-revocation-kind",
            statements: [
                // What a revocation is (RevocationKind): refunds are counted by it, not by any revocation_date.
                "ALTER TABLE transactions ADD COLUMN revocation_kind TEXT CHECK (revocation_kind IN ('refund', 'family', 'upgrade', 'reversed'))",
                // Refunds per day, overall and per product; a transaction's reversals.
                "CREATE INDEX transactions_refund_day ON transactions (revocation_date) WHERE revocation_kind = 'refund'",
                "CREATE INDEX transactions_product_refund_day ON transactions (product_id, revocation_date) WHERE revocation_kind = 'refund'",
                "DROP INDEX transactions_refunds",
                "CREATE INDEX notifications_reversals ON notifications (transaction_id) WHERE notification_type = 'REFUND_REVERSED'",
                "DELETE FROM ledger_counters WHERE name = 'revoked_transactions'",
            ],
            sqliteOnly: [],
            postgresOnly: [],
            fill: { c in
                try RevocationKind.fill(c)
                try StatsWriter.recountAll(c)
                try Counters.fill(c, [("refunded_transactions", "SELECT COUNT(*) FROM transactions WHERE revocation_kind = 'refund'")])
            }
        ),
        Migration(
            id: "v5-environment-counters",
            statements: [],
            sqliteOnly: [],
            postgresOnly: [],
            // The overview's figures per environment, counted once from the rows.
            fill: { c in
                var counts: [(name: String, sql: String)] = []
                for environment in ["Production", "Sandbox"] {
                    let column = environment == "Production" ? "in_production" : "in_sandbox"
                    counts += [
                        ("customers@\(environment)", "SELECT COUNT(*) FROM customer_stats WHERE \(column) = 1"),
                        ("transactions@\(environment)", "SELECT COUNT(*) FROM transactions WHERE environment = '\(environment)'"),
                        (
                            "refunded_transactions@\(environment)",
                            "SELECT COUNT(*) FROM transactions WHERE environment = '\(environment)' AND revocation_kind = 'refund'"
                        ),
                    ]
                }
                try Counters.fill(c, counts)
            }
        ),
        Migration(
            id: "v6-covering-sort-indexes",
            statements: [
                // A customer page sorted by activity or refunds reads every column it shows from the sort's index:
                // a first sort on a cold page cache read each of its rows from the table as well (145 ms at
                // 226,501 customers, docs/PERFORMANCE.md).
                "DROP INDEX customer_stats_activity",
                "DROP INDEX customer_stats_refunds",
                """
                CREATE INDEX customer_stats_activity ON customer_stats (last_activity DESC, customer_id, in_production, in_sandbox,
                    open_flags, live_expiry, transaction_count, last_purchase, latest_expiry, refunds, environments)
                """,
                """
                CREATE INDEX customer_stats_refunds ON customer_stats (refunds DESC, customer_id, in_production, in_sandbox,
                    open_flags, live_expiry, transaction_count, last_purchase, last_activity, latest_expiry, environments)
                """,
            ],
            sqliteOnly: [],
            postgresOnly: []
        ),
        Migration(
            id: "v7-flag-status-logged",
            statements: [],
            // A flag's status moves only with the triage log entry that records the move, written first in the same
            // transaction: whoever may update a flag (the agent, the importer) cannot move it unrecorded. (Portable
            // SQL has no triggers: there the agent's rights are the only guard.)
            sqliteOnly: [
                """
                CREATE TRIGGER flags_status_logged BEFORE UPDATE OF status ON flags
                WHEN NEW.status IS NOT OLD.status AND NOT EXISTS (
                    SELECT 1 FROM triage_log WHERE id = (SELECT MAX(id) FROM triage_log WHERE flag_id = NEW.id)
                        AND from_status = OLD.status AND to_status = NEW.status)
                BEGIN SELECT RAISE(ABORT, 'a flag''s status moves only with the triage log entry that records it'); END
                """
            ],
            postgresOnly: [],
            postgresTriggers: [
                """
                CREATE FUNCTION flags_status_logged() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    IF NEW.status IS DISTINCT FROM OLD.status AND NOT EXISTS (
                        SELECT 1 FROM triage_log WHERE id = (SELECT MAX(id) FROM triage_log WHERE flag_id = NEW.id)
                            AND from_status = OLD.status AND to_status = NEW.status)
                    THEN
                        RAISE EXCEPTION 'a flag''s status moves only with the triage log entry that records it (flag %)', NEW.id;
                    END IF;
                    RETURN NEW;
                END $$
                """,
                "CREATE TRIGGER flags_status_logged BEFORE UPDATE OF status ON flags FOR EACH ROW EXECUTE FUNCTION flags_status_logged()",
            ]
        ),
        Migration(
            id: "v8-flag-product-index",
            statements: [
                // The flag queue of one product (Enter on a spike alarm), newest first, without reading the others.
                "CREATE INDEX flags_product_at ON flags (product_id, at DESC, id)"
            ],
            sqliteOnly: [],
            postgresOnly: []
        ),
        Migration(
            id: "v9-raw-record-outcome-only",
            statements: [],
            // A raw record is the ledger's account of what came in: once imported or a duplicate it never changes,
            // and a rejected one changes only its outcome (importing its file again decodes it anew), never which
            // record of which source it is. (Portable SQL has no triggers: there the importer role's column rights
            // are the guard.)
            sqliteOnly: [
                """
                CREATE TRIGGER raw_records_outcome_only BEFORE UPDATE ON raw_records
                WHEN OLD.status <> 'rejected' OR NEW.id IS NOT OLD.id OR NEW.source_id IS NOT OLD.source_id
                    OR NEW.record_index IS NOT OLD.record_index OR NEW.byte_offset IS NOT OLD.byte_offset
                    OR NEW.content_hash IS NOT OLD.content_hash
                BEGIN SELECT RAISE(ABORT, 'a raw record changes only its outcome, and only while it is rejected'); END
                """
            ],
            postgresOnly: [],
            postgresTriggers: [
                """
                CREATE FUNCTION raw_records_outcome_only() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    IF OLD.status <> 'rejected' OR NEW.id IS DISTINCT FROM OLD.id OR NEW.source_id IS DISTINCT FROM OLD.source_id
                        OR NEW.record_index IS DISTINCT FROM OLD.record_index OR NEW.byte_offset IS DISTINCT FROM OLD.byte_offset
                        OR NEW.content_hash IS DISTINCT FROM OLD.content_hash
                    THEN
                        RAISE EXCEPTION 'a raw record changes only its outcome, and only while it is rejected (raw record %)', OLD.id;
                    END IF;
                    RETURN NEW;
                END $$
                """,
                "CREATE TRIGGER raw_records_outcome_only BEFORE UPDATE ON raw_records FOR EACH ROW EXECUTE FUNCTION raw_records_outcome_only()",
            ]
        ),
        Migration(
            id: "v10-flag-severity-index",
            statements: [
                // The flag queue of one severity (Enter on the overview's severities), newest first, without sorting
                // every flag of that severity for each page.
                "CREATE INDEX flags_severity_at ON flags (severity, at DESC, id)"
            ],
            sqliteOnly: [],
            postgresOnly: []
        ),
        Migration(
            id: "v11-flag-rule-status-index",
            statements: [
                // The overview's open consumption requests past their deadline, counted from the index alone (in every
                // environment; one environment still reads each flag's): through flags_rule each was read from the
                // table for its status (4-5 ms for 10,515 of them at 1,000,000 transactions, under 1 ms this way,
                // timed in sqlite3 on the bench's ledger).
                "CREATE INDEX flags_rule_status ON flags (rule, status, at)"
            ],
            sqliteOnly: [],
            postgresOnly: []
        ),
        Migration(
            id: "v12-upgraded-refunds",
            statements: [],
            sqliteOnly: [],
            postgresOnly: [],
            // An upgraded transaction with a refund type is a refund (71827f5); ledgers written before kept it as an
            // upgrade's cancellation, and a duplicate record rewrites nothing. The refund rules see it at the next
            // import or `refunds --refresh`.
            fill: { c in try RevocationKind.refillUpgrades(c) }
        ),
    ]

    /// The ledger's table names already taken in the database (SQLite) or the current schema (PostgreSQL) that holds no
    /// ledger: another application's tables, which creating a ledger there would collide with.
    static func takenTableNames(_ connection: any SQLConnection) throws -> [String] {
        let list = (SQLLedger.tables + [PortableSQL.writersTable]).map { "'\($0)'" }.joined(separator: ", ")
        let sql =
            switch connection.dialect {
            // (SQLite's names are the same in any case: a foreign `Flags` collides with `flags`.)
            case .sqlite: "SELECT name FROM sqlite_master WHERE lower(name) IN (\(list)) ORDER BY lower(name)"
            case .postgres:
                """
                SELECT c.relname::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                WHERE n.nspname = current_schema() AND c.relname IN (\(list)) ORDER BY 1
                """
            }
        return try connection.query(sql, []).compactMap { $0.first?.text }
    }

    /// Whether the database holds a ledger at all (its `ledger_meta` table), asked of the catalog so that a
    /// failed read is an error, never taken for "no ledger yet".
    static func exists(_ connection: any SQLConnection) throws -> Bool {
        let sql =
            switch connection.dialect {
            case .sqlite: "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'ledger_meta'"
            case .postgres:
                "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = 'ledger_meta'"
            }
        return try connection.scalar(sql)?.int ?? 0 > 0
    }

    /// Refuses, with a `permissionDenied` error that says what to do, a PostgreSQL ledger the connection's role has
    /// no rights on: ``exists(_:)`` asks `information_schema`, which lists only the tables a role holds some right
    /// on, so such a ledger read as none (and `import` tried to create one, which the schema's rights refused).
    /// The catalog (`pg_class`) shows every table to every role. Nothing on SQLite, or when there is no ledger.
    ///
    /// A role without USAGE on the ledger's schema has it left out of its search path: `current_schema()` is the next
    /// schema of the path it may use, so a `ledger_meta` in a schema the path names before that one counts (a role
    /// with `search_path = team, public` and no USAGE on `team` was told there is no ledger, and an import tried to
    /// make one in `public`), and in any schema of the database when it may use none (`current_schema()` is NULL).
    static func refuseOutOfReach(_ connection: any SQLConnection) throws {
        guard let (schema, owner, role) = try outOfReach(connection) else { return }
        throw LedgerError(
            code: .permissionDenied,
            message: "the PostgreSQL role \"\(role)\" has no rights on the ReceiptDesk ledger this database holds (schema \(schema), "
                + "owned by \"\(owner)\"): its owner, or a superuser, gives them, connected as itself: "
                + SQLLedger.grantCommand("viewer|agent|importer", role: role))
    }

    /// The ledger a PostgreSQL role reaches but may not read (see ``refuseOutOfReach(_:)``): its schema, its owner and
    /// the role; nil when there is none.
    static func outOfReach(_ connection: any SQLConnection) throws -> (schema: String, owner: String, role: String)? {
        guard connection.dialect == .postgres else { return nil }
        guard
            let row = try connection.query(
                """
                WITH path AS (
                    SELECT CASE WHEN btrim(entry, ' "') = '$user' THEN current_user::text ELSE btrim(entry, ' "') END AS name, position
                    FROM unnest(string_to_array(current_setting('search_path'), ',')) WITH ORDINALITY AS entries(entry, position)
                ), skipped AS (
                    SELECT name FROM path WHERE position < (SELECT MIN(position) FROM path WHERE name = current_schema())
                )
                SELECT n.nspname::text, pg_get_userbyid(c.relowner)::text, current_user::text
                FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                WHERE c.relname = 'ledger_meta' AND c.relkind IN ('r', 'p')
                AND (n.nspname = current_schema() OR n.nspname IN (SELECT name FROM skipped)
                     OR (current_schema() IS NULL AND n.nspname NOT IN ('pg_catalog', 'information_schema')))
                AND NOT (has_schema_privilege(n.oid, 'USAGE') AND has_table_privilege(c.oid, 'SELECT'))
                ORDER BY n.nspname <> 'public', n.nspname LIMIT 1
                """, []
            ).first,
            let schema = row[0].text, let owner = row[1].text, let role = row[2].text
        else { return nil }
        return (schema, owner, role)
    }

    /// The schema version a ledger stores, as stored (nil before one is written).
    static func storedVersion(_ connection: any SQLConnection) throws -> String? {
        try connection.scalar("SELECT value FROM ledger_meta WHERE key = 'schema_version'")?.text
    }

    /// Whether the database holds a ledger of this build's schema version with every migration applied
    /// (a read; `false` when there is no ledger yet, an error when the database cannot be read).
    static func isCurrent(_ connection: any SQLConnection) throws -> Bool {
        guard try exists(connection) else { return false }
        guard try storedVersion(connection) == String(version) else {
            return false
        }
        let applied = Set(try connection.query("SELECT id FROM ledger_migrations", []).compactMap { $0.first?.text })
        return migrations.allSatisfy { applied.contains($0.id) }
    }

    /// Creates or upgrades the schema; refuses a ledger written by a newer version.
    static func migrate(_ connection: any SQLConnection, now: Timestamp) throws {
        try connection.execute(
            connection.dialect.expand(
                "CREATE TABLE IF NOT EXISTS ledger_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)"))
        try connection.execute(
            connection.dialect.expand(
                "CREATE TABLE IF NOT EXISTS ledger_migrations (id TEXT PRIMARY KEY, applied_at {INT} NOT NULL)"))
        if let stored = try storedVersion(connection),
            let storedVersion = Int(stored), storedVersion > version
        {
            throw LedgerError(
                code: .schemaTooNew,
                message:
                    "this ledger has schema version \(storedVersion), newer than this receiptdesk knows (\(version)); upgrade receiptdesk, the ledger was not modified"
            )
        }
        let applied = Set(try connection.query("SELECT id FROM ledger_migrations", []).compactMap { $0.first?.text })
        let pending = migrations.filter { !applied.contains($0.id) }
        // A ledger set read-only is not upgraded either: the setting refuses every write.
        if !pending.isEmpty, !applied.isEmpty, try SQLLedger.storedReadOnly(connection) {
            let stored = try storedVersion(connection) ?? "?"
            throw LedgerError(
                code: .readOnly,
                message:
                    "this ledger is set read-only and has schema version \(stored), which this receiptdesk must upgrade to \(version) before it reads or writes; receiptdesk ledger read-only off lifts the setting and upgrades it"
            )
        }
        let portable = connection.portableSQL
        if applied.isEmpty && portable {
            // Created with portable SQL: writers take turns on a row lock, and every later client reads the setting.
            try connection.execute("CREATE TABLE \(PortableSQL.writersTable) (id INTEGER PRIMARY KEY)")
            try connection.execute("INSERT INTO \(PortableSQL.writersTable) (id) VALUES (1)")
            try connection.execute(
                "INSERT INTO ledger_meta (key, value) VALUES (?, '1') ON CONFLICT (key) DO NOTHING", [.text(PortableSQL.metaKey)])
        }
        for migration in pending {
            let extra =
                connection.dialect == .sqlite
                ? migration.sqliteOnly : migration.postgresOnly + (portable ? [] : migration.postgresTriggers)
            for statement in migration.statements + extra {
                try connection.execute(connection.dialect.expand(statement))
            }
            try migration.fill?(connection)
            try connection.execute(
                "INSERT INTO ledger_migrations (id, applied_at) VALUES (?, ?)", [.text(migration.id), .of(now)])
        }
        try connection.execute(
            "INSERT INTO ledger_meta (key, value) VALUES ('schema_version', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            [.text(String(version))])
    }
}
