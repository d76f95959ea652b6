/// The characters for borders and bars: Unicode box drawing in a UTF-8 locale, ASCII elsewhere.
public struct Glyphs: Sendable, Hashable {
    public var horizontal: Character
    public var vertical: Character
    public var topLeft: Character
    public var topRight: Character
    public var bottomLeft: Character
    public var bottomRight: Character
    public var barFull: Character
    public var barEmpty: Character
    public var up: Character
    public var down: Character
    public var marker: Character

    public static let unicode = Glyphs(horizontal: "─", vertical: "│", topLeft: "╭", topRight: "╮", bottomLeft: "╰",
                                       bottomRight: "╯", barFull: "█", barEmpty: "░", up: "●", down: "○", marker: "▶")
    public static let ascii = Glyphs(horizontal: "-", vertical: "|", topLeft: "+", topRight: "+", bottomLeft: "+",
                                     bottomRight: "+", barFull: "#", barEmpty: ".", up: "*", down: "o", marker: ">")
}
