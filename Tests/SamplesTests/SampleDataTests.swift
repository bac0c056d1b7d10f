import Foundation
import Testing

@testable import ReceiptDeskCLI
@testable import Samples

@Suite("the committed SampleData", .ownThreads)
struct SampleDataTests {
    static var directory: String { SampleSupport.packageRoot.appendingPathComponent("SampleData").path }

    @Test("SampleData is exactly what the command in its README makes, and the README's story ids are right")
    func regenerates() throws {
        let manifest = try DemoLedger.readManifest(Self.directory)
        let readme = try String(contentsOfFile: Self.directory + "/README.md", encoding: .utf8)
        #expect(readme.contains("receiptdesk sample --customers \(manifest.customers) --seed \(manifest.seed) --out SampleData"))
        let out = SampleSupport.temporaryDirectory("sampledata")
        defer { try? FileManager.default.removeItem(atPath: out) }
        let summary = try SampleGenerator(
            .init(customers: manifest.customers, seedText: manifest.seed, from: manifest.from, to: manifest.now)
        ).write(to: out)
        let names = SampleGenerator.dataFiles + ["customers.csv", "catalog.csv", "ground-truth.ndjson", "manifest.json", "test-root.pem"]
        for name in names {
            let committed = try Data(contentsOf: URL(fileURLWithPath: Self.directory + "/" + name))
            let fresh = try Data(contentsOf: URL(fileURLWithPath: out + "/" + name))
            #expect(committed == fresh, "SampleData/\(name) is not what the README's command makes: regenerate it")
        }
        // Every story row of the README's table names its customer's id, and no other id is named.
        let rows = readme.split(separator: "\n").filter { $0.hasPrefix("| ") && $0.contains("| `") }
        let named = Set(rows.compactMap { row -> String? in
            let cells = row.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 2, cells[1].hasPrefix("`"), cells[1].hasSuffix("`") else { return nil }
            return String(cells[1].dropFirst().dropLast())
        })
        let stories = Set(summary.stories.map(\.id))
        #expect(stories.count == SampleStory.allCases.count)
        #expect(named == stories, "README names \(named.sorted()), the generator's stories are \(summary.stories)")
        #expect(summary.spikes.count == 1)
        for spike in summary.spikes { #expect(readme.contains(spike), "README does not name the spike \(spike)") }
        #expect(readme.contains("TEST"))
    }

    @Test("the demo ledger builds from SampleData with no rejected record, and each story's id finds its customer")
    func demoBuilds() async throws {
        let copy = SampleSupport.temporaryDirectory("demo-copy")
        defer { try? FileManager.default.removeItem(atPath: copy) }
        try FileManager.default.copyItem(atPath: Self.directory, toPath: copy)
        let (ledger, _) = try await SampleSupport.ledger(for: copy)
        let overview = try await ledger.overview()
        let manifest = try DemoLedger.readManifest(copy)
        let stories = SampleGenerator(.init(customers: manifest.customers, seedText: manifest.seed, from: manifest.from, to: manifest.now))
        var missing: [String] = []
        for index in SampleStory.allCases.indices {
            let id = try #require(stories.life(index).firstOriginalTransactionId)
            if try await ledger.customerId(matching: id) == nil { missing.append(id) }
        }
        try await ledger.close()
        #expect(overview.rejectedRecords == 0)
        #expect(missing.isEmpty, "no customer for \(missing)")
    }
}
