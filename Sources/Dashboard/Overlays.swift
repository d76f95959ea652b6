import FoundationEssentials
import TaskState

/// Boxes drawn over the panels: help, details of the selected row, confirmations.
enum Overlays {
    /// How many bindings the help overlay shows at once on a screen this tall.
    static func helpRows(screenHeight: Int) -> Int { max(1, min(screenHeight - 2, KeyBindings.table.count + 4) - 4) }

    /// Every binding of the key table, from `offset` on when the screen is too short for all:
    /// the box's bottom border then says which ones are shown and that ↑/↓ scroll.
    static func help(_ grid: inout CellGrid, offset: Int, palette: Palette, glyphs: Glyphs, readOnly: Bool) {
        let width = min(grid.size.width - 4, 72)
        let bindings = KeyBindings.table
        let rows = helpRows(screenHeight: grid.size.height)
        let height = rows + 4
        let first = min(max(0, offset), max(0, bindings.count - rows))
        let rect = Rect(x: (grid.size.width - width) / 2, y: (grid.size.height - height) / 2, width: width, height: height)
        grid.fill(x: rect.x, y: rect.y, width: rect.width, height: rect.height, with: Cell(" ", style: palette.text))
        grid.box(rect, title: "Keys", style: palette.title, titleStyle: palette.title, glyphs: glyphs)
        for (index, binding) in bindings.dropFirst(first).prefix(rows).enumerated() {
            let disabled = readOnly && binding.refusedInReadOnly
            let y = rect.y + 2 + index
            grid.put(binding.keys, x: rect.x + 2, y: y, style: disabled ? palette.inactive : palette.hint, maxWidth: 22)
            grid.put(binding.help, x: rect.x + 25, y: y, style: disabled ? palette.inactive : palette.text, maxWidth: width - 27)
        }
        if readOnly { grid.put(" read-only: actions are disabled ", x: rect.x + 2, y: rect.y + height - 1, style: palette.inactive) }
        if rows < bindings.count {
            let more = " \(first + 1)-\(first + rows)/\(bindings.count) \(glyphs == .ascii ? "Up/Down" : "↑/↓") scroll "
            grid.put(more, x: rect.x + width - more.count - 2, y: rect.y + height - 1, style: palette.inactive)
        }
    }

    static func confirm(_ grid: inout CellGrid, question: String, palette: Palette, glyphs: Glyphs) {
        let answer = "y = yes, any other key = no"
        let width = min(grid.size.width - 4, max(question.count, answer.count) + 6)
        let rect = Rect(x: (grid.size.width - width) / 2, y: grid.size.height / 2 - 2, width: width, height: 4)
        grid.fill(x: rect.x, y: rect.y, width: rect.width, height: rect.height, with: Cell(" ", style: palette.text))
        grid.box(rect, title: "Confirm", style: palette.error, titleStyle: palette.error, glyphs: glyphs)
        grid.put(TextFormat.fitTail(question, width - 6), x: rect.x + 3, y: rect.y + 1, style: palette.text, maxWidth: width - 6)
        grid.put(answer, x: rect.x + 3, y: rect.y + 2, style: palette.hint, maxWidth: width - 6)
    }

