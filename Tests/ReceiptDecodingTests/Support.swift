import Foundation
import ReceiptDecoding
import ReceiptModel
import X509

/// The public corpus beside the project (`../shared/corpus`), read in place; see its SOURCES.md.
enum Corpus {
    static let root: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("shared/corpus")

    static func path(_ relative: String) -> String { root.appendingPathComponent(relative).path }

    /// The file's bytes; a file that is not there fails the test that wanted it (it is not read as empty).
    static func bytes(_ relative: String) throws -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path(relative)) else { throw MissingFile(path: path(relative)) }
        return [UInt8](data)
    }

    struct MissingFile: Error, CustomStringConvertible {
        var path: String
        var description: String { "no corpus file at \(path) (see ../shared/corpus/SOURCES.md)" }
    }
}

/// A fixed instant for tests: 2026-01-01T00:00:00Z.
let testNow = Timestamp.utc(year: 2026, month: 1, day: 1)

/// A decoder with Apple's roots plus `extraRoots`, as the CLI builds it.
func makeDecoder(
    extraRoots: [[UInt8]] = [], verify: Bool = true, bundleId: String? = nil, environment: Environment? = nil,
    validationTime: VerificationPolicy.ValidationTime = .signedDate
) throws -> RecordDecoder {
    let roots = try ([AppleRoots.rootCAG3DER] + extraRoots).map { try Certificate(derEncoded: $0) }
    let policy = VerificationPolicy(
        trustRoots: roots, bundleId: bundleId, environment: environment, validationTime: validationTime,
        verifySignatures: verify)
    return RecordDecoder(verifier: JWSVerifier(policy: policy), receiptRoots: [AppleRoots.incRootDER] + extraRoots, now: testNow)
}

/// Splits `bytes` in awkward chunk sizes (so records straddle chunks) and decodes every record
/// (with ``makeDecoder(extraRoots:verify:bundleId:environment:validationTime:)``'s decoder unless given one).
func decodeAll(_ bytes: [UInt8], path: String = "input", decoder: RecordDecoder? = nil, chunk: Int = 7) async throws
    -> [DecodedRecord]
{
    let decoder = try decoder ?? makeDecoder()
    var splitter = RecordSplitter()
    var pieces: [RecordSplitter.Piece] = []
    var start = 0
    while start < bytes.count {
        let end = min(bytes.count, start + chunk)
        pieces += splitter.feed(Array(bytes[start..<end]))
        start = end
    }
    pieces += splitter.finish()
    var records: [DecodedRecord] = []
    for piece in pieces { records.append(await decoder.decode(piece, path: path)) }
    return records
}

func decodeText(_ text: String, decoder: RecordDecoder? = nil) async throws -> [DecodedRecord] {
    try await decodeAll(Array(text.utf8), decoder: decoder)
}

func decodeCorpus(_ relative: String, decoder: RecordDecoder? = nil) async throws -> [DecodedRecord] {
    try await decodeAll(Corpus.bytes(relative), path: relative, decoder: decoder, chunk: 4096)
}
