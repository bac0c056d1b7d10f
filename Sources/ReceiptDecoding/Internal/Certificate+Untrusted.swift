import ReceiptModel
import SwiftASN1
import X509
import _CryptoExtras

extension Certificate {
    /// Parses a certificate from bytes anyone may have chosen: an `x5c` entry, a receipt's envelope.
    ///
    /// swift-crypto 3.12 frees an RSA public key twice when BoringSSL refuses its DER (the initialiser frees the
    /// `EVP_PKEY` and throws, then `deinit` frees it again), and swift-certificates calls that initialiser for
    /// every `rsaEncryption` key, so a certificate with a bad RSA key aborted the process (found by fuzzing:
    /// `scripts/fuzz receipt`; swift-crypto 4 frees once). An RSA key is therefore built first from its modulus
    /// and exponent, which BoringSSL checks the same way (`RSA_check_key`) on a path that frees once.
    ///
    /// ```
    /// Certificate ::= SEQUENCE { tbsCertificate TBSCertificate, signatureAlgorithm, signatureValue }
    /// TBSCertificate ::= SEQUENCE { version [0] EXPLICIT INTEGER OPTIONAL, serialNumber, signature, issuer,
    ///     validity, subject, subjectPublicKeyInfo SubjectPublicKeyInfo, ... }
    /// SubjectPublicKeyInfo ::= SEQUENCE { algorithm SEQUENCE { OBJECT IDENTIFIER, ANY OPTIONAL }, BIT STRING }
    /// RSAPublicKey ::= SEQUENCE { modulus INTEGER, publicExponent INTEGER }   -- the BIT STRING's bytes
    /// ```
    init(untrustedDER der: [UInt8]) throws {
        try Self.checkRSAKey(der)
        try self.init(derEncoded: der)
    }

    private static let rsaEncryption: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 1, 1]

    private static func checkRSAKey(_ der: [UInt8]) throws(RecordError) {
        // Bytes that do not lead to an RSA key are left to the certificate parser, which fails before any key
        // when the structure above the key does not parse.
        guard let root = try? DER.parse(der), let tbs = children(root).first else { return }
        let fields = children(tbs)
        let hasVersion = fields.first.map { $0.identifier.tagClass == .contextSpecific && $0.identifier.tagNumber == 0 }
        let index = (hasVersion == true ? 1 : 0) + 5
        guard fields.count > index else { return }
        let spki = children(fields[index])
        guard spki.count == 2, let algorithm = children(spki[0]).first,
            let oid = try? ASN1ObjectIdentifier(derEncoded: algorithm), oid == rsaEncryption
        else { return }
        func unusable(_ reason: String) -> RecordError {
            RecordError(code: "malformed", message: "the certificate's RSA public key \(reason)")
        }
        guard case .primitive(let bits) = spki[1].content, !bits.isEmpty,
            let key = try? DER.parse(Array(bits.dropFirst()))
        else { throw unusable("is not DER") }
        let numbers = children(key)
        guard key.identifier == .sequence, numbers.count == 2,
            numbers.allSatisfy({ $0.identifier == .integer }),
            case .primitive(let modulus) = numbers[0].content, case .primitive(let exponent) = numbers[1].content
        else { throw unusable("is not a SEQUENCE of modulus and exponent") }
        // BoringSSL reads both as unsigned, minimally encoded integers.
        for value in [modulus, exponent] {
            guard let first = value.first, first & 0x80 == 0,
                value.count == 1 || first != 0 || value[value.startIndex + 1] & 0x80 != 0
            else { throw unusable("has a negative or non-minimal integer") }
        }
        do {
            _ = try _RSA.Signing.PublicKey(n: modulus, e: exponent)
        } catch {
            throw unusable("is refused by BoringSSL (\(error))")
        }
    }

    private static func children(_ node: ASN1Node) -> [ASN1Node] {
        guard case .constructed(let nodes) = node.content else { return [] }
        return Array(nodes)
    }
}
