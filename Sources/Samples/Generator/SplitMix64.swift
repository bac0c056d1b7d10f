/// SplitMix64 (Steele, Lea and Flood): a small, fast, seedable generator. The sample generator never
/// touches the system RNG, so the same seed always gives the same bytes.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator for `seed`.
    public init(seed: UInt64) {
        state = seed
    }

    /// A generator for one stream of `seed` (for example one customer), independent of the others.
    public init(seed: UInt64, stream: UInt64) {
        var mixer = SplitMix64(seed: seed ^ 0x9E37_79B9_7F4A_7C15 &* (stream &+ 1))
        state = mixer.next() ^ stream &* 0xD1B5_4A32_D192_ED03
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A uniform integer in `range`.
    public mutating func int(_ range: ClosedRange<Int>) -> Int {
        let width = UInt64(range.upperBound - range.lowerBound) + 1
        return range.lowerBound + Int(next() % width)
    }

    /// A uniform integer in `range`.
    public mutating func int64(_ range: ClosedRange<Int64>) -> Int64 {
        let width = UInt64(range.upperBound - range.lowerBound) + 1
        return range.lowerBound + Int64(next() % width)
    }

    /// True with probability `p`.
    public mutating func chance(_ p: Double) -> Bool {
        Double(next() >> 11) / Double(1 << 53) < p
    }

    /// One of `items`, weighted.
    public mutating func pick<T>(_ items: [(T, Double)]) -> T {
        let total = items.reduce(0) { $0 + $1.1 }
        var x = Double(next() >> 11) / Double(1 << 53) * total
        for (item, weight) in items {
            if x < weight { return item }
            x -= weight
        }
        return items[items.count - 1].0
    }
}
