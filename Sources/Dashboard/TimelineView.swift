import FoundationEssentials
import TaskState

/// The timeline, drawn over the panels: a lane per app over a window of time, each run a bar
/// from its launch to its end in the mark of how it ended, its first cell the mark of how it was
/// launched, throttled stretches shaded, and right of "now" what comes next. Pure: cells only.
enum TimelineView {
    /// Where things go inside the timeline's box.
    private struct Geometry {
        let rect: Rect
        let labelWidth: Int
        let laneX: Int
        let laneWidth: Int
        let start: Date
        let secondsPerCell: Double

        init(rect: Rect, position: TimelinePosition, now: Date) {
            self.rect = rect
            labelWidth = TimelinePosition.labelWidth(screenWidth: rect.width)
            laneX = rect.x + 2 + labelWidth + 1
            laneWidth = TimelinePosition.laneWidth(screenWidth: rect.width)
            start = position.window(now: now).start
            secondsPerCell = position.cellDuration(screenWidth: rect.width)
        }

        /// The lane column of `date` (outside `0..<laneWidth` when it is outside the window).
        func column(_ date: Date) -> Int {
            let cells = (date.timeIntervalSince(start) / secondsPerCell).rounded(.down)
            return SafeNumber.int(min(max(cells, -1_000_000), 1_000_000))
        }
    }

    static func draw(_ grid: inout CellGrid, snapshot: DashboardSnapshot, position: TimelinePosition, area rect: Rect,
                     palette: Palette, glyphs: Glyphs) {
        let now = snapshot.now
        let geometry = Geometry(rect: rect, position: position, now: now)
        let window = position.window(now: now)
        grid.fill(x: rect.x, y: rect.y, width: rect.width, height: rect.height, with: Cell(" ", style: palette.text))
        let dash = glyphs == .ascii ? "-" : "–"
        var title = "Timeline \(glyphs.horizontal) \(position.spanText) \(glyphs.horizontal) "
            + "\(TextFormat.clock(window.start, seconds: false))\(dash)\(TextFormat.clock(window.end, seconds: false)) UTC"
        if position.offset != 0 { title += " \(glyphs.horizontal) scrolled, 0 = now" }
        grid.box(rect, title: title, style: palette.title, titleStyle: palette.title, glyphs: glyphs)

        let legend = legendLines(width: rect.width - 4, glyphs: glyphs)
        let legendTop = rect.y + rect.height - 1 - legend.count
        let apps = TimelineLanes.apps(snapshot)
        let selected = apps.isEmpty ? nil : min(position.lane, apps.count - 1)
        let listed = position.showsRuns ? selected.map { runsInWindow(snapshot.history.runs(of: apps[$0]), window) } : nil
        let lanesTop = rect.y + 3
        let room = max(1, legendTop - lanesTop)
        let listRows = listed.map { min(max(2, room / 3), $0.count + 1, room - 1) } ?? 0
        let laneRows = max(1, room - listRows)

        axis(&grid, geometry, now: now, y: rect.y + 1, palette: palette, glyphs: glyphs)
        if apps.isEmpty {
            grid.put("no runs yet: each app's launches appear here as the scheduler logs them", x: rect.x + 2, y: lanesTop,
                     style: palette.inactive, maxWidth: rect.width - 4)
        } else if let selected {
            let offset = min(max(0, selected - laneRows + 1), max(0, apps.count - laneRows))
            let running = Set(snapshot.tasks.map(\.key))
            let marks = TimelineMark.allCases.map { Cell($0.character(glyphs), style: $0.style(palette)) }
            let ahead = upcoming(snapshot, after: now.addingTimeInterval(geometry.secondsPerCell))
            for row in 0..<min(laneRows, apps.count - offset) {
                let index = offset + row
                lane(&grid, app: apps[index], snapshot: snapshot, running: running, ahead: ahead[apps[index]] ?? [], marks: marks,
                     geometry, now: now, y: lanesTop + row, isSelected: index == selected, palette: palette, glyphs: glyphs)
            }
            if apps.count > laneRows {
                let more = " \(offset + 1)-\(min(apps.count, offset + laneRows))/\(apps.count) lanes "
                grid.put(more, x: rect.x + rect.width - more.count - 2, y: rect.y + rect.height - 1, style: palette.inactive)
            }
            if let listed, listRows > 0 {
                // Right under the last lane shown.
                let y = lanesTop + min(laneRows, apps.count - offset)
                runList(&grid, listed, app: apps[selected], running: running, now: now, x: rect.x + 2, y: y,
                        rows: listRows, width: rect.width - 4, palette: palette, glyphs: glyphs)
            }
        }
        for (index, line) in legend.enumerated() {
            var x = rect.x + 2
            for mark in line {
                x += grid.put(String(mark.character(glyphs)), x: x, y: legendTop + index, style: mark.style(palette))
                x += grid.put(" \(mark.word)  ", x: x, y: legendTop + index, style: palette.inactive)
            }
        }
    }

