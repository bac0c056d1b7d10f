import Foundation
import ReceiptModel
import X509

/// Certificate chains that validated, by their exact bytes, each with the window of instants in which a fresh
/// validation would give the same answer: the one caching rule for JWS `x5c` chains and PKCS#7 receipt envelopes.
///
/// A chain's verdict depends on its bytes, the trust roots and the instant it is judged at. The bytes are the key;
/// the roots are the owner's (each owner has fixed roots and its own cache, so an entry can never answer for other
/// roots); and an entry answers only inside every validated certificate's validity, where swift-certificates'
/// policy (whose only time-dependent check is expiry) cannot change its mind. Only chains that validated are kept:
/// one that fails is validated afresh each time, so its reason is always the validator's own.
///
/// Thread-safe: the decoder runs on several threads, and a lock guards the table. Two threads that miss at once both
/// validate and both store the same answer.
final class ValidatedChainCache<Chain: Hashable, Value>: @unchecked Sendable {
    private struct Entry {
        let value: Value
        let validFrom: Timestamp
        let validUntil: Timestamp
    }

    private let lock = NSLock()
    private var entries: [Chain: Entry] = [:]
    private var validationCount = 0
    private let capacity: Int

    /// Creates an empty cache that forgets everything once it holds more than `capacity` chains (a bound, not an LRU:
    /// real data comes from a handful of chains).
    init(capacity: Int = 1024) {
        self.capacity = capacity
    }

    /// Number of chains validated in full (cache misses), for measurements and tests.
    var validations: Int { lock.withLock { validationCount } }

    /// What was kept for `chain`, when it validated and `instant` lies inside its window.
    func value(for chain: Chain, at instant: Timestamp) -> Value? {
        guard let entry = lock.withLock({ entries[chain] }), entry.validFrom <= instant, instant <= entry.validUntil
        else { return nil }
        return entry.value
    }

    /// Counts one validation in full that found `chain` valid along `path` (leaf to root), and keeps `value` for the
    /// instants at which every certificate of `path` is valid.
    func keep(_ value: Value, for chain: Chain, validatedPath path: some Sequence<Certificate>) {
        let window = Self.window(path)
        lock.withLock {
            validationCount += 1
            guard window.from <= window.until else { return }
            if entries.count >= capacity { entries.removeAll() }
            entries[chain] = Entry(value: value, validFrom: window.from, validUntil: window.until)
        }
    }

    /// Counts one validation in full that did not find `chain` valid; nothing is kept.
    func countFailure() {
        lock.withLock { validationCount += 1 }
    }

    /// The instants (milliseconds, inclusive) at which every certificate of `path` is valid, as swift-certificates
    /// judges it.
    ///
    /// swift-certificates judges at the validation time rounded to the second, against validity times that may carry
    /// fractional seconds `Certificate.notValidBefore`/`notValidAfter` drop (they floor). The window therefore starts
    /// one second after `notValidBefore`'s whole second and ends at `notValidAfter`'s whole second, so that every
    /// instant inside it is one where a fresh validation passes; an instant in the first second is simply validated
    /// afresh.
    static func window(_ path: some Sequence<Certificate>) -> (from: Timestamp, until: Timestamp) {
        var from: Int64?
        var until: Int64?
        for certificate in path {
            from = max(from ?? .min, wholeSeconds(certificate.notValidBefore) + 1)
            until = min(until ?? .max, wholeSeconds(certificate.notValidAfter))
        }
        // An empty path vouches for no instant: an empty window.
        guard let from, let until else {
            return (Timestamp(millisecondsSince1970: 1), Timestamp(millisecondsSince1970: 0))
        }
        return (Timestamp(millisecondsSince1970: from * 1000), Timestamp(millisecondsSince1970: until * 1000))
    }

    private static func wholeSeconds(_ date: Date) -> Int64 {
        // Certificate dates lie between the years 0 and 9999: always in range.
        Int64(date.timeIntervalSince1970.rounded(.down))
    }
}
