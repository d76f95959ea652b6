import Dashboard
import Foundation
import TaskState

/// The timeline's costs over a synthetic event log: building its history from the log's lines,
/// and its frame time beside the main screen's frame over the same events (the events panel
/// showing all of them), measured in the same run.
enum TimelineFrameTiming {
    struct Result {
        /// Seconds to build the history from the log's bytes (decoding included), and per event.
        var build: Double
        var events: Int
        var runs: Int
        /// Per zoom: the timeline's frames.
        var timeline: [(span: String, frames: Samples)]
        /// The main screen, events panel focused, over the same events.
        var mainScreen: Samples
    }

    static func measure(events count: Int, frames: Int) throws -> Result {
        let now = Date()
        let events = syntheticLog(events: count, now: now)
        var lines = Data()
        for event in events { lines.append(try JSONFormat.encodeLine(event)) }
        var history = RunHistory(throttleDelay: { 60 * pow(2, Double(min($0 - 1, 6))) })
        let start = DispatchTime.now().uptimeNanoseconds
        history.apply(lines: lines)
        let build = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        var snapshot = DashboardSnapshot(now: now, stateDirectory: "/tmp/bench", schedulerPID: 1, events: events)
        snapshot.history = history
        let size = ScreenSize(width: 160, height: 48)

        var timeline: [(String, Samples)] = []
        for zoom in [2, TimelinePosition.spans.count - 1] {
            var state = DashboardState()
            state.overlay = .timeline(TimelinePosition(zoom: zoom))
            // Scroll back and forth: every frame a key and a full render, as in the main screen's rows.
            let keys: [Key] = [.left, .right]
            timeline.append((TimelinePosition(zoom: zoom).spanText, frameTimes(snapshot, &state, size: size, frames: frames) { keys[$0 % 2] }))
        }
        var main = DashboardState()
        main.focus = .events
        let mainScreen = frameTimes(snapshot, &main, size: size, frames: frames) { _ in .down }
        return Result(build: build, events: count, runs: history.lanes.values.reduce(0) { $0 + $1.runs.count },
                      timeline: timeline, mainScreen: mainScreen)
    }

    private static func frameTimes(_ snapshot: DashboardSnapshot, _ state: inout DashboardState, size: ScreenSize, frames: Int,
                                   key: (Int) -> Key) -> Samples {
        // The first frame sorts the events panel's rows once; it is not what a key costs.
        _ = DashboardView.render(snapshot, state: state, size: size, theme: .builtInDefault, glyphs: .unicode)
        var samples: [Double] = []
        for index in 0..<frames {
            let begin = DispatchTime.now().uptimeNanoseconds
            let layout = DashboardLayout(size: size, snapshot: snapshot, state: state)
            _ = state.handle(key(index), snapshot: snapshot, layout: layout)
            let grid = DashboardView.render(snapshot, state: state, size: size, theme: .builtInDefault, glyphs: .unicode)
            samples.append(Double(DispatchTime.now().uptimeNanoseconds - begin) / 1e9)
            precondition(grid.size == size)
        }
        return Samples(samples)
    }

    /// `count` events over the last 24 hours across 30 apps: runs that complete, fail, expire or
    /// are killed (and throttle their app), submits between them, a few still running.
    static func syntheticLog(events count: Int, now: Date) -> [Event] {
        func id(_ text: String) -> Identifier { try! Identifier(validating: text) }
        var events: [Event] = []
        events.reserveCapacity(count)
        let spacing = 86_400 / Double(max(1, count))
        var index = 0
        while events.count < count {
            let app = id("com.example.app\(index % 30)")
            let task = id("com.example.app\(index % 30).job\(index % 4)")
            let time = now.addingTimeInterval(-86_400 + Double(events.count) * spacing)
            func add(_ type: Event.Kind, after seconds: Double, reason: String?, identifier: Identifier? = task) {
                guard events.count < count else { return }
                events.append(Event(time: time.addingTimeInterval(seconds), type: type, app: app, identifier: identifier,
                                    kind: .appRefresh, pid: Int32(1000 + index % 5000), reason: reason, message: "\(app): \(type.rawValue)"))
            }
            add(.submitted, after: 0, reason: nil)
            add(.launched, after: 0, reason: index % 9 == 0 ? "simulated" : "appRefresh")
            switch index % 6 {
            case 0, 1, 2: add(.completed, after: spacing * 2, reason: "success")
            case 3: add(.exited, after: spacing, reason: "exited with status 1")
            case 4:
                add(.expired, after: spacing, reason: "SIGUSR1")
                add(.completed, after: spacing * 1.5, reason: "success")
            default:
                add(.expired, after: spacing, reason: "SIGUSR1")
                add(.killed, after: spacing * 2, reason: "overran")
                add(.throttled, after: spacing * 2, reason: "level \(1 + index % 3)", identifier: nil)
            }
            index += 1
        }
        return events
    }
}
