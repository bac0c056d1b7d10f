import Crypto
import Foundation

/// Mints compact JWS the way the App Store signs them: ES256 over `base64url(header).base64url(payload)`
/// with the chain in `x5c`.
public struct JWSSigner: Sendable {
    public let ca: TestCA

    public init(ca: TestCA) {
        self.ca = ca
    }

    /// Signs a JSON payload given as text, with a header of `alg`, `x5c` and any extra members.
    /// - Parameters:
    ///   - alg: the `alg` to claim; the signature is ES256 whatever it says (tests forge with this).
    ///   - x5c: the chain to put in the header; the CA's by default.
    public func sign(json payload: String, alg: String = "ES256", x5c: [String]? = nil) -> String {
        let chain = (x5c ?? ca.x5c).map { "\"\($0)\"" }.joined(separator: ",")
        let header = #"{"alg":"\#(alg)","x5c":[\#(chain)]}"#
        return signRaw(header: header, payload: payload)
    }

    /// Signs exactly the given header and payload texts with the leaf key (ES256).
    public func signRaw(header: String, payload: String) -> String {
        let input = base64URL(Array(header.utf8)) + "." + base64URL(Array(payload.utf8))
        let signature = try! ca.leafKey.signature(for: Array(input.utf8))
        return input + "." + base64URL(Array(signature.rawRepresentation))
    }
}

/// Base64url without padding.
public func base64URL(_ bytes: [UInt8]) -> String {
    var text = Data(bytes).base64EncodedString()
    text = text.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
    while text.hasSuffix("=") { text.removeLast() }
    return text
}
