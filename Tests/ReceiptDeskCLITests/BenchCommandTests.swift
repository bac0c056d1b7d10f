import Foundation
import Testing
import DeskUI
import ReceiptModel
@testable import ReceiptDeskCLI

/// `receiptdesk bench --json` measures every figure of DESIGN section 11 in one run (issue 9): the JSON line
/// other tools read has each key, a number for each, nothing left unmeasured, and names only its own keys as
/// missed targets. (The figures themselves are measured in release builds, never judged by a test.)
@Suite("bench", .serialized, .ownThreads)
struct BenchCommandTests {
    /// The figures DESIGN section 11 asks for, by the key the JSON line gives each.
    static let keys: [String] =
        ["sampleCustomersPerSec", "legacyDecodeMBPerSec", "verifyPerSec", "rawP256VerifyPerSec", "verifyVsRawP256Percent"]
        + ["importSeconds", "importRowsPerSec", "importTableRowsPerSec", "rawInsertRowsPerSec", "importVsRawInsert", "flagRulesSeconds"]
        + ["entitlementsPerCustomerMs", "lookupP50Ms", "lookupP99Ms", "firstFrameMs", "keyP99Ms", "accessTurnP99Ms", "browseRSSMB", "peakRSSMB", "benchSeconds"]
        + ["app-receipts", "notifications-v1", "notifications-v2", "server-api", "verify-receipt"].flatMap {
            ["decode.\($0).MBPerSec", "decode.\($0).recordsPerSec", "import.\($0).recordsPerSec"]
        }
        + ["transactionId", "originalTransactionId", "webOrderLineItemId", "appAccountToken", "externalId"].flatMap {
            ["lookupP50Ms.\($0)", "lookupP99Ms.\($0)"]
        }
        + ["overview", "customers", "customer", "transaction", "refunds", "imports"].map { "keyP99Ms.\($0)" }

    @Test("a small run prints one JSON line with every figure measured")
    func everyFigure() throws {
        let result = try Binary.run(["bench", "--transactions", "1000", "--json"])
        #expect(result.status == 0, "\(result.stderr.suffix(2000))")
        let line = try #require(result.lines.last)
        let figures = try Binary.json(line)
        for key in Self.keys {
            let value = figures[key] as? NSNumber
            #expect(value != nil, "\(key) is missing or not a number")
            #expect((value?.doubleValue ?? -1) >= 0, "\(key) is negative")
        }
        #expect((figures["transactions"] as? NSNumber)?.intValue ?? 0 >= 900)
        #expect((figures["notMeasured"] as? [String]) == [], "not measured: \(figures["notMeasured"] ?? "absent")")
        let missed = try #require(figures["missed"] as? [String])
        #expect(missed.allSatisfy { figures[$0] != nil }, "missed names a key the line does not hold: \(missed)")
        #expect(figures["postgresImportRowsPerSec"] == nil, "the PostgreSQL figures need --postgres")
    }

    /// The PostgreSQL figures (issue 11), against the throwaway cluster the tests start; a second run into the
    /// same database is refused, since the figure is for an empty ledger.
    @Test("--postgres adds the PostgreSQL import next to a raw COPY, into an empty database only")
    func postgresFigures() throws {
        guard PostgresTestServer.enabled else { return }  // under CI=true, a missing server fails in get()
        let url = try PostgresTestServer.get().createDatabase()
        let result = try Binary.run(["bench", "--transactions", "1000", "--json", "--postgres", url])
        #expect(result.status == 0, "\(result.stderr.suffix(2000))")
        let figures = try Binary.json(try #require(result.lines.last))
        for key in ["postgresImportSeconds", "postgresImportRowsPerSec", "postgresImportTableRowsPerSec", "postgresRawCopyRowsPerSec", "postgresImportVsRawCopy"] {
            #expect(((figures[key] as? NSNumber)?.doubleValue ?? 0) > 0, "\(key) is missing or not positive")
        }
        let again = try Binary.run(["bench", "--transactions", "1000", "--json", "--postgres", url])
        #expect(again.status != 0)
        #expect(again.stderr.contains("must name an empty database"), "\(again.stderr.suffix(600))")
    }
}

/// The browse bench's walk, through the dashboard's own reducer: it must do what its comments say, or the figures
/// it prints are of another walk (a prompt that offers the last value turned "clear the filter" into keeping it).
@Suite("bench-browse's walk")
struct BrowseScriptTests {
    @Test("the id filter the walk types is cleared again by the keys that say they clear it")
    func filterTypedAndCleared() throws {
        var state = AppState(width: 120, height: 40, now: Timestamp(millisecondsSince1970: 0))
        let keys = BrowseBench.script(prefix: "15")
        let slashes = keys.indices.filter { keys[$0] == .char("/") }
        #expect(slashes.count == 2)
        for key in keys[..<slashes[1]] { _ = reduce(&state, .key(key)) }
        #expect(state.screen == .customers && state.customerQuery.filter == "15")
        for key in keys[slashes[1]...].prefix(3) { _ = reduce(&state, .key(key)) }
        #expect(state.customerQuery.filter == nil && state.prompt == nil)
    }
}
