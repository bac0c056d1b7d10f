import Crypto
import SwiftASN1
import X509

/// Wraps an app receipt payload in PKCS#7 (CMS) SignedData signed by the sample chain's leaf, shaped like
/// Apple's receipts: SHA-256, the payload signed directly (no signed attributes), the whole chain in
/// `certificates` (leaf, intermediate, root, in Apple's order), one SignerInfo naming the leaf by issuer
/// and serial number. Apple signs with RSA; the sample leaf is P-256, so the signature is ECDSA with SHA-256.
///
/// ```
/// ContentInfo ::= SEQUENCE {
///     contentType OBJECT IDENTIFIER,             -- 1.2.840.113549.1.7.2 signedData
///     content     [0] EXPLICIT SignedData }
/// SignedData ::= SEQUENCE {
///     version          INTEGER (1),
///     digestAlgorithms SET OF AlgorithmIdentifier,    -- { sha256 }
///     encapContentInfo SEQUENCE {
///         eContentType OBJECT IDENTIFIER,             -- 1.2.840.113549.1.7.1 data
///         eContent     [0] EXPLICIT OCTET STRING },   -- the AppReceiptPayload
///     certificates     [0] IMPLICIT SET OF Certificate,
///     signerInfos      SET OF SignerInfo }
/// SignerInfo ::= SEQUENCE {
///     version            INTEGER (1),
///     sid                IssuerAndSerialNumber,   -- SEQUENCE { issuer Name, serialNumber INTEGER }
///     digestAlgorithm    AlgorithmIdentifier,     -- sha256
///     signatureAlgorithm AlgorithmIdentifier,     -- ecdsa-with-SHA256
///     signature          OCTET STRING }           -- ECDSA-Sig-Value over SHA-256(eContent)
/// ```
struct SignedReceiptEnvelope: Sendable {
    static let signedDataOID: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 7, 2]
    static let dataOID: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 7, 1]
    static let sha256OID: ASN1ObjectIdentifier = [2, 16, 840, 1, 101, 3, 4, 2, 1]
    static let ecdsaWithSHA256OID: ASN1ObjectIdentifier = [1, 2, 840, 10045, 4, 3, 2]
    static let certificatesTag = ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific)

    let signer: DeterministicES256
    /// Leaf, intermediate, root: DER.
    var certificates: [[UInt8]]
    /// The leaf's issuer Name, DER.
    let issuer: [UInt8]
    /// The leaf's serial number: the INTEGER's content octets.
    let serialNumber: [UInt8]

    /// The envelope for the sample chain (``SampleCA``), signing with `signer` (the leaf's key).
    init(signer: DeterministicES256) {
        self.signer = signer
        certificates = [SampleCA.leafDER, SampleCA.intermediateDER, SampleCA.rootDER]
        do {
            let leaf = try Certificate(derEncoded: SampleCA.leafDER)
            var serializer = DER.Serializer()
            try serializer.serialize(leaf.issuer)
            issuer = serializer.serializedBytes
            serialNumber = Array(leaf.serialNumber.bytes)
        } catch {
            preconditionFailure("the sample leaf certificate is a constant and parses: \(error)")
        }
    }

    /// The DER of a ContentInfo holding `payload`, signed.
    func sign(_ payload: [UInt8]) -> [UInt8] {
        let raw = signer.sign(payload)
        let signature: [UInt8]
        do {
            signature = Array(try P256.Signing.ECDSASignature(rawRepresentation: raw).derRepresentation)
        } catch {
            preconditionFailure("a 64-byte r||s is a P-256 signature: \(error)")
        }
        var coder = DER.Serializer()
        do {
            try coder.appendConstructedNode(identifier: .sequence) { coder in
                try coder.serialize(Self.signedDataOID)
                try coder.serialize(explicitlyTaggedWithTagNumber: 0, tagClass: .contextSpecific) { coder in
                    try signedData(payload, signature: signature, into: &coder)
                }
            }
        } catch {
            preconditionFailure("the envelope's parts are all encodable: \(error)")
        }
        return coder.serializedBytes
    }

    private func signedData(_ payload: [UInt8], signature: [UInt8], into coder: inout DER.Serializer) throws {
        try coder.appendConstructedNode(identifier: .sequence) { coder in
            try coder.serialize(1)
            try coder.appendConstructedNode(identifier: .set) { coder in try Self.sha256(into: &coder) }
            try coder.appendConstructedNode(identifier: .sequence) { coder in
                try coder.serialize(Self.dataOID)
                try coder.serialize(
                    ASN1OctetString(contentBytes: payload[...]), explicitlyTaggedWithTagNumber: 0,
                    tagClass: .contextSpecific)
            }
            // certificates [0] IMPLICIT: already DER, written as they are.
            coder.appendConstructedNode(identifier: Self.certificatesTag) { coder in
                for certificate in certificates { coder.serializeRawBytes(certificate) }
            }
            try coder.appendConstructedNode(identifier: .set) { coder in
                try coder.appendConstructedNode(identifier: .sequence) { coder in
                    try coder.serialize(1)
                    coder.appendConstructedNode(identifier: .sequence) { coder in
                        coder.serializeRawBytes(issuer)
                        coder.appendPrimitiveNode(identifier: .integer) { $0.append(contentsOf: serialNumber) }
                    }
                    try Self.sha256(into: &coder)
                    try coder.appendConstructedNode(identifier: .sequence) { coder in
                        try coder.serialize(Self.ecdsaWithSHA256OID)
                    }
                    try coder.serialize(ASN1OctetString(contentBytes: signature[...]))
                }
            }
        }
    }

    /// `AlgorithmIdentifier { sha256, NULL }`, as Apple writes it.
    private static func sha256(into coder: inout DER.Serializer) throws {
        try coder.appendConstructedNode(identifier: .sequence) { coder in
            try coder.serialize(sha256OID)
            try coder.serialize(ASN1Null())
        }
    }
}
