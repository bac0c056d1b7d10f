import Foundation
import ReceiptModel
import Testing

@testable import ReceiptDeskCLI
@testable import Samples

/// SampleData/README.md's numbers are the data's: what a reader counts on the dashboard is what the README says.
@Suite("the words of SampleData/README.md")
struct ReadmeWordsTests {
    static var directory: String { SampleSupport.packageRoot.appendingPathComponent("SampleData").path }

    static func generator() throws -> (SampleGenerator, Int) {
        let manifest = try DemoLedger.readManifest(directory)
        let options = SampleGenerator.Options(customers: manifest.customers, seedText: manifest.seed, from: manifest.from, to: manifest.now)
        return (SampleGenerator(options), manifest.customers)
    }

    @Test("the serial refunder's purchases span the days the README says, from and to the dates it says")
    func serialRefunderSpan() throws {
        let readme = try String(contentsOfFile: Self.directory + "/README.md", encoding: .utf8)
        let (generator, _) = try Self.generator()
        let index = try #require(SampleStory.allCases.firstIndex(of: .serialRefunder))
        let bought = generator.life(index).transactions.filter { $0.product.id == "coins.500" }.map(\.purchase).sorted()
        #expect(bought.count == 4)
        let first = try #require(bought.first), last = try #require(bought.last)
        let days = (last - first) / 86_400_000
        func date(_ ms: Int64) -> String { String(Timestamp(millisecondsSince1970: ms).iso8601.prefix(10)) }
        let row = try #require(readme.split(separator: "\n").first { $0.contains("a serial refunder") })
        #expect(row.contains("four coins.500 purchases in \(days) days (\(date(first)) to \(date(last)))"), "\(row)")
    }

    @Test("the README says how many customers the dashboard lists, and how many bought nothing")
    func customersListed() throws {
        let readme = try String(contentsOfFile: Self.directory + "/README.md", encoding: .utf8)
        let (generator, customers) = try Self.generator()
        let none = (0..<customers).filter { generator.life($0).transactions.isEmpty }.count
        #expect(none > 0)
        #expect(readme.contains("\(customers) made-up customers"))
        #expect(readme.contains("The dashboard lists \(customers - none) of them: the other \(none) bought nothing"), "\(none) bought nothing")
    }
}
