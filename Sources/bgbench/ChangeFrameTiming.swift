import Dashboard
import DashboardFeed
import Foundation
import SchedulerCore
import StateFeed
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// The first frame after one change, the whole way `bgtop` takes it in process: a state
/// directory of `count` pending requests (the shape of ``FrameTiming``'s), followed by a
/// ``StateMirror``; for each change a request's file is written or removed (the scheduler's
/// commit, not timed), then timed: inotify's report for it (``StateChangeSet``), the mirror reading
/// the file, the waits and rows it touches (``LivePendingRows``), the rest of the snapshot
/// (``DashboardSnapshot/fill(records:state:events:history:catalog:schedulerPID:now:)``) and a
/// full render at 160×48 of the pending panel sorted by its first column.
///
/// Then the same for a change of conditions (`conditions.json`, mains power coming and going),
/// which changes the blockers of every request that needs power (a fifth of them): rows keep
/// their own blockers and join their group's condition blockers when drawn, so no row is edited;
/// each frame is checked to show the change.
enum ChangeFrameTiming {
    struct Result {
        /// One request's file per change.
        var requests: Samples
        /// `conditions.json` per change.
        var conditions: Samples
    }

    static func measure(pending count: Int, changes: Int, conditionChanges: Int, root: String) throws -> Result {
        let paths = StatePaths(root: root)
        try StateDirectoryCheck.prepare(root)
        for directory in paths.directories { try StateFiles.ensureDirectory(directory) }
        let start = Date()
        func request(_ index: Int, at now: Date) throws -> PendingRequest {
            let app = try Identifier(validating: "com.example.app\(index / 10)")
            return PendingRequest(app: app, identifier: try Identifier(validating: "\(app).job\(index % 10)"),
                                  kind: index % 3 == 0 ? .appRefresh : .processing,
                                  earliestBeginDate: now.addingTimeInterval(3600 + Double(index % 7200)),
                                  requiresNetworkConnectivity: index % 2 == 0, requiresExternalPower: index % 5 == 0,
                                  submittedAt: now.addingTimeInterval(-Double(index % 600)))
        }
        for index in 0..<count {
            let pending = try request(index, at: start)
            if index % 10 == 0 { try StateFiles.ensureDirectory("\(paths.requests)/\(pending.app)") }
            try StateFiles.write(try JSONFormat.encode(pending), to: paths.request(pending.key), durable: false)
        }
        // On battery: the requests that need power say so, as in the frame-time rows.
        let conditions = ConditionsRecord(probed: Conditions(externalPower: false), probedAt: start)
        try StateFiles.write(try JSONFormat.encode(conditions), to: paths.conditions, durable: false)

        let mirror = StateMirror(paths: paths, tracksRequestChanges: true)
        let settings = SchedulerSettings(), catalog = ManifestCatalog()
        var live = LivePendingRows()
        var snapshot = DashboardSnapshot(now: start, stateDirectory: root)
        func refresh(at now: Date) {
            let records = mirror.snapshotExceptRequests
            let state = live.update(&snapshot, mirror: mirror, records: records, settings: settings, catalog: catalog,
                                    configurationChanged: false, now: now)
            snapshot.fill(records: records, state: state, events: mirror.events, history: nil, catalog: catalog, schedulerPID: 1, now: now)
        }
        let size = ScreenSize(width: 160, height: 48)
        let dashboard = DashboardState()
        refresh(at: Date())
        // The rows sorted once, as the running dashboard has them before any change.
        _ = DashboardView.render(snapshot, state: dashboard, size: size, theme: .builtInDefault, glyphs: .unicode)

        var samples: [Double] = []
        var added: [TaskKey] = []
        for change in 0..<changes {
            let now = Date()
            // A request's date moves, a request is submitted, one is completed: in turn.
            let path: String, mask: Int32
            switch change % 3 {
            case 0:
                var moved = try request((change * 7919) % count, at: start)
                moved.earliestBeginDate = now.addingTimeInterval(Double((change * 104_729) % 7200))
                path = paths.request(moved.key)
                try StateFiles.write(try JSONFormat.encode(moved), to: path, durable: false)
                mask = IN_CLOSE_WRITE
            case 1:
                let app = try Identifier(validating: "com.example.app\((change * 31) % max(1, count / 10))")
                let new = PendingRequest(app: app, identifier: try Identifier(validating: "\(app).extra\(change)"), kind: .processing,
                                         earliestBeginDate: now.addingTimeInterval(Double(change % 7200)), submittedAt: now)
                path = paths.request(new.key)
                try StateFiles.write(try JSONFormat.encode(new), to: path, durable: false)
                added.append(new.key)
                mask = IN_CLOSE_WRITE
            default:
                path = paths.request(added.removeFirst())
                try StateFiles.remove(path)
                mask = IN_DELETE
            }
            let begin = DispatchTime.now().uptimeNanoseconds
            var report = StateChangeSet()
            report.add(directory: StateFiles.directoryName(of: path), name: String(path.split(separator: "/").last!), mask: UInt32(mask),
                       paths: paths, configApps: root + "/config/apps")
            mirror.apply(report)
            refresh(at: now)
            let grid = DashboardView.render(snapshot, state: dashboard, size: size, theme: .builtInDefault, glyphs: .unicode)
            samples.append(Double(DispatchTime.now().uptimeNanoseconds - begin) / 1e9)
            precondition(grid.size == size && snapshot.pending.count == count + added.count)
        }
        var conditionSamples: [Double] = []
        var lastMentions: Int?
        for change in 0..<conditionChanges {
            let now = Date()
            let record = ConditionsRecord(probed: Conditions(externalPower: change % 2 == 0), probedAt: now)
            try StateFiles.write(try JSONFormat.encode(record), to: paths.conditions, durable: false)
            let begin = DispatchTime.now().uptimeNanoseconds
            var report = StateChangeSet()
            report.add(directory: root, name: "conditions.json", mask: UInt32(IN_CLOSE_WRITE), paths: paths, configApps: root + "/config/apps")
            mirror.apply(report)
            refresh(at: now)
            let grid = DashboardView.render(snapshot, state: dashboard, size: size, theme: .builtInDefault, glyphs: .unicode)
            conditionSamples.append(Double(DispatchTime.now().uptimeNanoseconds - begin) / 1e9)
            precondition(grid.size == size)
            // What was timed drew the change: on battery the rows that need power wait for it
            // ("power" in their waiting column too, not only in their requirements).
            let mentions = grid.textLines.joined().components(separatedBy: "power").count - 1
            if let last = lastMentions {
                precondition((mentions > last) == (change % 2 == 1), "the screen did not follow the conditions: \(last) then \(mentions)")
            }
            lastMentions = mentions
        }
        return Result(requests: Samples(samples), conditions: Samples(conditionSamples))
    }
}
