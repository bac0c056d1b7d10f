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
    let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    var out: [UInt8] = []
    out.reserveCapacity((bytes.count + 2) / 3 * 4)
    var i = 0
    while i + 2 < bytes.count {
        let n = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2])
        out += [alphabet[Int(n >> 18 & 63)], alphabet[Int(n >> 12 & 63)], alphabet[Int(n >> 6 & 63)], alphabet[Int(n & 63)]]
        i += 3
    }
    let rest = bytes.count - i
    if rest > 0 {
        let n = UInt32(bytes[i]) << 16 | (rest == 2 ? UInt32(bytes[i + 1]) << 8 : 0)
        out += [alphabet[Int(n >> 18 & 63)], alphabet[Int(n >> 12 & 63)]]
        if rest == 2 { out.append(alphabet[Int(n >> 6 & 63)]) }
    }
    return String(decoding: out, as: UTF8.self)
}
