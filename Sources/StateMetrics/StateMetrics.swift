import FoundationEssentials
import Prometheus
import TaskState

/// The state directory as Prometheus metrics, in the Prometheus text exposition format (0.0.4):
/// what `bgctl metrics` prints for node_exporter's textfile collector and `bgtaskd --metrics`
/// serves for a scrape. Made from one ``StateSnapshot``, so it costs nothing between scrapes.
///
/// Counters come from the app records (they survive restarts and a rotated event log); the rest
/// are gauges of what is there now. Label values are app identifiers, kinds and states only: no
/// URL, name or other text a client chose reaches a label.
public enum StateMetrics {
    /// The metrics of `snapshot` at `now`; `schedulerRunning` from the state directory's lock.
    public static func text(of snapshot: StateSnapshot, schedulerRunning: Bool, now: Date) -> String {
        let registry = PrometheusCollectorRegistry()
        func gauge(_ name: String, _ help: String, _ labels: [(String, String)] = [], _ value: Double) {
            registry.makeGauge(descriptor: descriptor(name, help), labels: labels).set(to: value)
        }
        gauge("bgtask_scheduler_up", "1 when bgtaskd holds the state directory's lock.", [], schedulerRunning ? 1 : 0)
        if let heartbeat = snapshot.heartbeat {
            gauge("bgtask_scheduler_heartbeat_timestamp_seconds", "When bgtaskd last committed its state.", [],
                  heartbeat.updatedAt.timeIntervalSince1970)
        }
        for ((app, kind), count) in counted(snapshot.requests.map { ($0.app.rawValue, $0.kind.rawValue) }) {
            gauge("bgtask_pending_requests", "Task requests waiting to be launched.", [("app", app), ("kind", kind)], Double(count))
        }
        for ((app, state), count) in counted(snapshot.tasks.map { ($0.app.rawValue, $0.state.rawValue) }) {
            gauge("bgtask_tasks", "Launched tasks, running or expiring.", [("app", app), ("state", state)], Double(count))
        }
        var throttled = 0
        for record in snapshot.apps.sorted(by: { $0.id < $1.id }) {
            let app = [("app", record.id.rawValue)]
            registry.makeCounter(descriptor: descriptor("bgtask_launches_total", "Processes launched for the app."), labels: app)
                .increment(by: Int64(max(0, record.launchCount)))
            registry.makeCounter(descriptor: descriptor("bgtask_kills_total", "Processes of the app killed after their grace."), labels: app)
                .increment(by: Int64(max(0, record.killCount)))
            let day = record.activity?.lastDay(at: now) ?? AppActivity.Totals()
            gauge("bgtask_launches_last_day", "Launches in the last 24 hours.", app, Double(day.launches))
            gauge("bgtask_expiries_last_day", "Tasks expired in the last 24 hours.", app, Double(day.expiries))
            gauge("bgtask_kills_last_day", "Processes killed in the last 24 hours.", app, Double(day.kills))
            let isThrottled = (record.throttledUntil ?? .distantPast) > now
            if isThrottled { throttled += 1 }
            gauge("bgtask_app_throttled", "1 while the app is throttled after overrunning.", app, isThrottled ? 1 : 0)
            gauge("bgtask_app_enabled", "1 when background work is switched on for the app.", app, record.enabled ? 1 : 0)
            let pushes = (record.pushDeliveries ?? []).filter { now.timeIntervalSince($0) < 3600 }.count
            gauge("bgtask_push_deliveries_last_hour", "Background pushes delivered in the last hour.", app, Double(pushes))
        }
        gauge("bgtask_throttled_apps", "Apps throttled now.", [], Double(throttled))
        for ((app, state), count) in counted(snapshot.transfers.map { ($0.app.rawValue, $0.state.rawValue) }) {
            gauge("bgtask_transfers", "Background transfers by state.", [("app", app), ("state", state)], Double(count))
        }
        var bytes: [String: Double] = [:]
        for transfer in snapshot.transfers {
            bytes["\(transfer.app.rawValue) \(transfer.direction.rawValue)", default: 0] += Double(max(0, transfer.bytesTransferred))
        }
        for (key, value) in bytes.sorted(by: { $0.key < $1.key }) {
            let parts = key.split(separator: " ")
            gauge("bgtask_transfer_bytes", "Bytes moved by the transfers the scheduler holds records of.",
                  [("app", String(parts[0])), ("direction", String(parts[1]))], value)
        }
        for ((app, _), count) in counted(snapshot.pushes.map { ($0.app.rawValue, "") }) {
            gauge("bgtask_held_pushes", "Background pushes held until the app may run.", [("app", app)], Double(count))
        }
        // Per app, not per launch: a launch id in a label would make a new series every launch.
        var cpu: [String: (Double, Double)] = [:]
        for launch in snapshot.resources?.launches ?? [] {
            let sums = cpu[launch.app.rawValue] ?? (0, 0)
            cpu[launch.app.rawValue] = (sums.0 + max(0, launch.cpuSeconds), sums.1 + Double(max(0, launch.memoryBytes)))
        }
        for (app, sums) in cpu.sorted(by: { $0.key < $1.key }) {
            gauge("bgtask_running_cpu_seconds", "CPU seconds used so far by the app's running launches.", [("app", app)], sums.0)
            gauge("bgtask_running_memory_bytes", "Resident memory of the app's running launches.", [("app", app)], sums.1)
        }
        for history in snapshot.usage.sorted(by: { $0.app < $1.app }) {
            gauge("bgtask_usage_recorded_uses", "Uses of the app kept for usage prediction.", [("app", history.app.rawValue)],
                  Double(history.uses.count))
        }
        return registry.emitToString()
    }

    /// The descriptor of the metric named `name` in full.
    private static func descriptor(_ name: String, _ help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(metricName: name, unitName: "", helpText: help)
    }

    /// How many of each (first, second) pair, in a stable order.
    private static func counted(_ pairs: [(String, String)]) -> [((String, String), Int)] {
        var counts: [String: ((String, String), Int)] = [:]
        for pair in pairs {
            counts["\(pair.0)\u{0}\(pair.1)", default: (pair, 0)].1 += 1
        }
        return counts.sorted { $0.key < $1.key }.map(\.value)
    }
}
