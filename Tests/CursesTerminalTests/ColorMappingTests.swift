import Dashboard
import Testing
@testable import CursesTerminal

@Suite("Colour mapping")
struct ColorMappingTests {
    static let xterm256Cases: [(RGB, Int32)] = [
        (RGB(255, 0, 0), 196), (RGB(0, 255, 0), 46), (RGB(0, 0, 255), 21),
        (RGB(135, 175, 215), 110), (RGB(0, 0, 0), 16), (RGB(255, 255, 255), 231),
        (RGB(128, 128, 128), 244), (RGB(8, 8, 8), 232), (RGB(238, 238, 238), 255),
        (RGB(250, 5, 5), 196), (RGB(30, 30, 30), 234), (RGB(0, 0, 128), 18),
    ]

    static let sixteenCases: [(RGB, Int32)] = [
        (RGB(255, 0, 0), 9), (RGB(205, 0, 0), 1), (RGB(0, 0, 128), 4),
        (RGB(128, 128, 128), 8), (RGB(60, 60, 60), 0), (RGB(255, 255, 255), 15),
        (RGB(135, 175, 215), 12), (RGB(200, 160, 0), 3), (RGB(0, 200, 255), 6),
    ]

    static let eightCases: [(RGB, Int32)] = [
        (RGB(255, 0, 0), 1), (RGB(128, 128, 128), 7), (RGB(60, 60, 60), 0),
        (RGB(0, 255, 0), 2), (RGB(255, 255, 255), 7), (RGB(0, 0, 238), 4),
    ]

    @Test func depthFollowsTheColourCount() {
        #expect(ColorDepth(colorCount: 0x100_0000) == .trueColor)
        #expect(ColorDepth(colorCount: 256) == .color256)
        #expect(ColorDepth(colorCount: 88) == .color16)
        #expect(ColorDepth(colorCount: 16) == .color16)
        #expect(ColorDepth(colorCount: 8) == .color16)
        #expect(ColorDepth(colorCount: 2) == .none)
        #expect(ColorDepth(colorCount: 0) == .none)
    }

    @Test(arguments: xterm256Cases)
    func xterm256Nearest(color: RGB, index: Int32) {
        #expect(ColorMapping.xterm256Index(color) == index)
    }

    @Test func xterm256RoundTripsEveryCubeAndGreyColour() {
        for index in 16..<256 {
            #expect(ColorMapping.xterm256Index(ColorMapping.xterm256Color(index)) == Int32(index))
        }
    }

    @Test func xterm256NeverPicksTheTunableSixteen() {
        for red in stride(from: 0, through: 255, by: 17) {
            for green in stride(from: 0, through: 255, by: 51) {
                for blue in stride(from: 0, through: 255, by: 51) {
                    let index = ColorMapping.xterm256Index(RGB(red, green, blue))
                    #expect((16...255).contains(index))
                }
            }
        }
    }

    @Test(arguments: sixteenCases)
    func sixteenColours(color: RGB, index: Int32) {
        #expect(ColorMapping.ansiIndex(color, paletteSize: 16) == index)
    }

    @Test(arguments: eightCases)
    func eightColours(color: RGB, index: Int32) {
        #expect(ColorMapping.ansiIndex(color, paletteSize: 8) == index)
    }

    @Test func greysNeverTurnIntoHues() {
        for level in stride(from: 0, through: 255, by: 5) {
            #expect([0, 8, 7, 15].contains(ColorMapping.ansiIndex(RGB(level, level, level), paletteSize: 16)))
            #expect([0, 7].contains(ColorMapping.ansiIndex(RGB(level, level, level), paletteSize: 8)))
        }
    }

    @Test func directColourPacksRGBAndAvoidsThePaletteSlots() {
        #expect(ColorMapping.directColorNumber(RGB(0x12, 0x34, 0x56)) == 0x123456)
        #expect(ColorMapping.directColorNumber(RGB(255, 255, 255)) == 0xFFFFFF)
        // 0…7 mean ANSI colours on xterm-direct.
        #expect(ColorMapping.directColorNumber(RGB(0, 0, 0)) == 8)
        #expect(ColorMapping.directColorNumber(RGB(0, 0, 7)) == 8)
        #expect(ColorMapping.directColorNumber(RGB(0, 0, 9)) == 9)
    }

    @Test func terminalDefaultIsMinusOneAtEveryDepth() {
        for depth in [ColorDepth.trueColor, .color256, .color16] {
            let numbers = ColorMapping.colorNumbers(foreground: .terminalDefault, background: .terminalDefault,
                                                    depth: depth, colorCount: 256)
            #expect(numbers == .terminalDefaults)
        }
    }

    @Test func noColourDepthGivesDefaults() {
        let numbers = ColorMapping.colorNumbers(foreground: .rgb(255, 0, 0), background: .rgb(0, 0, 255),
                                                depth: .none, colorCount: 0)
        #expect(numbers == .terminalDefaults)
    }

    @Test func textStaysVisibleWhenBothColoursCollapseIntoOne() {
        let dimOnDark = (TerminalColor.rgb(60, 60, 60), TerminalColor.rgb(30, 30, 30))
        let sixteen = ColorMapping.colorNumbers(foreground: dimOnDark.0, background: dimOnDark.1,
                                                depth: .color16, colorCount: 16)
        #expect(sixteen == ColorNumbers(foreground: 8, background: 0))
        let eight = ColorMapping.colorNumbers(foreground: dimOnDark.0, background: dimOnDark.1,
                                              depth: .color16, colorCount: 8)
        #expect(eight == ColorNumbers(foreground: 7, background: 0))
        let close = ColorMapping.colorNumbers(foreground: .rgb(30, 30, 31), background: .rgb(30, 30, 30),
                                              depth: .color256, colorCount: 256)
        #expect(close.foreground != close.background)
        // The very same colour twice is deliberate (hidden text) and stays.
        let same = ColorMapping.colorNumbers(foreground: .rgb(30, 30, 30), background: .rgb(30, 30, 30),
                                             depth: .color16, colorCount: 16)
        #expect(same.foreground == same.background)
    }

    @Test func withoutDefaultColoursTheDefaultIsWhiteOnBlack() {
        let plain = ColorMapping.colorNumbers(foreground: .terminalDefault, background: .terminalDefault,
                                              depth: .color16, colorCount: 8, defaultColors: false)
        #expect(plain == ColorNumbers(foreground: 7, background: 0))
        let black = ColorMapping.colorNumbers(foreground: .rgb(0, 0, 0), background: .terminalDefault,
                                              depth: .color16, colorCount: 8, defaultColors: false)
        #expect(black == ColorNumbers(foreground: 0, background: 7))
        let onWhite = ColorMapping.colorNumbers(foreground: .terminalDefault, background: .rgb(229, 229, 229),
                                                depth: .color16, colorCount: 8, defaultColors: false)
        #expect(onWhite == ColorNumbers(foreground: 0, background: 7))
    }

    @Test func approximateColoursOfNumbers() {
        #expect(ColorMapping.approximateColor(of: 196, depth: .color256) == RGB(255, 0, 0))
        #expect(ColorMapping.approximateColor(of: 244, depth: .color256) == RGB(128, 128, 128))
        #expect(ColorMapping.approximateColor(of: 9, depth: .color16) == RGB(255, 0, 0))
        #expect(ColorMapping.approximateColor(of: 0x123456, depth: .trueColor) == RGB(0x12, 0x34, 0x56))
        #expect(ColorMapping.approximateColor(of: -1, depth: .color256) == nil)
    }
}
