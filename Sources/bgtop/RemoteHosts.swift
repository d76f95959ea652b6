import Dashboard
import FoundationEssentials
import Glibc
import TaskState

/// The machines of `bgtop --host`, all connected at once so the header can say how each one
/// stands; the screen shows one of them (`H` moves to the next) and keys act on that one.
final class RemoteHosts: DashboardSource {
    private let hosts: [RemoteHost]
    private var current = 0
    /// What each host's badge said at the last snapshot: a change of any host redraws.
    private var shown: [HostBadge.Connection] = []

    init(_ launches: [SSHLaunch], environment: [String: String]) {
        // A request written to an ssh that has just died (a key handled before its exit is seen)
        // is an EPIPE for the host to handle, not a SIGPIPE that ends bgtop. ssh itself starts
        // with default handlers.
        signal(SIGPIPE, SIG_IGN)
        hosts = launches.map { RemoteHost(launch: $0, environment: environment) }
    }

    /// Each host's four descriptors, in host order.
    var descriptors: [(descriptor: Int32, output: Bool)] { hosts.flatMap(\.descriptors) }

    func service(ready: Set<Int>) -> Bool {
        var changed = false
        for (index, host) in hosts.enumerated() {
            let own = Set(ready.filter { $0 / 4 == index }.map { $0 % 4 })
            if host.service(ready: own) && index == current { changed = true }
        }
        return changed || hosts.map(\.connection) != shown
    }

    func pollTimeout() -> Int32 {
        hosts.map { $0.pollTimeout() }.filter { $0 >= 0 }.min() ?? -1
    }

    func snapshot(now: Date) -> DashboardSnapshot {
        shown = hosts.map(\.connection)
        var snapshot = hosts[current].snapshot(now: now)
        snapshot.hosts = hosts.enumerated().map { index, host in
            HostBadge(name: host.name, connection: host.connection, isCurrent: index == current)
        }
        return snapshot
    }

    func send(_ action: CommandAction, summary: String) { hosts[current].send(action, summary: summary) }

    func takeReports() -> [CommandDispatch.StatusReport] {
        // Every host's: a command sent before `H` is answered after it, and each report names
        // its command or its host.
        hosts.flatMap { $0.takeReports() }
    }

    func switchHost() -> DashboardState.Status {
        guard hosts.count > 1 else {
            return DashboardState.Status("one host: give --host more than once to switch with H", isError: true)
        }
        current = (current + 1) % hosts.count
        let host = hosts[current]
        return DashboardState.Status("host \(current + 1)/\(hosts.count): \(host.name)")
    }

    func readLog(_ request: LogRequest) { hosts[current].readLog(request) }

    func followLog(_ app: Identifier?) {
        for (index, host) in hosts.enumerated() { host.followLog(index == current ? app : nil) }
    }

    func takeLogNews() -> (excerpts: [LogExcerpt], changed: Bool) {
        let news = hosts.map { $0.takeLogNews() }
        return (news[current].excerpts, news[current].changed)
    }

    func close() {
        for host in hosts { host.close() }
    }
}
