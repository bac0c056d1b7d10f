import Foundation
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
    /// - Parameter headers: decoded headers by their exact base64url text; a run of records signed with one
    ///   chain then decodes its 3 KB header once.
    public init(_ text: [UInt8], headers: JWSHeaderCache? = nil) throws(RecordError) {
        var start = 0
        var end = text.count
        while start < end, isTrimmable(text[start]) { start += 1 }
        while end > start, isTrimmable(text[end - 1]) { end -= 1 }
        let dots = findDots(text, start..<end, limit: 3)
        guard dots.count == 2 else {
            throw RecordError(code: "malformed", message: "a JWS has three dot-separated parts; this has \(dots.count + 1)")
        }
        let headerText = text[start..<dots[0]]
        let cachedHeader = headers?.header(for: headerText)
        let payloadBytes = try Self.decodePart(text, (dots[0] + 1)..<dots[1], name: "payload")
        guard let signature = text.withUnsafeBufferPointer({ Base64.decode(UnsafeBufferPointer(rebasing: $0[(dots[1] + 1)..<end])) })
        else {
            throw RecordError(code: "malformed", message: "the JWS signature is not base64url")
        }
        let header: JSONObject
        if let cachedHeader {
            header = cachedHeader
        } else {
            let headerBytes = try Self.decodePart(text, start..<dots[0], name: "header")
            guard case .object(let parsed) = try Self.parseJSON(headerBytes, name: "header") else {
                throw RecordError(code: "malformed", message: "the JWS header is not a JSON object")
            }
            header = parsed
            headers?.store(parsed, for: headerText)
        }
        guard case .object(let payload) = try Self.parseJSON(payloadBytes, name: "payload") else {
            throw RecordError(code: "malformed", message: "the JWS payload is not a JSON object")
        }
        self.header = header
        self.payload = payload
        self.signingInput = Array(text[start..<dots[1]])
        self.signature = signature
    }

    /// Whether bytes look like a compact JWS: starting `ey` (base64url of `{"`) with at least two dots.
    /// Cheap on purpose; the split and base64url decoding that follow check every byte.
    public static func looksLikeJWS(_ text: [UInt8]) -> Bool {
        guard let first = text.firstIndex(where: { !isTrimmable($0) }), text.count > first + 1,
            text[first] == UInt8(ascii: "e"), text[first + 1] == UInt8(ascii: "y")
        else { return false }
        return findDots(text, first..<text.count, limit: 2).count == 2
    }

    /// How many parts (1 or 2) bytes hold when they are a JWS cut short: base64url and at most one dot, the first part
    /// (whole or cut) decoding to the start of a JSON object that names `alg`, as every JWS header does; nil otherwise.
    public static func truncatedParts(_ text: [UInt8]) -> Int? {
        var start = 0
        var end = text.count
        while start < end, isTrimmable(text[start]) { start += 1 }
        while end > start, isTrimmable(text[end - 1]) { end -= 1 }
        guard end - start >= 8, text[start] == UInt8(ascii: "e"), text[start + 1] == UInt8(ascii: "y") else { return nil }
        let dots = findDots(text, start..<end, limit: 2)
        guard dots.count < 2, text[start..<end].allSatisfy({ isBase64URL($0) || $0 == UInt8(ascii: ".") }) else { return nil }
        // The header's whole base64url quads only: a cut one does not decode.
        let headerEnd = dots.first ?? end
        let quads = start + (headerEnd - start) / 4 * 4
        guard quads > start,
            let header = text.withUnsafeBufferPointer({ Base64.decode(UnsafeBufferPointer(rebasing: $0[start..<quads])) }),
            header.first == UInt8(ascii: "{"), header.count >= 6,
            header.indices.dropLast(4).contains(where: { header[$0..<($0 + 5)].elementsEqual("\"alg\"".utf8) })
        else { return nil }
        return dots.count + 1
    }

    /// The strict form of ``looksLikeJWS(_:)`` for any collection: every byte is base64url, a dot or trimmable.
    public static func looksLikeJWS(strict text: some Collection<UInt8>) -> Bool {
        if let answer = text.withContiguousStorageIfAvailable(looksLikeJWS(strictBuffer:)) { return answer }
        return Array(text).withUnsafeBufferPointer(looksLikeJWS(strictBuffer:))
    }

    /// What each byte is in a JWS's text: 0 not allowed, 1 base64url or trimmable, 2 a dot.
    private static let byteClasses: [UInt8] = (0...255).map { byte in
        let byte = UInt8(byte)
        if byte == UInt8(ascii: ".") { return 2 }
        return isBase64URL(byte) || isTrimmable(byte) ? 1 : 0
    }

    /// ``looksLikeJWS(strict:)`` over contiguous bytes, a table lookup per byte (a nested JWS carries its
    /// certificate chain, so this reads kilobytes for each one: 7% of a Server API import as a chain of tests).
    private static func looksLikeJWS(strictBuffer text: UnsafeBufferPointer<UInt8>) -> Bool {
        guard text.count >= 2, text[0] == UInt8(ascii: "e"), text[1] == UInt8(ascii: "y") else { return false }
        return byteClasses.withUnsafeBufferPointer { classes in
            var dots = 0
            for byte in text[2...] {
                let kind = classes[Int(byte)]
                if kind == 0 { return false }
                dots &+= Int(kind >> 1)
            }
            return dots >= 2
        }
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

/// Decoded JWS headers by their exact base64url text (shared, thread-safe, bounded).
public final class JWSHeaderCache: @unchecked Sendable {
    private let lock = NSLock()
    private var last: (text: [UInt8], header: JSONObject)?
    private var entries: [[UInt8]: JSONObject] = [:]

    public init() {}

    func header(for text: ArraySlice<UInt8>) -> JSONObject? {
        lock.lock()
        defer { lock.unlock() }
        if let last, last.text.count == text.count,
            last.text.withUnsafeBytes({ a in text.withUnsafeBytes { b in memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0 } })
        {
            return last.header
        }
        guard let found = entries[Array(text)] else { return nil }
        last = (Array(text), found)
        return found
    }

    func store(_ header: JSONObject, for text: ArraySlice<UInt8>) {
        lock.lock()
        defer { lock.unlock() }
        if entries.count >= 256 { entries.removeAll() }
        entries[Array(text)] = header
        last = (Array(text), header)
    }
}

/// Offsets of the first `limit` dots in `range`, found with `memchr`.
private func findDots(_ text: [UInt8], _ range: Range<Int>, limit: Int) -> [Int] {
    text.withUnsafeBufferPointer { buffer in
        var found: [Int] = []
        var from = range.lowerBound
        guard let base = buffer.baseAddress else { return found }
        while from < range.upperBound, found.count < limit,
            let hit = memchr(base + from, Int32(UInt8(ascii: ".")), range.upperBound - from)
        {
            let at = base.distance(to: hit.assumingMemoryBound(to: UInt8.self))
            found.append(at)
            from = at + 1
        }
        return found
    }
}
