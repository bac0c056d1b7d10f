import Entitlements
import LedgerQueries
import ReceiptModel

@testable import DeskUI

/// States built in code for reducer tables and render snapshots: a fixed instant, a customer with a
/// trial, renewals, an upgrade, a refund; a product id holding an escape sequence; CJK and emoji.
enum Fixture {
    static let day: Int64 = 86_400_000
    static let now = Timestamp(millisecondsSince1970: 1_740_816_000_000)  // 2025-03-01T08:00:00Z

    static func at(_ days: Int64) -> Timestamp { now.adding(milliseconds: days * day) }

    static func transaction(_ id: String, product: String, purchased: Int64, expires: Int64?, original: String = "1000") -> Transaction {
        var t = Transaction(transactionId: id)
        t.originalTransactionId = original
        t.productId = product
        t.subscriptionGroupIdentifier = expires == nil ? nil : "G1"
        t.purchaseDate = at(purchased)
        t.expiresDate = expires.map(at)
        t.type = expires == nil ? .nonConsumable : .autoRenewableSubscription
        t.environment = .production
        t.price = 9990
        t.currency = "USD"
        t.verification = .verified
        return t
    }

    /// A renewal info of one subscription: in billing retry or not, with a grace period's end.
    static func renewal(original: String, retry: Bool, grace: Timestamp? = nil) -> RenewalInfo {
        var info = RenewalInfo()
        info.originalTransactionId = original
        info.isInBillingRetryPeriod = retry
        info.gracePeriodExpiresDate = grace
        return info
    }

    /// A customer of these transactions (each first seen at its purchase) and renewal infos (seen when given).
    static func customer(_ transactions: [Transaction], renewals: [(RenewalInfo, Timestamp)] = []) -> CustomerRecords {
        CustomerRecords(
            id: 1, identifiers: [], transactions: transactions,
            firstSeen: Dictionary(uniqueKeysWithValues: transactions.map { ($0.transactionId, $0.purchaseDate!) }),
            renewalInfos: renewals.map { (info: $0.0, seenAt: $0.1) }, notifications: [])
    }

    static var records: CustomerRecords {
        var trial = transaction("2001", product: "pro.monthly", purchased: -95, expires: -88)
        trial.offerType = .introductory
        trial.offerDiscountType = .freeTrial
        trial.price = 0
        let first = transaction("2002", product: "pro.monthly", purchased: -88, expires: -58)
        let second = transaction("2003", product: "pro.monthly", purchased: -58, expires: -28)
        var refunded = transaction("2004", product: "pro.monthly", purchased: -28, expires: 2)
        refunded.revocationDate = at(-27)
        refunded.revocationReason = .appIssue
        let hostile = transaction("2005", product: "evil\u{1B}[2J\u{1B}]52;c;aGk=\u{07}", purchased: -20, expires: nil)
        let wide = transaction("2006", product: "日本語プラン👍🏽", purchased: -10, expires: nil)
        let transactions = [trial, first, second, refunded, hostile, wide]
        return CustomerRecords(
            id: 42,
            identifiers: [
                CustomerIdentifier(kind: .originalTransactionId, value: "1000"),
                CustomerIdentifier(kind: .appAccountToken, value: "7d3b9a0e-0000-4000-8000-000000000042"),
            ],
            transactions: transactions,
            firstSeen: Dictionary(uniqueKeysWithValues: transactions.map { ($0.transactionId, $0.purchaseDate!) }),
            renewalInfos: [], notifications: [])
    }

    static let flags: [RefundFlag] = [
        RefundFlag(
            id: "quick-refund:2004", rule: "quick-refund", severity: .high, customerId: 42, transactionId: "2004", productId: "pro.monthly",
            amount: 9990, currency: "USD", at: at(-27), detail: "refunded 24 h after purchase"),
        RefundFlag(
            id: "app-issue:2004", rule: "app-issue", severity: .medium, customerId: 42, transactionId: "2004", productId: "pro.monthly",
            amount: 9990, currency: "USD", at: at(-27), detail: "reason 1: the app did not work"),
        RefundFlag(
            id: "consumption-request:77", rule: "consumption-request", severity: .medium, customerId: 7, transactionId: "77",
            productId: "gems.100\u{1B}[31m", amount: 1990, currency: "EUR", at: now.adding(milliseconds: -3_600_000),
            detail: "Apple asks for consumption data"),
    ]

    static let customers: [CustomerSummary] = [
        CustomerSummary(
            id: 42, identifiers: [CustomerIdentifier(kind: .originalTransactionId, value: "1000")], transactionCount: 6,
            lastPurchase: at(-10), latestExpiry: at(2), liveExpiry: at(2), refunds: 1, environments: ["Production"], openFlags: 2),
        CustomerSummary(
            id: 43, identifiers: [CustomerIdentifier(kind: .external, value: "山田太郎-アカウント")], transactionCount: 1,
            lastPurchase: at(-200), latestExpiry: at(-170), liveExpiry: at(-170), refunds: 0, environments: ["Sandbox"], openFlags: 0),
        CustomerSummary(
            id: 44, identifiers: [CustomerIdentifier(kind: .appAccountToken, value: "tok\u{1B}[2Jhostile\u{202E}txt")],
            transactionCount: 3, lastPurchase: at(-1), latestExpiry: nil, refunds: 0, environments: ["Production", "Sandbox"],
            openFlags: 0),
    ]

    static let overview = OverviewData(
        counts: LedgerOverview(
            transactions: 1_234_567, customers: 98_765, sources: 12, rawRecords: 1_300_000, rejectedRecords: 3, refundedTransactions: 4_321,
            openFlags: 3, renewalInfos: 5, notifications: 6, lastImport: at(-1)),
        refunds90: RefundSeries(firstDay: at(-89), counts: (0..<90).map { $0 == 80 ? 40 : ($0 * 7) % 5 }),
        flagCounts: [FlagCount(severity: .high, status: .open, count: 1), FlagCount(severity: .medium, status: .open, count: 2)],
        spikes: [
            RefundFlag(
                id: "refund-spike:pro.monthly:2025-02-20", rule: "refund-spike", severity: .high, customerId: nil, transactionId: nil,
                productId: "pro.monthly", amount: nil, currency: nil, at: at(-9), detail: "40 refunds vs 2.1/day over 28 days")
        ],
        consumptionRequests: [flags[2]])

    static func state(width: Int = 80, height: Int = 24, screen: ScreenID = .overview) -> AppState {
        var state = AppState(width: width, height: height, now: now, isDemo: true, ledgerName: "demo", operatorName: "ana", themeNames: ["default", "light", "nord"])
        state.overview = overview
        state.customerPage = CustomerPage(rows: customers, next: nil, total: 3)
        state.flags = flags
        state.sources = [
            SourceSummary(
                id: 1, path: "exports/2025-02.ndjson", sha256: "ab", size: 1000, startedAt: at(-1), completedAt: at(-1),
                counts: ImportCounts(read: 10, imported: 8, duplicate: 1, rejected: 1))
        ]
        state.rejected = [
            RejectedRecord(id: 9, sourcePath: "exports/2025-02.ndjson", index: 4, offset: 880, kind: "unknown", code: "notANumber", message: "purchase_date_ms \"abc\" is not a number in in_app[2]", size: 120)
        ]
        let detail = CustomerDetail(records: records, flags: Array(flags.prefix(2)), log: [])
        _ = reduce(&state, .customerLoaded(detail))
        state.screen = screen
        state.history = []
        return state
    }
}
