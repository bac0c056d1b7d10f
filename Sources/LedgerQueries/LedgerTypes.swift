import Entitlements
import ReceiptModel

/// What one import of one source came to: `read N = imported I + duplicate D + rejected R`.
public struct ImportCounts: Hashable, Sendable, CustomStringConvertible {
    public var read: Int
    public var imported: Int
    public var duplicate: Int
    public var rejected: Int

    public init(read: Int = 0, imported: Int = 0, duplicate: Int = 0, rejected: Int = 0) {
        self.read = read
        self.imported = imported
        self.duplicate = duplicate
        self.rejected = rejected
    }

    /// Whether every record read is accounted for.
    public var reconciles: Bool { read == imported + duplicate + rejected }

    public var description: String {
        "read \(read) = imported \(imported) + duplicate \(duplicate) + rejected \(rejected)"
    }

    public static func + (lhs: ImportCounts, rhs: ImportCounts) -> ImportCounts {
        ImportCounts(
            read: lhs.read + rhs.read, imported: lhs.imported + rhs.imported, duplicate: lhs.duplicate + rhs.duplicate,
            rejected: lhs.rejected + rhs.rejected)
    }
}

/// The figures the overview screen shows: counters kept per import batch, not counted per refresh.
public struct LedgerOverview: Sendable, Equatable {
    public var transactions: Int
    public var customers: Int
    public var sources: Int
    public var rawRecords: Int
    public var rejectedRecords: Int
    /// Refunds that stand: not family revokes, upgrades' prorated cancellations or refunds Apple reversed.
    public var refundedTransactions: Int
    public var openFlags: Int
    public var renewalInfos: Int
    public var notifications: Int
    /// When the last import batch committed, if any.
    public var lastImport: Timestamp?

    public init(
        transactions: Int = 0, customers: Int = 0, sources: Int = 0, rawRecords: Int = 0, rejectedRecords: Int = 0,
        refundedTransactions: Int = 0, openFlags: Int = 0, renewalInfos: Int = 0, notifications: Int = 0,
        lastImport: Timestamp? = nil
    ) {
        self.transactions = transactions
        self.customers = customers
        self.sources = sources
        self.rawRecords = rawRecords
        self.rejectedRecords = rejectedRecords
        self.refundedTransactions = refundedTransactions
        self.openFlags = openFlags
        self.renewalInfos = renewalInfos
        self.notifications = notifications
        self.lastImport = lastImport
    }
}

/// One identifier of a customer.
public struct CustomerIdentifier: Hashable, Sendable {
    public var kind: IdentifierKind
    public var value: String

    public init(kind: IdentifierKind, value: String) {
        self.kind = kind
        self.value = value
    }
}

/// One row of the customer list.
public struct CustomerSummary: Sendable, Equatable {
    public var id: Int64
    public var identifiers: [CustomerIdentifier]
    public var transactionCount: Int
    public var lastPurchase: Timestamp?
    public var latestExpiry: Timestamp?
    /// The latest expiry among transactions whose access stands (not refunded, revoked or upgraded away, or the
    /// revocation reversed): later than ``latestExpiry`` never; earlier, or `nil`, when the latest was taken back.
    public var liveExpiry: Timestamp?
    /// The customer's refunds that stand (as ``LedgerOverview/refundedTransactions`` counts them).
    public var refunds: Int
    /// Environments the customer's transactions came from (`Production`, `Sandbox`).
    public var environments: [String]
    /// Flags not yet acknowledged or resolved.
    public var openFlags: Int

    public init(
        id: Int64, identifiers: [CustomerIdentifier] = [], transactionCount: Int = 0, lastPurchase: Timestamp? = nil,
        latestExpiry: Timestamp? = nil, liveExpiry: Timestamp? = nil, refunds: Int = 0, environments: [String] = [],
        openFlags: Int = 0
    ) {
        self.id = id
        self.identifiers = identifiers
        self.transactionCount = transactionCount
        self.lastPurchase = lastPurchase
        self.latestExpiry = latestExpiry
        self.liveExpiry = liveExpiry
        self.refunds = refunds
        self.environments = environments
        self.openFlags = openFlags
    }

    /// The id a person reads: `C42`.
    public var displayId: String { "C\(id)" }
}

/// The order of the customer list.
public enum CustomerSort: String, Sendable, CaseIterable {
    /// Customer id, ascending (the order customers were first seen).
    case id
    /// Most recent purchase first.
    case lastActivity
    /// Most refunds first.
    case refunds
}

/// Which environment a view is limited to.
public enum EnvironmentFilter: String, Sendable, CaseIterable {
    case all
    case production
    case sandbox