    /// The hint line (in the footer's place), drawn from ``TimelineKeys/table``.
    static func hints(_ grid: inout CellGrid, row: Int, palette: Palette, glyphs: Glyphs) {
        grid.fill(x: 0, y: row, width: grid.size.width, height: 1, with: Cell(" ", style: palette.text))
        var x = 1
        for binding in TimelineKeys.table {
            x += grid.put(glyphs == .ascii ? binding.hint.ascii : binding.hint.key, x: x, y: row, style: palette.hint)
            x += grid.put(" \(binding.hint.label)  ", x: x, y: row, style: palette.text)
        }
    }

    /// The legend's marks, in lines that fit `width`.
    private static func legendLines(width: Int, glyphs: Glyphs) -> [[TimelineMark]] {
        var lines: [[TimelineMark]] = [[]]
        var used = 0
        for mark in TimelineMark.allCases {
            let needed = 2 + mark.word.count + 2
            if used + needed > width + 2, !lines[lines.count - 1].isEmpty {
                lines.append([])
                used = 0
            }
            lines[lines.count - 1].append(mark)
            used += needed
        }
        return lines
    }

    /// Tick labels (UTC clock times) on one row, ticks and the "now" mark on the next.
    private static func axis(_ grid: inout CellGrid, _ geometry: Geometry, now: Date, y: Int, palette: Palette, glyphs: Glyphs) {
        let ascii = glyphs == .ascii
        grid.put("UTC", x: geometry.rect.x + 2, y: y, style: palette.inactive)
        grid.put(String(repeating: ascii ? "-" : "─", count: geometry.laneWidth), x: geometry.laneX, y: y + 1, style: palette.inactive)
        // The shortest step that leaves room for an `HH:MM` label between ticks.
        let steps: [TimeInterval] = [60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200]
        let step = steps.first { $0 / geometry.secondsPerCell >= 7 } ?? 86400
        var tick = (geometry.start.timeIntervalSince1970 / step).rounded(.up) * step
        var labelEnd = -1
        while true {
            let date = Date(timeIntervalSince1970: tick)
            let column = geometry.column(date)
            guard column < geometry.laneWidth else { break }
            if column >= 0 {
                grid.put(ascii ? "+" : "┬", x: geometry.laneX + column, y: y + 1, style: palette.inactive)
                let label = TextFormat.clock(date, seconds: false)
                let x = column - 2
                if x > labelEnd, x >= 0, x + label.count <= geometry.laneWidth {
                    grid.put(label, x: geometry.laneX + x, y: y, style: palette.columnHeader)
                    labelEnd = x + label.count
                }
            }
            tick += step
        }
        let nowColumn = geometry.column(now)
        if nowColumn >= 0, nowColumn < geometry.laneWidth {
            grid.put(ascii ? "v" : "▼", x: geometry.laneX + nowColumn, y: y + 1, style: palette.hint)
        }
    }

    /// What comes next, per app: pending requests' earliest begin dates and planned launches,
    /// waiting transfers' earliest begin dates and retries, from `after` on. Gathered once a frame.
    private static func upcoming(_ snapshot: DashboardSnapshot, after: Date) -> [Identifier: [(Date, TimelineMark)]] {
        var marks: [Identifier: [(Date, TimelineMark)]] = [:]
        func add(_ app: Identifier, _ date: Date?, _ mark: TimelineMark) {
            if let date, date >= after { marks[app, default: []].append((date, mark)) }
        }
        for row in snapshot.pending where row.push == nil {
            add(row.request.app, row.request.earliestBeginDate, .begin)
            add(row.request.app, row.plannedLaunch, .planned)
        }
        for transfer in snapshot.transfers where transfer.state == .waiting {
            add(transfer.app, transfer.earliestBeginDate, .transfer)
            add(transfer.app, transfer.retryAt, .transfer)
        }
        return marks
    }

