import Entitlements
import ReceiptModel
import Testing

/// A catalog is how an operator says what a product is (DESIGN sections 3 and 6): a product it lists as a
/// consumable is never an entitlement, whatever the input format; a product whose type nothing gives and that
/// does not expire is taken for a non-consumable, and says so (issue 9).
@Suite("consumables are not entitlements; an untyped purchase is owned, and says it was assumed")
struct ConsumableCatalogTests {
    typealias B = HistoryBuilder

    /// How the consumable purchase arrives.
    enum Shape: String, CaseIterable, CustomTestStringConvertible {
        /// A legacy verifyReceipt `in_app` item: no type, no expiry.
        case legacyUntyped
        /// A signed transaction (V2, Server API): `type` is `Consumable`.
        case typed
        var testDescription: String { rawValue }
    }

    /// What the operator's catalog says of `coins.100`.
    enum Listing: String, CaseIterable, CustomTestStringConvertible {
        /// Not listed (the catalog lists the subscription only).
        case unlisted
        /// Listed as a consumable with an entitlement name anyway (what a previous fix wrote).
        case consumableNamed
        /// Listed as a consumable with an empty entitlement.
        case consumableEmpty
        var testDescription: String { rawValue }

        var catalog: Catalog {
            var products = [CatalogProduct(productId: "pro.monthly", entitlement: "pro", type: .autoRenewableSubscription)]
            switch self {
            case .unlisted: break
            case .consumableNamed: products.append(CatalogProduct(productId: "coins.100", entitlement: "coins", type: .consumable))
            case .consumableEmpty: products.append(CatalogProduct(productId: "coins.100", entitlement: "", type: .consumable))
            }
            return Catalog(products)
        }
    }

    /// A customer with a monthly subscription and one `coins.100` purchase of the given shape.
    static func history(_ shape: Shape) async throws -> CustomerHistory {
        var b = B()
        b.period("1", from: 0, to: 30)
        if shape == .legacyUntyped { b.period("2", product: "coins.100", from: 3, to: nil, original: "2") }
        var h = try await b.history()
        if shape == .typed {
            var coins = Transaction(transactionId: "2")
            coins.originalTransactionId = "2"
            coins.productId = "coins.100"
            coins.type = .consumable
            coins.purchaseDate = B.at(3)
            coins.quantity = 1
            h = CustomerHistory(transactions: h.transactions + [coins], firstSeen: h.firstSeen, renewals: h.renewals, notifications: h.notifications)
        }
        return h
    }

    @Test("a consumable grants no entitlement, in every input shape, listed or not", arguments: Shape.allCases, Listing.allCases)
    func consumableIsNoEntitlement(shape: Shape, listing: Listing) async throws {
        let h = try await Self.history(shape)
        let coins = try #require(h.transactions.first { $0.productId == "coins.100" })
        if shape == .legacyUntyped { #expect(coins.type == nil || coins.type?.isKnown == false, "the legacy item arrived typed") }
        // Nothing says an unlisted legacy item is a consumable: it is taken for a non-consumable, and says so.
        let assumed = shape == .legacyUntyped && listing == .unlisted
        #expect(h.entitlement(of: coins, catalog: listing.catalog) == (assumed ? "coins.100" : nil))
        #expect(listing.catalog.entitlement(of: coins) == (assumed ? "coins.100" : nil))
        for day in [5.0, 40] {
            let entitlements = h.entitlements(at: B.at(day), catalog: listing.catalog)
            let states = Dictionary(uniqueKeysWithValues: entitlements.map { ($0.name, $0.state) })
            var expected: [String: EntitlementState] = ["pro": day < 30 ? .active : .expired]
            if assumed { expected["coins.100"] = .owned }
            #expect(states == expected)
            if assumed { #expect(entitlements.first { $0.name == "coins.100" }?.reason.contains("taken for a non-consumable") == true) }
        }
        // The purchase is still told: it is in the timeline, as a purchase.
        #expect(h.timeline(upTo: B.at(40), catalog: listing.catalog).contains { $0.kind == .purchase && $0.productId == "coins.100" })
    }

    @Test("a product whose type nothing gives and that does not expire is owned, saying so; the catalog's word settles it")
    func untypedProduct() async throws {
        var b = B()
        b.period("1", product: "lifetime", from: 0, to: nil)
        let h = try await b.history()
        let assumed = h.entitlements(at: B.at(10))
        #expect(assumed.map(\.state) == [.owned] && assumed.map(\.name) == ["lifetime"])
        #expect(assumed.first?.reason.contains("taken for a non-consumable") == true)
        #expect(h.timeline(upTo: B.at(10)).map(\.kind) == [.purchase])
        let listed = Catalog([CatalogProduct(productId: "lifetime", entitlement: "lifetime", type: .nonConsumable)])
        #expect(h.entitlements(at: B.at(10), catalog: listed).map(\.state) == [.owned])
        #expect(h.entitlements(at: B.at(10), catalog: listed).first?.reason.contains("taken for") == false)
        // A transaction that says what it is needs no catalog.
        var typed = h.transactions[0]
        typed.type = .nonConsumable
        #expect(CustomerHistory(transactions: [typed]).entitlements(at: B.at(10)).map(\.name) == ["lifetime"])
    }

    @Test("a catalog's consumable may leave its entitlement empty; any other product may not")
    func emptyEntitlementOnlyForConsumables() throws {
        let catalog = try Catalog.parse(rows: [
            (1, ["product_id", "entitlement", "type"]), (2, ["coins.100", "", "consumable"]), (3, ["coins.500", "", "Consumable"]),
        ])
        #expect(catalog.products["coins.100"]?.type == .consumable)
        #expect(catalog.products["coins.500"]?.type == .consumable)
        #expect(throws: CatalogError.self) { try Catalog.parse(rows: [(1, ["lifetime", "", "non-consumable"])]) }
        #expect(throws: CatalogError.self) { try Catalog.parse(rows: [(1, ["lifetime", ""])]) }
    }
}
