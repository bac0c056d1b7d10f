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
    bytes.withUnsafeBufferPointer { input in
        let count = base64URLCount(input.count)
        guard count > 0 else { return "" }
        return String(unsafeUninitializedCapacity: count) { out in
            writeBase64URL(input, at: out.baseAddress!)
        }
    }
}

/// The length of the base64url (unpadded) text of `count` bytes.
@inline(__always) func base64URLCount(_ count: Int) -> Int { count / 3 * 4 + (count % 3 == 0 ? 0 : count % 3 + 1) }

private let base64URLAlphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

/// Writes the base64url (unpadded) text of `input` at `out`, which must hold `base64URLCount(input.count)`
/// bytes; returns the bytes written.
@discardableResult
func writeBase64URL(_ input: UnsafeBufferPointer<UInt8>, at out: UnsafeMutablePointer<UInt8>) -> Int {
    base64URLAlphabet.withUnsafeBufferPointer { alphabet in
        var i = 0
        var o = 0
        let count = input.count
        while i + 2 < count {
            let n = UInt32(input[i]) << 16 | UInt32(input[i + 1]) << 8 | UInt32(input[i + 2])
            out[o] = alphabet[Int(n >> 18 & 63)]
            out[o + 1] = alphabet[Int(n >> 12 & 63)]
            out[o + 2] = alphabet[Int(n >> 6 & 63)]
            out[o + 3] = alphabet[Int(n & 63)]
            i += 3
            o += 4
        }
        let rest = count - i
        if rest > 0 {
            let n = UInt32(input[i]) << 16 | (rest == 2 ? UInt32(input[i + 1]) << 8 : 0)
            out[o] = alphabet[Int(n >> 18 & 63)]
            out[o + 1] = alphabet[Int(n >> 12 & 63)]
            o += 2
            if rest == 2 {
                out[o] = alphabet[Int(n >> 6 & 63)]
                o += 1
            }
        }
        return o
    }
}

/// Appends the base64url (unpadded) text of `input` to `out`.
func appendBase64URL(_ input: UnsafeBufferPointer<UInt8>, toArray out: inout [UInt8]) {
    let count = base64URLCount(input.count)
    guard count > 0 else { return }
    let start = out.count
    out.append(contentsOf: repeatElement(0, count: count))
    out.withUnsafeMutableBufferPointer { buffer in _ = writeBase64URL(input, at: buffer.baseAddress! + start) }
}
