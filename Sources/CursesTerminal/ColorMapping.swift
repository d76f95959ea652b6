import Dashboard

/// A 24-bit colour as three channel values 0…255.
struct RGB: Hashable, Sendable {
    var red: Int
    var green: Int
    var blue: Int

    init(_ red: Int, _ green: Int, _ blue: Int) {
        self.red = red
        self.green = green
        self.blue = blue
    }
}

/// The terminal colour numbers of one cell: what `init_extended_pair` takes. -1 is the terminal's
/// default colour (after `use_default_colors`).
struct ColorNumbers: Hashable, Sendable {
    var foreground: Int32
    var background: Int32

    static let terminalDefaults = ColorNumbers(foreground: -1, background: -1)
}

/// Pure colour conversions from theme RGB to terminal colour numbers. No ncurses here.
enum ColorMapping {
    /// The six channel levels of the xterm 6×6×6 cube (indexes 16…231).
    static let cubeLevels = [0, 95, 135, 175, 215, 255]

    /// The 16 ANSI colours as xterm shows them by default.
    static let ansiPalette: [RGB] = [
        RGB(0, 0, 0), RGB(205, 0, 0), RGB(0, 205, 0), RGB(205, 205, 0),
        RGB(0, 0, 238), RGB(205, 0, 205), RGB(0, 205, 205), RGB(229, 229, 229),
        RGB(127, 127, 127), RGB(255, 0, 0), RGB(0, 255, 0), RGB(255, 255, 0),
        RGB(92, 92, 255), RGB(255, 0, 255), RGB(0, 255, 255), RGB(255, 255, 255),
    ]

    /// How different two colours look: squared distance weighted by the mean red ("redmean"), a cheap
    /// approximation of perceived difference that beats plain RGB distance on greens and blues.
    static func distance(_ a: RGB, _ b: RGB) -> Int {
        let meanRed = (a.red + b.red) / 2
        let dr = a.red - b.red, dg = a.green - b.green, db = a.blue - b.blue
        return (((512 + meanRed) * dr * dr) >> 8) + 4 * dg * dg + (((767 - meanRed) * db * db) >> 8)
    }

    /// The colour an xterm-256 palette index shows (cube and grey ramp exactly; 0…15 as xterm's
    /// defaults).
    static func xterm256Color(_ index: Int) -> RGB {
        switch index {
        case ..<16: return ansiPalette[max(0, index)]
        case 16..<232:
            let cube = index - 16
            return RGB(cubeLevels[cube / 36], cubeLevels[cube / 6 % 6], cubeLevels[cube % 6])
        default:
            let grey = 8 + 10 * (min(index, 255) - 232)
            return RGB(grey, grey, grey)
        }
    }

    /// The nearest xterm-256 index in the colour cube (16…231) or the grey ramp (232…255). The 16
    /// ANSI colours are never chosen: users retune them, so they do not have a known RGB value.
    static func xterm256Index(_ color: RGB, excluding excluded: Int32? = nil) -> Int32 {
        nearest(color, among: 16..<256, excluding: excluded, by: distance)
    }

    /// The nearest of the 8 or 16 ANSI colours (`paletteSize` below 16 means 8). So few colours
    /// are too far apart for plain distance (it turns mid grey into cyan), so a colour is first
    /// sorted into greys (low saturation: black, grey, white, bright white, nearest by lightness) or
    /// hues (the six colours and their bright forms, nearest by distance).
    static func ansiIndex(_ color: RGB, paletteSize: Int, excluding excluded: Int32? = nil) -> Int32 {
        let sixteen = paletteSize >= 16
        let brightest = max(color.red, color.green, color.blue)
        let chroma = brightest - min(color.red, color.green, color.blue)
        if chroma < 24 || chroma * 4 < brightest {
            let greys = sixteen ? [0, 8, 7, 15] : [0, 7]
            return nearest(color, among: greys, excluding: excluded) { abs(lightness($0) - lightness($1)) }
        }
        let hues = sixteen ? [1, 2, 3, 4, 5, 6, 9, 10, 11, 12, 13, 14] : [1, 2, 3, 4, 5, 6]
        return nearest(color, among: hues, excluding: excluded, by: distance)
    }