    /// The value the ledger stores (`Production`, `Sandbox`), or nil for all.
    public var stored: String? {
        switch self {
        case .all: nil
        case .production: "Production"
        case .sandbox: "Sandbox"
        }
    }

    /// Parses `production` (or `prod`, as `--environment` and verifyReceipt's `environment` take it), `sandbox` or
    /// `all`, any case.
    public init?(parsing text: String) {
        let word = text.lowercased()
        self.init(rawValue: word == "prod" ? "production" : word)
    }
}

/// Where a customer page continues: the sort key and id of the last row shown (keyset paging).
public struct CustomerCursor: Sendable, Hashable {
    public var key: Int64
    public var id: Int64

    public init(key: Int64, id: Int64) {
        self.key = key
        self.id = id
    }
}

/// A filtered, sorted page of the customer list.
public struct CustomerQuery: Sendable, Equatable {
    /// Only customers with an identifier starting with this text (or matching it exactly, any id kind).
    public var filter: String?
    public var environment: EnvironmentFilter
    /// Only customers subscribed at this instant: a purchase not refunded bought by then and expiring after it (as far
    /// as the ledger knows now: a refund counts whenever it happened).
    public var activeAt: Timestamp?
    /// Only customers with open flags.
    public var withOpenFlags: Bool
    public var sort: CustomerSort
    /// Forward: the rows after `after` (from the start without it). Backward: the rows before `after`, or the
    /// last rows of the list without it; either way returned in the list's order.
    public var after: CustomerCursor?
    public var direction: PageDirection
    public var limit: Int

    public init(
        filter: String? = nil, environment: EnvironmentFilter = .all, activeAt: Timestamp? = nil, withOpenFlags: Bool = false,
        sort: CustomerSort = .id, after: CustomerCursor? = nil, direction: PageDirection = .forward, limit: Int = 50
    ) {
        self.filter = filter
        self.environment = environment
        self.activeAt = activeAt
        self.withOpenFlags = withOpenFlags
        self.sort = sort
        self.after = after
        self.direction = direction
        self.limit = limit
    }
}

/// Which way a page is read from its cursor.
public enum PageDirection: Sendable, Equatable {
    case forward
    /// Toward the start of the list: `G` reads the last page this way, and scrolling up from it the ones before.
    case backward
}

/// One page of customers, the cursor for the next, and how many match the filter in all.
public struct CustomerPage: Sendable, Equatable {
    public var rows: [CustomerSummary]
    /// Where the next page starts; nil on the last page.
    public var next: CustomerCursor?
    /// Where the page before this one ends (read backward from it); nil on the first page. Set on pages read
    /// backward; a forward page leaves it nil.
    public var previous: CustomerCursor?
    /// Customers matching the filter (over the whole ledger, not this page).
    public var total: Int
    /// `total` is a lower bound, not a count: a filter matching a large part of the ledger is not counted
    /// to the end, so that typing it stays fast (the list itself is complete and in order).
    public var totalIsLowerBound: Bool

    public init(
        rows: [CustomerSummary], next: CustomerCursor?, previous: CustomerCursor? = nil, total: Int, totalIsLowerBound: Bool = false
    ) {
        self.rows = rows
        self.next = next
        self.previous = previous
        self.total = total
        self.totalIsLowerBound = totalIsLowerBound
    }
}

/// Everything the ledger holds about one customer (bounded by the customer, not the ledger).
public struct CustomerRecords: Sendable {
    public var id: Int64
    public var identifiers: [CustomerIdentifier]
    public var transactions: [Transaction]
    public var firstSeen: [String: Timestamp]
    public var renewalInfos: [(info: RenewalInfo, seenAt: Timestamp)]
    public var notifications: [(notification: Notification, seenAt: Timestamp, transactionId: String?)]

    /// The transactions bought by `instant` (one without a purchase date counts): what the dashboard's header, the
    /// customer list and `lookup` count as the customer's transactions.
    public func transactionCount(at instant: Timestamp) -> Int {
        transactions.count { Self.bought($0, by: instant) }
    }

    /// Whether a transaction was bought by `instant` (one without a purchase date counts as bought): what the customer
    /// screen counts and lists at an instant.
    public static func bought(_ t: Transaction, by instant: Timestamp) -> Bool { (t.purchaseDate ?? instant) <= instant }

    public init(
        id: Int64, identifiers: [CustomerIdentifier], transactions: [Transaction], firstSeen: [String: Timestamp],
        renewalInfos: [(info: RenewalInfo, seenAt: Timestamp)],
        notifications: [(notification: Notification, seenAt: Timestamp, transactionId: String?)]
    ) {
        self.id = id
        self.identifiers = identifiers
        self.transactions = transactions
        self.firstSeen = firstSeen
        self.renewalInfos = renewalInfos
        self.notifications = notifications
    }

