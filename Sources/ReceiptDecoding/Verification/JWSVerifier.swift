import Crypto
import Foundation
import ReceiptModel
import SwiftASN1
@_spi(FixedExpiryValidationTime) import X509

/// What signed data must satisfy to be called `verified`, as Apple's `SignedDataVerifier` decides it.
public struct VerificationPolicy: Sendable {
    /// When certificate validity is judged.
    public enum ValidationTime: Sendable, Equatable {
        /// At the payload's `signedDate` (Apple's offline mode); at `now` when the payload has none.
        case signedDate
        /// At the given instant (Apple's online mode uses the current time).
        case at(Timestamp)
    }

    /// The trusted roots (DER certificates). Apple Root CA - G3 by default.
    public var trustRoots: [Certificate]
    /// The bundle id the data must carry, when set.
    public var bundleId: String?
    /// The environment the data must come from, when set.
    public var environment: Environment?
    /// When certificate validity is judged.
    public var validationTime: ValidationTime
    /// `false` decodes without verifying and marks records `skipped` (`--no-verify`).
    public var verifySignatures: Bool

    /// Creates a policy.
    public init(
        trustRoots: [Certificate], bundleId: String? = nil, environment: Environment? = nil,
        validationTime: ValidationTime = .signedDate, verifySignatures: Bool = true
    ) {
        self.trustRoots = trustRoots
        self.bundleId = bundleId
        self.environment = environment
        self.validationTime = validationTime
        self.verifySignatures = verifySignatures
    }

    /// A policy that decodes without verifying (`--no-verify`).
    public static let skipVerification = VerificationPolicy(trustRoots: [], verifySignatures: false)
}

/// The outcome of checking one signature: a value, because a forged record is an expected input.
public enum VerificationResult: Sendable, Equatable {
    case verified
    case unsigned
    case skipped
    case rejected(RecordError)

    /// The record-level verification word.
    public var verification: Verification {
        switch self {
        case .verified: .verified
        case .unsigned: .unsigned
        case .skipped: .skipped
        case .rejected: .failed
        }
    }
}

/// Verifies App Store JWS: ES256, a three-certificate `x5c` chaining to a trusted root, Apple's marker OIDs,
/// validity at the signing date, then the signature, with verified chains cached by their exact bytes.
///
/// A run of transactions signed with one chain costs one P-256 verification each: the chain is parsed
/// and validated once and reused only for instants inside every certificate's validity window.
public final class JWSVerifier: Sendable {
    /// Apple's marker on the leaf certificate (`1.2.840.113635.100.6.11.1`).
    public static let leafMarkerOID: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 11, 1]
    /// Apple's marker on the intermediate certificate (`1.2.840.113635.100.6.2.1`).
    public static let intermediateMarkerOID: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 2, 1]

    public let policy: VerificationPolicy
    private let chains = ValidatedChainCache<[String], P256.Signing.PublicKey>()
    /// Decoded headers by their text, so a run on one chain decodes its header once.
    public let headers = JWSHeaderCache()

    /// Creates a verifier for a policy.
    public init(policy: VerificationPolicy) {
        self.policy = policy
    }

    /// Number of chains validated in full (cache misses), for measurements and tests.
    public var chainValidations: Int { chains.validations }

    /// Verifies a JWS whose payload carries `signedDate` and `environment` as Apple's do.
    /// - Parameter now: the current instant, used when the policy or the payload needs it.
    public func verify(_ jws: CompactJWS, now: Timestamp) async -> VerificationResult {
        guard policy.verifySignatures else { return .skipped }
        let fields = Fields(jws.payload, at: "", notes: DecodeNotes())
        let environment: Environment?
        let signedDate: Timestamp?
        do {
            // AppTransaction payloads say `receiptType` where the others say `environment`.
            var text = try fields.string("environment")
            if text == nil { text = try fields.string("receiptType") }
            environment = text.map(Environment.init(rawValue:))
            signedDate = try fields.timestamp("signedDate")
        } catch {
            return .rejected(RecordError(code: "malformed", message: "the signed payload's \(error.message)"))
        }
        // Xcode and local testing data are unsigned by design (Apple's library skips them too).
        if let environment, environment.isUnsignedByDesign { return .unsigned }
        guard jws.algorithm == "ES256" else {
            let shown = jws.algorithm.map { "\"\($0.prefix(20))\"" } ?? "missing"
            return .rejected(Self.error("algorithmNotAllowed", "alg is \(shown); App Store data is signed with ES256 only"))
        }
        guard case .array(let x5c)? = jws.header["x5c"] else {
            return .rejected(Self.error("chainLength", "the header has no x5c certificate chain"))
        }
        guard x5c.count == 3 else {
            return .rejected(Self.error("chainLength", "x5c holds \(x5c.count) certificates; Apple's chains hold exactly 3"))
        }
        var chainStrings: [String] = []
        for element in x5c {
            guard case .string(let text) = element else {
                return .rejected(Self.error("malformed", "x5c holds \(element.typeName), expected base64 strings"))
            }
            chainStrings.append(text)
        }
        let instant: Timestamp
        switch policy.validationTime {
        case .signedDate: instant = signedDate ?? now
        case .at(let fixed): instant = fixed
        }
        let key: P256.Signing.PublicKey
        if let cached = chains.value(for: chainStrings, at: instant) {
            key = cached
        } else {
            switch await Self.validate(chainStrings, at: instant, policy: policy) {
            case .success(let (found, path)):
                chains.keep(found, for: chainStrings, validatedPath: path)
                key = found
            case .failure(let error):
                chains.countFailure()
                return .rejected(error)
            }
        }
        guard jws.signature.count == 64,
            let signature = try? P256.Signing.ECDSASignature(rawRepresentation: jws.signature)
        else {
            return .rejected(Self.error("signatureInvalid", "the ES256 signature is \(jws.signature.count) bytes, expected 64"))
        }
        guard key.isValidSignature(signature, for: jws.signingInput) else {
            return .rejected(Self.error("signatureInvalid", "the signature does not match the header and payload"))
        }
        // A V2 notification says its environment in `data` (or `summary`), as Apple's verifier reads it there (read
        // only when an environment is asked for: this runs once per signed record).
        if let wanted = policy.environment {
            let nested = environment == nil
                ? (jws.payload["data"]?["environment"] ?? jws.payload["summary"]?["environment"])?.stringValue : nil
            if let signedFor = environment ?? nested.map(Environment.init(rawValue:)), signedFor != wanted {
                return .rejected(Self.error("wrongEnvironment", "signed for \(signedFor), expected \(wanted)"))
            }
        }
        return .verified
    }

    static func error(_ code: String, _ message: String) -> RecordError {
        RecordError(code: code, message: message)
    }
}

