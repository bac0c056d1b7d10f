import Foundation
import Testing

/// `--customers customers.csv` (DESIGN section 5): the operator's mapping ties an external account id to
/// original transaction ids and tokens, so one person's purchases are one customer and their refund flags
/// follow. `import --customers` stores the links; a read command with `--files` applies them to its
/// in-memory ledger. A mapping is checked whole before anything is linked.
@Suite("--customers: the operator's account mapping, on import and on --files", .serialized, .ownThreads)
struct CustomerMappingTests {
    /// Two purchases that share no id: `oa` (pro.monthly, kept) and `ob` (pro.yearly, refunded an hour after
    /// purchase for an app issue: quick-refund and app-issue flags), and `oc` bought with an appAccountToken.
    static func data() -> String {
        let lines = [
            #"{"transactionId":"a1","originalTransactionId":"oa","productId":"pro.monthly","purchaseDate":1740787200000,"expiresDate":1743465600000,"type":"Auto-Renewable Subscription","quantity":1,"price":9990,"currency":"USD"}"#,
            #"{"transactionId":"b1","originalTransactionId":"ob","productId":"pro.yearly","purchaseDate":1740787200000,"expiresDate":1772323200000,"type":"Auto-Renewable Subscription","quantity":1,"price":59990,"currency":"USD","revocationDate":1740790800000,"revocationReason":1}"#,
            #"{"transactionId":"c1","originalTransactionId":"oc","productId":"lifetime","purchaseDate":1740787200000,"type":"Non-Consumable","quantity":1,"appAccountToken":"bbbbbbbb-0000-4000-8000-0000000000cc"}"#,
        ]
        let path = ImportCommandTests.temporary("mapping-data.ndjson")
        writeTestFile(path, Data(lines.joined(separator: "\n").utf8))
        return path
    }

    static func mapping(_ text: String) -> String {
        let path = ImportCommandTests.temporary("customers.csv")
        writeTestFile(path, Data(text.utf8))
        return path
    }

    /// acct-1 is the person behind `oa` and `ob`; acct-2 the one behind the token.
    static let goodMapping = """
        customer_id,kind,value
        acct-1,originalTransactionId,oa
        acct-1,originalTransactionId,ob

        acct-2,appAccountToken,bbbbbbbb-0000-4000-8000-0000000000cc
        """

    /// A lookup's customer id and its identifiers as `kind:value`.
    static func customer(_ id: String, _ arguments: [String]) throws -> (id: String, identifiers: Set<String>) {
        let result = try Binary.run(["lookup", id, "--json"] + arguments)
        try #require(result.status == 0, "lookup \(id) \(arguments): \(result.status) \(result.stderr)")
        let customer = try #require(try Binary.json(result.stdout)["customer"] as? [String: Any])
        let identifiers = (customer["identifiers"] as? [[String: Any]] ?? []).map { "\($0["kind"] ?? "?"):\($0["value"] ?? "?")" }
        return (try #require(customer["id"] as? String), Set(identifiers))
    }

    /// The refund flags as `rule -> customer id`.
    static func flagCustomers(_ arguments: [String]) throws -> [String: String] {
        let result = try Binary.run(["refunds", "--json"] + arguments)
        try #require(result.status == 0, "refunds \(arguments): \(result.stderr)")
        return Dictionary(
            uniqueKeysWithValues: try result.lines.map(Binary.json).map { ($0["rule"] as? String ?? "?", $0["customerId"] as? String ?? "none") })
    }

    @Test("import --customers joins the mapped purchases into one customer, and the flags follow the merge")
    func importLinks() throws {
        let data = Self.data()
        // Without the mapping the two purchases are two customers, and the flags are ob's.
        let plain = "sqlite:" + ImportCommandTests.temporary("plain.sqlite")
        #expect(try Binary.run(["import", "--ledger", plain, data]).status == 0)
        #expect(try Self.customer("oa", ["--ledger", plain]).id != (try Self.customer("ob", ["--ledger", plain]).id))
        #expect(try Binary.run(["lookup", "acct-1", "--ledger", plain]).status == 1)

        let ledger = "sqlite:" + ImportCommandTests.temporary("mapped.sqlite")
        let mappingFile = Self.mapping(Self.goodMapping)
        let imported = try Binary.run(["import", "--ledger", ledger, "--customers", mappingFile, data])
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stderr.contains("\(mappingFile): linked 3 identifiers to 2 accounts"), "\(imported.stderr)")
        let person = try Self.customer("acct-1", ["--ledger", ledger])
        #expect(person.identifiers == ["external:acct-1", "originalTransactionId:oa", "originalTransactionId:ob"])
        #expect(try Self.customer("oa", ["--ledger", ledger]).id == person.id)
        #expect(try Self.customer("b1", ["--ledger", ledger]).id == person.id)
        #expect(try Self.flagCustomers(["--ledger", ledger]) == ["quick-refund": person.id, "app-issue": person.id])
        // A token is mapped as well as an original transaction id.
        let tokenHolder = try Self.customer("acct-2", ["--ledger", ledger])
        #expect(tokenHolder.identifiers == ["external:acct-2", "appAccountToken:bbbbbbbb-0000-4000-8000-0000000000cc", "originalTransactionId:oc"])
        #expect(tokenHolder.id != person.id)
    }

