/// A seeded random number generator (SplitMix64, Steele, Lea and Flood 2014), so that a campaign
/// run with the same `--seed` draws the same trials, sizes, cut points and kill moments (the
/// `transfer-faults` and `torture` campaigns of `bgbench`).
///
/// Not for secrets: it is chosen because it is tiny, fast and passes BigCrush, and because
/// `SystemRandomNumberGenerator` cannot be replayed.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) {
        state = seed
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }

    /// An independent generator for one part of the campaign (the trial plan, the kill moments),
    /// so that changing how many numbers one part draws does not shift the other.
    public mutating func split() -> SplitMix64 {
        SplitMix64(seed: next())
    }
}
