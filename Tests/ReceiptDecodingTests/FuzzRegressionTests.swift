import Crypto
import Foundation
import ReceiptModel
import SwiftASN1
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

    // The decode harness's finding in session 38: white space, then a line starting with "0" and bytes that are not
    // text. Sniffed from the chunk at hand, "0" was a DER receipt's start when the chunk held the rest and text when
    // it did not, so the records the input made depended on how it was read.
    @Test("an input starting with 0 splits into the same records whatever the chunks it is read in")
    func zeroFirstSplitsAlike() throws {
        let url = Self.fixtures.appendingPathComponent("decode/crash-c995119ca23ae1648e14c5c9d9ce6572845ac3bd")
        let bytes = [UInt8](try Data(contentsOf: url))
        func split(_ chunk: Int) -> [RecordSplitter.Piece] {
            var splitter = RecordSplitter()
            var pieces: [RecordSplitter.Piece] = []
            var start = 0
            while start < bytes.count {
                pieces += splitter.feed(Array(bytes[start..<min(bytes.count, start + chunk)]))
                start += chunk
            }
            return pieces + splitter.finish()
        }
        let whole = split(bytes.count)
        for chunk in [1, 2, 7, 64] {
            let pieces = split(chunk)
            #expect(pieces.map(\.bytes) == whole.map(\.bytes) && pieces.map(\.offset) == whole.map(\.offset), "\(chunk)-byte chunks")
        }
        // A DER receipt is binary from its first line, whatever the chunks.
        #expect(RecordSplitter.isBinary([0x30, 0x82, 0x0A]) && !RecordSplitter.isBinary(Array("0000030004".utf8)))
    }

    // The jws harness's crash in CI (stop 20): a leaf certificate whose validity time has second 61, which
    // swift-asn1 accepts and swift-certificates asserts against when it makes the time a Date, so a debug build
    // (this suite's) stopped. CI's input was not kept; this one is made the same way by hand: the corpus's
    // Apple-signed renewal info (awa__go-iap, line 326) with its leaf's notBefore 210825025034Z changed to
    // 210825025061Z, the header re-encoded with the same members.
    @Test("a JWS whose leaf certificate has a time with second 61 is refused as malformed, not a crash")
    func jwsLeafWithSecond61() async throws {
        let url = Self.fixtures.appendingPathComponent("jws/leaf-notBefore-second-61.jws")
        let bytes = [UInt8](try Data(contentsOf: url))
        let record = try #require(try await decodeAll(bytes, path: "fuzz", decoder: makeDecoder(), chunk: 4096).first)
        #expect(record.verification == .failed)
        #expect(record.error?.code == "malformed")
        let message = record.error?.message ?? ""
        #expect(message.contains("x5c[0] is refused: the certificate's notBefore time has second 61"), "\(message)")
    }

    /// A certificate made with swift-certificates, valid until `notAfter`, its DER time's seconds then set to
    /// `seconds` (the first time of `tag`: 0x17 UTCTime, 0x18 GeneralizedTime, which DER uses from 2050).
    static func certificate(notAfter: Date, tag: UInt8, seconds: String) throws -> [UInt8] {
        let key = P256.Signing.PrivateKey()
        let name = try DistinguishedName { CommonName("second \(seconds)") }
        let certificate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(key.publicKey),
            notValidBefore: Date(timeIntervalSince1970: 1_700_000_000), notValidAfter: notAfter, issuer: name,
            subject: name, signatureAlgorithm: .ecdsaWithSHA256, extensions: Certificate.Extensions(),
            issuerPrivateKey: .init(key))
        var der = try certificate.serializeAsPEM().derBytes
        let length: UInt8 = tag == 0x17 ? 13 : 15
        // A tag and length followed by digits and Z: no other bytes of a certificate look like that by chance.
        let at = try #require(
            (0..<(der.count - Int(length) - 2)).first { at in
                let text = der[(at + 2)..<(at + 2 + Int(length))]
                return der[at] == tag && der[at + 1] == length && text.last == UInt8(ascii: "Z")
                    && text.dropLast().allSatisfy { (0x30...0x39).contains($0) }
            })
        let end = at + 2 + Int(length) - 1  // the Z
        der.replaceSubrange((end - 2)..<end, with: Array(seconds.utf8))
        return der
    }

    @Test(
        "a certificate time with second 61 is refused in either encoding, second 60 (a leap second) is not",
        arguments: [
            (Date(timeIntervalSince1970: 1_800_000_000), UInt8(0x17), "notBefore"),  // 2027: both UTCTime
            (Date(timeIntervalSince1970: 2_600_000_000), UInt8(0x18), "notAfter"),  // 2052: notAfter generalized
        ] as [(Date, UInt8, String)])
    func secondSixtyOne(_ notAfter: Date, _ tag: UInt8, _ name: String) throws {
        let refused = try Self.certificate(notAfter: notAfter, tag: tag, seconds: "61")
        do {
            _ = try Certificate(untrustedDER: refused)
            Issue.record("a certificate whose \(name) has second 61 was accepted")
        } catch {
            #expect(error.code == "malformed")
            #expect(error.message.contains("\(name) time has second 61"), "\(error.message)")
        }
        let leap = try Self.certificate(notAfter: notAfter, tag: tag, seconds: "60")
        #expect(try Certificate(untrustedDER: leap) == Certificate(derEncoded: leap))
    }

    @Test("a trust root given with --trust-root, as DER or PEM, is refused the same way; a good one still reads")
    func trustRootWithSecond61() throws {
        let der = try Self.certificate(notAfter: Date(timeIntervalSince1970: 1_800_000_000), tag: 0x17, seconds: "61")
        let pem = PEMDocument(type: "CERTIFICATE", derBytes: der).pemString
        for bytes in [der, Array(pem.utf8)] {
            let error = #expect(throws: RecordError.self) { _ = try parseCertificate(bytes) }
            #expect(error?.message.contains("notBefore time has second 61") == true, "\(String(describing: error))")
        }
        let other = PEMDocument(type: "PRIVATE KEY", derBytes: der).pemString
        #expect(throws: RecordError.self) { _ = try parseCertificate(Array(other.utf8)) }
        let good = try Self.certificate(notAfter: Date(timeIntervalSince1970: 1_800_000_000), tag: 0x17, seconds: "59")
        let goodPEM = PEMDocument(type: "CERTIFICATE", derBytes: good).pemString
        #expect(try parseCertificate(Array(goodPEM.utf8)) == Certificate(derEncoded: good))
        #expect(try parseCertificate(AppleRoots.rootCAG3DER) == Certificate(derEncoded: AppleRoots.rootCAG3DER))
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
        } catch {
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
