import Testing
@testable import CursesTerminal

@Suite("Colour pair cache")
struct ColorPairCacheTests {
    private func approximate(_ number: Int32) -> RGB? {
        ColorMapping.approximateColor(of: number, depth: .color256)
    }

    @Test func defaultColoursArePairZero() {
        var cache = ColorPairCache(capacity: 256)
        #expect(cache.pair(for: .terminalDefaults, approximate: approximate) == .cached(0))
    }

    @Test func allocatesOnceAndCaches() {
        var cache = ColorPairCache(capacity: 256)
        let red = ColorNumbers(foreground: 196, background: -1)
        let blue = ColorNumbers(foreground: 21, background: 16)
        #expect(cache.pair(for: red, approximate: approximate) == .allocate(1))
        #expect(cache.pair(for: blue, approximate: approximate) == .allocate(2))
        #expect(cache.pair(for: red, approximate: approximate) == .cached(1))
        #expect(cache.pair(for: blue, approximate: approximate) == .cached(2))
    }

    @Test func handsOutPairsBeyond255() {
        var cache = ColorPairCache(capacity: 0x10000)
        var last = ColorPairCache.Lookup.cached(0)
        for background in Int32(0)..<300 {
            last = cache.pair(for: ColorNumbers(foreground: -1, background: 0x10000 + background),
                              approximate: approximate)
        }
        #expect(last == .allocate(300))
    }

    @Test func fallsBackToTheNearestPairWhenPairsRunOut() {
        var cache = ColorPairCache(capacity: 4)
        _ = cache.pair(for: ColorNumbers(foreground: 196, background: 16), approximate: approximate) // 1: red on black
        _ = cache.pair(for: ColorNumbers(foreground: 46, background: 16), approximate: approximate)  // 2: green on black
        _ = cache.pair(for: ColorNumbers(foreground: 21, background: 231), approximate: approximate) // 3: blue on white
        let darkRedOnBlack = ColorNumbers(foreground: 160, background: 16)
        #expect(cache.pair(for: darkRedOnBlack, approximate: approximate) == .fallback(1))
        #expect(cache.pair(for: darkRedOnBlack, approximate: approximate) == .cached(1))
        let navyOnGrey = ColorNumbers(foreground: 18, background: 255)
        #expect(cache.pair(for: navyOnGrey, approximate: approximate) == .fallback(3))
    }

    @Test func defaultColoursOnlyMatchDefaults() {
        var cache = ColorPairCache(capacity: 2)
        _ = cache.pair(for: ColorNumbers(foreground: 196, background: 16), approximate: approximate)
        // Red on the terminal's background: pair 1 would paint a black background; pair 0 is closer.
        #expect(cache.pair(for: ColorNumbers(foreground: 196, background: -1), approximate: approximate) == .fallback(0))
    }

    @Test func aPairTheTerminalRefusedIsNotReused() {
        var cache = ColorPairCache(capacity: 256)
        let colors = ColorNumbers(foreground: 196, background: 16)
        #expect(cache.pair(for: colors, approximate: approximate) == .allocate(1))
        cache.markFailed(colors)
        #expect(cache.pair(for: colors, approximate: approximate) == .cached(0))
    }
}
