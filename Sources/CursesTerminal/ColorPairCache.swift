/// Hands out colour-pair numbers for (foreground, background) colour numbers, allocating pairs on
/// demand. Pure bookkeeping: the caller runs `init_extended_pair` when told to.
///
/// Pair 0 is the terminal's default colours and is never allocated. When the terminal's pairs run
/// out, a new combination gets the cached pair whose colours look nearest (or pair 0 when nothing
/// is cached), and keeps it.
struct ColorPairCache {
    /// What `pair(for:)` decided.
    enum Lookup: Equatable {
        /// A pair already set up for these colours (or a fallback chosen earlier).
        case cached(Int32)
        /// A new pair: the caller must initialise it with the colours before use.
        case allocate(Int32)
        /// Pairs ran out: use this existing pair instead.
        case fallback(Int32)

        var pair: Int32 {
            switch self {
            case let .cached(pair), let .allocate(pair), let .fallback(pair): pair
            }
        }
    }

    /// The number of pairs the terminal has (`COLOR_PAIRS`); numbers 1..<capacity can be allocated.
    let capacity: Int32
    private var pairs: [ColorNumbers: Int32] = [.terminalDefaults: 0]
    /// Colours of the pairs actually allocated, for the nearest-pair search.
    private var allocated: [(colors: ColorNumbers, pair: Int32)] = []
    private var nextPair: Int32 = 1

    init(capacity: Int32) {
        self.capacity = max(1, capacity)
    }

    /// The pair for `colors`. `approximate` says what a colour number looks like (nil for the
    /// terminal default); it is only used once the pairs have run out.
    mutating func pair(for colors: ColorNumbers, approximate: (Int32) -> RGB?) -> Lookup {
        if let pair = pairs[colors] { return .cached(pair) }
        if nextPair < capacity {
            let pair = nextPair
            nextPair += 1
            pairs[colors] = pair
            allocated.append((colors, pair))
            return .allocate(pair)
        }
        let pair = nearestPair(to: colors, approximate: approximate)
        pairs[colors] = pair
        return .fallback(pair)
    }

    /// Forgets a pair the terminal refused to initialise, so it is not handed out again.
    mutating func markFailed(_ colors: ColorNumbers) {
        pairs[colors] = 0
        allocated.removeAll { $0.colors == colors }
    }

    private func nearestPair(to colors: ColorNumbers, approximate: (Int32) -> RGB?) -> Int32 {
        var best: Int32 = 0
        var bestCost = cost(colors.foreground, -1, approximate) + cost(colors.background, -1, approximate)
        for candidate in allocated {
            let total = cost(colors.foreground, candidate.colors.foreground, approximate)
                + cost(colors.background, candidate.colors.background, approximate)
            if total < bestCost {
                best = candidate.pair
                bestCost = total
            }
        }
        return best
    }

    /// How far apart two colour numbers look. The terminal default only matches itself; against a
    /// real colour it costs more than any two real colours differ.
    private func cost(_ a: Int32, _ b: Int32, _ approximate: (Int32) -> RGB?) -> Int {
        if a == b { return 0 }
        guard let x = approximate(a), let y = approximate(b) else { return 1 << 24 }
        return ColorMapping.distance(x, y)
    }
}
