/// How many colours the terminal can show, as far as its terminfo entry says.
///
/// `CursesTerminal` picks it once when the terminal opens; themes are written in 24-bit RGB and the
/// backend steps every colour down to this depth.
public enum ColorDepth: Sendable {
    /// 24-bit colour: the terminfo entry is a direct-colour one (`colors` ≥ 2²⁴, e.g. `xterm-direct`).
    case trueColor
    /// The xterm 256-colour palette (6×6×6 cube and 24 greys; the 16 user-tunable colours are not used).
    case color256
    /// The 8 or 16 ANSI colours.
    case color16
    /// No colour at all: colours were switched off (NO_COLOR, a monochrome theme) or the terminal has
    /// none. Bold, dim, reverse and underline still work.
    case none

    /// The depth for a terminfo colour count (`COLORS`): 2²⁴ or more is direct colour, 256 or more the
    /// xterm palette, 8 or more the ANSI colours, anything less none.
    public init(colorCount: Int) {
        switch colorCount {
        case 0x100_0000...: self = .trueColor
        case 256...: self = .color256
        case 8...: self = .color16
        default: self = .none
        }
    }
}
