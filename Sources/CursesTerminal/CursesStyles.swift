import CNcurses
import Dashboard

/// Turns cell styles into ncurses attributes and colour pairs for one open terminal, creating
/// pairs with `init_extended_pair` as new colour combinations appear. Remembers every style it has
/// resolved, so a frame costs one dictionary lookup per changed cell.
struct CursesStyles {
    /// A style as ncurses takes it: attributes without colour bits, and an extended pair number
    /// (passed through `setcchar`'s `opts`, so pairs ≥ 256 work).
    struct Resolved {
        var attributes: attr_t
        var pair: Int32
    }

    let depth: ColorDepth
    let colorCount: Int
    let defaultColors: Bool
    private var pairs: ColorPairCache
    private var styles: [CellStyle: Resolved] = [:]

    /// `colorCount` and `pairCount` are the terminal's `COLORS` and `COLOR_PAIRS`; `defaultColors`
    /// whether `use_default_colors` succeeded.
    init(depth: ColorDepth, colorCount: Int, pairCount: Int, defaultColors: Bool) {
        self.depth = depth
        self.colorCount = colorCount
        self.defaultColors = defaultColors
        pairs = ColorPairCache(capacity: Int32(clamping: pairCount))
    }

    /// Attributes and pair for a style.
    mutating func resolve(_ style: CellStyle) -> Resolved {
        if let known = styles[style] { return known }
        let resolved = Resolved(attributes: Self.attributes(of: style), pair: pair(for: style))
        styles[style] = resolved
        return resolved
    }

    /// The ncurses attributes of a style (no colour bits).
    static func attributes(of style: CellStyle) -> attr_t {
        var attributes = bg_a_normal()
        if style.bold { attributes |= bg_a_bold() }
        if style.dim { attributes |= bg_a_dim() }
        if style.reverse { attributes |= bg_a_reverse() }
        if style.underline { attributes |= bg_a_underline() }
        return attributes
    }

    private mutating func pair(for style: CellStyle) -> Int32 {
        guard depth != .none else { return 0 }
        let colors = ColorMapping.colorNumbers(foreground: style.foreground, background: style.background,
                                               depth: depth, colorCount: colorCount,
                                               defaultColors: defaultColors)
        let depth = self.depth
        let lookup = pairs.pair(for: colors) { ColorMapping.approximateColor(of: $0, depth: depth) }
        if case let .allocate(pair) = lookup,
           init_extended_pair(pair, colors.foreground, colors.background) == ERR {
            pairs.markFailed(colors)
            return 0
        }
        return lookup.pair
    }
}
