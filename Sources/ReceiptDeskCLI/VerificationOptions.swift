import ArgumentParser
import Foundation
import ReceiptDecoding
import ReceiptModel
import SwiftASN1
import X509

/// The options that decide how signed data is checked (DESIGN section 4).
struct VerificationOptions: ParsableArguments {
    @Option(name: .customLong("trust-root"), help: ArgumentHelp("Also trust this root certificate (PEM or DER).", valueName: "FILE"))
    var trustRoots: [String] = []

    @Option(name: .customLong("bundle-id"), help: "Reject signed data for another bundle id.")
    var bundleId: String?

    @Option(help: "Reject signed data from another environment: production, sandbox, xcode or localtesting (any case).")
    var environment: String?

    @Flag(name: .customLong("no-verify"), help: "Decode without verifying signatures; records are marked skipped.")
    var noVerify = false

    @Flag(name: .customLong("verify-now"), help: "Judge certificate validity now instead of at each payload's signedDate (a receipt's creation date).")
    var verifyNow = false

    /// The options given, as they are spelled on the command line.
    var given: [String] {
        [
            trustRoots.isEmpty ? nil : "--trust-root", bundleId == nil ? nil : "--bundle-id", environment == nil ? nil : "--environment",
            noVerify ? "--no-verify" : nil, verifyNow ? "--verify-now" : nil,
        ].compactMap { $0 }
    }

    func validate() throws {
        // (Taken without a word, either read as if signatures were checked against it.)
        let unused = [trustRoots.isEmpty ? nil : "--trust-root", verifyNow ? "--verify-now" : nil].compactMap { $0 }
        if noVerify && !unused.isEmpty {
            throw ValidationError("--no-verify checks no signature, so \(unused.joined(separator: " and ")) would do nothing: give one or the other")
        }
        if let environment, parsedEnvironment(environment) == nil {
            throw ValidationError("--environment takes production, sandbox, xcode or localtesting, not \(environment)")
        }
    }

    /// The environment's one parser (`Environment(legacy:)`), with a word it does not know refused.
    private func parsedEnvironment(_ text: String) -> Environment? {
        let environment = Environment(legacy: text)
        return environment.isKnown ? environment : nil
    }

    /// The extra roots' DER bytes.
    func extraRootBytes() throws -> [[UInt8]] {
        try trustRoots.map { path in
            guard let data = FileManager.default.contents(atPath: path) else {
                throw CLIError.usage("cannot read trust root \(path)")
            }
            let bytes = [UInt8](data)
            do {
                let certificate = try parseCertificate(bytes)
                var serializer = DER.Serializer()
                try serializer.serialize(certificate)
                return serializer.serializedBytes
            } catch let error as RecordError {
                throw CLIError.usage("trust root \(path) \(error.message)")
            } catch {
                throw CLIError.usage("\(path) is not a PEM or DER certificate")
            }
        }
    }

    /// A record decoder for these options at `now`.
    func makeDecoder(now: Timestamp) throws -> RecordDecoder {
        let extra = try extraRootBytes()
        if noVerify {
            FileHandle.standardError.write(
                Data("receiptdesk: --no-verify: signatures are NOT checked; records are marked skipped\n".utf8))
        }
        let roots = try ([AppleRoots.rootCAG3DER] + extra).map { try Certificate(derEncoded: $0) }
        let policy = VerificationPolicy(
            trustRoots: roots, bundleId: bundleId, environment: environment.flatMap(parsedEnvironment),
            validationTime: verifyNow ? .at(now) : .signedDate, verifySignatures: !noVerify)
        return RecordDecoder(verifier: JWSVerifier(policy: policy), receiptRoots: [AppleRoots.incRootDER] + extra, now: now)
    }
}


/// The current instant: the composition root is the one place that reads the clock.
func currentTimestamp() -> Timestamp {
    Timestamp(millisecondsSince1970: Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)))
}
