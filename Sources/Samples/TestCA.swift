import Crypto
import Foundation
import ReceiptModel
import SwiftASN1
import X509

/// A certificate authority shaped like Apple's App Store signing chain, for tests and generated data.
///
/// Root and intermediate are P-384 (as Apple Root CA - G3 and the WWDR intermediates are), the leaf
/// P-256 (ES256 signs with it); the intermediate carries Apple's marker OID 1.2.840.113635.100.6.2.1
/// and the leaf 1.2.840.113635.100.6.11.1. Keys derive from a seed, so a seed gives the same keys.
/// Never trusted outside demo mode and tests.
// Immutable after init; swift-crypto does not mark its private keys Sendable on Linux.
public struct TestCA: @unchecked Sendable {
    public let rootKey: P384.Signing.PrivateKey
    public let intermediateKey: P384.Signing.PrivateKey
    public let leafKey: P256.Signing.PrivateKey
    public let root: Certificate
    public let intermediate: Certificate
    public let leaf: Certificate

    /// What to put in the chain, so tests can mint chains Apple would reject.
    public struct Options: Sendable {
        public var seed: String
        public var notBefore: Timestamp
        public var notAfter: Timestamp
        /// Leaf validity, when it should differ from the chain's.
        public var leafNotAfter: Timestamp?
        public var leafMarker: Bool
        public var intermediateMarker: Bool
        public var rootName: String

        public init(
            seed: String = "receiptdesk-test-ca", notBefore: Timestamp = Timestamp.utc(year: 2020, month: 1, day: 1),
            notAfter: Timestamp = Timestamp.utc(year: 2045, month: 1, day: 1), leafNotAfter: Timestamp? = nil,
            leafMarker: Bool = true, intermediateMarker: Bool = true, rootName: String = "ReceiptDesk Test Root CA"
        ) {
            self.seed = seed
            self.notBefore = notBefore
            self.notAfter = notAfter
            self.leafNotAfter = leafNotAfter
            self.leafMarker = leafMarker
            self.intermediateMarker = intermediateMarker
            self.rootName = rootName
        }
    }

    /// Apple's leaf marker OID.
    public static let leafMarkerOID: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 11, 1]
    /// Apple's intermediate marker OID.
    public static let intermediateMarkerOID: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 2, 1]

    /// Creates the chain for `options`.
    public init(_ options: Options = Options()) throws {
        rootKey = try P384.Signing.PrivateKey(rawRepresentation: Self.seedBytes(options.seed + "/root", count: 48))
        intermediateKey = try P384.Signing.PrivateKey(
            rawRepresentation: Self.seedBytes(options.seed + "/intermediate", count: 48))
        leafKey = try P256.Signing.PrivateKey(rawRepresentation: Self.seedBytes(options.seed + "/leaf", count: 32))
        let from = Self.date(options.notBefore)
        let until = Self.date(options.notAfter)
        let rootName = try DistinguishedName {
            CommonName(options.rootName)
            OrganizationName("ReceiptDesk Test")
            CountryName("US")
        }
        let intermediateName = try DistinguishedName {
            CommonName("ReceiptDesk Test Worldwide Developer Relations")
            OrganizationName("ReceiptDesk Test")
        }
        let leafName = try DistinguishedName {
            CommonName("ReceiptDesk Test App Store Receipt Signing")
            OrganizationName("ReceiptDesk Test")
        }
        root = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(bytes: [1]),
            publicKey: .init(rootKey.publicKey), notValidBefore: from, notValidAfter: until,
            issuer: rootName, subject: rootName, signatureAlgorithm: .ecdsaWithSHA384,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
            },
            issuerPrivateKey: .init(rootKey))
        intermediate = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(bytes: [2]),
            publicKey: .init(intermediateKey.publicKey), notValidBefore: from, notValidAfter: until,
            issuer: rootName, subject: intermediateName, signatureAlgorithm: .ecdsaWithSHA384,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                if options.intermediateMarker {
                    Certificate.Extension(oid: Self.intermediateMarkerOID, critical: false, value: [0x05, 0x00])
                }
            },
            issuerPrivateKey: .init(rootKey))
        leaf = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(bytes: [3]),
            publicKey: .init(leafKey.publicKey), notValidBefore: from,
            notValidAfter: Self.date(options.leafNotAfter ?? options.notAfter),
            issuer: intermediateName, subject: leafName, signatureAlgorithm: .ecdsaWithSHA384,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                if options.leafMarker {
                    Certificate.Extension(oid: Self.leafMarkerOID, critical: false, value: [0x05, 0x00])
                }
            },
            issuerPrivateKey: .init(intermediateKey))
    }

    /// DER of a certificate.
    public static func der(_ certificate: Certificate) -> [UInt8] {
        var serializer = DER.Serializer()
        try! serializer.serialize(certificate)
        return serializer.serializedBytes
    }

    /// The root's DER, for `--trust-root`.
    public var rootDER: [UInt8] { Self.der(root) }

    /// The root as PEM text.
    public var rootPEM: String { try! root.serializeAsPEM().pemString }

    /// The `x5c` header value: leaf, intermediate, root as base64 DER.
    public var x5c: [String] { [leaf, intermediate, root].map { Data(Self.der($0)).base64EncodedString() } }

    private static func date(_ timestamp: Timestamp) -> Date {
        Date(timeIntervalSince1970: Double(timestamp.millisecondsSince1970) / 1000)
    }

    /// Deterministic key bytes from a seed (a valid scalar for both curves with overwhelming probability).
    static func seedBytes(_ seed: String, count: Int) -> [UInt8] {
        var out: [UInt8] = []
        var counter: UInt8 = 0
        while out.count < count {
            out += SHA256.hash(data: Array(seed.utf8) + [counter])
            counter += 1
        }
        out = Array(out.prefix(count))
        out[0] &= 0x7F
        out[0] |= 0x01
        return out
    }
}
