import Foundation
import Ledger
import NIOCore

/// The anchor a PostgreSQL import is compared with (issue 11): `COPY` of exactly the rows an import wrote,
/// into empty copies of the same tables with the same indexes and constraints, on the same server.
///
/// The difference is what the importer itself costs (decoding, hashing, merging, linking customers, the
/// staging tables' second write and the round trips in between); the server's own cost for those rows is
/// the floor.
public enum RawCopyBenchmark {
    static let tables = SQLLedger.importedTables

    /// Copies the rows of the ledger in `database` into `raw_copy_*` tables made `LIKE` its own (including
    /// indexes), timing only the COPYs, and drops the copies; returns rows per second and the number of rows.
    public static func rowsPerSecond(in database: PostgresDatabase) async throws -> (rate: Double, rows: Int) {
        var prepared: [(table: String, columns: [String], data: ByteBuffer, rows: Int)] = []
        for table in tables {
            // Through a write: a read has a time limit, and the larger tables take longer to send.
            let (columns, rows) = try await database.write { c in
                let columns = try c.query(
                    "SELECT column_name FROM information_schema.columns WHERE table_name = ? AND table_schema = current_schema() ORDER BY ordinal_position",
                    [.text(table)]
                ).compactMap { $0.first?.text }
                let rows = try c.query("SELECT \(columns.joined(separator: ", ")) FROM \(table)", [])
                return (columns, rows)
            }
            prepared.append(("raw_copy_\(table)", columns, PGConnection.copyText(rows), rows.count))
        }
        let loads = prepared
        let elapsed = try await database.write { c in
            guard let c = c as? PGConnection else { throw LedgerError(code: .internalError, message: "not a PostgreSQL connection") }
            for table in tables {
                try c.execute("DROP TABLE IF EXISTS raw_copy_\(table)", [])
                try c.execute("CREATE TABLE raw_copy_\(table) (LIKE \(table) INCLUDING ALL)", [])
            }
            return try ContinuousClock().measure {
                for table in loads { try c.copy(into: table.table, columns: table.columns, data: table.data) }
                // A COPY returns once the server has begun it: the time ends when the last has loaded.
                try c.flush()
            }
        }
        try await database.write { c in
            for table in tables { try c.execute("DROP TABLE raw_copy_\(table)", []) }
        }
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let count = prepared.reduce(0) { $0 + $1.rows }
        return (Double(count) / max(seconds, 1e-9), count)
    }
}