    @Test("import --customers with no paths links the accounts in the ledger as they stand; with neither, a usage error says both")
    func linkOnly() throws {
        let data = Self.data()
        let ledger = "sqlite:" + ImportCommandTests.temporary("link-only.sqlite")
        #expect(try Binary.run(["import", "--ledger", ledger, data]).status == 0)
        #expect(try Binary.run(["lookup", "acct-1", "--ledger", ledger]).status == 1)
        let mappingFile = Self.mapping(Self.goodMapping)
        let linked = try Binary.run(["import", "--ledger", ledger, "--customers", mappingFile])
        #expect(linked.status == 0, "\(linked.stderr)")
        #expect(linked.stderr.contains("\(mappingFile): linked 3 identifiers to 2 accounts"), "\(linked.stderr)")
        #expect(linked.stdout.isEmpty, "nothing was read: no total (\(linked.stdout))")
        let person = try Self.customer("acct-1", ["--ledger", ledger])
        #expect(person.identifiers == ["external:acct-1", "originalTransactionId:oa", "originalTransactionId:ob"])
        #expect(try Self.flagCustomers(["--ledger", ledger]) == ["quick-refund": person.id, "app-issue": person.id])

        // Links alone go into a ledger that is there: a mistyped path is not created empty.
        let missing = ImportCommandTests.temporary("no-such.sqlite")
        let nowhere = try Binary.run(["import", "--ledger", "sqlite:" + missing, "--customers", mappingFile])
        #expect(nowhere.status == 3, "\(nowhere.stderr)")
        #expect(!FileManager.default.fileExists(atPath: missing))

        let neither = try Binary.run(["import", "--ledger", ledger])
        #expect(neither.status == 2)
        #expect(neither.stderr.contains("missing <PATH>: the files or directories to import (or --customers FILE alone"), "\(neither.stderr)")
    }

