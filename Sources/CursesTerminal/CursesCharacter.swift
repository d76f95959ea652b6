import CNcurses

/// What to put in one single-column terminal cell for a grid `Character`.
enum CursesCharacter: Equatable {
    /// Wide-character text: one spacing character, then up to four combining marks.
    case text([UInt32])
    /// A line-drawing character from the terminal's alternate character set, named by its VT100
    /// letter (`q` horizontal line, `l` upper-left corner, ...): for locales that cannot show Unicode.
    case alternate(UInt8)

    /// The glyph that shows `character` in one column. `unicode` is whether the locale is UTF-8;
    /// `width` is the column width of a scalar (`wcwidth`), injectable for tests.
    ///
    /// Control characters become a space; characters that take no column or two columns (wide
    /// CJK, most emoji) become `?`, because a grid cell is one column and anything else would shift
    /// the rest of the row. Without Unicode, box drawing becomes alternate-charset line drawing,
    /// common typography becomes ASCII and everything else non-ASCII becomes `?`.
    static func of(_ character: Character, unicode: Bool,
                   width: (UInt32) -> Int32 = { bg_wcwidth($0) }) -> CursesCharacter {
        let scalars = character.unicodeScalars
        guard let first = scalars.first?.value else { return .text([0x20]) }
        if first < 0x20 || (0x7F...0x9F).contains(first) { return .text([0x20]) }
        guard unicode else {
            if first < 0x7F { return .text([first]) }
            if let letter = alternateCharacters[first] { return .alternate(letter) }
            if let ascii = asciiSubstitutes[first] { return .text([ascii]) }
            return .text([0x3F])
        }
        guard first < 0x7F || width(first) == 1 else { return .text([0x3F]) }
        // Emoji presentation selectors make some terminals draw two columns: drop them.
        let marks = scalars.dropFirst().map(\.value).filter { $0 != 0xFE0F && width($0) == 0 }
        return .text([first] + marks.prefix(4))
    }

    /// Unicode line drawing and blocks → VT100 alternate character set letters.
    static let alternateCharacters: [UInt32: UInt8] = {
        var table: [UInt32: UInt8] = [:]
        let groups: [(String, Character)] = [
            ("─━═┄┅┈┉╌╍", "q"), ("│┃║┆┇┊┋╎╏", "x"),
            ("┌┏╔╭┍┎╒╓", "l"), ("┐┓╗╮┑┒╕╖", "k"), ("└┗╚╰┕┖╘╙", "m"), ("┘┛╝╯┙┚╛╜", "j"),
            ("├┣╠┝┞┟┠┡┢╞╟", "t"), ("┤┫╣┥┦┧┨┩┪╡╢", "u"), ("┬┳╦┭┮┯┰┱┲╤╥", "w"),
            ("┴┻╩┵┶┷┸┹┺╧╨", "v"), ("┼╋╬┽┾┿╀╁╂╃╄╅╆╇╈╉╊╪╫", "n"),
            ("█▓▉▊▋▌▍▎▏▐■▄▅▆▇▀", "0"), ("▒░", "a"), ("•·∙●", "~"), ("◆♦", "`"),
            ("▲↑▴△", "-"), ("▼↓▾▽", "."), ("◀←◂", ","), ("▶→▸", "+"),
            ("°", "f"), ("±", "g"), ("≤", "y"), ("≥", "z"), ("π", "{"), ("≠", "|"), ("£", "}"),
        ]
        for (characters, letter) in groups {
            for scalar in characters.unicodeScalars { table[scalar.value] = letter.asciiValue }
        }
        return table
    }()

    /// Typography a theme or label might use → the ASCII it stands for.
    static let asciiSubstitutes: [UInt32: UInt32] = [
        0x2026: 0x2E, // … → .
        0x2013: 0x2D, 0x2014: 0x2D, 0x2212: 0x2D, // – — − → -
        0x2018: 0x27, 0x2019: 0x27, // ‘ ’ → '
        0x201C: 0x22, 0x201D: 0x22, // “ ” → "
        0x00A0: 0x20, // no-break space
        0x00D7: 0x78, // × → x
        0x2581: 0x5F, 0x2582: 0x5F, 0x2583: 0x5F, // ▁ ▂ ▃ → _ (low graph bars)
    ]
}
