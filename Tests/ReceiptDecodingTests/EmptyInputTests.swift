import ReceiptDecoding
import ReceiptModel
import Testing

@Suite("An input with nothing in it holds zero records")
struct EmptyInputTests {
    @Test("an empty file, or one of white space only, holds zero records", arguments: ["", "\n", " \n\r\n\t"])
    func emptyFile(text: String) async throws {
        var splitter = RecordSplitter()
        let pieces = splitter.feed(Array(text.utf8)) + splitter.finish()
        #expect(pieces.isEmpty)
        #expect(try await decodeText(text).isEmpty)
    }
}