    @Test("a token mapped in upper case joins its records' customer; an id no record carries is linked and said")
    func tokenCaseAndUnheldIds() throws {
        let data = Self.data()
        let ledger = "sqlite:" + ImportCommandTests.temporary("mapping-case.sqlite")
        #expect(try Binary.run(["import", "--ledger", ledger, data]).status == 0)
        // Swift's uuidString is upper case, Apple's JSON lower case: the same token.
        let mappingFile = Self.mapping("""
            customer_id,kind,value
            acct-2,appAccountToken,BBBBBBBB-0000-4000-8000-0000000000CC
            acct-3,originalTransactionId,o-typo
            acct-4,appAccountToken,cccccccc-0000-4000-8000-0000000000dd
            """)
        let linked = try Binary.run(["import", "--ledger", ledger, "--customers", mappingFile])
        #expect(linked.status == 0, "\(linked.stderr)")
        #expect(
            linked.stderr.contains(
                "linked 3 identifiers to 3 accounts; 2 of them no record in the ledger carries yet (acct-3 originalTransactionId o-typo; "
                    + "acct-4 appAccountToken cccccccc-0000-4000-8000-0000000000dd)"), "\(linked.stderr)")
        let tokenHolder = try Self.customer("acct-2", ["--ledger", ledger])
        #expect(tokenHolder.identifiers == ["external:acct-2", "appAccountToken:bbbbbbbb-0000-4000-8000-0000000000cc", "originalTransactionId:oc"])
        #expect(try Self.customer("c1", ["--ledger", ledger]).id == tokenHolder.id)
        // Linked all the same: the records that carry it join the account when they come.
        let later = ImportCommandTests.temporary("mapping-later.ndjson")
        writeTestFile(
            later,
            Data(#"{"transactionId":"t1","originalTransactionId":"o-typo","productId":"lifetime","purchaseDate":1740787200000,"type":"Non-Consumable","quantity":1}"#.utf8))
        #expect(try Binary.run(["import", "--ledger", ledger, later]).status == 0)
        #expect(try Self.customer("t1", ["--ledger", ledger]).id == (try Self.customer("acct-3", ["--ledger", ledger]).id))
        // Given again, every identifier is held now: nothing more is said.
        let again = try Binary.run(["import", "--ledger", ledger, "--customers", mappingFile])
        #expect(again.status == 0 && !again.stderr.contains("carries yet"), "\(again.stderr)")
    }

    @Test("read commands with --files apply the mapping to their in-memory ledger")
    func filesLinks() throws {
        let data = Self.data()
        let mapping = Self.mapping(Self.goodMapping)
        #expect(try Binary.run(["lookup", "acct-1", "--files", data]).status == 1)
        let person = try Self.customer("acct-1", ["--files", data, "--customers", mapping])
        #expect(person.identifiers == ["external:acct-1", "originalTransactionId:oa", "originalTransactionId:ob"])
        let result = try Binary.run(["lookup", "acct-1", "--files", data, "--customers", mapping, "--json", "--at", "2025-03-15"])
        let object = try Binary.json(result.stdout)
        let states = (object["entitlements"] as? [[String: Any]])?.compactMap { $0["state"] as? String }.sorted()
        #expect(states == ["active", "revoked"])
        #expect(Set((object["flags"] as? [[String: Any]] ?? []).compactMap { $0["rule"] as? String }) == ["quick-refund", "app-issue"])
        #expect(try Self.flagCustomers(["--files", data, "--customers", mapping]) == ["quick-refund": person.id, "app-issue": person.id])
    }

    @Test("a mapping line that is not customer_id,kind,value exits 2 naming it, and nothing is imported")
    func badMapping() throws {
        let data = Self.data()
        for (text, line) in [
            ("customer_id,kind,value\nacct-1,originalTransactionId,oa\nacct-1,email,ana@example.com\n", 3),
            ("acct-1,originalTransactionId\n", 1),
            ("acct-1,originalTransactionId,oa\n,originalTransactionId,ob\n", 2),
            ("acct-1,originalTransactionId,oa\nacct-2,appAccountToken,\n", 2),
        ] {
            let mapping = Self.mapping(text)
            let expected = "\(mapping) line \(line): expected customer_id,originalTransactionId|appAccountToken,value"
            let path = ImportCommandTests.temporary("refused.sqlite")
            let imported = try Binary.run(["import", "--ledger", "sqlite:\(path)", "--customers", mapping, data])
            #expect(imported.status == 2, "\(text)")
            #expect(imported.stderr.contains(expected), "\(imported.stderr)")
            #expect(!FileManager.default.fileExists(atPath: path), "the mapping is checked before the ledger is touched")
            let read = try Binary.run(["lookup", "oa", "--files", data, "--customers", mapping])
            #expect(read.status == 2, "\(text)")
            #expect(read.stderr.contains(expected), "\(read.stderr)")
            #expect(read.stdout.isEmpty)
        }
    }
}
