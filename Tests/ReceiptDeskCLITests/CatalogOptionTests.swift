import Foundation
import Testing

/// `--catalog FILE` on the read commands: the operator's products decide the entitlement names, how long
/// a non-renewing pass lasts and, by price tier, whether a change of product is a downgrade.
@Suite("--catalog: the operator's products, as lookup reads them", .serialized, .ownThreads)
struct CatalogOptionTests {
    /// One customer (one appAccountToken): pro.monthly in March, lite.monthly from April (one chain, no
    /// subscription group, as app receipts have it), and a week's pass bought 2025-03-10.
    static func data() -> String {
        let token = "aaaaaaaa-0000-4000-8000-00000000c0de"
        let lines = [
            #"{"transactionId":"c1","originalTransactionId":"co","productId":"pro.monthly","purchaseDate":1740787200000,"expiresDate":1743465600000,"type":"Auto-Renewable Subscription","quantity":1,"appAccountToken":"\#(token)"}"#,
            #"{"transactionId":"c2","originalTransactionId":"co","productId":"lite.monthly","purchaseDate":1743465600000,"expiresDate":1746057600000,"type":"Auto-Renewable Subscription","quantity":1,"appAccountToken":"\#(token)"}"#,
            #"{"transactionId":"c3","originalTransactionId":"c3","productId":"pass.week","purchaseDate":1741564800000,"type":"Non-Renewing Subscription","quantity":1,"appAccountToken":"\#(token)"}"#,
        ]
        let path = ImportCommandTests.temporary("catalog-data.ndjson")
        writeTestFile(path, Data(lines.joined(separator: "\n").utf8))
        return path
    }

    static func catalog(_ text: String) -> String {
        let path = ImportCommandTests.temporary("catalog.csv")
        writeTestFile(path, Data(text.utf8))
        return path
    }

    static let products = """
        product_id,entitlement,type,duration_days,price_tier
        pro.monthly,premium,auto-renewable,,2
        lite.monthly,premium,auto-renewable,,1
        pass.week,pass,non-renewing,7
        """

    /// The lookup's entitlements (name -> state) and timeline kinds.
    static func lookup(_ arguments: [String]) throws -> (entitlements: [String: String], kinds: [String], object: [String: Any]) {
        let result = try Binary.run(["lookup", "c1", "--json"] + arguments)
        try #require(result.status == 0, "\(arguments): \(result.stderr)")
        let object = try Binary.json(result.stdout)
        let entitlements = try #require(object["entitlements"] as? [[String: Any]])
        let timeline = try #require(object["timeline"] as? [[String: Any]])
        return (
            Dictionary(uniqueKeysWithValues: entitlements.compactMap { e in (e["name"] as? String).map { ($0, e["state"] as? String ?? "?") } }),
            timeline.compactMap { $0["kind"] as? String }, object
        )
    }

    @Test("entitlement names, a pass's duration and a downgrade come from the catalog; without one, from the data")
    func catalogDecides() throws {
        let data = Self.data()
        let catalog = Self.catalog(Self.products)
        // Two days into the week's pass.
        let during = try Self.lookup(["--files", data, "--catalog", catalog, "--at", "2025-03-12"])
        #expect(during.entitlements == ["premium": "active", "pass": "active"])
        let pass = (during.object["entitlements"] as? [[String: Any]])?.first { $0["name"] as? String == "pass" }
        #expect(pass?["expiresDate"] as? Int == 1_741_564_800_000 + 7 * 86_400_000)
        #expect(try Self.lookup(["--files", data, "--catalog", catalog, "--at", "2025-03-20"]).entitlements["pass"] == "expired")
        let april = try Self.lookup(["--files", data, "--catalog", catalog, "--at", "2025-04-15"])
        #expect(april.kinds.filter { ["subscribed", "downgraded", "crossgraded"].contains($0) } == ["subscribed", "downgraded"])

        // Without the catalog: the chain is named after its first product, the pass has no known end.
        let plain = try Self.lookup(["--files", data, "--at", "2025-03-20"])
        #expect(plain.entitlements == ["pro.monthly": "active", "pass.week": "owned"])
        #expect(try Self.lookup(["--files", data, "--at", "2025-04-15"]).kinds.contains("crossgraded"))
    }

    @Test("the catalog applies when reading a stored ledger too: it is read, never stored")
    func storedLedger() throws {
        let ledger = "sqlite:" + ImportCommandTests.temporary("catalog.sqlite")
        #expect(try Binary.run(["import", "--ledger", ledger, Self.data()]).status == 0)
        let catalog = Self.catalog(Self.products)
        #expect(try Self.lookup(["--ledger", ledger, "--catalog", catalog, "--at", "2025-03-12"]).entitlements == ["premium": "active", "pass": "active"])
        #expect(try Self.lookup(["--ledger", ledger, "--at", "2025-03-12"]).entitlements == ["pro.monthly": "active", "pass.week": "owned"])
    }

    @Test("a catalog that cannot be used exits 2 naming the file and the line; nothing is printed")
    func badCatalog() throws {
        let data = Self.data()
        let broken = Self.catalog("product_id,entitlement\npro.monthly,premium\npass.week\n")
        let result = try Binary.run(["lookup", "c1", "--files", data, "--catalog", broken])
        #expect(result.status == 2)
        #expect(result.stderr.contains("\(broken) line 3: expected product_id,entitlement"), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
        let days = Self.catalog("pass.week,pass,non-renewing,seven\n")
        let wrongDays = try Binary.run(["lookup", "c1", "--files", data, "--catalog", days])
        #expect(wrongDays.status == 2)
        #expect(wrongDays.stderr.contains("line 1: duration_days seven is not a whole number"), "\(wrongDays.stderr)")
        let missing = ImportCommandTests.temporary("no-such-catalog.csv")
        let unreadable = try Binary.run(["lookup", "c1", "--files", data, "--catalog", missing])
        #expect(unreadable.status == 2)
        #expect(unreadable.stderr.contains("--catalog: no such file: \(missing)"), "\(unreadable.stderr)")
        // Said before --files are read into a ledger, naming the option, for each file option.
        for (options, says) in [
            (["lookup", "c1", "--files", data, "--catalog", ""], "--catalog needs a file's path"),
            (["refunds", "--files", data, "--rules", missing], "--rules: no such file: \(missing)"),
            (["lookup", "c1", "--files", data, "--catalog", NSTemporaryDirectory()], "--catalog: \(NSTemporaryDirectory()) is a directory; name a file"),
        ] {
            let run = try Binary.run(options)
            #expect(run.status == 2 && run.stderr.hasPrefix("receiptdesk: \(says)"), "\(options): \(run.stderr)")
        }
    }
}
