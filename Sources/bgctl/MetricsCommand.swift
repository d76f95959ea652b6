import ArgumentParser
import FoundationEssentials
import StateMetrics
import TaskState

/// `bgctl metrics`: the state as Prometheus metrics, for node_exporter's textfile collector.
struct Metrics: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "metrics",
        abstract: "Print the state as Prometheus metrics (text exposition format), for node_exporter's textfile collector.",
        discussion: """
            Write it to the collector's folder under a temporary name and rename it, so the collector \
            never reads half a file: bgctl metrics > DIR/bgtask.prom.$$ && mv DIR/bgtask.prom.$$ DIR/bgtask.prom
            """)

    @OptionGroup var locations: LocationOptions

    func run() throws {
        let paths = locations.paths
        let snapshot = StateSnapshot.load(paths)
        let text = StateMetrics.text(of: snapshot, schedulerRunning: StateLock.holder(paths) != nil, now: Date())
        StandardStreams.write(Data(text.utf8))
    }
}
