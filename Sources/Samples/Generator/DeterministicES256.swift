import Crypto
import Foundation

/// ES256 signatures that are a function of the key and the message, so generated data is byte-identical
/// from run to run (swift-crypto's ECDSA draws a random nonce).
///
/// The nonce is the product of two factors from fixed tables, picked by HMAC-SHA256(key, hash): the
/// factors' inverses are computed once, so `k⁻¹` costs one multiplication instead of an inversion (which
/// took half of the generator's time). `k·G` comes from swift-crypto (the public key of a key-agreement key
/// with scalar `k`), and `s = k⁻¹(z + r·d) mod n` is computed here with Montgomery arithmetic modulo the
/// P-256 group order. There are only 64 × 64 nonces, so `r` and `r·d` are computed once per nonce and
/// cached (the point multiplication was a third of the signing time). Nonces repeat across messages, which would give the private key away: it is public
/// test material already. Test data only.
public struct DeterministicES256: Sendable {
    private let d: [UInt64]
    private let keyBytes: [UInt8]
    private let cache = NonceCache()

    /// Nonce factors `a` with `a⁻¹` in Montgomery form; 64 × 64 products.
    private static let factors: [(value: [UInt64], inverseMont: [UInt64])] = (0..<128).map { i in
        var counter: UInt8 = 0
        while true {
            let bytes = Array(SHA256.hash(data: Array("receiptdesk-sample-nonce-factor-\(i)".utf8) + [counter]))
            counter &+= 1
            let value = Order.limbs(bytes)
            guard !Order.isZero(value), Order.less(value, Order.n) else { continue }
            return (value, Order.inverseMont(Order.toMont(value)))
        }
    }

    /// A signer for the P-256 private key with these 32 raw bytes.
    public init(privateKey: P256.Signing.PrivateKey) {
        keyBytes = Array(privateKey.rawRepresentation)
        d = Order.limbs(keyBytes)
    }

    /// The 64-byte `r || s` signature of `message` (SHA-256).
    public func sign(_ message: [UInt8]) -> [UInt8] {
        sign(digest: Array(SHA256.hash(data: message)))
    }

    /// The 64-byte `r || s` signature of a message whose SHA-256 is `hash`.
    public func sign(digest hash: [UInt8]) -> [UInt8] {
        let z = Order.reduce(Order.limbs(hash))
        let pick = Array(HMAC<SHA256>.authenticationCode(for: hash, using: SymmetricKey(data: keyBytes)))
        var step = 0
        while true {
            let ia = Int(pick[0] &+ UInt8(truncatingIfNeeded: step)) % 64
            let ib = Int(pick[1]) % 64
            step += 1
            guard let nonce = cache.nonce(ia * 64 + ib, make: { makeNonce(ia, ib) }) else { continue }
            let sum = Order.add(Order.toMont(z), nonce.rdMont)
            let s = Order.fromMont(Order.mul(nonce.kInverseMont, sum))
            if Order.isZero(s) { continue }
            return Order.bytes(nonce.r) + Order.bytes(s)
        }
    }

    /// `r`, `r·d` and `k⁻¹` for the nonce `k = a·b`, or nil when `r` is zero.
    private func makeNonce(_ ia: Int, _ ib: Int) -> Nonce? {
        let a = Self.factors[ia]
        let b = Self.factors[64 + ib]
        // k = a·b mod n: not zero, as n is prime and neither factor is zero.
        let kMont = Order.mul(Order.toMont(a.value), Order.toMont(b.value))
        let k = Order.bytes(Order.fromMont(kMont))
        guard let point = try? P256.KeyAgreement.PrivateKey(rawRepresentation: k).publicKey.rawRepresentation else { return nil }
        let r = Order.reduce(Order.limbs(Array(point.prefix(32))))
        if Order.isZero(r) { return nil }
        return Nonce(r: r, rdMont: Order.mul(Order.toMont(r), Order.toMont(d)), kInverseMont: Order.mul(a.inverseMont, b.inverseMont))
    }
}

/// What a signature needs from its nonce: `r`, and `r·d` and `k⁻¹` in Montgomery form.
struct Nonce: Sendable {
    var r: [UInt64]
    var rdMont: [UInt64]
    var kInverseMont: [UInt64]
}

/// The nonces computed so far (4,096 at most), shared by the generator's workers.
final class NonceCache: @unchecked Sendable {
    private enum Slot {
        case unknown
        case unusable
        case ready(Nonce)
    }

    private var slots = [Slot](repeating: .unknown, count: 64 * 64)
    private let lock = NSLock()

    func nonce(_ index: Int, make: () -> Nonce?) -> Nonce? {
        lock.lock()
        let slot = slots[index]
        lock.unlock()
        switch slot {
        case .ready(let nonce): return nonce
        case .unusable: return nil
        case .unknown:
            let made = make()
            lock.lock()
            slots[index] = made.map(Slot.ready) ?? .unusable
            lock.unlock()
            return made
        }
    }
}

