import Entitlements
import Foundation
import Ledger
import LedgerQueries
import ReceiptModel
import Testing

@Suite("the flag queue filters by the environment of each flag's refund", .serialized, .ownThreads)
struct FlagEnvironmentTests {
    @Test("production, sandbox and all; a flag whose environment is unknown is only in all", arguments: Backend.available)
    func filter(_ backend: Backend) async throws {
        let ledger = try await backend.ledger()
        func flag(_ id: String, _ environment: Environment?, minutes: Int64) -> RefundFlag {
            RefundFlag(
                id: "quick-refund:\(id)", rule: "quick-refund", severity: .high, customerId: nil, transactionId: id, productId: "pro",
                amount: 990, currency: "USD", at: testNow.adding(milliseconds: minutes * 60_000), detail: "d", environment: environment)
        }
        try await ledger.saveFlags([flag("p1", .production, minutes: 1), flag("s1", .sandbox, minutes: 2), flag("u1", nil, minutes: 3)], now: testNow)
        #expect(try await ledger.flags(FlagQuery(environment: .all)).map(\.id) == ["quick-refund:u1", "quick-refund:s1", "quick-refund:p1"])
        #expect(try await ledger.flags(FlagQuery(environment: .production)).map(\.id) == ["quick-refund:p1"])
        #expect(try await ledger.flags(FlagQuery(environment: .sandbox)).map(\.environment) == [.sandbox])
        // Found again with its environment now known: the stored flag learns it, keeping its status.
        _ = try await ledger.triage(flagId: "quick-refund:u1", action: .ack, operatorName: "ana", note: nil, now: testNow)
        try await ledger.saveFlags([flag("u1", .production, minutes: 3)], now: testNow)
        let production = try await ledger.flags(FlagQuery(environment: .production))
        #expect(production.map(\.id) == ["quick-refund:u1", "quick-refund:p1"])
        #expect(production.first?.status == .acknowledged)
        try await ledger.close()
    }

    @Test("the queue read backward from its end, page by page, is the queue read forward", arguments: Backend.available)
    func backward(_ backend: Backend) async throws {
        let ledger = try await backend.ledger()
        // 40 flags, several at the same instant (the id breaks the tie), in two environments.
        let flags = (0..<40).map { n in
            RefundFlag(
                id: "quick-refund:f\(n)", rule: "quick-refund", severity: .high, customerId: nil, transactionId: "f\(n)", productId: "pro",
                amount: 990, currency: "USD", at: testNow.adding(milliseconds: Int64(n / 3) * 60_000), detail: "d",
                environment: n % 4 == 0 ? .sandbox : .production)
        }
        try await ledger.saveFlags(flags, now: testNow)
        for environment in EnvironmentFilter.allCases {
            let forward = try await ledger.flags(FlagQuery(environment: environment, limit: 1000)).map(\.id)
            #expect(forward.count > 7)
            var backward: [String] = []
            var query: FlagQuery? = FlagQuery(environment: environment, direction: .backward, limit: 7)
            while let q = query, backward.count <= forward.count {
                let page = try await ledger.flags(q)
                backward = page.map(\.id) + backward
                query = page.count == 7 ? { var next = q; next.after = FlagCursor(after: page[0]); return next }() : nil
            }
            #expect(backward == forward, "\(environment)")
        }
        try await ledger.close()
    }
}
