import Entitlements
import ReceiptDecoding
import ReceiptModel

/// The ledger over any SQL backend: one schema, one importer, one set of queries.
///
/// Backends (SQLite through GRDB, PostgreSQL through postgres-nio) only open connections and run
/// closures in transactions; everything a ledger means is written once, here.
public final class SQLLedger: Sendable {
    public let database: any SQLDatabase

    private init(database: any SQLDatabase) {
        self.database = database
    }

    /// Opens a ledger over a backend, creating or upgrading its schema unless `readOnly`. A ledger whose
    /// schema is current is only read: opening never writes (nor waits for an importer's lock) then.
    /// - Parameter creating: whether a database that holds no ledger gets one; without it (a command that reads),
    ///   such a database is refused as it is, never given the ledger's tables.
    public static func open(_ database: any SQLDatabase, now: Timestamp, readOnly: Bool = false, creating: Bool = true) async throws
        -> SQLLedger
    {
        // A ledger the role has no rights on is there all the same: that is said, rather than that there is none (or
        // an import trying to create one, which the schema's rights refuse).
        let exists = try await holdsLedger(database)
        if !exists {
            // Another application's tables of the ledger's names: a ledger cannot be made beside them (the import said
            // PostgreSQL's "relation "sources" already exists", after being told it would create one).
            let taken = try await database.read { connection in try Schema.takenTableNames(connection) }
            if !taken.isEmpty {
                throw LedgerError.cannotOpen(
                    "this database holds no ReceiptDesk ledger, and tables of the names a ledger uses (\(taken.joined(separator: ", "))) "
                        + "that are not one: give the ledger a database of its own, or on PostgreSQL a schema of its own, first on the role's search_path")
            }
        }
        if !creating, !exists {
            throw LedgerError.cannotOpen("this database holds no ReceiptDesk ledger (receiptdesk import into it creates one)")
        }
        if readOnly {
            try await database.read { connection in try Schema.checkVersion(connection) }
        } else if try await database.read({ connection in try Schema.isCurrent(connection) }) {
            // Current: nothing to create or upgrade. (A read that fails is an error, not a reason to migrate.)
            // A first load cut short left indexes unbuilt: build them now.
            if try await database.read({ connection in try hasDeferredIndexes(connection) }) {
                try await database.write { connection in try buildDeferredIndexes(connection) }
            }
        } else {
            try await database.write { connection in try Schema.migrate(connection, now: now) }
        }
        return SQLLedger(database: database)
    }

    public func close() async throws { try await database.close() }

    /// Opens an existing ledger of this schema version or an older one without upgrading it: for the stored
    /// read-only setting alone (``setReadOnly(_:)``, ``isSetReadOnly()``), which an older ledger also keeps, so a
    /// ledger set read-only can be released before this build upgrades it.
    public static func openForSettings(_ database: any SQLDatabase) async throws -> SQLLedger {
        let exists = try await holdsLedger(database)
        try await database.read { connection in
            guard exists,
                let version = try Schema.storedVersion(connection).flatMap({ Int($0) })
            else { throw LedgerError.cannotOpen("this database holds no ReceiptDesk ledger") }
            if version > Schema.version {
                throw LedgerError(
                    code: .schemaTooNew,
                    message: "this ledger has schema version \(version), newer than this receiptdesk knows (\(Schema.version))")
            }
        }
        return SQLLedger(database: database)
    }

    /// Every table of a ledger's schema (a portable ledger's writers' table besides: ``PortableSQL/writersTable``).
    public static let tables = [
        "ledger_meta", "ledger_migrations", "sources", "raw_records", "customers", "customer_ids", "transactions",
        "renewal_infos", "notifications", "flags", "triage_log", "customer_stats", "ledger_counters",
    ]

    /// The schema of a ledger the connection's role reaches (its current schema, or one before it on the search path)
    /// but may not read; nil when there is none.
    public static func ledgerOutOfReach(_ database: any SQLDatabase) async throws -> String? {
        try await database.read { connection in try Schema.outOfReach(connection)?.schema }
    }