    static func detail(_ grid: inout CellGrid, snapshot: DashboardSnapshot, state: DashboardState, palette: Palette, glyphs: Glyphs) {
        let rows = snapshot.rows(state.focus, state: state)
        guard let index = state.currentIndex(state.focus, rows: rows) else { return }
        let source = rows.sourceIndices[index]
        var lines: [(String, String)] = []
        var heatMap: (week: [Double], line: Int)?
        var key: TaskKey?
        var historyApp: Identifier?
        var appWeek: [Double]?
        let now = snapshot.now
        func date(_ value: Date?) -> String {
            guard let value else { return "-" }
            let relative = value > now ? DurationText.until(value, from: now) : DurationText.since(value, from: now)
            return "\(JSONFormat.string(from: value))  (\(relative))"
        }
        switch state.focus {
        case .pending where snapshot.pending[source].push != nil:
            let row = snapshot.pending[source]
            let push = row.push!
            key = push.key
            lines = [("app", push.app.rawValue), ("push", push.id.rawValue), ("priority", "\(push.priority.rawValue)"),
                     ("received", date(push.receivedAt)), ("expires", date(push.expiresAt)), ("collapse id", push.collapseID ?? "-"),
                     ("coalesced", "\(push.coalescedCount) older push(es)"), ("source", push.source ?? "-"),
                     ("payload", push.payload.text)]
            let blockers = Set(row.pushBlockers)
            for blocker in PushBlocker.allCases {
                lines.append((blockers.contains(blocker) ? "  waiting" : "  ok", Self.condition(clearing: blocker)))
            }
        case .pending:
            let row = snapshot.pending[source]
            let request = row.request
            key = request.key
            lines = [("app", request.app.rawValue), ("identifier", request.identifier.rawValue), ("kind", request.kind.rawValue),
                     ("earliest begin", date(request.earliestBeginDate)), ("submitted", date(request.submittedAt))]
            if let ends = row.coalescingEnds {
                lines.append(("launches by", date(ends) + ", with other apps' requests coming due"))
            }
            if let planned = row.plannedLaunch {
                let use = row.predictedUse.map { ", for a use expected at ~\(TextFormat.clock($0, seconds: false))" } ?? ""
                lines.append(("planned launch", date(planned) + use))
            }
            if let week = row.usageWeek {
                heatMap = (week, lines.count + 1)
                lines += UsageHeatMap.lines()
            }
            let blockers = Set(row.blockers(under: snapshot.rowConditions))
            // Usage prediction's waits, the launch turn's holds and the recent-use rule are listed
            // only when they hold the request: most requests never meet them, and "ok" would say nothing.
            for blocker in Blocker.allCases where blockers.contains(blocker) || !blocker.isListedOnlyWhenHolding {
                lines.append((blockers.contains(blocker) ? "  waiting" : "  ok", Self.condition(clearing: blocker, for: request)))
            }
        case .running:
            guard let task = snapshot.runningTask(source) else {
                lines = snapshot.endingLaunch(source).map { ResourceDetail.lines($0, date: date) } ?? []
                break
            }
            key = task.key
            lines = [("app", task.app.rawValue), ("identifier", task.identifier.rawValue), ("kind", task.kind.rawValue),
                     ("state", task.state.rawValue), ("pid", "\(task.pid)" + (task.processGroup.map { " (group \($0))" } ?? "")),
                     ("launch reason", task.launchReason + (task.simulated ? " (simulated)" : "")), ("started", date(task.startedAt)),
                     ("deadline", date(task.deadline)), ("expiring since", date(task.expiringSince)), ("kill at", date(task.killDeadline)),
                     ("expiration signal", task.expirationSignal)]
            if let name = task.name { lines.append(("name", name)) }
            if let push = task.push { lines.append(("push payload", push.payload.text)) }
            lines += ResourceDetail.lines(snapshot.resources(of: task), date: date)
        case .transfers:
            let transfer = snapshot.transfers[source]
            key = transfer.key
            lines = [("app", transfer.app.rawValue), ("identifier", transfer.identifier.rawValue), ("url", URLText.hidingCredentials(transfer.url)),
                     ("direction", transfer.direction.rawValue), ("state", transfer.state.rawValue),
                     ("waiting for", snapshot.transferBlockers[transfer.key]?.map(\.rawValue).joined(separator: ", ") ?? "-"),
                     ("bytes", "\(transfer.bytesTransferred) of \(transfer.bytesExpected.map(String.init) ?? "unknown")"),
                     ("discretionary", transfer.isDiscretionary ? "yes" : "no"), ("earliest begin", date(transfer.earliestBeginDate)),
                     ("retries", "\(transfer.retries)" + (transfer.retryAt.map { ", next at \(date($0))" } ?? "")),
                     ("last error", transfer.lastError ?? "-"),
                     ("timeouts", "request \(SafeNumber.secondsText((transfer.timeoutIntervalForRequest ?? TransferRecord.defaultTimeoutIntervalForRequest).rounded(.down))) s, resource \(DurationText.compact(transfer.timeoutIntervalForResource ?? TransferRecord.defaultTimeoutIntervalForResource))")]
            if let until = transfer.relaunchDelayUntil { lines.append(("relaunch delay", "until \(date(until))")) }
            lines += DelayedRequestText.lines(transfer, date: date)
            if let destination = transfer.destination { lines.append(("destination", destination)) }
            if let source = transfer.sourceFile { lines.append(("source file", source)) }
        case .apps:
            let row = snapshot.apps[source]
            lines = AppDetail.lines(row, snapshot: snapshot, glyphs: glyphs, date: date)
            historyApp = row.app
            appWeek = row.usageWeek
        case .events:
            let event = snapshot.events[source]
            lines = [("time", JSONFormat.string(from: event.time)), ("type", event.type.rawValue), ("app", event.app?.rawValue ?? "-"),
                     ("identifier", event.identifier?.rawValue ?? "-"), ("pid", event.pid.map(String.init) ?? "-"),
                     ("reason", event.reason ?? "-"), ("message", event.message)]
            if let app = event.app, let identifier = event.identifier { key = TaskKey(app: app, identifier: identifier) }
        }
        let maximumLines = min(grid.size.height - 2, lines.count + 3 + 8) - 3
        if key != nil || historyApp != nil {
            // History goes last; when room is short, its oldest lines go first, never the newest.
            let room = max(0, maximumLines - lines.count - 2)
            let history = snapshot.events.filter { event in
                key.map { event.app == $0.app && event.identifier == $0.identifier } ?? (event.app == historyApp)
            }.suffix(min(6, room))
            if !history.isEmpty {
                lines.append(("", ""))
                lines.append(("history", ""))
                for event in history { lines.append(("  " + TextFormat.clock(event.time), "\(event.type.rawValue): \(event.message)")) }
            }
        }
        if let appWeek {
            heatMap = (appWeek, lines.count + 1)
            lines += UsageHeatMap.lines()
        }
        let width = min(grid.size.width - 4, 110)
        let height = min(grid.size.height - 2, lines.count + 3)
        let rect = Rect(x: (grid.size.width - width) / 2, y: (grid.size.height - height) / 2, width: width, height: height)
        grid.fill(x: rect.x, y: rect.y, width: rect.width, height: rect.height, with: Cell(" ", style: palette.text))
        grid.box(rect, title: "Details \(glyphs.horizontal) Esc closes", style: palette.title, titleStyle: palette.title, glyphs: glyphs)
        for (offset, line) in lines.prefix(height - 3).enumerated() {
            let y = rect.y + 2 + offset
            let labelStyle = line.0.hasSuffix("waiting") ? palette.error : palette.hint
            grid.put(line.0, x: rect.x + 2, y: y, style: labelStyle, maxWidth: 18)
            grid.put(line.1, x: rect.x + 21, y: y, style: palette.text, maxWidth: width - 23)
        }
        // Drawn only where the box has room for its 48 cells.
        if let heatMap, heatMap.line < height - 3, width - 23 >= 48 {
            UsageHeatMap.draw(&grid, week: heatMap.week, x: rect.x + 21, y: rect.y + 2 + heatMap.line,
                              rows: height - 3 - heatMap.line, palette: palette)
        }
    }