    /// Perceived lightness (Rec. 601 luma), 0…255.
    static func lightness(_ color: RGB) -> Int {
        (299 * color.red + 587 * color.green + 114 * color.blue) / 1000
    }

    /// The colour number of an RGB colour on a direct-colour terminal: the packed 0xRRGGBB value.
    /// Direct-colour terminfo entries (xterm-direct) send 0…7 as the ANSI palette colours, so the
    /// near-black blues 0x000000…0x000007 become 0x000008, which looks the same.
    static func directColorNumber(_ color: RGB) -> Int32 {
        max(8, Int32(color.red << 16 | color.green << 8 | color.blue))
    }

    /// The colour number for one theme colour at a colour depth; -1 for the terminal default.
    /// `excluding` names a number not to pick (the background's, so text stays visible).
    static func colorNumber(for color: TerminalColor, depth: ColorDepth, colorCount: Int,
                            excluding excluded: Int32? = nil) -> Int32 {
        guard case let .rgb(red, green, blue) = color else { return -1 }
        let rgb = RGB(Int(red), Int(green), Int(blue))
        switch depth {
        case .trueColor: return directColorNumber(rgb)
        case .color256: return xterm256Index(rgb, excluding: excluded)
        case .color16: return ansiIndex(rgb, paletteSize: colorCount, excluding: excluded)
        case .none: return -1
        }
    }

    /// The colour numbers of a cell's foreground and background at a colour depth. When two different
    /// theme colours step down to the same number (dim text on a dark panel on an 8-colour terminal)
    /// the foreground moves to the next nearest colour, so the text does not vanish.
    /// `defaultColors` is false when the terminal cannot use its own defaults (no
    /// `use_default_colors`): the default then becomes white on black.
    static func colorNumbers(foreground: TerminalColor, background: TerminalColor, depth: ColorDepth,
                             colorCount: Int, defaultColors: Bool = true) -> ColorNumbers {
        guard depth != .none else { return .terminalDefaults }
        let back = colorNumber(for: background, depth: depth, colorCount: colorCount)
        var fore = colorNumber(for: foreground, depth: depth, colorCount: colorCount)
        if fore == back, fore >= 0, foreground != background {
            fore = colorNumber(for: foreground, depth: depth, colorCount: colorCount, excluding: back)
        }
        guard !defaultColors, fore < 0 || back < 0 else { return ColorNumbers(foreground: fore, background: back) }
        var numbers = ColorNumbers(foreground: fore < 0 ? 7 : fore, background: back < 0 ? 0 : back)
        if numbers.foreground == numbers.background {
            if fore < 0 { numbers.foreground = numbers.background == 7 ? 0 : 7 }
            else { numbers.background = numbers.foreground == 0 ? 7 : 0 }
        }
        return numbers
    }

    /// What a colour number looks like at a depth, to find the nearest pair when pairs run out.
    /// Nil for the terminal default, whose colour is unknown.
    static func approximateColor(of number: Int32, depth: ColorDepth) -> RGB? {
        guard number >= 0 else { return nil }
        switch depth {
        case .trueColor:
            if number < 8 { return ansiPalette[Int(number)] }
            return RGB(Int(number >> 16) & 0xFF, Int(number >> 8) & 0xFF, Int(number) & 0xFF)
        case .color256, .color16: return xterm256Color(Int(number))
        case .none: return nil
        }
    }

    /// The palette index among `candidates` (not `excluded`) whose colour is nearest by `measure`.
    private static func nearest(_ color: RGB, among candidates: some Sequence<Int>, excluding excluded: Int32?,
                                by measure: (RGB, RGB) -> Int) -> Int32 {
        var best: Int?
        var bestDistance = Int.max
        for index in candidates where Int32(index) != excluded {
            let d = measure(color, xterm256Color(index))
            if d < bestDistance {
                best = index
                bestDistance = d
            }
        }
        return Int32(best ?? 0)
    }
}