extension JWSVerifier {
    /// Parses and validates an `x5c` chain at `instant`: Apple's marker OIDs, validity, a path to a trusted root.
    /// Returns the leaf's key and the validated path.
    private static func validate(
        _ chain: [String], at instant: Timestamp, policy: VerificationPolicy
    ) async -> Result<(P256.Signing.PublicKey, [Certificate]), RecordError> {
        var certificates: [Certificate] = []
        for (index, text) in chain.enumerated() {
            guard let der = Base64.decode(text) else {
                return .failure(JWSVerifier.error("malformed", "x5c[\(index)] is not base64"))
            }
            do {
                certificates.append(try Certificate(untrustedDER: der))
            } catch {
                return .failure(JWSVerifier.error("malformed", "x5c[\(index)] \(error.message)"))
            }
        }
        let leaf = certificates[0]
        let intermediate = certificates[1]
        guard leaf.extensions[oid: JWSVerifier.leafMarkerOID] != nil else {
            return .failure(JWSVerifier.error("missingAppleOID", "the leaf certificate lacks Apple's marker 1.2.840.113635.100.6.11.1"))
        }
        guard intermediate.extensions[oid: JWSVerifier.intermediateMarkerOID] != nil else {
            return .failure(
                JWSVerifier.error("missingAppleOID", "the intermediate certificate lacks Apple's marker 1.2.840.113635.100.6.2.1"))
        }
        let date = Date(timeIntervalSince1970: Double(instant.millisecondsSince1970) / 1000)
        for (index, certificate) in certificates.prefix(2).enumerated()
        where date < certificate.notValidBefore || date > certificate.notValidAfter {
            let name = index == 0 ? "leaf" : "intermediate"
            return .failure(
                JWSVerifier.error(
                    "certificateExpired",
                    "the \(name) certificate is not valid at \(instant) (valid \(stamp(certificate.notValidBefore)) to \(stamp(certificate.notValidAfter)))"
                ))
        }
        var verifier = Verifier(rootCertificates: CertificateStore(policy.trustRoots)) {
            RFC5280Policy(fixedExpiryValidationTime: date)
        }
        let result = await verifier.validate(leaf: leaf, intermediates: CertificateStore([intermediate]))
        guard case .validCertificate(let validated) = result else {
            // Named so a person can tell Apple's chain from test data signed by some other CA, whose root they
            // would add with --trust-root.
            return .failure(
                JWSVerifier.error(
                    "chainInvalid",
                    "x5c does not chain to a trusted root (the intermediate's issuer is \(intermediate.issuer); a test CA's root is trusted with --trust-root FILE)"
                ))
        }
        guard let key = P256.Signing.PublicKey(leaf.publicKey) else {
            return .failure(JWSVerifier.error("algorithmNotAllowed", "the leaf certificate's key is not P-256"))
        }
        return .success((key, Array(validated)))
    }
}

/// A certificate's instant as a timestamp (to the millisecond, down), and as the messages write it.
func stamp(ms date: Date) -> Timestamp {
    Timestamp(millisecondsSince1970: Int64((date.timeIntervalSince1970 * 1000).rounded(.down)))
}

func stamp(_ date: Date) -> String {
    stamp(ms: date).iso8601
}