    /// What must hold for a held push's `blocker` to clear.
    static func condition(clearing blocker: PushBlocker) -> String {
        switch blocker {
        case .pushBudget: return "push budget left this hour"
        case .lowPower: return "not in low power (priority 5 only)"
        case .throttled: return "app not throttled"
        case .handlingPush: return "the app's previous push answered"
        case .noManifest: return "manifest usable"
        }
    }

    /// What must hold for `blocker` to clear, as the detail view lists it.
    static func condition(clearing blocker: Blocker, for request: PendingRequest) -> String {
        switch blocker {
        case .earliestBeginDate: return "begin date reached"
        case .externalPower: return "external power (required: \(request.requiresExternalPower ? "yes" : "no"))"
        case .network: return "network (required: \(request.requiresNetworkConnectivity ? "yes" : "no"))"
        case .idle: return "machine idle (processing only)"
        case .throttled: return "app not throttled"
        case .appDisabled: return "app enabled"
        case .lowPower: return "not in low power"
        case .alreadyRunning: return "no task with this identifier running"
        case .noManifest: return "manifest usable"
        case .predictedUse: return "the refresh's planned time, before the predicted use (app refresh only)"
        case .rarelyUsed: return "a day since the last refresh of a rarely used app"
        case .usageRate: return "no more refreshes than the app has uses (no habit to prepare for)"
        case .coalescing: return "other apps' requests coming due, to launch in one wake-up"
        case .launchLimit: return "a running launch ends (maxConcurrentLaunches)"
        case .notRecentlyUsed: return "a person uses the app (processingRecentUseDays; processing only)"
        case .expensiveNetwork: return "a network that is not metered (expensive network access not allowed)"
        }
    }
}
