import FoundationEssentials
import TaskState

/// The pure view: (snapshot, UI state, size, theme, glyphs) → a grid of styled cells.
public enum DashboardView {
    public static func render(_ snapshot: DashboardSnapshot, state: DashboardState, size: ScreenSize,
                              theme: Theme, glyphs: Glyphs) -> CellGrid {
        let palette = Palette(theme: theme)
        var grid = CellGrid(size: size, fill: Cell(" ", style: palette.text))
        let layout = DashboardLayout(size: size, snapshot: snapshot, state: state)
        if layout.isTooSmall {
            let message = "terminal too small (need \(DashboardLayout.minimumSize.width)×\(DashboardLayout.minimumSize.height))"
            let shown = glyphs == .ascii ? message.replacing("×", with: "x") : message
            let now = "now \(size.width)x\(size.height)"
            grid.put(shown, x: max(0, (size.width - shown.count) / 2), y: max(0, size.height / 2 - 1), style: palette.error)
            grid.put(now, x: max(0, (size.width - now.count) / 2), y: size.height / 2, style: palette.text)
            return grid
        }
        header(&grid, snapshot, palette: palette, glyphs: glyphs)
        let content = PanelContent(snapshot: snapshot, palette: palette, glyphs: glyphs)
        // The timeline covers every panel: drawing them underneath would be wasted.
        let coversPanels = if case .timeline = state.overlay { true } else { false }
        for panel in Panel.allCases where !coversPanels {
            draw(panel, into: &grid, snapshot: snapshot, state: state, layout: layout, content: content, palette: palette, glyphs: glyphs)
        }
        statusLine(&grid, snapshot, state: state, row: layout.statusRow, palette: palette)
        footer(&grid, state: state, row: layout.footerRow, palette: palette, glyphs: glyphs)
        switch state.overlay {
        case .none: break
        case .help: Overlays.help(&grid, offset: state.helpOffset, palette: palette, glyphs: glyphs, readOnly: state.readOnly)
        case .detail: Overlays.detail(&grid, snapshot: snapshot, state: state, palette: palette, glyphs: glyphs)
        case .conditions:
            ConditionsMenu.draw(&grid, conditions: snapshot.conditions, palette: palette, glyphs: glyphs)
        case .confirmCancel(let app, let identifier):
            Overlays.confirm(&grid, question: "Cancel \(identifier) (\(app))?", palette: palette, glyphs: glyphs)
        case .confirmCancelTransfer(let app, let identifier):
            Overlays.confirm(&grid, question: "Cancel transfer \(identifier) (\(app))?", palette: palette, glyphs: glyphs)
        case .timeline(let position):
            TimelineView.draw(&grid, snapshot: snapshot, position: position,
                              area: Rect(x: 0, y: 2, width: size.width, height: layout.statusRow - 2), palette: palette, glyphs: glyphs)
            TimelineView.hints(&grid, row: layout.footerRow, palette: palette, glyphs: glyphs)
        case .confirmAppSwitch(let app, let enable):
            Overlays.confirm(&grid, question: AppSwitchConfirmation.question(app: app, enable: enable), palette: palette, glyphs: glyphs)
        case .logPager:
            if let pager = state.logPager { LogPagerView.draw(&grid, pager: pager, palette: palette, glyphs: glyphs) }
        }
        return grid
    }