    /// Whether the database holds a ledger (in the connection's current schema, on PostgreSQL), without opening it:
    /// one the role has no rights on is refused as ``open(_:now:readOnly:creating:)`` refuses it.
    public static func holdsLedger(_ database: any SQLDatabase) async throws -> Bool {
        try await database.read { connection in
            let exists = try Schema.exists(connection)
            if !exists { try Schema.refuseOutOfReach(connection) }
            return exists
        }
    }

    // MARK: What the connection's role may do

    /// Who the connection is, and whether it may triage: nil on SQLite (the file's owner may); on PostgreSQL the
    /// role, and whether its rights let it add to the triage log and move a flag (a viewer's do not). The dashboard
    /// hides the triage keys for a role that may not, as it does for a ledger opened read-only.
    public func role() async throws -> (name: String, mayTriage: Bool)? {
        try await roleCheck(Self.mayTriageSQL).map { ($0.role, $0.may) }
    }

    /// Whether the connection's role may add to the triage log and move a flag (PostgreSQL).
    static let mayTriageSQL = "has_table_privilege('triage_log', 'INSERT') AND has_column_privilege('flags', 'status', 'UPDATE')"

    /// What a command writes, for ``refuseUnlessRoleMay(_:)``.
    public enum Work: Sendable {
        /// `import` and account links: rows in and flags refreshed, an importer's rights.
        case importing
        /// `refunds --refresh`: the flags written again, an importer's rights.
        case refreshingFlags
        /// `triage`: the triage log and a flag's status, an agent's rights.
        case triaging
        /// `note`: the triage log, an agent's rights.
        case noting
    }

    /// Refuses, before any work, a PostgreSQL role whose rights do not cover `work` (a `readOnly` error, exit 2, naming
    /// the role and the kind of role that may): a viewer's import ran to its end as if it could write, and an
    /// importer's triage of a resolved flag was told to reopen it first, which it may not either. Nothing on SQLite.
    public func refuseUnlessRoleMay(_ work: Work) async throws {
        let (check, kind, what) =
            switch work {
            case .importing:
                (
                    "has_table_privilege('raw_records', 'INSERT') AND has_table_privilege('transactions', 'INSERT') "
                        + "AND has_table_privilege('flags', 'INSERT')", "importer", "import into"
                )
            case .refreshingFlags:
                ("has_table_privilege('flags', 'INSERT') AND has_table_privilege('flags', 'UPDATE')", "importer", "refresh the flags of")
            case .triaging: (Self.mayTriageSQL, "agent", "triage")
            case .noting: ("has_table_privilege('triage_log', 'INSERT')", "agent", "write notes in")
            }
        guard let (role, may) = try await roleCheck(check), !may else { return }
        // (A grant makes a role one kind, in place of the one it had: said, or following it took the other rights away.)
        throw LedgerError(
            code: .readOnly,
            message: "the PostgreSQL role \"\(role)\" may not \(what) this ledger: nothing was written. An \(kind) may: "
                + "\(Self.grantCommand(kind, role: role)), run by the ledger's owner, makes it one in place of the kind it is now "
                + "(a role is one kind; another login can be the \(kind))")
    }

    /// The connection's role and the answer to a privilege check, or nil on SQLite.
    private func roleCheck(_ check: String) async throws -> (role: String, may: Bool)? {
        try await database.read { c in
            guard c.dialect == .postgres, let row = try c.query("SELECT current_user::text, \(check)", []).first,
                let name = row[0].text
            else { return nil }
            return (name, row[1].int == 1)
        }
    }

