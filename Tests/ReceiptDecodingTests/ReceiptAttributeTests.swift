import Crypto
import ReceiptDecoding
import ReceiptModel
import Samples
import SwiftASN1
import Testing
import X509

/// App receipts built here byte by byte: a malformed attribute is a rejection naming it, an unused one is
/// absent, an unusable trust root is a warning, and a receipt without a creation date says when it was judged.
@Suite("App receipt attributes and signature checks do not drop errors")
struct ReceiptAttributeTests {
    // MARK: DER by hand

    static func tlv(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] {
        var length: [UInt8]
        if content.count < 0x80 {
            length = [UInt8(content.count)]
        } else {
            var n = content.count
            var bytes: [UInt8] = []
            while n > 0 {
                bytes.insert(UInt8(n & 0xFF), at: 0)
                n >>= 8
            }
            length = [0x80 | UInt8(bytes.count)] + bytes
        }
        return [tag] + length + content
    }
    static func integer(_ value: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        var n = value
        repeat {
            bytes.insert(UInt8(n & 0xFF), at: 0)
            n >>= 8
        } while n > 0
        if bytes[0] & 0x80 != 0 { bytes.insert(0, at: 0) }
        return tlv(0x02, bytes)
    }
    static func utf8(_ text: String) -> [UInt8] { tlv(0x0C, Array(text.utf8)) }
    static func ia5(_ text: String) -> [UInt8] { tlv(0x16, Array(text.utf8)) }
    static func attribute(_ type: Int, _ value: [UInt8]) -> [UInt8] { tlv(0x30, integer(type) + integer(1) + tlv(0x04, value)) }
    static func set(_ elements: [[UInt8]]) -> [UInt8] { tlv(0x31, elements.flatMap { $0 }) }

    static let signedDataOID: [UInt8] = [0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x02]
    static let dataOID: [UInt8] = [0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x01]
    static let sha256OID: [UInt8] = [0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01]
    static let ecdsaSHA256OID: [UInt8] = [0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x04, 0x03, 0x02]

    /// A receipt payload: bundle id, creation date (unless `created` is nil), and in-app entries.
    static func payload(bundle: [UInt8] = utf8("com.example"), created: String? = "2025-06-01T00:00:00Z", inApp: [[[UInt8]]]) -> [UInt8] {
        var attributes = [attribute(0, utf8("Production")), attribute(2, bundle)]
        if let created { attributes.append(attribute(12, ia5(created))) }
        for entry in inApp { attributes.append(attribute(17, set(entry))) }
        return set(attributes)
    }

    static func envelope(_ payload: [UInt8], certificates: [[UInt8]] = [], signerInfos: [[UInt8]] = []) -> [UInt8] {
        let encapsulated = tlv(0x30, dataOID + tlv(0xA0, tlv(0x04, payload)))
        var signedData = integer(1) + set([]) + encapsulated
        if !certificates.isEmpty { signedData += tlv(0xA0, certificates.flatMap { $0 }) }
        signedData += set(signerInfos)
        return tlv(0x30, signedDataOID + tlv(0xA0, tlv(0x30, signedData)))
    }

    static let goodEntry = [
        attribute(1701, integer(1)), attribute(1702, utf8("pro.lifetime")), attribute(1703, utf8("1000")),
        attribute(1704, ia5("2025-05-01T10:00:00Z")), attribute(1705, utf8("1000")),
    ]

    func decode(_ der: [UInt8], decoder: RecordDecoder? = nil) async throws -> DecodedRecord {
        try await (decoder ?? makeDecoder()).decode(der, provenance: Provenance(path: "receipt", index: 0))
    }

    // MARK: Attributes

    @Test("a well-formed unsigned receipt decodes; empty values and empty strings are absent")
    func wellFormed() async throws {
        let entry = Self.goodEntry + [Self.attribute(1708, []), Self.attribute(1712, Self.ia5("")), Self.attribute(1721, Self.utf8(""))]
        let record = try await decode(Self.envelope(Self.payload(inApp: [entry])))
        #expect(record.isOK, "\(String(describing: record.error))")
        #expect(record.verification == .unsigned)
        let t = try #require(record.transactions.first)
        #expect(t.productId == "pro.lifetime")
        #expect(t.expiresDate == nil && t.revocationDate == nil && t.offerIdentifier == nil)
        #expect(record.receipt?.bundleId == "com.example")
    }

    @Test("an attribute this version does not map keeps its text, integer or bytes; an empty string is unused, not base64")
    func unmappedAttributes() async throws {
        let entry =
            Self.goodEntry + [
                Self.attribute(1709, Self.utf8("")), Self.attribute(1714, Self.ia5("")), Self.attribute(1715, []),
                Self.attribute(1722, Self.utf8("kept")), Self.attribute(1723, Self.integer(0)),
                Self.attribute(1724, [0xFF, 0x00]),
            ]
        let record = try await decode(Self.envelope(Self.payload(inApp: [entry])))
        let t = try #require(record.transactions.first)
        // Apple's receipts (the corpus's) carry 1709 and 1714-1718 as empty UTF8Strings: shown as "DAA=" before.
        #expect(t.extra["attribute.1709"] == .null)
        #expect(t.extra["attribute.1714"] == .null)
        #expect(t.extra["attribute.1715"] == .null)
        #expect(t.extra["attribute.1722"] == .string("kept"))
        #expect(t.extra["attribute.1723"] == .number("0"))
        #expect(t.extra["attribute.1724"] == .string("/wA="))
    }

