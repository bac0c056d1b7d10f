import Foundation
import ReceiptModel
import Testing
import X509

@testable import ReceiptDecoding

/// Inputs that crashed a fuzz harness (scripts/fuzz), fed through the product call that crashed. The files in
/// Fixtures/fuzz/HARNESS are the fuzzer's inputs and also seed its next runs.
@Suite("Fuzzing regressions: receipts and certificates")
struct FuzzRegressionTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/fuzz")

    // The receipt harness's input: the corpus's mindnode receipt with the RSA exponent 65537 (01 00 01) of the
    // third certificate in its envelope (Apple Inc. Root) turned into 01 FA 00, an even number BoringSSL refuses.
    // swift-crypto 3.12 then freed the key twice and the process aborted.
    @Test("a receipt carrying a certificate whose RSA key BoringSSL refuses is rejected, not a crash")
    func receiptWithRefusedRSAKey() async throws {
        let url = Self.fixtures.appendingPathComponent("receipt/crash-855df111f42f7aba78b729aeb36dc597cf0b6df3")
        let der = [UInt8](try Data(contentsOf: url))
        let record = try await makeDecoder().decode(der, provenance: Provenance(path: "fuzz", index: 0))
        #expect(record.kind == .appReceipt)
        #expect(record.verification == .failed)
        #expect(record.error?.code == "signatureInvalid")
        let message = record.error?.message ?? ""
        #expect(message.contains("certificate 3 in the envelope does not parse"), "\(message)")
        #expect(message.contains("the certificate's RSA public key is refused by BoringSSL"), "\(message)")
    }

    /// Apple Inc. Root with its exponent (65537, `02 03 01 00 01`) replaced by three other bytes.
    static func appleIncRoot(exponent: [UInt8]) throws -> [UInt8] {
        var der = AppleRoots.incRootDER
        let old: [UInt8] = [0x02, 0x03, 0x01, 0x00, 0x01]
        let at = try #require((0...(der.count - old.count)).first { Array(der[$0..<($0 + old.count)]) == old })
        der.replaceSubrange((at + 2)..<(at + 5), with: exponent)
        return der
    }

    @Test(
        "certificates whose RSA key BoringSSL refuses are refused before swift-crypto sees them",
        arguments: [
            ([0x01, 0x00, 0x02], "is refused by BoringSSL"),  // even
            ([0x81, 0x00, 0x01], "negative or non-minimal"),  // negative
            ([0x00, 0x00, 0x03], "negative or non-minimal"),  // a redundant leading zero
        ] as [([UInt8], String)])
    func refusedKeys(_ exponent: [UInt8], _ reason: String) throws {
        let der = try Self.appleIncRoot(exponent: exponent)
        do {
            _ = try Certificate(untrustedDER: der)
            Issue.record("a certificate with exponent \(exponent) was accepted")
        } catch let error as RecordError {
            #expect(error.code == "malformed")
            #expect(error.message.contains(reason), "\(error.message)")
        }
    }

    @Test("RSA and EC certificates that were valid still parse, to the same certificate")
    func validKeys() throws {
        for der in [AppleRoots.incRootDER, AppleRoots.rootCAG3DER] {
            #expect(try Certificate(untrustedDER: der) == Certificate(derEncoded: der))
        }
    }
}
