import ReceiptModel

/// A product the sample app sells.
public struct SampleProduct: Hashable, Sendable {
    public enum Kind: Hashable, Sendable { case subscription, nonConsumable, consumable }
    public var id: String
    public var kind: Kind
    /// Subscription group identifier (subscriptions only).
    public var group: String?
    /// The entitlement it grants (`nil` for consumables).
    public var entitlement: String?
    public var durationDays: Int64?
    public var tier: Int?
    /// Price in US dollars, milliunits.
    public var usdPrice: Int64

    public var typeName: String {
        switch kind {
        case .subscription: "Auto-Renewable Subscription"
        case .nonConsumable: "Non-Consumable"
        case .consumable: "Consumable"
        }
    }
}

/// A storefront and its currency, with a price conversion from US dollars.
public struct SampleStorefront: Hashable, Sendable {
    public var code: String
    public var id: String
    public var currency: String
    /// Local units per dollar, times 100.
    public var rateCents: Int64
    /// Whole-unit currency (yen): prices round to tens, no .99.
    public var wholeUnits: Bool

    /// The local price in milliunits for a dollar price in milliunits: `x.99` pricing, or tens of yen.
    public func price(_ usd: Int64) -> Int64 {
        if usd == 0 { return 0 }
        let local = usd * rateCents / 100  // milliunits
        if wholeUnits { return (local + 5_000) / 10_000 * 10_000 }
        return ((local + 999) / 1000) * 1000 - 10
    }
}

/// The sample app's catalog: two subscription groups, two non-consumables, two consumables.
public enum SampleCatalog {
    public static let bundleId = "com.example.receiptdesk.sample"
    public static let appAppleId: Int64 = 1_234_567_890
    public static let proGroup = "21000001"
    public static let storageGroup = "21000002"

    public static let proMonthly = SampleProduct(id: "pro.monthly", kind: .subscription, group: proGroup, entitlement: "pro", durationDays: 30, tier: 1, usdPrice: 9_990)
    public static let proYearly = SampleProduct(id: "pro.yearly", kind: .subscription, group: proGroup, entitlement: "pro", durationDays: 365, tier: 1, usdPrice: 79_990)
    public static let proPlusMonthly = SampleProduct(id: "pro.plus.monthly", kind: .subscription, group: proGroup, entitlement: "pro", durationDays: 30, tier: 2, usdPrice: 14_990)
    public static let storageWeekly = SampleProduct(id: "storage.weekly", kind: .subscription, group: storageGroup, entitlement: "storage", durationDays: 7, tier: 1, usdPrice: 1_990)
    public static let storageMonthly = SampleProduct(id: "storage.monthly", kind: .subscription, group: storageGroup, entitlement: "storage", durationDays: 30, tier: 1, usdPrice: 5_990)
    public static let lifetime = SampleProduct(id: "lifetime.unlock", kind: .nonConsumable, entitlement: "lifetime", usdPrice: 49_990)
    /// The product whose refunds spike after the bad release.
    public static let filters = SampleProduct(id: "filters.pack", kind: .nonConsumable, entitlement: "filters", usdPrice: 4_990)
    public static let coins100 = SampleProduct(id: "coins.100", kind: .consumable, usdPrice: 990)
    public static let coins500 = SampleProduct(id: "coins.500", kind: .consumable, usdPrice: 3_990)

    public static let products = [proMonthly, proYearly, proPlusMonthly, storageWeekly, storageMonthly, lifetime, filters, coins100, coins500]

    public static let storefronts = [
        SampleStorefront(code: "USA", id: "143441", currency: "USD", rateCents: 100, wholeUnits: false),
        SampleStorefront(code: "GBR", id: "143444", currency: "GBP", rateCents: 80, wholeUnits: false),
        SampleStorefront(code: "DEU", id: "143443", currency: "EUR", rateCents: 95, wholeUnits: false),
        SampleStorefront(code: "FRA", id: "143442", currency: "EUR", rateCents: 95, wholeUnits: false),
        SampleStorefront(code: "JPN", id: "143462", currency: "JPY", rateCents: 15_000, wholeUnits: true),
        SampleStorefront(code: "CAN", id: "143455", currency: "CAD", rateCents: 135, wholeUnits: false),
        SampleStorefront(code: "AUS", id: "143460", currency: "AUD", rateCents: 150, wholeUnits: false),
        SampleStorefront(code: "BRA", id: "143503", currency: "BRL", rateCents: 500, wholeUnits: false),
    ]
    static let storefrontWeights: [Double] = [0.45, 0.1, 0.1, 0.06, 0.1, 0.07, 0.07, 0.05]

    /// The catalog file for `--catalog`: every product with its type, and its entitlement and tier when it has
    /// them. Consumables are listed too, with no entitlement: legacy data (verifyReceipt `in_app`) carries no
    /// type, and the catalog is what says that `coins.*` are consumables, which grant nothing.
    public static var catalogCSV: String {
        var out = "product_id,entitlement,type,duration_days,price_tier\n"
        for p in products {
            let type = switch p.kind {
            case .subscription: "auto-renewable"
            case .nonConsumable: "non-consumable"
            case .consumable: "consumable"
            }
            out += "\(p.id),\(p.entitlement ?? ""),\(type),,\(p.tier.map(String.init) ?? "")\n"
        }
        return out
    }
}
