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
    /// swift-asn1 accepts a time whose seconds are 61 (a UTCTime or GeneralizedTime may carry leap seconds), and
    /// swift-certificates asserts seconds under 61 when it turns the validity into a `Date` (`notValidBefore`,
    /// read by the verifiers and the chain caches, and `description`, which a refused chain's reason may print), so
    /// in a debug build such a certificate stopped the process (found by fuzzing:
    /// `scripts/fuzz jws`; a release build computed a date one second on). No real time has a 61st second, and
    /// no certificate Apple issues carries one, so the certificate is refused as malformed.
    ///
    /// ```
    /// Certificate ::= SEQUENCE { tbsCertificate TBSCertificate, signatureAlgorithm, signatureValue }
    /// TBSCertificate ::= SEQUENCE { version [0] EXPLICIT INTEGER OPTIONAL, serialNumber, signature, issuer,
    ///     validity, subject, subjectPublicKeyInfo SubjectPublicKeyInfo, ... }
    /// SubjectPublicKeyInfo ::= SEQUENCE { algorithm SEQUENCE { OBJECT IDENTIFIER, ANY OPTIONAL }, BIT STRING }
    /// RSAPublicKey ::= SEQUENCE { modulus INTEGER, publicExponent INTEGER }   -- the BIT STRING's bytes
    /// Validity ::= SEQUENCE { notBefore Time, notAfter Time }   -- Time ::= CHOICE { UTCTime, GeneralizedTime }
    /// ```
    ///
    /// - Throws: a `malformed` ``RecordError`` whose message goes on from the certificate's name in the caller's
    ///   sentence: "is refused: the certificate's ..." or "is not a DER certificate (...)".
    init(untrustedDER der: [UInt8]) throws(RecordError) {
        do {
            try Self.check(der)
        } catch {
            throw RecordError(code: "malformed", message: "is refused: \(error.message)")
        }
        do {
            try self.init(derEncoded: der)
        } catch {
            throw RecordError(code: "malformed", message: "is not a DER certificate (\(plainWords(error)))")
        }
    }

    private static func check(_ der: [UInt8]) throws(RecordError) {
        // Bytes whose structure does not parse this far are left to the certificate parser, which fails before
        // it reaches a key or a time.
        if let root = try? DER.parse(der), let tbs = Self.children(root).first {
            let fields = Self.children(tbs)
            let hasVersion = fields.first.map {
                $0.identifier.tagClass == .contextSpecific && $0.identifier.tagNumber == 0
            }
            let first = hasVersion == true ? 1 : 0
            if fields.count > first + 3 { try Self.checkValidity(fields[first + 3]) }
            if fields.count > first + 5 { try Self.checkRSAKey(fields[first + 5]) }
        }
    }

    private static func checkValidity(_ validity: ASN1Node) throws(RecordError) {
        for (name, time) in zip(["notBefore", "notAfter"], children(validity)) {
            let seconds: Int?
            switch time.identifier {
            case .utcTime: seconds = (try? UTCTime(derEncoded: time))?.seconds
            case .generalizedTime: seconds = (try? GeneralizedTime(derEncoded: time))?.seconds
            default: seconds = nil
            }
            if let seconds, seconds > 60 {
                throw RecordError(
                    code: "malformed",
                    message: "the certificate's \(name) time has second \(seconds) (a minute has at most 61 seconds, 0 to 60)")
            }
        }
    }

    private static let rsaEncryption: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 1, 1]

    private static func checkRSAKey(_ subjectPublicKeyInfo: ASN1Node) throws(RecordError) {
        let spki = children(subjectPublicKeyInfo)
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
