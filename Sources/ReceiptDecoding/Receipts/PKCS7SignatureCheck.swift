import Crypto
import Foundation
import ReceiptModel
import SwiftASN1
@_spi(FixedExpiryValidationTime) import X509
import _CryptoExtras

/// Checks an app receipt's PKCS#7 signature: the signer's key signs the payload (directly or through
/// signed attributes), and the signer's certificate chains to a trusted root at the receipt's creation date.
///
/// ```
/// SignerInfo ::= SEQUENCE {
///     version            INTEGER,
///     sid                IssuerAndSerialNumber,
///     digestAlgorithm    AlgorithmIdentifier,
///     signedAttrs        [0] IMPLICIT SET OF Attribute OPTIONAL,
///     signatureAlgorithm AlgorithmIdentifier,
///     signature          OCTET STRING,
///     unsignedAttrs      [1] IMPLICIT SET OF Attribute OPTIONAL }
/// ```
enum PKCS7SignatureCheck {
    static let sha1: ASN1ObjectIdentifier = [1, 3, 14, 3, 2, 26]
    static let sha256: ASN1ObjectIdentifier = [2, 16, 840, 1, 101, 3, 4, 2, 1]
    static let messageDigest: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 9, 4]

    /// What the check found: the verification, why it failed, and what a person should know.
    struct Outcome {
        var verification: Verification
        /// Why the receipt failed, when it did.
        var reason: String?
        /// Things that did not decide the outcome but should be seen (an unusable trust root, a missing date).
        var warnings: [String] = []
    }

    /// The receipt's verification: `verified`, `failed`, `unsigned` (no chain, or Xcode's self-signed
    /// StoreKit certificate that nobody configured as a root), or `skipped`.
    ///
    /// Validity is judged at the receipt's creation date; a receipt without one is judged at `fallback`
    /// (the policy's instant, or now) and says so. A configured root that is not a certificate is named in
    /// a warning rather than skipped in silence.
    ///
    /// The signature over the payload is checked for every receipt; the chain's verdict comes from `trust`'s cache when
    /// the same envelope certificates and signer serial validated before at a window holding this instant, which is
    /// exactly when a fresh validation would find it valid again.
    /// With `at` (`--verify-now`, or a fixed instant), validity is judged then instead, as a JWS's is.
    static func verify(
        _ receipt: PKCS7Receipt, trust: ReceiptTrust, enabled: Bool, fallback: Timestamp, at fixed: Timestamp? = nil
    ) async -> Outcome {
        guard enabled else { return Outcome(verification: .skipped) }
        var warnings = trust.warnings
        func failed(_ reason: String) -> Outcome { Outcome(verification: .failed, reason: reason, warnings: warnings) }
        guard !receipt.certificates.isEmpty, let signer = receipt.signerInfos.first else {
            return Outcome(verification: .unsigned, warnings: warnings)
        }
        let parts = BERValue.children(signer)
        let instant = fixed ?? receipt.receipt.receiptCreationDate ?? fallback
        var chain: ReceiptSignerChain?
        if parts.count >= 5, let serial = serialNumber(parts[1]) {
            chain = ReceiptSignerChain(certificates: receipt.certificates, serialNumber: serial)
        }
        // A hit means these very certificates parsed, held the signer and chained to a root at a window holding
        // `instant`: the checks below that lead to the leaf would all pass again.
        let cachedLeaf = chain.flatMap { trust.chains.value(for: $0, at: instant) }
        var certificates: [Certificate] = []
        let leaf: Certificate
        if let cachedLeaf {
            leaf = cachedLeaf
        } else {
            for (index, der) in receipt.certificates.enumerated() {
                do {
                    certificates.append(try Certificate(untrustedDER: der))
                } catch {
                    return failed("certificate \(index + 1) in the envelope does not parse: it \(error.message)")
                }
            }
            guard parts.count >= 5 else {
                return failed("the SignerInfo has \(parts.count) parts, expected at least 5")
            }
            guard let serial = chain?.serialNumber,
                let found = certificates.first(where: { Array($0.serialNumber.bytes) == serial })
            else { return failed("no certificate in the envelope matches the signer's serial number") }
            leaf = found
        }
        guard let digestOID = BERValue.children(parts[2]).first.flatMap({ try? ASN1ObjectIdentifier(derEncoded: $0) })
        else { return failed("the signer's digest algorithm is not an object identifier") }

        var index = 3
        var signedBytes = receipt.content
        if parts[index].identifier.tagClass == .contextSpecific && parts[index].identifier.tagNumber == 0 {
            // Signed attributes: the signature covers their DER as a SET; messageDigest must match the payload.
            var encoded = Array(parts[index].encodedBytes)
            encoded[0] = 0x31
            guard let expected = messageDigestValue(parts[index]),
                expected == digest(receipt.content, oid: digestOID)
            else { return failed("the signed messageDigest does not match the receipt payload") }
            signedBytes = encoded
            index += 1
        }
        guard parts.count > index + 1, let signature = BERValue.octets(parts[index + 1]),
            isValid(signature: signature, over: signedBytes, digestOID: digestOID, key: leaf.publicKey)
        else { return failed("the signature does not verify with the signer's key") }

        if fixed == nil, receipt.receipt.receiptCreationDate == nil {
            warnings.append("the receipt has no creation date (attribute 12): its certificates were checked at \(fallback.iso8601) instead")
        }
        if cachedLeaf != nil { return Outcome(verification: .verified, warnings: warnings) }
        // Not cached, so the certificates were parsed above and the signer found by its serial: `chain` is set.
        guard let chain else { return failed("no certificate in the envelope matches the signer's serial number") }
        let date = Date(timeIntervalSince1970: Double(instant.millisecondsSince1970) / 1000)
        // A signer that is itself a configured trust anchor (Xcode's StoreKit certificate given with
        // --trust-root) is trusted directly, within its validity.
        if trust.roots.contains(leaf) {
            if date >= leaf.notValidBefore && date <= leaf.notValidAfter {
                trust.chains.keep(leaf, for: chain, validatedPath: [leaf])
                return Outcome(verification: .verified, warnings: warnings)
            }
            trust.chains.countFailure()
            return failed("the signer (a trusted root) is not valid at \(instant.iso8601)")
        }
        var verifier = Verifier(rootCertificates: CertificateStore(trust.roots)) {
            RFC5280Policy(fixedExpiryValidationTime: date)
        }
        let others = certificates.filter { $0 != leaf }
        let result = await verifier.validate(leaf: leaf, intermediates: CertificateStore(others))
        if case .validCertificate(let path) = result {
            trust.chains.keep(leaf, for: chain, validatedPath: path)
            return Outcome(verification: .verified, warnings: warnings)
        }
        trust.chains.countFailure()
        // Xcode's StoreKit Testing receipts are signed by a local self-signed certificate: unsigned by design.
        if certificates.count == 1 && leaf.issuer == leaf.subject { return Outcome(verification: .unsigned, warnings: warnings) }
        return failed(
            "the signer's certificate does not chain to a trusted root at \(instant.iso8601) ("
                + chainFailure(leaf: leaf, others: others, roots: trust.roots, at: date) + ")")
    }

    /// Why a chain did not validate, so a person can tell test data signed under another CA (whose root they would add
    /// with --trust-root) from a chain that reaches a trusted root and fails on it (a certificate not valid at the
    /// instant, or a signature, usage or constraint). A root reached is one of `roots` that is the chain's last
    /// certificate or verifies its signature, not merely one of the same name.
    private static func chainFailure(leaf: Certificate, others: [Certificate], roots: [Certificate], at date: Date) -> String {
        let path = chainPath(from: leaf, in: others)
        let top = path[path.count - 1]
        let reached = roots.first { $0 == top } ?? roots.first { $0.subject == top.issuer && $0.publicKey.isValidSignature(top.signature, for: top) }
        guard let root = reached else {
            let hint = "a test CA's root is trusted with --trust-root FILE"
            if top.issuer == top.subject { return "the chain ends at the self-signed \(top.subject), which is no trusted root; \(hint)" }
            return "the chain ends at a certificate issued by \(top.issuer), which is neither in the envelope nor a trusted root; \(hint)"
        }
        if let lapsed = (path + [root]).first(where: { date < $0.notValidBefore || date > $0.notValidAfter }) {
            return "it reaches the trusted root \(root.subject), but \(lapsed.subject) is valid only from \(stamp(lapsed.notValidBefore)) to \(stamp(lapsed.notValidAfter))"
        }
        return "it reaches the trusted root \(root.subject) and does not validate on it: a signature, a key usage or a constraint fails"
    }

    /// The chain from `leaf` up through `certificates` by issuer, leaf first, each certificate taken once; it ends at
    /// a self-signed certificate or where none of `certificates` issued the last.
    private static func chainPath(from leaf: Certificate, in certificates: [Certificate]) -> [Certificate] {
        var path = [leaf]
        var left = certificates
        while let top = path.last, top.issuer != top.subject, let index = left.firstIndex(where: { $0.subject == top.issuer }) {
            path.append(left.remove(at: index))
        }
        return path
    }

    /// The serial number in a SignerInfo's `sid` (`IssuerAndSerialNumber ::= SEQUENCE { issuer Name, serialNumber
    /// INTEGER }`): the INTEGER's content octets.
    private static func serialNumber(_ sid: ASN1Node) -> [UInt8]? {
        let sidParts = BERValue.children(sid)
        guard sidParts.count == 2, case .primitive(let serial) = sidParts[1].content else { return nil }
        return Array(serial)
    }

    private static func messageDigestValue(_ signedAttributes: ASN1Node) -> [UInt8]? {
        for attribute in BERValue.children(signedAttributes) {
            let parts = BERValue.children(attribute)
            guard parts.count == 2, let oid = try? ASN1ObjectIdentifier(derEncoded: parts[0]), oid == messageDigest,
                let value = BERValue.children(parts[1]).first
            else { continue }
            return BERValue.octets(value)
        }
        return nil
    }

    private static func digest(_ bytes: [UInt8], oid: ASN1ObjectIdentifier) -> [UInt8]? {
        switch oid {
        case sha1: Array(Insecure.SHA1.hash(data: bytes))
        case sha256: Array(SHA256.hash(data: bytes))
        default: nil
        }
    }

    private static func isValid(
        signature: [UInt8], over bytes: [UInt8], digestOID: ASN1ObjectIdentifier, key: Certificate.PublicKey
    ) -> Bool {
        if let rsa = _RSA.Signing.PublicKey(key) {
            let rsaSignature = _RSA.Signing.RSASignature(rawRepresentation: signature)
            switch digestOID {
            case sha1:
                return rsa.isValidSignature(rsaSignature, for: Insecure.SHA1.hash(data: bytes), padding: .insecurePKCS1v1_5)
            case sha256:
                return rsa.isValidSignature(rsaSignature, for: SHA256.hash(data: bytes), padding: .insecurePKCS1v1_5)
            default:
                return false
            }
        }
        if let p256 = P256.Signing.PublicKey(key), digestOID == sha256,
            let ecdsa = try? P256.Signing.ECDSASignature(derRepresentation: signature)
        {
            return p256.isValidSignature(ecdsa, for: SHA256.hash(data: bytes))
        }
        return false
    }
}
