import TaskState

extension DashboardState {
    /// Applies one key to the view state and returns what the shell must do.
    public mutating func handle(_ key: Key, snapshot: DashboardSnapshot, layout: DashboardLayout) -> [DashboardEffect] {
        switch overlay {
        case .confirmCancel(let app, let identifier), .confirmCancelTransfer(let app, let identifier):
            let isTransfer = overlay == .confirmCancelTransfer(app: app, identifier: identifier)
            overlay = .none
            if key == .character("y") || key == .character("Y") {
                let action: CommandAction = isTransfer ? .transferCancel(app: app, identifier: identifier)
                                                       : .cancel(app: app, identifier: identifier)
                return [.send(action, summary: "cancel \(identifier)")]
            }
            status = Status("cancel of \(identifier) abandoned")
            return []
        case .conditions:
            return ConditionsMenu.handle(key, conditions: snapshot.conditions, state: &self)
        case .timeline(let position):
            return handleTimeline(key, position: position, snapshot: snapshot)
        case .confirmAppSwitch(let app, let enable):
            return answerAppSwitch(key, app: app, enable: enable)
        case .logPager:
            return handleLogPager(key, layout: layout)
        default:
            break
        }
        if isEditingFilter { return editFilter(key) }
        guard let (binding, command) = KeyBindings.lookup(key) else { return [] }
        switch command {
        case .quit:
            return [.quit]
        case .closeOverlayOrClearFilter:
            if overlay != .none {
                overlay = .none
            } else if !filter.isEmpty {
                filter = ""
                status = Status("filter cleared")
            }
        case .toggleHelp:
            overlay = overlay == .help ? .none : .help
            helpOffset = 0
        case .move(let movement) where overlay == .help:
            // The help scrolls when the terminal is too short for every binding.
            let rows = Overlays.helpRows(screenHeight: layout.size.height)
            let last = max(0, KeyBindings.table.count - rows)
            let target = helpOffset.addingReportingOverflow(distance(movement, layout: layout, page: rows)).partialValue
            helpOffset = min(max(0, target), last)
        case .openTimeline:
            overlay = .timeline(TimelinePosition())
        case .toggleDetails:
            overlay = overlay == .detail ? .none : (selectedID(snapshot) == nil ? .none : .detail)
        case .focusNext:
            focus = Panel(rawValue: (focus.rawValue + 1) % Panel.allCases.count)!
        case .focusPrevious:
            focus = Panel(rawValue: (focus.rawValue + Panel.allCases.count - 1) % Panel.allCases.count)!
        case .focus(let panel):
            focus = panel
        case .move(let movement):
            move(by: distance(movement, layout: layout), snapshot: snapshot, layout: layout)
        case .editFilter:
            isEditingFilter = true
            overlay = .none
        case .nextSortColumn:
            let columns = SortColumns.titles(focus)
            let next = ((sortColumn[focus] ?? 0) + 1) % columns.count
            sortColumn[focus] = next
            status = Status("\(focus.title): sorted by \(columns[next])")
        case .reverseSort:
            sortReversed[focus] = !(sortReversed[focus] ?? false)
            status = Status("\(focus.title): order \(sortReversed[focus]! ? "reversed" : "normal")")
        case .nextTheme:
            return [.nextTheme]
        case .openConditions:
            guard !readOnly else {
                status = Status("read-only: simulating conditions is disabled", isError: true)
                break
            }
            overlay = .conditions
        case .switchHost:
            return [.switchHost]
        case .act(let action):
            return act(action, binding: binding, snapshot: snapshot)
        case .selectUnderPointer:
            guard let (x, y) = key.pointer, let (panel, row) = layout.hit(x: x, y: y) else { break }
            focus = panel
            if let row {
                let rows = snapshot.rows(panel, state: self)
                let index = visibleOffset(panel, rows: rows, layout: layout) + row
                if index < rows.count { select(index, in: panel, rows: rows) }
            }
        case .scrollUnderPointer(let delta):
            guard let (x, y) = key.pointer, let (panel, _) = layout.hit(x: x, y: y) else { break }
            focus = panel
            move(by: delta, snapshot: snapshot, layout: layout)
        case .openLog:
            return openLogOfSelection(snapshot: snapshot, layout: layout)
        }
        return []
    }

    /// The rows `movement` moves the selection by.
    private func distance(_ movement: KeyCommand.Movement, layout: DashboardLayout, page: Int? = nil) -> Int {
        let page = max(1, page ?? layout.visibleRows(focus))
        switch movement {
        case .rows(let count): return count
        case .pageUp: return -page
        case .pageDown: return page
        case .first: return Int.min / 2
        case .last: return Int.max / 2
        }
    }

