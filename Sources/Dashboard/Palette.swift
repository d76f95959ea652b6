/// The styles the view paints with, derived once from a theme. A monochrome theme gets bold,
/// dim and reverse instead of colours, so every state stays distinguishable without colour.
struct Palette {
    let theme: Theme
    let mono: Bool

    init(theme: Theme) {
        self.theme = theme
        mono = theme.isMonochrome
    }

    private var background: TerminalColor { theme.color("main_bg") }

    var text: CellStyle { CellStyle(foreground: theme.color("main_fg"), background: background) }
    var title: CellStyle { CellStyle(foreground: theme.color("title"), background: background, bold: true) }
    var hint: CellStyle { CellStyle(foreground: theme.color("hi_fg"), background: background, bold: true) }
    var inactive: CellStyle { CellStyle(foreground: theme.color("inactive_fg"), background: background, dim: mono) }
    var columnHeader: CellStyle { CellStyle(foreground: theme.color("graph_text"), background: background, bold: mono, underline: mono) }
    var selected: CellStyle {
        CellStyle(foreground: theme.color("selected_fg"), background: theme.color("selected_bg"), bold: true, reverse: mono)
    }
    var error: CellStyle { CellStyle(foreground: theme.color("temp_end"), background: background, bold: true) }
    var good: CellStyle { CellStyle(foreground: theme.color("temp_start"), background: background) }
    var misc: CellStyle { CellStyle(foreground: theme.color("proc_misc"), background: background) }
    /// The empty part of bars (btop's `meter_bg`); dim in monochrome.
    var meterEmpty: CellStyle { CellStyle(foreground: theme.color("meter_bg"), background: background, dim: mono) }

    func box(_ panel: Panel, focused: Bool) -> CellStyle {
        CellStyle(foreground: theme.color(panel.boxThemeKey), background: background, bold: focused)
    }

    /// Colour along a gradient (0 = start, 1 = end) for bars.
    func gradient(_ prefix: String, _ fraction: Double) -> CellStyle {
        CellStyle(foreground: theme.gradient(prefix, at: fraction), background: background)
    }
}
