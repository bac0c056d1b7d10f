import Crypto

/// Content hashes: the SHA-256 of a record (its identity in a ledger) and of a source file.
extension CanonicalJSON {
    /// The SHA-256 of bytes.
    public static func sha256(_ bytes: [UInt8]) -> [UInt8] {
        Array(SHA256.hash(data: bytes))
    }

    /// The hex SHA-256 of bytes (record content hashes, source hashes).
    public static func sha256Hex(_ bytes: some Sequence<UInt8>) -> String {
        var hasher = SHA256()
        hasher.update(data: Array(bytes))
        return hex(hasher.finalize())
    }

    /// Incremental SHA-256 for a file read in chunks.
    public struct StreamingHash {
        private var hasher = SHA256()
        public init() {}
        public mutating func update(_ bytes: UnsafeRawBufferPointer) { hasher.update(bufferPointer: bytes) }
        public func hexDigest() -> String { hex(hasher.finalize()) }
    }
}

private func hex(_ digest: some Sequence<UInt8>) -> String {
    let digits = Array("0123456789abcdef".utf8)
    var out: [UInt8] = []
    for byte in digest {
        out.append(digits[Int(byte >> 4)])
        out.append(digits[Int(byte & 15)])
    }
    return String(decoding: out, as: UTF8.self)
}