    @Test("a receipt-level attribute this version does not map is unused when it is an empty string")
    func unmappedReceiptAttribute() async throws {
        var attributes = [Self.attribute(0, Self.utf8("Production")), Self.attribute(2, Self.utf8("com.example"))]
        attributes += [Self.attribute(20, Self.utf8("")), Self.attribute(8, Self.ia5("")), Self.attribute(10, Self.utf8("4+"))]
        let record = try await decode(Self.envelope(Self.set(attributes)))
        let receipt = try #require(record.receipt)
        #expect(receipt.extra["attribute.20"] == .null)
        #expect(receipt.extra["attribute.8"] == .null)
        #expect(receipt.extra["attribute.10"] == .string("4+"))
    }

    @Test(
        "a mapped attribute of the wrong type is a rejection naming it, not an absent field",
        arguments: [
            (1702, integer(7), "attribute 1702 in in_app[0] is not a UTF8String or IA5String"),
            (1701, utf8("one"), "attribute 1701 in in_app[0] is not an INTEGER"),
            (1704, [0xFF, 0x00], "attribute 1704 in in_app[0] is not a UTF8String or IA5String"),
            (1711, tlv(0x02, [0x01, 0, 0, 0, 0, 0, 0, 0, 0]), "attribute 1711 in in_app[0] does not fit in 64 bits"),
            (1705, tlv(0x0C, [0xC3, 0x28]), "attribute 1705 in in_app[0] is not UTF-8"),
        ])
    func wrongType(type: Int, value: [UInt8], message: String) async throws {
        // The first attribute of a type wins, so the malformed one goes first.
        let ordered = [Self.attribute(type, value)] + Self.goodEntry
        let record = try await decode(Self.envelope(Self.payload(inApp: [ordered])))
        #expect(record.error?.code == "malformedAttribute")
        #expect(record.error?.message.contains(message) == true, "\(String(describing: record.error))")
    }

    @Test("a receipt-level attribute of the wrong type is a rejection too")
    func receiptLevelWrongType() async throws {
        let record = try await decode(Self.envelope(Self.payload(bundle: Self.integer(5), inApp: [Self.goodEntry])))
        #expect(record.error?.code == "malformedAttribute")
        #expect(record.error?.message.contains("attribute 2 in the receipt") == true)
    }

    @Test("an attribute whose value is not an OCTET STRING is a rejection")
    func valueNotOctets() async throws {
        let odd = Self.tlv(0x30, Self.integer(1702) + Self.integer(1) + Self.utf8("pro"))
        let record = try await decode(Self.envelope(Self.payload(inApp: [[odd] + Self.goodEntry])))
        #expect(record.error?.code == "malformedAttribute")
        #expect(record.error?.message.contains("attribute 1702") == true)
    }

    // MARK: Signature checks

    @Test("a configured receipt root that is not a certificate is a warning on the record, not skipped in silence")
    func unusableRoot() async throws {
        let decoder = RecordDecoder(
            verifier: JWSVerifier(policy: VerificationPolicy(trustRoots: [])),
            receiptRoots: [AppleRoots.incRootDER, [0x30, 0x03, 0x02, 0x01, 0x00]], now: testNow)
        let record = try await decode(Self.envelope(Self.payload(inApp: [Self.goodEntry])), decoder: decoder)
        #expect(record.isOK)
        #expect(record.warnings.contains { $0.contains("app receipt trust root 2 of 2 is not a DER certificate") }, "\(record.warnings)")
    }

    static func signed(_ payload: [UInt8], ca: TestCA) throws -> [UInt8] {
        func der(_ certificate: Certificate) throws -> [UInt8] {
            var serializer = DER.Serializer()
            try serializer.serialize(certificate)
            return serializer.serializedBytes
        }
        let signature = try ca.leafKey.signature(for: payload).derRepresentation
        let sid = tlv(0x30, tlv(0x30, []) + tlv(0x02, Array(ca.leaf.serialNumber.bytes)))
        let signer = tlv(
            0x30, integer(1) + sid + tlv(0x30, sha256OID) + tlv(0x30, ecdsaSHA256OID) + tlv(0x04, Array(signature)))
        return envelope(payload, certificates: [try der(ca.leaf), try der(ca.intermediate)], signerInfos: [signer])
    }

    @Test("a signed receipt without a creation date is judged now and says so, not as of 1970")
    func noCreationDate() async throws {
        let ca = try TestCA()
        var serializer = DER.Serializer()
        try serializer.serialize(ca.root)
        let decoder = try makeDecoder(extraRoots: [serializer.serializedBytes])
        let dated = try await decode(try Self.signed(Self.payload(inApp: [Self.goodEntry]), ca: ca), decoder: decoder)
        #expect(dated.verification == .verified, "\(String(describing: dated.error))")
        #expect(dated.warnings.isEmpty)
        let undated = try await decode(try Self.signed(Self.payload(created: nil, inApp: [Self.goodEntry]), ca: ca), decoder: decoder)
        #expect(undated.verification == .verified, "\(String(describing: undated.error))")
        #expect(undated.warnings.contains { $0.contains("no creation date (attribute 12)") && $0.contains(testNow.iso8601) })
    }

    @Test("a signature that does not verify is rejected with the reason")
    func badSignatureReason() async throws {
        let ca = try TestCA()
        var tampered = try Self.signed(Self.payload(inApp: [Self.goodEntry]), ca: ca)
        // Flip a byte of the product id inside the signed payload.
        let needle = Array("pro.lifetime".utf8)
        let at = try #require((0...(tampered.count - needle.count)).first { Array(tampered[$0..<($0 + needle.count)]) == needle })
        tampered[at] ^= 0x01
        let record = try await decode(tampered)
        #expect(record.error?.code == "signatureInvalid")
        #expect(record.error?.message.contains("does not verify with the signer's key") == true, "\(String(describing: record.error))")
    }
}
