import ReceiptModel

/// A JWS in compact serialisation (`header.payload.signature`), split and decoded on bytes.
///
/// Splitting on `Character`s and converting base64url through string replacement cost Apple's
/// library more than the JSON itself; this works on the UTF-8 bytes once.
public struct CompactJWS: Sendable {
    /// The protected header's members (`alg`, `x5c`, `kid`, `typ`).
    public let header: JSONObject
    /// The decoded payload.
    public let payload: JSONObject
    /// `header.payload` as sent: the bytes the signature covers.
    public let signingInput: [UInt8]
    /// The raw signature bytes.
    public let signature: [UInt8]

    /// The `alg` header value.
    public var algorithm: String? { header["alg"]?.stringValue }

    /// Splits and decodes a compact JWS. Surrounding white space and quotes are ignored.
    public init(_ text: [UInt8]) throws(RecordError) {
        var start = 0
        var end = text.count
        while start < end, isTrimmable(text[start]) { start += 1 }
        while end > start, isTrimmable(text[end - 1]) { end -= 1 }
        var dots: [Int] = []
        for i in start..<end where text[i] == UInt8(ascii: ".") {
            dots.append(i)
            if dots.count > 2 { break }
        }
        guard dots.count == 2 else {
            throw RecordError(code: "malformed", message: "a JWS has three dot-separated parts; this has \(dots.count + 1)")
        }
        let headerBytes = try Self.decodePart(text, start..<dots[0], name: "header")
        let payloadBytes = try Self.decodePart(text, (dots[0] + 1)..<dots[1], name: "payload")
        guard let signature = text.withUnsafeBufferPointer({ Base64.decode(UnsafeBufferPointer(rebasing: $0[(dots[1] + 1)..<end])) })
        else {
            throw RecordError(code: "malformed", message: "the JWS signature is not base64url")
        }
        guard case .object(let header) = try Self.parseJSON(headerBytes, name: "header") else {
            throw RecordError(code: "malformed", message: "the JWS header is not a JSON object")
        }
        guard case .object(let payload) = try Self.parseJSON(payloadBytes, name: "payload") else {
            throw RecordError(code: "malformed", message: "the JWS payload is not a JSON object")
        }
        self.header = header
        self.payload = payload
        self.signingInput = Array(text[start..<dots[1]])
        self.signature = signature
    }

    /// Whether bytes look like a compact JWS: base64url text with dots, starting `ey` (two dots to be valid).
    public static func looksLikeJWS(_ text: some Collection<UInt8>) -> Bool {
        var dots = 0
        var first = true
        var second = false
        for byte in text {
            if first {
                guard byte == UInt8(ascii: "e") else { return false }
                first = false
                second = true
                continue
            }
            if second {
                guard byte == UInt8(ascii: "y") else { return false }
                second = false
                continue
            }
            if byte == UInt8(ascii: ".") {
                dots += 1
            } else if !(isBase64URL(byte) || isTrimmable(byte)) {
                return false
            }
        }
        return dots >= 2
    }

    private static func decodePart(_ text: [UInt8], _ range: Range<Int>, name: String) throws(RecordError) -> [UInt8] {
        guard !range.isEmpty,
            let bytes = text.withUnsafeBufferPointer({ Base64.decode(UnsafeBufferPointer(rebasing: $0[range])) })
        else {
            throw RecordError(code: "malformed", message: "the JWS \(name) is not base64url")
        }
        return bytes
    }

    private static func parseJSON(_ bytes: [UInt8], name: String) throws(RecordError) -> JSONValue {
        do {
            return try JSONParser.parse(bytes)
        } catch {
            throw RecordError(code: "malformed", message: "the JWS \(name) is not JSON: \(error.message)")
        }
    }
}

@inline(__always) func isTrimmable(_ byte: UInt8) -> Bool {
    byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 || byte == UInt8(ascii: "\"")
}

@inline(__always) func isBase64URL(_ byte: UInt8) -> Bool {
    (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || isDigit(byte) || byte == 0x2D
        || byte == 0x5F || byte == 0x3D
}
