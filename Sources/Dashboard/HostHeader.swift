import FoundationEssentials

/// The hosts of `bgtop --host` in the header's first line: each name with how its connection
/// stands (`connected`, `connecting`, `lost: retry in 4 s`), the one on screen in brackets. Where
/// the line is short (80 columns), the other hosts' words shorten first (`ok`, `...`, `lost`),
/// then the current one's.
enum HostHeader {
    /// Draws the badges from `x`, stopping before `limit`; returns the column after the last.
    static func draw(_ grid: inout CellGrid, _ hosts: [HostBadge], now: Date, x start: Int, limit: Int, palette: Palette) -> Int {
        func words(_ host: HostBadge, short: Bool) -> String {
            guard short else { return host.stateText(now: now) }
            switch host.connection {
            case .connected: return "ok"
            case .connecting: return "..."
            case .lost: return "lost"
            }
        }
        func width(_ host: HostBadge, short: Bool) -> Int {
            2 + host.name.count + 1 + words(host, short: short).count + (host.isCurrent ? 2 : 0)
        }
        let levels: [(HostBadge) -> Bool] = [{ _ in false }, { !$0.isCurrent }, { _ in true }]
        let short = levels.first { level in start + hosts.reduce(0) { $0 + width($1, short: level($1)) } <= limit } ?? levels[2]
        var x = start
        for host in hosts {
            let state = words(host, short: short(host))
            guard x + width(host, short: short(host)) <= limit else { break }
            x += grid.put(host.isCurrent ? "  [" : "  ", x: x, y: 0, style: palette.text)
            x += grid.put(host.name, x: x, y: 0, style: host.isCurrent ? palette.title : palette.text)
            let style: CellStyle
            switch host.connection {
            case .connected: style = palette.good
            case .connecting: style = palette.misc
            case .lost: style = palette.error
            }
            x += grid.put(" " + state, x: x, y: 0, style: style)
            if host.isCurrent { x += grid.put("]", x: x, y: 0, style: palette.text) }
        }
        return x
    }
}
