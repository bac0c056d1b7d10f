import ReceiptModel
import X509

/// The trust anchors for PKCS#7 app receipts, parsed once, and the envelope chains already validated against them.
///
/// One per ``RecordDecoder``: its roots never change, so a chain validated here is only ever reused against the
/// same roots. Receipts from one signer share their envelope's certificates, so a run of them costs one signature
/// check each instead of a chain validation (two P-384 verifications and certificate parsing) each.
final class ReceiptTrust: Sendable {
    /// The configured roots that are certificates.
    let roots: [Certificate]
    /// One warning per configured root that is not a certificate and was not used.
    let warnings: [String]
    /// Envelope chains that validated against ``roots``, with the instants they stay valid at.
    let chains = ValidatedChainCache<ReceiptSignerChain, Certificate>()

    /// Parses the configured roots (DER); one that does not parse is named in ``warnings``, not used.
    init(rootDERs: [[UInt8]]) {
        var roots: [Certificate] = []
        var warnings: [String] = []
        for (index, der) in rootDERs.enumerated() {
            do {
                roots.append(try Certificate(untrustedDER: der))
            } catch {
                warnings.append("app receipt trust root \(index + 1) of \(rootDERs.count) \(error.message) and was not used")
            }
        }
        self.roots = roots
        self.warnings = warnings
    }
}

/// What a receipt envelope's chain verdict depends on besides the roots and the instant: the exact bytes of every
/// certificate in the envelope (the leaf and the pool of intermediates) and the serial number that picks the signer.
struct ReceiptSignerChain: Hashable, Sendable {
    /// The envelope's certificates, DER, in envelope order.
    let certificates: [[UInt8]]
    /// The SignerInfo's serial number (the INTEGER's content octets).
    let serialNumber: [UInt8]
}
