/// A rectangle of cells.
public struct Rect: Sendable, Hashable {
    public var x: Int
    public var y: Int
    public var width: Int
    public var height: Int

    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    public func contains(x px: Int, y py: Int) -> Bool {
        px >= x && px < x + width && py >= y && py < y + height
    }
}

/// Where everything goes for a screen size: two header lines, the five panels stacked (each a
/// box with a title row inside), a status line and a footer of key hints.
public struct DashboardLayout: Sendable, Hashable {
    public static let minimumSize = ScreenSize(width: 80, height: 24)

    public let size: ScreenSize
    public let panels: [Panel: Rect]
    public let statusRow: Int
    public let footerRow: Int

    public var isTooSmall: Bool { size.width < Self.minimumSize.width || size.height < Self.minimumSize.height }

    /// A box with 2 borders, a column header and one row.
    static let fullBox = 4
    /// A box with 2 borders and one row: its column header gives way on short terminals.
    static let compactBox = 3

    /// Lays out for `size`; `rowCounts` (rows per panel) lets panels with few rows give their
    /// space to the others. The `focus`ed panel gets the spare rows first, as many as it can use;
    /// on a terminal too short for that (under 28 rows), the other boxes drop their column
    /// header so it still gets some. Without counts every panel gets its weighted share.
    public init(size: ScreenSize, rowCounts: [Panel: Int]? = nil, focus: Panel? = nil) {
        self.size = size
        statusRow = size.height - 2
        footerRow = size.height - 1
        let top = 2
        let available = max(0, size.height - top - 2)
        let order = Panel.allCases
        let isShort = focus != nil && available - Self.fullBox * order.count < Self.fullBox
        var heights: [Panel: Int] = Dictionary(uniqueKeysWithValues: order.map { panel in
            (panel, isShort && panel != focus ? Self.compactBox : Self.fullBox)
        })
        var spare = available - heights.values.reduce(0, +)
        let weights: [Panel: Int] = [.pending: 3, .running: 3, .transfers: 2, .events: 2, .apps: 1]
        func wants(_ panel: Panel) -> Bool {
            guard let rowCounts else { return true }
            return heights[panel]! < (rowCounts[panel] ?? 0) + 3
        }
        if let focus {
            while spare > 0, wants(focus) {
                heights[focus]! += 1
                spare -= 1
            }
        }
        // Hand out rows one at a time by weight to panels that can use them; what is left goes
        // to the events log (always more history to show), then to pending.
        var credit: [Panel: Int] = [:]
        while spare > 0 {
            let candidates = order.filter(wants)
            guard !candidates.isEmpty else { break }
            for panel in candidates { credit[panel, default: 0] += weights[panel]! }
            let next = candidates.max { (credit[$0] ?? 0, -$0.rawValue) < (credit[$1] ?? 0, -$1.rawValue) }!
            credit[next, default: 0] -= candidates.reduce(0) { $0 + weights[$1]! }
            heights[next]! += 1
            spare -= 1
        }
        if spare > 0 {
            heights[.events]! += spare * 2 / 3
            heights[.pending]! += spare - spare * 2 / 3
        }
        var y = top
        var panels: [Panel: Rect] = [:]
        for panel in order {
            panels[panel] = Rect(x: 0, y: y, width: size.width, height: heights[panel]!)
            y += heights[panel]!
        }
        self.panels = panels
    }

    /// The layout for a snapshot as the person sees it (filter applied).
    public init(size: ScreenSize, snapshot: DashboardSnapshot, state: DashboardState) {
        var counts: [Panel: Int] = [:]
        for panel in Panel.allCases { counts[panel] = snapshot.rows(panel, state: state).count }
        self.init(size: size, rowCounts: counts, focus: state.focus)
    }

    /// Whether a panel's box has room for its column header (a compact box does not).
    public func showsColumnHeader(_ panel: Panel) -> Bool {
        (panels[panel]?.height ?? 0) >= Self.fullBox
    }

    /// The screen row of a panel's first data row.
    public func firstDataRow(_ panel: Panel) -> Int {
        (panels[panel]?.y ?? 0) + (showsColumnHeader(panel) ? 2 : 1)
    }

    /// How many data rows a panel shows (box minus borders and the column header).
    public func visibleRows(_ panel: Panel) -> Int {
        max(0, (panels[panel]?.height ?? 0) - 2 - (showsColumnHeader(panel) ? 1 : 0))
    }

    /// The panel and data-row index under a cell, if any.
    public func hit(x: Int, y: Int) -> (Panel, Int?)? {
        for (panel, rect) in panels where rect.contains(x: x, y: y) {
            let row = y - firstDataRow(panel)
            return (panel, row >= 0 && row < visibleRows(panel) ? row : nil)
        }
        return nil
    }
}