    /// Runs `action` on the focused panel's selected row, unless read-only mode or the panel forbids it.
    private mutating func act(_ action: PanelAction, binding: KeyBinding, snapshot: DashboardSnapshot) -> [DashboardEffect] {
        let verb = action.verb
        if readOnly && binding.refusedInReadOnly {
            status = Status("read-only: \(verb) is disabled", isError: true)
            return []
        }
        let panel = focus
        guard binding.panels.contains(panel) else { return refuse(verb, outside: binding.panels[0]) }
        let rows = snapshot.rows(panel, state: self)
        guard let index = currentIndex(panel, rows: rows) else {
            status = Status("nothing selected to \(verb)", isError: true)
            return []
        }
        let source = rows.sourceIndices[index]
        switch (action, panel) {
        case (.push, .pending), (.push, .running), (.push, .transfers):
            let selectedApp: Identifier?
            switch panel {
            case .pending: selectedApp = snapshot.pending[source].request.app
            case .running: selectedApp = snapshot.runningApp(source)
            default: selectedApp = snapshot.transfers[source].app
            }
            guard let app = selectedApp else { return [] }
            return [.send(.push(PushRequest(app: app, source: "bgtop")), summary: "push to \(app)")]
        case (.launch, .pending) where snapshot.pending[source].push != nil, (.cancel, .pending) where snapshot.pending[source].push != nil:
            status = Status("a held push is delivered by the push rules; it cannot be \(action == .launch ? "launched" : "cancelled")", isError: true)
            return []
        case (.launch, .pending):
            let request = snapshot.pending[source].request
            return [.send(.simulateLaunch(identifier: request.identifier, app: request.app), summary: "simulate launch of \(request.identifier)")]
        case (.expire, .running):
            guard let task = snapshot.runningTask(source) else {
                status = Status("this launch's tasks are done; what is left of it is being ended", isError: true)
                return []
            }
            return [.send(.simulateExpiration(identifier: task.identifier, app: task.app), summary: "simulate expiration of \(task.identifier)")]
        case (.cancel, .transfers):
            let transfer = snapshot.transfers[source]
            guard transfer.state.isActive else {
                status = Status("\(transfer.identifier) is already \(transfer.state.rawValue)", isError: true)
                return []
            }
            overlay = .confirmCancelTransfer(app: transfer.app, identifier: transfer.identifier)
            return []
        case (.cancel, .pending):
            let request = snapshot.pending[source].request
            overlay = .confirmCancel(app: request.app, identifier: request.identifier)
            return []
        case (.switchApp, .apps):
            return askAppSwitch(snapshot.apps[source])
        case (.pauseOrResume, .transfers):
            let transfer = snapshot.transfers[source]
            switch transfer.state {
            case .paused:
                return [.send(.transferResume(app: transfer.app, identifier: transfer.identifier), summary: "resume \(transfer.identifier)")]
            case .waiting, .running:
                return [.send(.transferPause(app: transfer.app, identifier: transfer.identifier), summary: "pause \(transfer.identifier)")]
            case .completed, .failed, .cancelled:
                status = Status("\(transfer.identifier) is \(transfer.state.rawValue); nothing to pause", isError: true)
                return []
            }
        default:
            return refuse(verb, outside: binding.panels[0])
        }
    }

    private mutating func refuse(_ verb: String, outside home: Panel) -> [DashboardEffect] {
        status = Status("\(verb) works on \(home.title.lowercased()): press \(home.rawValue + 1) to focus them", isError: true)
        return []
    }

    private mutating func editFilter(_ key: Key) -> [DashboardEffect] {
        switch key {
        case .enter:
            isEditingFilter = false
        case .escape:
            isEditingFilter = false
            filter = ""
        case .backspace:
            if !filter.isEmpty { filter.removeLast() }
        case .character(let c):
            filter.append(c)
        default:
            break
        }
        scroll = [:]
        return []
    }

    /// The selected row's id in the focused panel.
    public func selectedID(_ snapshot: DashboardSnapshot) -> String? {
        let rows = snapshot.rows(focus, state: self)
        return currentIndex(focus, rows: rows).map { rows.ids[$0] }
    }

    /// The index of the selected row: the row with the selected id, else the last index clamped.
    public func currentIndex(_ panel: Panel, rows: PanelRows) -> Int? {
        guard rows.count > 0 else { return nil }
        if let id = selection[panel], let index = rows.ids.firstIndex(of: id) { return index }
        return min(max(0, selectionIndex[panel] ?? 0), rows.count - 1)
    }

    mutating func select(_ index: Int, in panel: Panel, rows: PanelRows) {
        selection[panel] = rows.ids[index]
        selectionIndex[panel] = index
    }

    private mutating func move(by delta: Int, snapshot: DashboardSnapshot, layout: DashboardLayout) {
        let rows = snapshot.rows(focus, state: self)
        guard rows.count > 0 else { return }
        let current = currentIndex(focus, rows: rows) ?? 0
        let target = min(max(0, current.addingReportingOverflow(delta).partialValue), rows.count - 1)
        select(target, in: focus, rows: rows)
        scrollToSelection(focus, rows: rows, layout: layout)
    }

    /// The first row shown in `panel`: the stored scroll, moved just enough to show the selection
    /// (which may have moved by itself when rows were re-sorted or removed). The view and mouse
    /// clicks both use this, so a click lands on the row that is on screen.
    public func visibleOffset(_ panel: Panel, rows: PanelRows, layout: DashboardLayout) -> Int {
        let visible = max(1, layout.visibleRows(panel))
        var offset = min(scroll[panel] ?? 0, max(0, rows.count - visible))
        if let selected = currentIndex(panel, rows: rows) {
            if selected < offset { offset = selected }
            if selected >= offset + visible { offset = selected - visible + 1 }
        }
        return max(0, offset)
    }

    /// Keeps the selected row of `panel` inside its visible window.
    mutating func scrollToSelection(_ panel: Panel, rows: PanelRows, layout: DashboardLayout) {
        let visible = max(1, layout.visibleRows(panel))
        guard let index = currentIndex(panel, rows: rows) else { scroll[panel] = 0; return }
        var offset = scroll[panel] ?? 0
        if index < offset { offset = index }
        if index >= offset + visible { offset = index - visible + 1 }
        offset = min(offset, max(0, rows.count - visible))
        scroll[panel] = max(0, offset)
    }
}
