import ReceiptModel

/// Everything known about one customer, with when each fact was first learned.
public struct CustomerHistory: Sendable {
    public struct SeenRenewal: Sendable {
        public var info: RenewalInfo
        public var seenAt: Timestamp
        public init(info: RenewalInfo, seenAt: Timestamp) {
            self.info = info
            self.seenAt = seenAt
        }
    }

    public struct SeenNotification: Sendable {
        public var notification: Notification
        public var seenAt: Timestamp
        /// The transaction the notification carried, if any.
        public var transactionId: String?
        public var productId: String?
        public init(notification: Notification, seenAt: Timestamp, transactionId: String?, productId: String? = nil) {
            self.notification = notification
            self.seenAt = seenAt
            self.transactionId = transactionId
            self.productId = productId
        }
    }

    public var transactions: [Transaction]
    /// When the ledger first learned of each transaction (its signedDate or the import time).
    public var firstSeen: [String: Timestamp]
    public var renewals: [SeenRenewal]
    public var notifications: [SeenNotification]
    /// The first product of each subscription chain (by originalTransactionId), naming chains without a group.
    let chainProducts: [String: String]

    public init(transactions: [Transaction], firstSeen: [String: Timestamp] = [:], renewals: [SeenRenewal] = [], notifications: [SeenNotification] = []) {
        var firstSeen = firstSeen
        self.transactions = Self.periods(transactions, firstSeen: &firstSeen).sorted {
            ($0.purchaseDate?.millisecondsSince1970 ?? 0, $0.transactionId) < ($1.purchaseDate?.millisecondsSince1970 ?? 0, $1.transactionId)
        }
        self.firstSeen = firstSeen
        var chainProducts: [String: String] = [:]
        for t in self.transactions where t.expiresDate != nil {
            if let original = t.originalTransactionId, let product = t.productId, chainProducts[original] == nil {
                chainProducts[original] = product
            }
        }
        self.chainProducts = chainProducts
        // By when they were seen; sightings at the same instant by their content, so that the order the
        // caller gave them in never changes a timeline or which renewal info is the latest.
        self.renewals = renewals.sorted { a, b in
            if a.seenAt != b.seenAt { return a.seenAt < b.seenAt }
            return String(describing: a.info) < String(describing: b.info)
        }
        self.notifications = notifications.sorted { a, b in
            if a.seenAt != b.seenAt { return a.seenAt < b.seenAt }
            let left = (a.notification.signedDate?.millisecondsSince1970 ?? .min, a.notification.notificationUUID ?? "", a.transactionId ?? "")
            let right = (b.notification.signedDate?.millisecondsSince1970 ?? .min, b.notification.notificationUUID ?? "", b.transactionId ?? "")
            if left != right { return left < right }
            return String(describing: (a.notification, a.productId)) < String(describing: (b.notification, b.productId))
        }
    }

    /// One transaction per subscription period: a restore gives a period a new transactionId but keeps its
    /// webOrderLineItemId, so sightings sharing one are collapsed into the earliest transaction, which
    /// takes the facts the others add (subscription group, revocation). Products without a group learn it
    /// from another transaction of the same product.
    static func periods(_ transactions: [Transaction], firstSeen: inout [String: Timestamp]) -> [Transaction] {
        // In transaction id order, not the caller's: the same transactions always give the same periods.
        let ordered = transactions.sorted {
            ($0.transactionId.count, $0.transactionId) < ($1.transactionId.count, $1.transactionId)
        }
        var groups: [String: String] = [:]
        for t in ordered {
            if let product = t.productId, let group = t.subscriptionGroupIdentifier, groups[product] == nil { groups[product] = group }
        }
        var byPeriod: [String: Int] = [:]
        var out: [Transaction] = []
        for t in ordered {
            var t = t
            if t.subscriptionGroupIdentifier == nil, let product = t.productId { t.subscriptionGroupIdentifier = groups[product] }
            guard let period = t.webOrderLineItemId, period != "0" else {
                out.append(t)
                continue
            }
            if let index = byPeriod[period] {
                var kept = out[index]
                kept.subscriptionGroupIdentifier = kept.subscriptionGroupIdentifier ?? t.subscriptionGroupIdentifier
                if kept.revocationDate == nil, t.revocationDate != nil {
                    kept.revocationDate = t.revocationDate
                    kept.revocationReason = t.revocationReason
                    kept.revocationType = t.revocationType
                    kept.revocationPercentage = t.revocationPercentage
                }
                if t.isUpgraded == true { kept.isUpgraded = true }
                kept.sources += t.sources
                if let other = firstSeen[t.transactionId] {
                    firstSeen[kept.transactionId] = min(firstSeen[kept.transactionId] ?? other, other)
                }
                out[index] = kept
            } else {
                byPeriod[period] = out.count
                out.append(t)
            }
        }
        return out
    }

    /// The entitlement a transaction grants: ``Catalog/entitlement(of:)`` decides whether it grants one and
    /// which; only a subscription the catalog does not list and that has no group (as in app receipts) is
    /// named here, after its chain's first product, so that its renewals of other products stay one entitlement.
    public func entitlement(of t: Transaction, catalog: Catalog) -> String? {
        // Whether a product is an entitlement at all is the catalog's one decision: answering from the catalog's
        // listing here first made a listed consumable an entitlement whatever Catalog.entitlement(of:) said.
        guard let name = catalog.entitlement(of: t) else { return nil }
        let listed = t.productId.map { catalog.products[$0] != nil } ?? false
        if !listed, catalog.type(of: t) == .autoRenewableSubscription, t.subscriptionGroupIdentifier == nil,
            let original = t.originalTransactionId, let first = chainProducts[original]
        {
            return first
        }
        return name
    }

    /// When the ledger learned of a transaction: its first sighting, else its signedDate, else its purchase.
    public func seenAt(_ t: Transaction) -> Timestamp {
        firstSeen[t.transactionId] ?? t.signedDate ?? t.purchaseDate ?? Timestamp(millisecondsSince1970: 0)
    }

    /// The latest renewal info for a subscription known at `instant`.
    public func renewal(original: String?, at instant: Timestamp) -> RenewalInfo? {
        seenRenewal(original: original, at: instant)?.info
    }

    /// The latest renewal info for a subscription known at `instant`, with when it was seen.
    public func seenRenewal(original: String?, at instant: Timestamp) -> SeenRenewal? {
        renewals.last { $0.seenAt <= instant && (original == nil || $0.info.originalTransactionId == original) }
    }

    /// When a refund of `transactionId` was last reversed by `instant`, if it was.
    ///
    /// The latest, not the first: an earlier refund's reversal must not shadow the reversal of a later one.
    public func refundReversal(of transactionId: String, at instant: Timestamp) -> Timestamp? {
        notifications.lazy.filter {
            $0.notification.notificationType == .refundReversed && $0.transactionId == transactionId
        }.map(eventTime).filter { $0 <= instant }.max()
    }

    /// When a notification's event took effect: its signedDate, else when it was seen.
    public func eventTime(_ seen: SeenNotification) -> Timestamp { seen.notification.signedDate ?? seen.seenAt }
}