    /// The customer's records as the pure entitlement and timeline rules take them.
    public var history: CustomerHistory {
        CustomerHistory(
            transactions: transactions, firstSeen: firstSeen,
            renewals: renewalInfos.map { CustomerHistory.SeenRenewal(info: $0.info, seenAt: $0.seenAt) },
            notifications: notifications.map { seen in
                CustomerHistory.SeenNotification(
                    notification: seen.notification, seenAt: seen.seenAt, transactionId: seen.transactionId,
                    productId: transactions.first { $0.transactionId == seen.transactionId }?.productId)
            })
    }
}

/// A filter over flags, newest first, paged by a cursor.
public struct FlagQuery: Sendable, Equatable {
    public var status: FlagStatus?
    public var rule: String?
    public var since: Timestamp?
    /// Only flags raised at or before this instant.
    public var until: Timestamp?
    public var customerId: Int64?
    /// Only flags about this product.
    public var productId: String?
    /// Only flags of this severity.
    public var severity: Severity?
    /// Only flags about refunds in this environment (a flag whose environment is unknown is in none).
    public var environment: EnvironmentFilter
    /// Only flags whose id, rule, product, customer (`C` and its number) or detail holds this text, the letters A-Z in
    /// either case (the dashboard's `/`, matched as ``FlagText`` says); an instant typed as the screen shows it,
    /// `2025-07-01 02:00`, also finds the detail's `2025-07-01T02:00:00Z`.
    public var text: String?
    /// Continue after this flag (the last row of the previous page); read backward, the flags before it (the
    /// last flags of the queue without it), in the queue's order either way.
    public var after: FlagCursor?
    public var direction: PageDirection
    public var limit: Int

    public init(
        status: FlagStatus? = nil, rule: String? = nil, since: Timestamp? = nil, customerId: Int64? = nil,
        productId: String? = nil, severity: Severity? = nil, environment: EnvironmentFilter = .all, after: FlagCursor? = nil,
        direction: PageDirection = .forward, limit: Int = 100, until: Timestamp? = nil, text: String? = nil
    ) {
        self.until = until
        self.text = text
        self.direction = direction
        self.productId = productId
        self.severity = severity
        self.environment = environment
        self.status = status
        self.rule = rule
        self.since = since
        self.customerId = customerId
        self.after = after
        self.limit = limit
    }
}

/// Where a flag page continues: the `at` and id of the last flag shown.
public struct FlagCursor: Sendable, Hashable {
    public var at: Timestamp
    public var id: String

    public init(at: Timestamp, id: String) {
        self.at = at
        self.id = id
    }

    public init(after flag: RefundFlag) {
        self.init(at: flag.at, id: flag.id)
    }
}

/// How many flags of one severity are in one status.
public struct FlagCount: Sendable, Hashable {
    public var severity: Severity
    public var status: FlagStatus
    public var count: Int

    public init(severity: Severity, status: FlagStatus, count: Int) {
        self.severity = severity
        self.status = status
        self.count = count
    }
}

/// One entry of the append-only triage log.
public struct TriageEntry: Sendable, Equatable {
    public var flagId: String?
    public var customerId: Int64?
    public var at: Timestamp
    public var operatorName: String
    public var action: TriageAction
    public var note: String?
    public var fromStatus: FlagStatus?
    public var toStatus: FlagStatus?

    public init(
        flagId: String?, customerId: Int64?, at: Timestamp, operatorName: String, action: TriageAction, note: String?,
        fromStatus: FlagStatus?, toStatus: FlagStatus?
    ) {
        self.flagId = flagId
        self.customerId = customerId
        self.at = at
        self.operatorName = operatorName
        self.action = action
        self.note = note
        self.fromStatus = fromStatus
        self.toStatus = toStatus
    }
}

/// An imported source, for the imports screen.
public struct SourceSummary: Sendable, Equatable {
    public var id: Int64
    public var path: String
    public var sha256: String
    public var size: Int64
    public var startedAt: Timestamp
    public var completedAt: Timestamp?
    public var counts: ImportCounts

    public init(
        id: Int64, path: String, sha256: String, size: Int64, startedAt: Timestamp, completedAt: Timestamp?,
        counts: ImportCounts
    ) {
        self.id = id
        self.path = path
        self.sha256 = sha256
        self.size = size
        self.startedAt = startedAt
        self.completedAt = completedAt
        self.counts = counts
    }
}