    /// One app's lane: its name, then throttles, runs, the now line and what comes next. `marks`
    /// holds each mark's cell, made once a frame.
    private static func lane(_ grid: inout CellGrid, app: Identifier, snapshot: DashboardSnapshot, running: Set<TaskKey>,
                             ahead: [(Date, TimelineMark)], marks: [Cell], _ geometry: Geometry, now: Date, y: Int,
                             isSelected: Bool, palette: Palette, glyphs: Glyphs) {
        let ellipsis: Character = glyphs == .ascii ? "~" : "…"
        let nameStyle = isSelected ? palette.selected : palette.text
        if isSelected {
            grid.fill(x: geometry.rect.x + 1, y: y, width: geometry.labelWidth + 1, height: 1, with: Cell(" ", style: nameStyle))
            grid.put(String(glyphs.marker), x: geometry.rect.x + 1, y: y, style: nameStyle)
        }
        grid.put(TextFormat.fitTail(app.rawValue, geometry.labelWidth, ellipsis: ellipsis), x: geometry.rect.x + 2, y: y,
                 style: nameStyle, maxWidth: geometry.labelWidth)
        var cells = [Cell?](repeating: nil, count: geometry.laneWidth)
        func paint(from start: Date, to end: Date, _ cell: Cell, onlyEmpty: Bool = false) {
            let first = max(0, geometry.column(start)), last = min(geometry.laneWidth - 1, geometry.column(end))
            guard first <= last else { return }
            for column in first...last where !onlyEmpty || cells[column] == nil { cells[column] = cell }
        }
        let lane = snapshot.history.lanes[app]
        for stretch in lane?.throttles ?? [] {
            paint(from: stretch.start, to: stretch.end, marks[TimelineMark.throttled.rawValue])
        }
        let windowEnd = geometry.start.addingTimeInterval(geometry.secondsPerCell * Double(geometry.laneWidth))
        for run in lane?.runs ?? [] {
            // Most runs lie outside a narrow window: skipped before anything is worked out.
            guard run.start < windowEnd, (run.end ?? .distantFuture) >= geometry.start else { continue }
            let (mark, end) = appearance(of: run, running: running, now: now)
            let cell = marks[mark.rawValue]
            if !run.startLogged && !run.adopted {
                // Only its end is known: what comes before is drawn as unknown, up to that end.
                paint(from: run.start, to: end, marks[TimelineMark.lost.rawValue])
                paint(from: end, to: end, cell)
                continue
            }
            paint(from: run.start, to: end, cell)
            let column = geometry.column(run.start)
            // A run of one cell shows how it ended; zoomed in, its first cell shows how it began.
            if run.startLogged, column >= 0, column < geometry.laneWidth, geometry.column(end) > column {
                var bold = cell.style
                bold.bold = true
                cells[column] = Cell(TimelineMark(run.origin).character(glyphs), style: bold)
            }
        }
        paint(from: now, to: now, Cell(glyphs.vertical, style: palette.hint), onlyEmpty: true)
        for (date, mark) in ahead { paint(from: date, to: date, marks[mark.rawValue]) }
        for (column, cell) in cells.enumerated() {
            if let cell { grid[geometry.laneX + column, y] = cell }
        }
    }

    /// How a run is drawn and to where: an open run whose task still runs goes to now; one whose
    /// task is gone without an end in the log goes to the last event about it.
    private static func appearance(of run: HistoryRun, running: Set<TaskKey>, now: Date) -> (TimelineMark, Date) {
        if let end = run.end, let outcome = run.outcome { return (TimelineMark(outcome), end) }
        return running.contains(run.key) ? (.running, max(now, run.start)) : (.lost, run.lastSeen)
    }

    /// The runs of a lane that touch the window, newest first.
    private static func runsInWindow(_ runs: ArraySlice<HistoryRun>, _ window: (start: Date, end: Date)) -> [HistoryRun] {
        runs.reversed().filter { run in run.start <= window.end && (run.end ?? .distantFuture) >= window.start }
    }

    /// The selected lane's runs, one a line: when, how long, how it ended, how it was launched, what.
    private static func runList(_ grid: inout CellGrid, _ runs: [HistoryRun], app: Identifier, running: Set<TaskKey>, now: Date,
                                x: Int, y: Int, rows: Int, width: Int, palette: Palette, glyphs: Glyphs) {
        let heading = runs.isEmpty ? "no runs of \(app) in this window" : "runs of \(app) in this window, newest first"
        grid.put(heading, x: x, y: y, style: palette.columnHeader, maxWidth: width)
        for (index, run) in runs.prefix(rows - 1).enumerated() {
            let (mark, end) = appearance(of: run, running: running, now: now)
            let line = y + 1 + index
            let column = x + grid.put(String(mark.character(glyphs)), x: x, y: line, style: mark.style(palette))
            // A start the log does not vouch for is "no later than".
            let from = run.startLogged ? "" : glyphs == .ascii ? "<" : "≤"
            let text = " \(from)\(TextFormat.clock(run.start)) \(TextFormat.fit(DurationText.compact(end.timeIntervalSince(run.start)), 7))"
                + " \(TextFormat.fit(mark.word, 14)) \(TextFormat.fit(TimelineMark(run.origin).word, 12)) \(run.identifier)"
            grid.put(text, x: column, y: line, style: palette.text, maxWidth: x + width - column)
        }
    }
}
