import ReceiptModel

/// What a product grants: its entitlement, its kind, and what the rules need to know about it.
public struct CatalogProduct: Hashable, Sendable {
    public var productId: String
    /// The entitlement the product grants (`pro`, `premium`); products of one entitlement share it. A
    /// consumable grants none, whatever this says (it may be empty).
    public var entitlement: String
    public var type: ProductType?
    /// Length of a non-renewing subscription.
    public var durationMilliseconds: Int64?
    /// Relative price tier, for telling upgrades from downgrades.
    public var priceTier: Int?

    public init(productId: String, entitlement: String, type: ProductType? = nil, durationMilliseconds: Int64? = nil, priceTier: Int? = nil) {
        self.productId = productId
        self.entitlement = entitlement
        self.type = type
        self.durationMilliseconds = durationMilliseconds
        self.priceTier = priceTier
    }
}

/// The product catalog. Without one: one entitlement per subscription group, one per non-consumable.
public struct Catalog: Sendable {
    public var products: [String: CatalogProduct]

    public init(_ products: [CatalogProduct] = []) {
        self.products = Dictionary(products.map { ($0.productId, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// The product's type: the transaction's own, else the catalog's, else inferred: a subscription when it
    /// expires, a non-consumable when nothing says what it is and it does not (``assumesType(of:)``).
    public func type(of t: Transaction) -> ProductType? {
        if let type = t.type, type.isKnown { return type }
        if let productId = t.productId, let type = products[productId]?.type { return type }
        if t.expiresDate != nil { return .autoRenewableSubscription }
        return t.type ?? .nonConsumable
    }

    /// Whether ``type(of:)`` assumed the product is a non-consumable: a legacy `in_app` item or receipt field
    /// carries no type, and one with no expiry that the catalog does not list is most likely a purchase the
    /// receipt keeps for good (Apple drops a consumable from the receipt once the app finishes it). The
    /// entitlement says so, so a support agent knows to list the product in the catalog if it is a consumable.
    public func assumesType(of t: Transaction) -> Bool {
        t.type == nil && t.expiresDate == nil && t.productId.flatMap { products[$0]?.type } == nil
    }

    /// The entitlement a transaction grants, or `nil` when it grants none (DESIGN sections 3 and 6).
    ///
    /// This is the one place that decides whether a product is an entitlement at all:
    /// - a consumable grants none, whether the catalog says so or the transaction does, whatever the
    ///   input format (a catalog is how an operator says what a product is);
    /// - a product the catalog lists otherwise grants the catalog's entitlement;
    /// - without the catalog: a subscription grants its group's (else its product's), a non-consumable or
    ///   non-renewing subscription its product's;
    /// - a product whose type nothing gives (a legacy `in_app` item with no expiry, not in the catalog) is
    ///   taken for a non-consumable (``assumesType(of:)``), and its entitlement says it was assumed;
    /// - a type Apple added that this build does not know grants what the catalog lists, else none.
    public func entitlement(of t: Transaction) -> String? {
        let listed = t.productId.flatMap { products[$0] }
        if listed?.type == .consumable { return nil }
        switch type(of: t) {
        case .consumable?: return nil
        case .autoRenewableSubscription?:
            if let listed { return listed.entitlement }
            if let group = t.subscriptionGroupIdentifier { return "group \(group)" }
            return t.productId
        case .nonConsumable?, .nonRenewingSubscription?:
            return listed?.entitlement ?? t.productId
        case .unknown?, nil:
            // The operator listed it with an entitlement (and no type): their word is what it grants.
            return listed?.entitlement
        }
    }

    /// Price tier of a product, when the catalog knows it.
    public func tier(_ productId: String?) -> Int? { productId.flatMap { products[$0]?.priceTier } }

    /// The longest `duration_days` a catalog may give: a hundred years.
    public static let maximumDurationDays: Int64 = 36_500

    /// Reads the rows of a catalog file: `product_id,entitlement[,type,duration_days,price_tier]`, each
    /// with the line it came from (the CLI reads the CSV and passes the values); a consumable's `entitlement`
    /// may be empty, since it grants none. The first row is skipped
    /// when it is the header (its first field is exactly `product_id`); a product whose id merely starts
    /// with `product_id` is a product. `type` is one of the words below or Apple's own type name;
    /// `duration_days` a whole number from 1 to 36 500; `price_tier` a whole number from 0. A product listed
    /// twice, or a row with more than five fields, is an error naming both lines or the line.
    public static func parse(rows: [(line: Int, fields: [String])]) throws(CatalogError) -> Catalog {
        var products: [CatalogProduct] = []
        var seen: [String: Int] = [:]
        for (position, row) in rows.enumerated() {
            let fields = row.fields.map { $0.trimmingWhitespace() }
            if position == 0 && fields.first == "product_id" { continue }
            // A consumable grants no entitlement, so its entitlement field may be left empty.
            let consumable = fields.count > 2 && fields[2].lowercased() == "consumable"
            guard (2...5).contains(fields.count), !fields[0].isEmpty, !fields[1].isEmpty || consumable else {
                throw CatalogError(line: row.line, message: "expected product_id,entitlement[,type,duration_days,price_tier]")
            }
            if let first = seen[fields[0]] {
                throw CatalogError(line: row.line, message: "product \(fields[0].prefix(80)) is already defined on line \(first)")
            }
            seen[fields[0]] = row.line
            var product = CatalogProduct(productId: fields[0], entitlement: fields[1])
            if fields.count > 2, !fields[2].isEmpty {
                switch fields[2].lowercased() {
                case "auto-renewable", "autorenewable", "subscription": product.type = .autoRenewableSubscription
                case "non-consumable", "nonconsumable": product.type = .nonConsumable
                case "consumable": product.type = .consumable
                case "non-renewing", "nonrenewing": product.type = .nonRenewingSubscription
                default:
                    let type = ProductType(rawValue: fields[2])
                    guard type.isKnown else {
                        throw CatalogError(
                            line: row.line,
                            message: "type \(fields[2].prefix(40)) is not auto-renewable, non-consumable, consumable or non-renewing")
                    }
                    product.type = type
                }
            }
            if fields.count > 3, !fields[3].isEmpty {
                guard let days = Int64(fields[3]) else { throw CatalogError(line: row.line, message: "duration_days \(fields[3].prefix(40)) is not a whole number") }
                guard (1...maximumDurationDays).contains(days) else {
                    throw CatalogError(line: row.line, message: "duration_days must be from 1 to \(maximumDurationDays), not \(days)")
                }
                product.durationMilliseconds = days * 86_400_000
            }
            if fields.count > 4, !fields[4].isEmpty {
                guard let tier = Int(fields[4]), tier >= 0 else {
                    throw CatalogError(line: row.line, message: "price_tier \(fields[4].prefix(40)) is not a whole number from 0")
                }
                product.priceTier = tier
            }
            products.append(product)
        }
        return Catalog(products)
    }
}

/// A catalog or rules file that cannot be read, with its line.
public struct CatalogError: Error, Sendable, CustomStringConvertible {
    public var line: Int
    public var message: String

    public init(line: Int, message: String) {
        self.line = line
        self.message = message
    }

    public var description: String { "line \(line): \(message)" }
}

extension Substring {
    func trimmingWhitespace() -> String {
        var slice = self
        while let first = slice.first, first.isWhitespace { slice.removeFirst() }
        while let last = slice.last, last.isWhitespace { slice.removeLast() }
        return String(slice)
    }
}

extension String {
    func trimmingWhitespace() -> String { self[...].trimmingWhitespace() }
}