/// Arithmetic modulo the P-256 group order, little-endian 64-bit limbs, Montgomery form with R = 2^256.
enum Order {
    static let n: [UInt64] = [0xF3B9_CAC2_FC63_2551, 0xBCE6_FAAD_A717_9E84, 0xFFFF_FFFF_FFFF_FFFF, 0xFFFF_FFFF_0000_0000]
    /// -n⁻¹ mod 2^64.
    static let n0: UInt64 = 0xCCD1_C8AA_EE00_BC4F
    /// R mod n.
    static let rModN: [UInt64] = sub([0, 0, 0, 0], n)
    /// R² mod n, by doubling R mod n 256 times.
    static let r2: [UInt64] = {
        var x = rModN
        for _ in 0..<256 { x = add(x, x) }
        return x
    }()

    static func limbs(_ bytes: [UInt8]) -> [UInt64] {
        var out = [UInt64](repeating: 0, count: 4)
        for (i, byte) in bytes.prefix(32).enumerated() {
            let limb = 3 - i / 8
            out[limb] = out[limb] << 8 | UInt64(byte)
        }
        return out
    }

    static func bytes(_ x: [UInt64]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(32)
        for limb in x.reversed() {
            for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: limb >> UInt64(shift))) }
        }
        return out
    }

    static func isZero(_ x: [UInt64]) -> Bool { x.allSatisfy { $0 == 0 } }

    static func less(_ a: [UInt64], _ b: [UInt64]) -> Bool {
        for i in stride(from: 3, through: 0, by: -1) where a[i] != b[i] { return a[i] < b[i] }
        return false
    }

    /// a - b mod 2^256.
    static func sub(_ a: [UInt64], _ b: [UInt64]) -> [UInt64] {
        var out = [UInt64](repeating: 0, count: 4)
        var borrow: UInt64 = 0
        for i in 0..<4 {
            let (d1, o1) = a[i].subtractingReportingOverflow(b[i])
            let (d2, o2) = d1.subtractingReportingOverflow(borrow)
            out[i] = d2
            borrow = (o1 ? 1 : 0) + (o2 ? 1 : 0)
        }
        return out
    }

    /// x mod n for x < 2^256 (< 2n).
    static func reduce(_ x: [UInt64]) -> [UInt64] { less(x, n) ? x : sub(x, n) }

    /// a + b mod n for a, b < n.
    static func add(_ a: [UInt64], _ b: [UInt64]) -> [UInt64] {
        var out = [UInt64](repeating: 0, count: 4)
        var carry: UInt64 = 0
        for i in 0..<4 {
            let (s1, o1) = a[i].addingReportingOverflow(b[i])
            let (s2, o2) = s1.addingReportingOverflow(carry)
            out[i] = s2
            carry = (o1 ? 1 : 0) + (o2 ? 1 : 0)
        }
        return carry != 0 || !less(out, n) ? sub(out, n) : out
    }

    /// x·y + z + c as (high, low).
    @inline(__always) static func mulAdd(_ x: UInt64, _ y: UInt64, _ z: UInt64, _ c: UInt64) -> (UInt64, UInt64) {
        var (high, low) = x.multipliedFullWidth(by: y)
        var overflow: Bool
        (low, overflow) = low.addingReportingOverflow(z)
        if overflow { high &+= 1 }
        (low, overflow) = low.addingReportingOverflow(c)
        if overflow { high &+= 1 }
        return (high, low)
    }

    /// Montgomery product a·b·R⁻¹ mod n (CIOS).
    static func mul(_ a: [UInt64], _ b: [UInt64]) -> [UInt64] {
        var t = [UInt64](repeating: 0, count: 6)
        for i in 0..<4 {
            var c: UInt64 = 0
            for j in 0..<4 { (c, t[j]) = mulAdd(a[j], b[i], t[j], c) }
            var overflow: Bool
            (t[4], overflow) = t[4].addingReportingOverflow(c)
            t[5] = overflow ? 1 : 0
            let m = t[0] &* n0
            (c, _) = mulAdd(m, n[0], t[0], 0)
            for j in 1..<4 { (c, t[j - 1]) = mulAdd(m, n[j], t[j], c) }
            (t[3], overflow) = t[4].addingReportingOverflow(c)
            t[4] = t[5] &+ (overflow ? 1 : 0)
        }
        let result = Array(t[0..<4])
        return t[4] != 0 || !less(result, n) ? sub(result, n) : result
    }

    static func toMont(_ x: [UInt64]) -> [UInt64] { mul(reduce(x), r2) }
    static func fromMont(_ x: [UInt64]) -> [UInt64] { mul(x, [1, 0, 0, 0]) }

    /// x⁻¹ in Montgomery form, as x^(n-2).
    static func inverseMont(_ x: [UInt64]) -> [UInt64] {
        let exponent = sub(n, [2, 0, 0, 0])
        var result = rModN
        for i in stride(from: 255, through: 0, by: -1) {
            result = mul(result, result)
            if exponent[i / 64] >> UInt64(i % 64) & 1 == 1 { result = mul(result, x) }
        }
        return result
    }
}
