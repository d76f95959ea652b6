import Dashboard
import Foundation
import TaskState

/// Frame times of the pure view over a synthetic state.
enum FrameTiming {
    struct Result {
        var first: Double
        var frames: Samples
    }

    static func measure(pending count: Int, frames: Int) -> Result {
        let now = Date()
        let snapshot = syntheticSnapshot(pending: count, now: now)
        let size = ScreenSize(width: 160, height: 48)
        var state = DashboardState()
        let start = DispatchTime.now().uptimeNanoseconds
        _ = DashboardView.render(snapshot, state: state, size: size, theme: .builtInDefault, glyphs: .unicode)
        let first = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        var samples: [Double] = []
        for _ in 0..<frames {
            let begin = DispatchTime.now().uptimeNanoseconds
            let layout = DashboardLayout(size: size, snapshot: snapshot, state: state)
            _ = state.handle(.down, snapshot: snapshot, layout: layout)
            let grid = DashboardView.render(snapshot, state: state, size: size, theme: .builtInDefault, glyphs: .unicode)
            samples.append(Double(DispatchTime.now().uptimeNanoseconds - begin) / 1e9)
            precondition(grid.size == size)
        }
        return Result(first: first, frames: Samples(samples))
    }

    /// `count` pending requests across apps of ten identifiers, a few running tasks, 200 events.
    static func syntheticSnapshot(pending count: Int, now: Date) -> DashboardSnapshot {
        func id(_ text: String) -> Identifier { try! Identifier(validating: text) }
        var pending: [DashboardSnapshot.PendingRow] = []
        pending.reserveCapacity(count)
        for index in 0..<count {
            let app = id("com.example.app\(index / 10)")
            let identifier = id("com.example.app\(index / 10).job\(index % 10)")
            let kind: TaskKind = index % 3 == 0 ? .appRefresh : .processing
            let earliest = now.addingTimeInterval(Double(index % 7200))
            let submitted = now.addingTimeInterval(-Double(index % 600))
            let request = PendingRequest(app: app, identifier: identifier, kind: kind, earliestBeginDate: earliest,
                                         requiresNetworkConnectivity: index % 2 == 0, requiresExternalPower: index % 5 == 0,
                                         submittedAt: submitted)
            var blockers: [Blocker] = [.earliestBeginDate]
            if index % 5 == 0 { blockers.append(.externalPower) }
            pending.append(DashboardSnapshot.PendingRow(request: request, blockers: blockers))
        }
        var tasks: [LaunchedTask] = []
        for index in 0..<5 {
            let offset = Double(index * 5)
            let pid = Int32(1000 + index)
            tasks.append(LaunchedTask(
                app: id("com.example.run\(index)"), identifier: id("com.example.run\(index).refresh"), kind: .appRefresh,
                launchReason: "appRefresh", simulated: false, pid: pid, processGroup: pid, processStartTicks: nil,
                launchID: "l\(index)", startedAt: now.addingTimeInterval(-offset), deadline: now.addingTimeInterval(30 - offset)))
        }
        var events: [Event] = []
        for index in 0..<200 {
            let app = id("com.example.app\(index)")
            events.append(Event(time: now.addingTimeInterval(-Double(200 - index)), type: .submitted, app: app,
                                identifier: id("com.example.app\(index).job0"), message: "\(app): submitted request job0"))
        }
        return DashboardSnapshot(now: now, stateDirectory: "/tmp/bench", schedulerPID: 1, pending: pending, tasks: tasks,
                                 events: events)
    }
}