    private static func header(_ grid: inout CellGrid, _ snapshot: DashboardSnapshot, palette: Palette, glyphs: Glyphs) {
        var x = grid.put(" bgtop ", x: 0, y: 0, style: palette.title)
        if let pid = snapshot.schedulerPID {
            // A clock time, not "3s ago": the dashboard does not tick just to age this text.
            // With --host, the hosts' badges need the room more than the heartbeat's clock time.
            let active = snapshot.hosts.isEmpty ? snapshot.heartbeat.map { ", last active \(TextFormat.clock($0.updatedAt))" } ?? "" : ""
            x += grid.put("\(glyphs.up) scheduler up", x: x, y: 0, style: palette.good)
            x += grid.put(" (pid \(pid)\(active))", x: x, y: 0, style: palette.text)
        } else {
            let seen = snapshot.heartbeat.map { " (last seen \(TextFormat.clock($0.updatedAt)))" } ?? ""
            x += grid.put("\(glyphs.down) scheduler down\(seen)", x: x, y: 0, style: palette.error)
        }
        let clock = TextFormat.clock(snapshot.now, seconds: false) + " UTC "
        if !snapshot.hosts.isEmpty {
            x = HostHeader.draw(&grid, snapshot.hosts, now: snapshot.now, x: x, limit: grid.size.width - clock.count - 2, palette: palette)
        }
        let room = max(0, grid.size.width - x - clock.count - 2)
        grid.put(" " + TextFormat.fitTail(snapshot.stateDirectory, max(0, room - 1)), x: x + 1, y: 0, style: palette.inactive, maxWidth: room)
        grid.put(clock, x: grid.size.width - clock.count, y: 0, style: palette.text)

        let expiring = snapshot.tasks.filter { $0.state == .expiring }.count
        let counts = "\(snapshot.pending.count) pending  \(snapshot.tasks.count) running\(expiring > 0 ? " (\(expiring) expiring)" : "")  \(snapshot.transfers.count) transfers"
        let countsX = grid.size.width - counts.count - 1
        grid.put(counts, x: countsX, y: 1, style: palette.text)
        x = 1
        if let conditions = snapshot.conditions {
            let effective = conditions.effective
            let items: [(String, String, Bool, Conditions.Name)] = [
                ("power", effective.externalPower ? "ac" : "battery", effective.externalPower, .power),
                ("network", effective.network ? "up" : "down", effective.network, .network),
                ("idle", effective.idle ? "yes" : "no", effective.idle, .idle),
                ("lowpower", effective.lowPower ? "on" : "off", !effective.lowPower, .lowpower),
            ]
            for (name, value, fine, key) in items where x + name.count + value.count + 3 < countsX {
                x += grid.put("\(name) ", x: x, y: 1, style: palette.inactive)
                x += grid.put(value, x: x, y: 1, style: fine ? palette.text : palette.error)
                if conditions.isSimulated(key) { x += grid.put("*", x: x, y: 1, style: palette.misc) }
                x += grid.put("  ", x: x, y: 1, style: palette.text)
            }
            if Conditions.Name.allCases.contains(where: conditions.isSimulated) && x + 12 < countsX {
                x += grid.put("*simulated", x: x, y: 1, style: palette.misc)
            }
        } else {
            x += grid.put("conditions not measured yet", x: x, y: 1, style: palette.inactive, maxWidth: countsX - x - 1)
        }
    }

    private static func draw(_ panel: Panel, into grid: inout CellGrid, snapshot: DashboardSnapshot, state: DashboardState,
                             layout: DashboardLayout, content: PanelContent, palette: Palette, glyphs: Glyphs) {
        guard let rect = layout.panels[panel] else { return }
        let rows = snapshot.rows(panel, state: state)
        let focused = state.focus == panel
        let sortTitles = SortColumns.titles(panel)
        let sortName = sortTitles[(state.sortColumn[panel] ?? 0) % sortTitles.count]
        let reversed = (state.sortReversed[panel] ?? false) ? ", reversed" : ""
        var title = "\(panel.rawValue + 1) \(panel.title) (\(rows.count)) \(glyphs.horizontal) sort: \(sortName)\(reversed)"
        if !state.filter.isEmpty { title += " \(glyphs.horizontal) filter: \(state.filter)" }
        grid.box(rect, title: title, style: palette.box(panel, focused: focused),
                 titleStyle: focused ? palette.title : palette.box(panel, focused: false), glyphs: glyphs)
        let inner = rect.width - 2
        let columns = content.columns(panel, width: inner)
        let widths = Column.widths(columns, total: inner - 1)
        if layout.showsColumnHeader(panel) {
            grid.tableRow(columns.map { TableCell($0.title) }, widths: widths, x: rect.x + 2, y: rect.y + 1,
                          rowStyle: palette.columnHeader, glyphs: glyphs)
        }
        let visible = layout.visibleRows(panel)
        let top = layout.firstDataRow(panel)
        if rows.count == 0 {
            let empty = state.filter.isEmpty ? emptyText(panel, snapshot) : "no rows match '\(state.filter)'"
            grid.put(empty, x: rect.x + 2, y: top, style: palette.inactive, maxWidth: inner - 2)
            return
        }
        let selectedIndex = state.currentIndex(panel, rows: rows)
        let offset = state.visibleOffset(panel, rows: rows, layout: layout)
        // Only the visible rows are laid out, however many there are.
        for line in 0..<min(visible, rows.count - offset) {
            let index = offset + line
            let isSelected = index == selectedIndex && focused
            let style = isSelected ? palette.selected : palette.text
            let y = top + line
            if isSelected { grid.fill(x: rect.x + 1, y: y, width: inner, height: 1, with: Cell(" ", style: style)) }
            if index == selectedIndex { grid.put(String(glyphs.marker), x: rect.x + 1, y: y, style: focused ? style : palette.inactive) }
            var cells = content.cells(panel, source: rows.sourceIndices[index], widths: widths)
            if isSelected {
                // Keep a cell's own colour (bars, errors) on the selection's background.
                for index in cells.indices {
                    guard let own = cells[index].style else { continue }
                    var merged = style
                    if own.foreground != .terminalDefault { merged.foreground = own.foreground }
                    cells[index].style = merged
                }
            }
            grid.tableRow(cells, widths: widths, x: rect.x + 2, y: y, rowStyle: style, glyphs: glyphs)
        }
        if rows.count > visible {
            let more = " \(offset + 1)-\(min(rows.count, offset + visible))/\(rows.count) "
            grid.put(more, x: rect.x + rect.width - more.count - 2, y: rect.y + rect.height - 1, style: palette.inactive)
        }
    }