/// A rejected record and why; its raw bytes are fetched on their own (``LedgerReading/rejectedRaw(_:)``).
public struct RejectedRecord: Sendable, Equatable {
    public var id: Int64
    public var sourcePath: String
    public var index: Int
    public var offset: Int64
    public var kind: String
    public var code: String
    public var message: String
    /// The raw bytes' length, so a list can say how big the record is without loading it.
    public var size: Int

    public init(id: Int64, sourcePath: String, index: Int, offset: Int64, kind: String, code: String, message: String, size: Int) {
        self.id = id
        self.sourcePath = sourcePath
        self.index = index
        self.offset = offset
        self.kind = kind
        self.code = code
        self.message = message
        self.size = size
    }
}

/// Refunds per day, oldest day first, for a sparkline.
public struct RefundSeries: Sendable, Equatable {
    /// The first day's start (UTC midnight).
    public var firstDay: Timestamp
    /// One count per day.
    public var counts: [Int]

    public init(firstDay: Timestamp, counts: [Int]) {
        self.firstDay = firstDay
        self.counts = counts
    }
}

/// One refund a day's bar of ``RefundSeries`` counts: the transaction, and when it was refunded.
public struct DayRefund: Sendable, Equatable {
    public var transactionId: String
    public var productId: String?
    public var environment: String?
    /// Milliunits of `currency`.
    public var price: Int64?
    public var currency: String?
    public var refundedAt: Timestamp
    /// The share refunded, in thousandths of a percent (100 000: all of `price`).
    public var share: Int64
    /// The records the transaction came from (`path#index`).
    public var sources: [Provenance]

    public init(
        transactionId: String, productId: String? = nil, environment: String? = nil, price: Int64? = nil, currency: String? = nil,
        refundedAt: Timestamp, share: Int64 = 100_000, sources: [Provenance] = []
    ) {
        self.sources = sources
        self.transactionId = transactionId
        self.productId = productId
        self.environment = environment
        self.price = price
        self.currency = currency
        self.refundedAt = refundedAt
        self.share = share
    }
}

/// The customer a pasted text names (``LedgerReading/customerId(pasted:)``): by which id, and the other customers
/// other words of it name (a message with two ids: the lookup shows the first, and says so).
public struct PastedMatch: Sendable, Equatable {
    public var customer: Int64
    /// The id that matched, as the ledger holds it (the punctuation around it taken off).
    public var matched: String
    /// Other words of the text that are another customer's ids, each with its customer (one each).
    public var others: [(id: String, customer: Int64)]
    /// The customer a display id (`C176`) matched named, merged since into ``customer`` (a record named ids of both).
    public var mergedFrom: Int64?

    public init(customer: Int64, matched: String, others: [(id: String, customer: Int64)] = [], mergedFrom: Int64? = nil) {
        self.customer = customer
        self.matched = matched
        self.others = others
        self.mergedFrom = mergedFrom
    }

    public static func == (a: PastedMatch, b: PastedMatch) -> Bool {
        a.customer == b.customer && a.matched == b.matched && a.mergedFrom == b.mergedFrom
            && a.others.elementsEqual(b.others) { $0.id == $1.id && $0.customer == $1.customer }
    }

    /// Why another number is shown than the display id given: `C176 was merged into C24 (a record named ids of both)`.
    public var mergedSaid: String? {
        mergedFrom.map { "C\($0) was merged into C\(customer) (a record named ids of both)" }
    }

    /// What the others are, to say after the customer shown: `the text also names C67 (by 150000000016001)`.
    public var othersSaid: String? {
        guard !others.isEmpty else { return nil }
        return "the text also names " + others.map { "C\($0.customer) (by \($0.id))" }.joined(separator: ", ")
    }
}

/// What a message puts around an id a person pastes from it: quotes of every kind, and punctuation.
public enum PastedId {
    /// Straight, curly and angle quotes and backticks: never part of an id.
    public static let quotes: Set<Character> = [
        "\"", "'", "`", "\u{201C}", "\u{201D}", "\u{2018}", "\u{2019}", "\u{00AB}", "\u{00BB}",
    ]
    /// The quotes and the punctuation a sentence puts around an id (which some ids do hold, so a lookup tries the
    /// id as pasted first).
    public static let around: Set<Character> = quotes.union([
        "#", ",", ".", ";", ":", "!", "?", "(", ")", "[", "]", "{", "}", "<", ">", "\u{2026}",
    ])

    /// `text` without the quotes around it, and without the spaces around those.
    public static func unquoted(_ text: String) -> String {
        let trimmed = text.drop { $0.isWhitespace || quotes.contains($0) }
        return String(trimmed.reversed().drop { $0.isWhitespace || quotes.contains($0) }.reversed())
    }
}
