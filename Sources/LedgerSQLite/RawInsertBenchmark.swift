import Foundation
import GRDB
import Ledger
import ReceiptModel

/// The anchor the importer is compared with: a plain prepared-statement insert loop, in one
/// transaction, of exactly the rows an import wrote, into the same tables with the same indexes.
///
/// The difference between the two is what the importer itself costs (decoding, hashing, merging,
/// linking customers); SQLite's own cost for those rows is the floor.
public enum RawInsertBenchmark {
    static let tables = SQLLedger.importedTables

    /// Copies the rows of `source` (a ledger file) into a fresh ledger at `path` with prepared inserts;
    /// returns rows per second and the number of rows.
    public static func rowsPerSecond(copying source: String, into path: String, now: ReceiptModel.Timestamp) async throws
        -> (rate: Double, rows: Int)
    {
        let target = try SQLiteDatabase.open(path: path)
        _ = try await SQLLedger.open(target, now: now)
        try await target.close()
        return try copy(source, path)
    }

    private static func copy(_ source: String, _ path: String) throws -> (rate: Double, rows: Int) {
        let reader = try DatabaseQueue(path: source)
        let data: [(table: String, columns: [String], rows: [[DatabaseValue]])] = try reader.read { db in
            try tables.map { table in
                let columns = try db.columns(in: table).map(\.name)
                let rows = try Row.fetchAll(db, sql: "SELECT * FROM \(table)").map { row in
                    (0..<row.count).map { row[$0] as DatabaseValue }
                }
                return (table, columns, rows)
            }
        }
        try reader.close()
        let writer = try DatabaseQueue(path: path)
        try writer.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
            try db.execute(sql: "PRAGMA cache_size = -131072")
        }
        let clock = ContinuousClock()
        var count = 0
        let elapsed = try clock.measure {
            try writer.write { db in
                for (table, columns, rows) in data {
                    let list = columns.joined(separator: ", ")
                    let marks = Array(repeating: "?", count: columns.count).joined(separator: ", ")
                    let statement = try db.makeStatement(sql: "INSERT INTO \(table) (\(list)) VALUES (\(marks))")
                    for row in rows {
                        try statement.execute(arguments: StatementArguments(row))
                        count += 1
                    }
                }
            }
        }
        try writer.close()
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return (Double(count) / seconds, count)
    }
}
