/// Deterministic pseudo-random bytes of any size, computed at any offset without producing the
/// bytes before it, so a 1 GiB body needs no 1 GiB file and a test can check any range.
///
/// The bytes are a 65 521-byte pattern (from the seed) rotated by a different amount in each
/// period, so a chunk written at the wrong offset does not match.
public struct GeneratedBytes: Hashable, Sendable {
    /// Length of the repeating pattern (a prime).
    static let period = 65_521
    /// How far the pattern rotates from one period to the next.
    static let rotationStep = 7_919

    public let size: Int64
    public let seed: UInt64
    private let pattern: [UInt8]

    public init(size: Int64, seed: UInt64 = 1) {
        self.size = size
        self.seed = seed
        var state = seed
        var pattern = [UInt8]()
        pattern.reserveCapacity(Self.period + 8)
        while pattern.count < Self.period {
            // splitmix64
            state &+= 0x9E37_79B9_7F4A_7C15
            var value = state
            value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
            value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
            value ^= value >> 31
            for shift in stride(from: 0, to: 64, by: 8) { pattern.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
        }
        self.pattern = Array(pattern.prefix(Self.period))
    }

    /// Fills `buffer` with the bytes starting at `offset`; past `size` the pattern simply goes on.
    public func fill(_ buffer: UnsafeMutableRawBufferPointer, from offset: Int64) {
        var written = 0
        var position = offset
        pattern.withUnsafeBytes { source in
            while written < buffer.count {
                let periodIndex = position / Int64(Self.period)
                let within = Int(position % Int64(Self.period))
                let rotation = Int((periodIndex % Int64(Self.period)) * Int64(Self.rotationStep) % Int64(Self.period))
                let start = (within + rotation) % Self.period
                // A run ends at the end of the period or where the rotated pattern wraps.
                let run = Swift.min(buffer.count - written, Self.period - within, Self.period - start)
                (buffer.baseAddress! + written).copyMemory(from: source.baseAddress! + start, byteCount: run)
                written += run
                position += Int64(run)
            }
        }
    }

    /// The bytes in `range`.
    public func bytes(_ range: Range<Int64>) -> [UInt8] {
        var result = [UInt8](repeating: 0, count: Int(range.count))
        result.withUnsafeMutableBytes { fill($0, from: range.lowerBound) }
        return result
    }
}
