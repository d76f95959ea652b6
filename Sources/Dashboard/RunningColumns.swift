import FoundationEssentials
import TaskState

/// The running panel's columns: each handler's budget, and what its launch costs (CPU% and MEM
/// as htop shows them, from the resource monitor's `resources.json`).
extension PanelContent {
    /// Columns narrow enough for 80 cells drop ELAPSED and shrink the runtime bar, as htop drops
    /// the columns that do not fit: what a handler has left and costs matters more than its age.
    static let runningElapsedMinimumWidth = 90

    func runningColumns(width: Int) -> [Column] {
        let wide = width >= 120
        var columns: [Column] = [.flexible("APP", minimum: 10, weight: 2), .flexible("IDENTIFIER", minimum: 12, weight: 3),
                                 .fixed("KIND", wide ? 10 : 7), .fixed("PID", 7)]
        if width >= Self.runningElapsedMinimumWidth { columns.append(.fixed("ELAPSED", 7)) }
        columns += [.fixed("LEFT", 6), .flexible("RUNTIME", minimum: width >= Self.runningElapsedMinimumWidth ? 6 : 4, weight: 2),
                    .fixed("CPU%", 5), .fixed("MEM", 5), .fixed("STATE", wide ? 18 : 12)]
        return columns
    }

    func runningCells(source: Int, widths: [Int]) -> [TableCell] {
        let showsElapsed = widths.count == 10
        let now = snapshot.now
        guard let task = snapshot.runningTask(source) else {
            guard let launch = snapshot.endingLaunch(source) else { return [] }
            return endingCells(launch, widths: widths, showsElapsed: showsElapsed)
        }
        let budget = max(0.001, task.deadline.timeIntervalSince(task.startedAt))
        let remaining = task.remaining(at: now)
        let used = 1 - remaining / budget
        let barWidth = widths.count > 6 ? widths[showsElapsed ? 6 : 5] : 8
        let left: TableCell
        let state: TableCell
        switch task.state {
        case .running:
            left = TableCell(DurationText.compact(remaining))
            state = TableCell(task.simulated ? "simulated" : "running", style: task.simulated ? palette.misc : nil)
        case .expiring:
            let kill = task.killDeadline.map { max(0, $0.timeIntervalSince(now)) } ?? 0
            left = TableCell("0s", style: palette.error)
            state = TableCell("EXPIRING \(DurationText.compact(kill))", style: palette.error)
        }
        var cells = [TableCell(task.app.rawValue, keepsTail: true), identifierCell(task.identifier, app: task.app, widths: widths),
                     TableCell(kindLabel(task.kind, widths[2])), TableCell("\(task.pid)")]
        if showsElapsed { cells.append(TableCell(DurationText.compact(now.timeIntervalSince(task.startedAt)))) }
        cells += [left,
                  TableCell.bar(task.state == .expiring ? 1 : used, width: barWidth, glyphs: glyphs,
                                style: palette.gradient("temp", task.state == .expiring ? 1 : used), emptyStyle: palette.meterEmpty)]
        cells += resourceCells(snapshot.resources(of: task))
        cells.append(state)
        return cells
    }

    /// CPU% (one decimal, of one core) and MEM (resident, htop's RES); `-` without a sample.
    private func resourceCells(_ resources: LaunchResources?) -> [TableCell] {
        guard let resources else { return [TableCell("-"), TableCell("-")] }
        let cpu = resources.cpuPercent.map { TableCell(ResourceText.percent($0), style: $0 >= 80 ? palette.error : nil) } ?? TableCell("-")
        return [cpu, TableCell(ResourceText.memory(resources.memoryBytes))]
    }

    /// A launch whose tasks are done while the rest of its tree is ended: no identifier, no
    /// budget; its lowest pid, its cost and `ending`.
    private func endingCells(_ launch: LaunchResources, widths: [Int], showsElapsed: Bool) -> [TableCell] {
        var cells = [TableCell(launch.app.rawValue, keepsTail: true), TableCell(launch.launchID, keepsTail: true),
                     TableCell("-"), TableCell(launch.pids.first.map(String.init) ?? "-")]
        if showsElapsed { cells.append(TableCell("-")) }
        cells += [TableCell("-"), TableCell("")]
        cells += resourceCells(launch)
        cells.append(TableCell("ending", style: palette.misc))
        return cells
    }
}
