import Foundation
import Ledger
import Testing

/// The connection calls an import's batch is made of, on every backend: `queryIn` (one array parameter on
/// PostgreSQL, `IN` lists elsewhere), `insertRows` (COPY on PostgreSQL, its text escapes included) and the
/// order failures are reported in when statements and COPYs are sent without waiting for each.
@Suite("Bulk statements: long IN lists, COPY's escapes, failures in order", .ownThreads)
struct BulkStatementTests {
    static let columns = ["k", "b", "n"]

    /// A ledger's database with an empty probe table of a text key, a blob and an integer.
    static func probe(_ backend: Backend) async throws -> any SQLDatabase {
        let database = try await backend.database()
        _ = try await SQLLedger.open(database, now: testNow)
        try await database.write { c in
            try c.execute(c.dialect.expand("CREATE TABLE bulk_probe (k TEXT PRIMARY KEY, b {BLOB}, n {INT})"))
        }
        return database
    }

    /// Rows whose keys hold every character COPY's text format escapes, and bytes of every value.
    static func rows(_ count: Int) -> [[SQLValue]] {
        (0..<count).map { i in
            let key = i % 5 == 0 ? "key\t\(i)\\n\n\r\\" : "key-\(i)"
            return [.text(key), .blob([UInt8(i >> 8), UInt8(i & 0xff)] + (0..<14).map { UInt8((i * 14 + $0) % 256) }), .int(Int64(i) - 500)]
        }
    }

    @Test("queryIn answers a list of 1,000 texts, blobs or integers, with arguments before it", arguments: Backend.available)
    func longLists(backend: Backend) async throws {
        let database = try await Self.probe(backend)
        let rows = Self.rows(1_000)
        try await database.write { c in
            try c.insertRows(into: "bulk_probe", columns: Self.columns, rows: rows, onConflict: "")
        }
        let stored = try await database.read { c in try c.query("SELECT k, b, n FROM bulk_probe ORDER BY n", []) }
        #expect(stored == rows)

        let missing: [SQLValue] = (0..<50).map { .text("absent-\($0)") }
        let (byKey, byBlob, byNumber, mixed, none) = try await database.read { c in
            (
                try c.queryIn("SELECT n FROM bulk_probe WHERE k IN (?*)", [], list: rows.map { $0[0] } + missing),
                // Every blob twice: each row still comes once.
                try c.queryIn("SELECT n FROM bulk_probe WHERE b IN (?*)", [], list: rows.map { $0[1] } + rows.map { $0[1] }),
                try c.queryIn("SELECT n FROM bulk_probe WHERE n >= ? AND n IN (?*)", [.int(0)], list: rows.map { $0[2] }),
                try c.queryIn("SELECT n FROM bulk_probe WHERE k IN (?*)", [], list: [rows[1][0], .null]),
                try c.queryIn("SELECT n FROM bulk_probe WHERE k IN (?*)", [], list: [])
            )
        }
        #expect(byKey.count == 1_000)
        #expect(Set(byKey.compactMap { $0[0].int }) == Set(rows.compactMap { $0[2].int }))
        #expect(byBlob.count == 1_000)
        #expect(Set(byNumber.compactMap { $0[0].int }) == Set(0..<500))
        #expect(mixed == [[.int(-499)]])
        #expect(none.isEmpty)
        try await database.close()
    }

    @Test("a failed statement sent before a COPY is the error reported, and the batch leaves nothing", arguments: Backend.available)
    func failureBeforeCopy(backend: Backend) async throws {
        let database = try await Self.probe(backend)
        let outcome = await #expect(throws: (any Error).self) {
            try await database.write { c in
                try c.executeDeferred("INSERT INTO bulk_probe (k, n) VALUES (?, ?)", [.text("twice"), .int(1)])
                try c.executeDeferred("INSERT INTO bulk_probe (k, n) VALUES (?, ?)", [.text("twice"), .int(2)])
                try c.insertRows(into: "bulk_probe", columns: Self.columns, rows: Self.rows(100), onConflict: "")
                _ = try c.query("SELECT COUNT(*) FROM bulk_probe", [])
            }
        }
        let message = String(describing: try #require(outcome)).lowercased()
        #expect(message.contains("unique") || message.contains("duplicate key"), "\(message)")
        #expect(!message.contains("aborted"), "\(message)")
        // Nothing of the batch stayed, and the connection takes the next write.
        try await database.write { c in
            try c.insertRows(into: "bulk_probe", columns: Self.columns, rows: Self.rows(100), onConflict: "")
        }
        #expect(try await database.read { c in try c.scalar("SELECT COUNT(*) FROM bulk_probe")?.int } == 100)
        try await database.close()
    }

    @Test("a key stored already, met inside a COPY, fails the whole batch", arguments: Backend.available)
    func collisionInsideCopy(backend: Backend) async throws {
        let database = try await Self.probe(backend)
        let rows = Self.rows(200)
        try await database.write { c in
            try c.insertRows(into: "bulk_probe", columns: Self.columns, rows: Array(rows[0..<100]), onConflict: "")
        }
        let outcome = await #expect(throws: (any Error).self) {
            try await database.write { c in
                // Rows 90..<200: the first ten are stored already.
                try c.insertRows(into: "bulk_probe", columns: Self.columns, rows: Array(rows[90..<200]), onConflict: "")
                try c.insertRows(into: "bulk_probe", columns: Self.columns, rows: Self.rows(300).suffix(50).map { $0 }, onConflict: "")
            }
        }
        let message = String(describing: try #require(outcome)).lowercased()
        #expect(message.contains("unique") || message.contains("duplicate key"), "\(message)")
        #expect(try await database.read { c in try c.scalar("SELECT COUNT(*) FROM bulk_probe")?.int } == 100)
        try await database.close()
    }

    @Test("a result of 50,000 rows arrives whole and in order", arguments: Backend.available)
    func largeResult(backend: Backend) async throws {
        let database = try await Self.probe(backend)
        // Many reads from the socket: postgres-nio's own gathering copied its array at each of them. Through a
        // write, which has no time limit: under the whole suite's load a read passed its 15 s.
        let rows = try await database.write { c in
            try c.query(
                "WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < 50000) SELECT n, 'row-' || n FROM g ORDER BY n", [])
        }
        #expect(rows.count == 50_000)
        #expect(rows.enumerated().allSatisfy { i, row in row == [.int(Int64(i + 1)), .text("row-\(i + 1)")] })
        try await database.close()
    }

    @Test("a value this side cannot read, deep in a result, fails the query naming its column; the connection goes on",
        .enabled(if: PostgresTestServer.enabled))
    func unreadableValueMidResult() async throws {
        let database = try await Self.probe(.postgres)
        let (message, after) = try await database.write { c in
            var message = ""
            do {
                _ = try c.query(
                    "SELECT CASE WHEN g = 40000 THEN 1.5 ELSE g END::numeric AS amount FROM generate_series(1, 50000) g ORDER BY g", [])
            } catch {
                message = "\(error)"
            }
            return (message, try c.scalar("SELECT 7")?.int)
        }
        #expect(message.contains("amount") && message.contains("1.5"), "\(message)")
        #expect(after == 7)
        try await database.close()
    }
}
