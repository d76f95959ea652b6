import TaskState

extension DashboardState {
    /// Applies one key to the view state and returns what the shell must do.
    public mutating func handle(_ key: Key, snapshot: DashboardSnapshot, layout: DashboardLayout) -> [DashboardEffect] {
        switch overlay {
        case .confirmCancel(let app, let identifier), .confirmCancelTransfer(let app, let identifier):
            let isTransfer = overlay == .confirmCancelTransfer(app: app, identifier: identifier)
            overlay = .none
            if key == .character("y") || key == .character("Y") {
                let action: CommandAction = isTransfer ? .cancelTransfer(app: app, identifier: identifier)
                                                       : .cancel(app: app, identifier: identifier)
                return [.send(action, summary: "cancel \(identifier)")]
            }
            status = Status("cancel of \(identifier) abandoned")
            return []
        default:
            break
        }
        if isEditingFilter { return editFilter(key) }
        switch key {
        case .character("q"):
            return [.quit]
        case .escape:
            if overlay != .none {
                overlay = .none
            } else if !filter.isEmpty {
                filter = ""
                status = Status("filter cleared")
            }
        case .character("?"):
            overlay = overlay == .help ? .none : .help
        case .enter:
            overlay = overlay == .detail ? .none : (selectedID(snapshot) == nil ? .none : .detail)
        case .tab:
            focus = Panel(rawValue: (focus.rawValue + 1) % Panel.allCases.count)!
        case .backTab:
            focus = Panel(rawValue: (focus.rawValue + Panel.allCases.count - 1) % Panel.allCases.count)!
        case .character(let c) where ("1"..."4").contains(c):
            focus = Panel(rawValue: Int(String(c))! - 1)!
        case .up, .character("k"):
            move(by: -1, snapshot: snapshot, layout: layout)
        case .down, .character("j"):
            move(by: 1, snapshot: snapshot, layout: layout)
        case .pageUp:
            move(by: -max(1, layout.visibleRows(focus)), snapshot: snapshot, layout: layout)
        case .pageDown:
            move(by: max(1, layout.visibleRows(focus)), snapshot: snapshot, layout: layout)
        case .home, .character("g"):
            move(by: Int.min / 2, snapshot: snapshot, layout: layout)
        case .end, .character("G"):
            move(by: Int.max / 2, snapshot: snapshot, layout: layout)
        case .character("/"):
            isEditingFilter = true
            overlay = .none
        case .character("s"):
            let columns = SortColumns.titles(focus)
            let next = ((sortColumn[focus] ?? 0) + 1) % columns.count
            sortColumn[focus] = next
            status = Status("\(focus.title): sorted by \(columns[next])")
        case .character("S"):
            sortReversed[focus] = !(sortReversed[focus] ?? false)
            status = Status("\(focus.title): order \(sortReversed[focus]! ? "reversed" : "normal")")
        case .character("t"):
            return [.nextTheme]
        case .character("l"):
            return action(.launch, snapshot: snapshot)
        case .character("e"):
            return action(.expire, snapshot: snapshot)
        case .character("c"):
            return action(focus == .transfers ? .cancelTransfer : .cancel, snapshot: snapshot)
        case .character("p"):
            return action(.pauseOrResume, snapshot: snapshot)
        case .click(let x, let y):
            guard let (panel, row) = layout.hit(x: x, y: y) else { break }
            focus = panel
            if let row {
                let rows = snapshot.rows(panel, state: self)
                let index = visibleOffset(panel, rows: rows, layout: layout) + row
                if index < rows.count { select(index, in: panel, rows: rows) }
            }
        case .wheelUp(let x, let y), .wheelDown(let x, let y):
            guard let (panel, _) = layout.hit(x: x, y: y) else { break }
            focus = panel
            move(by: key == .wheelUp(x: x, y: y) ? -3 : 3, snapshot: snapshot, layout: layout)
        default:
            break
        }
        return []
    }

    enum Action { case launch, expire, cancel, cancelTransfer, pauseOrResume }

    private mutating func action(_ action: Action, snapshot: DashboardSnapshot) -> [DashboardEffect] {
        let verb: String
        let panel: Panel
        switch action {
        case .launch: (verb, panel) = ("simulate launch", .pending)
        case .expire: (verb, panel) = ("simulate expiration", .running)
        case .cancel: (verb, panel) = ("cancel", .pending)
        case .cancelTransfer: (verb, panel) = ("cancel", .transfers)
        case .pauseOrResume: (verb, panel) = ("pause or resume", .transfers)
        }
        if readOnly {
            status = Status("read-only: \(verb) is disabled", isError: true)
            return []
        }
        guard focus == panel else {
            status = Status("\(verb) works on \(panel.title.lowercased()): press \(panel.rawValue + 1) to focus them", isError: true)
            return []
        }
        let rows = snapshot.rows(panel, state: self)
        guard let index = currentIndex(panel, rows: rows) else {
            status = Status("nothing selected to \(verb)", isError: true)
            return []
        }
        switch action {
        case .launch:
            let request = snapshot.pending[rows.sourceIndices[index]].request
            return [.send(.simulateLaunch(identifier: request.identifier, app: request.app), summary: "simulate launch of \(request.identifier)")]
        case .expire:
            let task = snapshot.tasks[rows.sourceIndices[index]]
            return [.send(.simulateExpiration(identifier: task.identifier, app: task.app), summary: "simulate expiration of \(task.identifier)")]
        case .cancel:
            let request = snapshot.pending[rows.sourceIndices[index]].request
            overlay = .confirmCancel(app: request.app, identifier: request.identifier)
            return []
        case .cancelTransfer:
            let transfer = snapshot.transfers[rows.sourceIndices[index]]
            guard transfer.state.isActive else {
                status = Status("\(transfer.identifier) is already \(transfer.state.rawValue)", isError: true)
                return []
            }
            overlay = .confirmCancelTransfer(app: transfer.app, identifier: transfer.identifier)
            return []
        case .pauseOrResume:
            let transfer = snapshot.transfers[rows.sourceIndices[index]]
            switch transfer.state {
            case .paused:
                return [.send(.resumeTransfer(app: transfer.app, identifier: transfer.identifier), summary: "resume \(transfer.identifier)")]
            case .waiting, .running:
                return [.send(.pauseTransfer(app: transfer.app, identifier: transfer.identifier), summary: "pause \(transfer.identifier)")]
            case .completed, .failed, .cancelled:
                status = Status("\(transfer.identifier) is \(transfer.state.rawValue); nothing to pause", isError: true)
                return []
            }
        }
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