    private static func emptyText(_ panel: Panel, _ snapshot: DashboardSnapshot) -> String {
        switch panel {
        case .pending: return "no pending requests: submit one with bgctl submit or an app's BGTaskScheduler.submit"
        case .running: return "no handler is running"
        case .transfers: return "no background transfers"
        case .events: return "no events yet"
        case .apps: return "no apps: an app is known once its manifest is in the config's apps/ folder"
        }
    }

    private static func statusLine(_ grid: inout CellGrid, _ snapshot: DashboardSnapshot, state: DashboardState, row: Int, palette: Palette) {
        if state.isEditingFilter {
            let x = grid.put(" filter: ", x: 0, y: row, style: palette.hint)
            grid.put(state.filter + "_", x: x, y: row, style: palette.text)
            grid.put("Enter keeps it, Esc clears it", x: max(x + state.filter.count + 3, grid.size.width - 30), y: row, style: palette.inactive)
        } else if let status = state.status {
            grid.put(" " + status.text, x: 0, y: row, style: status.isError ? palette.error : palette.text)
        } else if let problem = snapshot.problem {
            grid.put(" " + problem, x: 0, y: row, style: palette.error)
        }
    }

    private static func footer(_ grid: inout CellGrid, state: DashboardState, row: Int, palette: Palette, glyphs: Glyphs) {
        var hints = KeyBindings.footerHints(for: state.focus).map { hint, binding in
            (key: hint.key(for: glyphs), label: hint.label, enabled: !(state.readOnly && binding.refusedInReadOnly))
        }
        let label = state.readOnly ? " read-only" : ""
        func width(gap: Int) -> Int { hints.reduce(1) { $0 + $1.key.count + 1 + $1.label.count + gap } + label.count }
        // Two spaces between hints where they fit, one where the terminal is narrow; narrower
        // still, the hints just before the last two (help and quit) give way, last first.
        let gap = width(gap: 2) <= grid.size.width ? "  " : " "
        while width(gap: 1) > grid.size.width + 1, hints.count > 3 {
            hints.remove(at: hints.count - 3)
        }
        var x = 1
        for hint in hints {
            x += grid.put(hint.key, x: x, y: row, style: hint.enabled ? palette.hint : palette.inactive)
            x += grid.put(" \(hint.label)\(gap)", x: x, y: row, style: hint.enabled ? palette.text : palette.inactive)
        }
        if !label.isEmpty && x + label.count <= grid.size.width {
            grid.put(label, x: grid.size.width - label.count, y: row, style: palette.inactive)
        }
    }
}