    /// The `ledger grant` command for `role`, quoted for a shell when it is more than a plain lower-case name (the
    /// grant takes it exactly), as the messages that name it give it.
    public static func grantCommand(_ kinds: String, role: String) -> String {
        let plain = !role.isEmpty && role.allSatisfy { $0.isASCII && ($0.isLowercase || $0.isNumber || $0 == "_") }
        let argument = plain ? role : "'" + role.replacing("'", with: "'\\''") + "'"
        return "receiptdesk ledger grant \(kinds) \(argument) --ledger URL"
    }

    // MARK: The stored read-only setting

    /// Whether the ledger itself is set read-only (`receiptdesk ledger read-only on`): every write through
    /// this ledger is then refused with a `readOnly` error, whatever the process's own options say.
    public func isSetReadOnly() async throws -> Bool {
        try await database.read { c in try Self.storedReadOnly(c) }
    }

    /// Sets or clears the stored read-only setting. The one write a read-only ledger takes: the operator
    /// who set it is the one who lifts it. It moves the change signal, so an open dashboard shows the setting
    /// (and hides or shows its triage keys) at its next poll.
    ///
    /// With `upgradingAt`, lifting the setting also upgrades a ledger of an older schema version (which the setting
    /// held back), in the same transaction: either both happen or neither does.
    public func setReadOnly(_ on: Bool, upgradingAt now: Timestamp? = nil) async throws {
        try await database.write { c in
            try c.execute(
                "INSERT INTO ledger_meta (key, value) VALUES ('read_only', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                [.text(on ? "1" : "0")])
            // (A ledger older than the change signal, version 2, opened for its settings alone has no counter to move.)
            if try Schema.storedVersion(c).flatMap({ Int($0) }) ?? 0 >= 2 { try Counters.bump(c) }
            if !on, let now, try !Schema.isCurrent(c) { try Schema.migrate(c, now: now) }
        }
    }

    static func storedReadOnly(_ c: any SQLConnection) throws -> Bool {
        try c.scalar("SELECT value FROM ledger_meta WHERE key = 'read_only'")?.text == "1"
    }

    /// Runs a write in one transaction, unless the ledger is set read-only. The setting is read inside the
    /// write's own transaction, so one made by another process while this one is open holds too.
    private func write<T: Sendable>(_ body: @escaping @Sendable (any SQLConnection) throws -> T) async throws -> T {
        try await database.write { c in
            if try Self.storedReadOnly(c) {
                throw LedgerError(
                    code: .readOnly,
                    message: "this ledger is set read-only: writes are refused (receiptdesk ledger read-only off lifts it)")
            }
            return try body(c)
        }
    }


    // MARK: Import

    /// Starts importing a source: refuses nothing, resumes an interrupted import, recognises a finished one, and
    /// retries the records a finished one rejected.
    public func beginSource(_ info: SourceInfo, now: Timestamp) async throws -> SourceStart {
        try await write { c in
            if let row = try c.query(
                "SELECT id, completed_at, records_read, rejected FROM sources WHERE sha256 = ?", [.text(info.sha256)]
            ).first {
                let id = row[0].int!
                if !row[1].isNull {
                    // (Its reconciliation follows a retry's rewrites batch by batch, so its rejected count is
                    // right even after a retry that was cut short.)
                    if (row[3].int ?? 0) > 0 {
                        let rejected = try c.query(
                            """
                            SELECT record_index FROM raw_records WHERE source_id = ? AND status = \(RecordStatus.rejected.sql)
                            ORDER BY record_index
                            """,
                            [.int(id)]
                        ).compactMap { $0[0].int.map(Int.init) }
                        if !rejected.isEmpty { return .retrying(sourceId: id, rejected: rejected, records: Int(row[2].int ?? 0)) }
                    }
                    let read = Int(row[2].int ?? 0)
                    return .alreadyImported(ImportCounts(read: read, duplicate: read))
                }
                let last = try c.scalar("SELECT MAX(record_index) FROM raw_records WHERE source_id = ?", [.int(id)])?.int
                return .started(sourceId: id, resumeAfter: last.map(Int.init))
            }
            guard let id = try c.insert(
                "INSERT INTO sources (path, sha256, size, started_at) VALUES (?, ?, ?, ?)",
                [.text(info.path), .text(info.sha256), .int(info.size), .of(now)])
            else { throw LedgerError(code: .internalError, message: "no id for the new source") }
            try Counters.add(c, .sources, 1)
            try Counters.raiseLastImport(c, to: now)
            try Counters.bump(c)
            return .started(sourceId: id, resumeAfter: nil)
        }
    }

    /// Imports a batch of decoded records of one source in one transaction.
    public func importBatch(sourceId: Int64, _ records: [RecordInput], now: Timestamp) async throws -> ImportCounts {
        try await importBatchNaming(sourceId: sourceId, records, now: now).counts
    }

    /// ``importBatch(sourceId:_:now:)``, and the records the ledger itself refused, each named with its reason
    /// ("record #4 (byte 1880): testIdReused: ..."): the decoder's refusals the caller knows already.
    ///
    /// `written`: the batch's records whose rows were there before it (their stored outcomes), left as they were. In a
    /// source being imported (not retried) they are another run's, importing the same file at the same time; a
    /// retry's are its rejections refused again, and those another retry rewrote.
    public func importBatchNaming(sourceId: Int64, _ records: [RecordInput], now: Timestamp) async throws
        -> (counts: ImportCounts, refused: [String], written: ImportCounts)
    {
        guard !records.isEmpty else { return (ImportCounts(), [], ImportCounts()) }
        return try await write { c in
            let (counts, wrote, refused, written) = try BatchWriter(connection: c, now: now).write(sourceId: sourceId, records)
            guard wrote else { return (counts, refused, written) }
            try Counters.raiseLastImport(c, to: now)
            try Counters.bump(c)
            try c.flush()
            return (counts, refused, written)
        }
    }

    /// Finishes a source: stores its reconciliation counted from its records.
    public func completeSource(_ sourceId: Int64, now: Timestamp) async throws -> ImportCounts {
        try await write { c in
            var counts = ImportCounts()
            for row in try c.query(
                "SELECT status, COUNT(*) FROM raw_records WHERE source_id = ? GROUP BY status", [.int(sourceId)])
            {
                let n = Int(row[1].int ?? 0)
                switch try row[0].decode(RecordStatus.self, column: "raw_records.status") {
                case .imported: counts.imported = n
                case .duplicate: counts.duplicate = n
                case .rejected: counts.rejected = n
                }
            }
            counts.read = counts.imported + counts.duplicate + counts.rejected
            try c.execute(
                "UPDATE sources SET completed_at = ?, records_read = ?, imported = ?, duplicates = ?, rejected = ? WHERE id = ?",
                [.of(now), .of(counts.read), .of(counts.imported), .of(counts.duplicate), .of(counts.rejected), .int(sourceId)])
            try Counters.raiseLastImport(c, to: now)
            try Counters.bump(c)
            try c.flush()
            return counts
        }
    }

    /// Refreshes PostgreSQL's table statistics after an import of at least ``analyzeAfter`` records (once, after
    /// every file of the import: ANALYZE after each took 9% of a two-file import's time); nothing on SQLite.
    ///
    /// PostgreSQL plans from table statistics that autovacuum refreshes only a while later: right after a first
    /// import its planner still believes the tables are nearly empty and joins the refund pages by nested loop
    /// over every customer id (5.5 s for a page of 2,000 at 87,000 transactions; 18 ms after ANALYZE). The
    /// owner's ANALYZE refreshes them; a role that does not own the tables gets a warning and the old plan.
    public func refreshStatistics(afterImporting imported: Int) async throws {
        guard database.dialect == .postgres && imported >= Self.analyzeAfter else { return }
        // The tables the dashboard's and the refund rules' joins read; raw records and renewal infos are only
        // looked up by key, and sampling their bytes would double the time. Nothing filters or joins on the
        // canonical JSON, the widest column: leaving it out takes 440 ms to 265 ms at 87,000 transactions.
        try await write { c in try c.execute("ANALYZE \(Self.analyzedColumns)") }
    }

    /// Records an import must bring before PostgreSQL's statistics are refreshed at its end.
    static let analyzeAfter = 1_000

    /// Gives PostgreSQL statistics for the tables an import reads its lookups from, where a table holds rows and no
    /// statistics yet; nothing on SQLite or with portable SQL. The importer calls it after the first batch of each
    /// file.
    ///
    /// A new ledger's tables have no statistics until autovacuum comes by (each minute at most), and without them
    /// the import's own lookups are planned for tables of unknown shape: at 50,000 customers the content-hash and
    /// customer-id lookups took 20.8 and 11.6 ms a batch instead of 5.5 and 4.9 (pg_stat_statements, one import
    /// with autovacuum off against one analyzed after 3,000 records; 23.5 s of server time against 18.7). Statistics of
    /// a first batch are enough: the planner scales row counts by a table's size as it grows.
    ///
    /// Only tables the role owns are analyzed (before PostgreSQL 17 only the owner may; an importer role's import
    /// leaves it to autovacuum), and a table another session holds a lock on is skipped rather than waited for.
    public func analyzeTablesWithoutStatistics() async throws {
        guard database.dialect == .postgres else { return }
        let bare = try await database.read { c -> [String] in
            guard !c.portableSQL else { return [] }
            return try c.queryIn(
                """
                SELECT c.relname::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                WHERE n.nspname = current_schema() AND c.relkind = 'r' AND pg_has_role(c.relowner, 'USAGE')
                AND pg_relation_size(c.oid) > 0
                AND NOT EXISTS (SELECT 1 FROM pg_stats s WHERE s.schemaname = n.nspname AND s.tablename = c.relname)
                AND c.relname IN (?*)
                """, [], list: Self.lookupStatistics.keys.sorted().map(SQLValue.text)
            ).compactMap { $0.first?.text }
        }
        guard !bare.isEmpty else { return }
        try await write { c in
            try c.execute("ANALYZE (SKIP_LOCKED) " + bare.sorted().compactMap { Self.lookupStatistics[$0] }.joined(separator: ", "))
        }
    }

    /// The tables an import looks rows up in, each with the columns its lookups filter or join on.
    static let lookupStatistics = [
        "raw_records": "raw_records (source_id, record_index, status, content_hash)",
        "transactions": "transactions (transaction_id, original_transaction_id, web_order_line_item_id, app_account_token)",
        "customer_ids": "customer_ids", "customers": "customers", "customer_stats": "customer_stats (customer_id)",
        "notifications": "notifications (notification_uuid, transaction_id, notification_type)",
    ]

    /// What ANALYZE samples after an import: every column queries filter, join or sort on.
    static let analyzedColumns = """
        transactions (transaction_id, original_transaction_id, web_order_line_item_id, app_account_token, product_id, type, \
        purchase_date, expires_date, revocation_date, revocation_reason, revocation_kind, environment, price, currency, signed_date, \
        verification, first_seen_at), \
        notifications (id, notification_uuid, version, notification_type, subtype, signed_date, seen_at, original_transaction_id, \
        transaction_id, raw_record_id), \
        customer_ids, customers, customer_stats, flags
        """

    /// The tables an import fills, in an order that satisfies their foreign keys (what the bench's raw-write
    /// anchors copy and count).
    public static let importedTables = ["sources", "raw_records", "customers", "customer_ids", "transactions"]

    // MARK: Identity

    /// Ties an external account id to a token or original transaction id (`customers.csv`).
    ///
    /// An app account token is matched in either case, as a lookup matches it (Swift's `uuidString` is upper case,
    /// Apple's JSON lower case): a mapping in the other case linked a customer of its own, with no record.
    /// - Returns: whether the ledger held the identifier before (a record carries it, or an earlier mapping named it);
    ///   one it did not hold is linked all the same, for the records that carry it to join when they are imported.
    @discardableResult
    public func linkExternal(_ externalId: String, kind: IdentifierKind, value: String, now: Timestamp) async throws -> Bool {
        try await write { c in
            var identifier = CustomerIdentifier(kind: kind, value: value)
            let spellings = kind == .appAccountToken && Queries.isUUID(value) ? [value, value.lowercased(), value.uppercased()] : [value]
            let stored = try c.scalar(
                "SELECT value FROM customer_ids WHERE kind = \(kind.sql) AND value IN (\(placeholders(spellings.count))) ORDER BY value = ? DESC LIMIT 1",
                spellings.map(SQLValue.text) + [.text(value)])?.text
            if let stored { identifier.value = stored }
            var writer = CustomerLinker(connection: c, now: now)
            writer.link([CustomerIdentifier(kind: .external, value: externalId), identifier])
            try StatsWriter.apply(c, link: try writer.flush())
            try Counters.bump(c)
            try c.flush()
            return stored != nil
        }
    }

    // MARK: Flags and triage

    /// Stores flags the rules found; a flag already known keeps its status and history. Only what is new
    /// or changed is written (every import refreshes every flag: rewriting the unchanged ones was one
    /// statement per flag the ledger holds), and new flags go in bulk.
    public func saveFlags(_ found: [RefundFlag], now: Timestamp) async throws {
        guard !found.isEmpty else { return }
        try await write { c in
            let flags = try Self.sameSerialRefunderFlags(c, found)
            // What is stored of each flag: whether it is open, and the facts a rule may restate differently.
            struct Stored {
                var customer: Int64?
                var open: Bool
                var severity: String?
                var detail: String?
                var amount: Int64?
                var currency: String?
                var environment: String?
                /// When it was raised: a spike's moves to the refund that made its day an alarm (before, the day's
                /// midnight), and earlier when an earlier refund of the day is imported later.
                var at: Int64?
            }
            var known: [String: Stored] = [:]
            for chunk in chunks(Array(Set(flags.map(\.id)))) {
                for row in try c.query(
                    "SELECT id, customer_id, status, severity, detail, amount, environment, currency, at FROM flags WHERE id IN (\(placeholders(chunk.count)))",
                    chunk.map(SQLValue.text))
                {
                    guard let id = row[0].text else { continue }
                    known[id] = Stored(
                        customer: row[1].int, open: try row[2].decode(FlagStatus.self, column: "flags.status") == .open,
                        severity: row[3].text, detail: row[4].text, amount: row[5].int, currency: row[7].text, environment: row[6].text,
                        at: row[8].int)
                }
            }
            var opened = 0
            var updated = 0
            var recount = Set<Int64>()
            var newRows: [[SQLValue]] = []
            for flag in flags {
                if let before = known[flag.id] {
                    let unchanged =
                        before.customer == flag.customerId && before.severity == flag.severity.rawValue && before.detail == flag.detail
                        && before.amount == flag.amount && before.currency == flag.currency && before.environment == flag.environment?.rawValue
                        && before.at == flag.at.millisecondsSince1970
                    if unchanged { continue }
                    updated += 1
                    if before.open && before.customer != flag.customerId {
                        if let old = before.customer { recount.insert(old) }
                        if let new = flag.customerId { recount.insert(new) }
                    }
                    try c.executeDeferred(
                        """
                        UPDATE flags SET severity = ?, detail = ?, customer_id = ?, amount = ?, currency = ?, environment = ?, at = ? WHERE id = ?
                        """,
                        [
                            .text(flag.severity.rawValue), .text(flag.detail), .of(flag.customerId), .of(flag.amount), .of(flag.currency),
                            .of(flag.environment?.rawValue), .of(flag.at), .text(flag.id),
                        ])
                    known[flag.id] = Stored(
                        customer: flag.customerId, open: before.open, severity: flag.severity.rawValue, detail: flag.detail, amount: flag.amount,
                        currency: flag.currency, environment: flag.environment?.rawValue, at: flag.at.millisecondsSince1970)
                } else {
                    opened += 1
                    if let customer = flag.customerId { recount.insert(customer) }
                    newRows.append([
                        .text(flag.id), .text(flag.rule), .text(flag.severity.rawValue), .of(FlagStatus.open), .of(flag.customerId),
                        .of(flag.transactionId), .of(flag.productId), .of(flag.amount), .of(flag.currency), .of(flag.at),
                        .text(flag.detail), .of(now), .of(flag.environment?.rawValue),
                    ])
                    known[flag.id] = Stored(
                        customer: flag.customerId, open: true, severity: flag.severity.rawValue, detail: flag.detail, amount: flag.amount,
                        currency: flag.currency, environment: flag.environment?.rawValue, at: flag.at.millisecondsSince1970)
                }
            }
            try c.insertRows(
                into: "flags",
                columns: [
                    "id", "rule", "severity", "status", "customer_id", "transaction_id", "product_id", "amount", "currency", "at", "detail",
                    "updated_at", "environment",
                ],
                rows: newRows, onConflict: "")
            try Counters.add(c, .openFlags, opened)
            try StatsWriter.recountOpenFlags(c, recount)
            // (Flags found again as they are stored change nothing: importing the same files again moves no signal.)
            if opened > 0 || updated > 0 || !recount.isEmpty { try Counters.bump(c) }
            try c.flush()
        }
    }

    /// The flags found, a serial refunder's under the id stored for it. Its id names the customer
    /// (`serial-refunder:C<n>:<first refund>`), whose number changes when the customer is merged into another; the
    /// flag stored for the same refund that crossed the count is the same flag, its triage kept, not a new one
    /// beside it.
    static func sameSerialRefunderFlags(_ c: any SQLConnection, _ found: [RefundFlag]) throws -> [RefundFlag] {
        let serial = found.indices.filter { found[$0].rule == "serial-refunder" && found[$0].transactionId != nil }
        guard !serial.isEmpty else { return found }
        // Per refund, the stored ids, a triaged one first (a ledger may hold an open duplicate from before this).
        var stored: [String: [String]] = [:]
        for row in try c.queryIn(
            """
            SELECT transaction_id, id FROM flags WHERE rule = 'serial-refunder' AND transaction_id IN (?*)
            ORDER BY CASE WHEN status = \(FlagStatus.open.sql) THEN 1 ELSE 0 END, updated_at, id
            """, [],
            list: Array(Set(serial.compactMap { found[$0].transactionId })).sorted().map(SQLValue.text))
        {
            if let transaction = row[0].text, let id = row[1].text { stored[transaction, default: []].append(id) }
        }
        var flags = found
        for index in serial {
            guard let ids = stored[flags[index].transactionId ?? ""], !ids.contains(flags[index].id), let first = ids.first else { continue }
            flags[index].id = first
        }
        return flags
    }

    /// Moves a flag through its lifecycle and appends the change to the triage log.
    /// - Parameter action: `ack`, `resolve` or `reopen` (a note moves no flag: ``noteCustomer(_:operatorName:note:now:)``).
    public func triage(flagId: String, action: TriageAction, operatorName: String, note: String?, now: Timestamp) async throws
        -> RefundFlag
    {
        try await triageChange(flagId: flagId, action: action, operatorName: operatorName, note: note, now: now).flag
    }

    /// Like ``triage(flagId:action:operatorName:note:now:)``, also returning the status the flag had before.
    ///
    /// With `expecting` (an undo: the status your own change set), a flag someone else changed since is left
    /// as it is: nothing is written and `from` is the flag's status now.
    public func triageChange(
        flagId: String, action: TriageAction, operatorName: String, note: String?, now: Timestamp, expecting: FlagStatus? = nil
    ) async throws -> (flag: RefundFlag, from: FlagStatus) {
        guard let target = action.target else {
            throw LedgerError(code: .usage, message: "a triage action moves a flag: ack, resolve or reopen, not \(action.rawValue)")
        }
        return try await write { c in
            guard let row = try c.query("SELECT status, customer_id FROM flags WHERE id = ?", [.text(flagId)]).first else {
                throw LedgerError(code: .notFound, message: "no flag with id \(flagId)")
            }
            let current = try row[0].decode(FlagStatus.self, column: "flags.status")
            if current == target {
                throw LedgerError(code: .noChange, message: "flag \(flagId) is already \(target.rawValue)")
            }
            if let expecting, current != expecting {
                guard let flag = try Queries.flags(c, FlagQuery(limit: 1), id: flagId).first else {
                    throw LedgerError(code: .notFound, message: "no flag with id \(flagId)")
                }
                return (flag, current)
            }
            // Acknowledging says someone is looking at an open flag; a resolved one is reopened first (the
            // dashboard's `a` moves open flags only, for the same reason). An undo puts a flag back where it was:
            // a resolve of an acknowledged flag undone is acknowledged again.
            if action == .ack && current == .resolved && expecting == nil {
                throw LedgerError(
                    code: .usage, message: "flag \(flagId) is resolved: only an open flag is acknowledged (reopen it first)")
            }
            // Never stamped before the flag's entry it follows: two writers' clocks were read before their turns, so
            // the second in the log could be a millisecond "earlier" than the change it moved on from.
            let latest = try c.scalar("SELECT MAX(at) FROM triage_log WHERE flag_id = ?", [.text(flagId)])?.int
            let at = Timestamp(millisecondsSince1970: max(now.millisecondsSince1970, latest ?? .min))
            // The log entry first: the flag's status moves only with the entry that records it (schema v7).
            try c.execute(
                "INSERT INTO triage_log (flag_id, at, operator, action, note, from_status, to_status) VALUES (?, ?, ?, ?, ?, ?, ?)",
                [.text(flagId), .of(at), .text(operatorName), .of(action), .of(note), .of(current), .of(target)])
            try c.execute("UPDATE flags SET status = ?, updated_at = ? WHERE id = ?", [.of(target), .of(at), .text(flagId)])
            if current == .open || target == .open {
                try Counters.add(c, .openFlags, target == .open ? 1 : -1)
                if let customer = row[1].int { try StatsWriter.recountOpenFlags(c, [customer]) }
            }
            try Counters.bump(c)
            guard let flag = try Queries.flags(c, FlagQuery(limit: 1), id: flagId).first else {
                throw LedgerError(code: .notFound, message: "no flag with id \(flagId)")
            }
            return (flag, current)
        }
    }

    /// Appends a note about a customer to the triage log.
    public func noteCustomer(_ customerId: Int64, operatorName: String, note: String, now: Timestamp) async throws {
        try await write { c in
            try c.execute(
                "INSERT INTO triage_log (customer_id, at, operator, action, note) VALUES (?, ?, ?, ?, ?)",
                [.int(customerId), .of(now), .text(operatorName), .of(TriageAction.note), .text(note)])
            try Counters.bump(c)
        }
    }
}

extension Schema {
    static func checkVersion(_ connection: any SQLConnection) throws {
        guard let version = try storedVersion(connection), let number = Int(version) else {
            throw LedgerError.cannotOpen("this database holds no ReceiptDesk ledger")
        }
        if number > Schema.version {
            throw LedgerError(
                code: .schemaTooNew,
                message: "this ledger has schema version \(number), newer than this receiptdesk knows (\(Schema.version))")
        }
        if number < Schema.version {
            // (A ledger set read-only refuses the upgrade too: lifting the setting upgrades it.)
            let how = try SQLLedger.storedReadOnly(connection) ? "receiptdesk ledger read-only off" : "open it once without --read-only"
            throw LedgerError.cannotOpen("this ledger has schema version \(number) and needs an upgrade to \(Schema.version); \(how)")
        }
    }
}
