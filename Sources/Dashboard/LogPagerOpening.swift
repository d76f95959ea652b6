import TaskState

/// The log pager inside the dashboard: `o` opens it on the selected row's app, it takes every key
/// while open, and the shell feeds it the log's parts and changes.
extension DashboardState {
    /// Opens the pager on `app`'s log at `position` (the apps panel and `o` both come here);
    /// returns the first read.
    public mutating func openLog(app: Identifier, subject: String, position: LogRequest.Position,
                                 size: ScreenSize) -> [DashboardEffect] {
        var pager = LogPager(app: app, subject: subject, follow: position == .end)
        pager.pageRows = LogPagerView.rows(for: size)
        let read = pager.ask(position)
        logPager = pager
        overlay = .logPager
        return [read]
    }

    /// The app whose log the shell must read and watch, while the pager is open.
    public var followedLog: Identifier? { overlay == .logPager ? logPager?.app : nil }

    /// An answer to the pager's last read; returns the next read, if one follows.
    public mutating func receiveLog(_ excerpt: LogExcerpt) -> [DashboardEffect] {
        guard overlay == .logPager, var pager = logPager else { return [] }
        let effects = pager.receive(excerpt)
        logPager = pager
        return effects
    }

    /// The followed log changed on disk (written, truncated or replaced).
    public mutating func logFileChanged() -> [DashboardEffect] {
        guard overlay == .logPager, var pager = logPager else { return [] }
        let effects = pager.logChanged()
        logPager = pager
        return effects
    }

    /// `o`: the log of the selected row's app, at the selected launch where the row names one.
    mutating func openLogOfSelection(snapshot: DashboardSnapshot, layout: DashboardLayout) -> [DashboardEffect] {
        let rows = snapshot.rows(focus, state: self)
        guard let index = currentIndex(focus, rows: rows) else {
            status = Status("nothing selected: o opens the log of the selected row's app", isError: true)
            return []
        }
        let source = rows.sourceIndices[index]
        let app: Identifier
        var position = LogRequest.Position.end
        var subject = "end"
        switch focus {
        case .pending:
            app = snapshot.pending[source].request.app
        case .running:
            guard let task = snapshot.runningTask(source) else {
                guard let launch = snapshot.endingLaunch(source) else { return [] }
                app = launch.app
                break
            }
            app = task.app
            position = .launch(launchID: task.launchID, identifier: task.identifier.rawValue, offset: task.logOffset)
            subject = "launch \(task.launchID)"
        case .transfers:
            app = snapshot.transfers[source].app
        case .apps:
            app = snapshot.apps[source].app
        case .events:
            let event = snapshot.events[source]
            guard let eventApp = event.app else {
                status = Status("this \(event.type.rawValue) event names no app: o opens the log of a row's app", isError: true)
                return []
            }
            app = eventApp
            // A launch's events lead to its output: the launch itself by its recorded offset, a
            // later event (completed, expired, killed...) by the newest marker of its identifier.
            if let identifier = event.identifier, Self.launchEvents.contains(event.type) {
                position = .launch(launchID: nil, identifier: identifier.rawValue, offset: event.logOffset)
                subject = "launch of \(identifier) (\(event.type.rawValue) \(TextFormat.clock(event.time)))"
            }
        }
        return openLog(app: app, subject: subject, position: position, size: layout.size)
    }

    /// Events of a launch's task: `o` on one opens the log at that launch. (Transfer events name a
    /// transfer, request events a request that has not run.)
    static let launchEvents: Set<Event.Kind> = [.launched, .pushDelivered, .completed, .expired, .killed, .adopted, .interrupted]

    /// A key while the pager is open.
    mutating func handleLogPager(_ key: Key, layout: DashboardLayout) -> [DashboardEffect] {
        guard var pager = logPager else {
            overlay = .none
            return []
        }
        let rows = LogPagerView.rows(for: layout.size)
        if pager.searchDraft != nil {
            let effects = pager.editSearch(key, rows: rows)
            logPager = pager
            return effects
        }
        guard let command = LogPagerKeys.lookup(key) else { return [] }
        if command == .close {
            overlay = .none
            logPager = nil
            return []
        }
        let effects = pager.perform(command, rows: rows)
        logPager = pager
        return effects
    }
}
