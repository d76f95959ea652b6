import Dashboard
import Foundation
import TaskState

extension Fixtures {
    /// `bgtop --host root@build --host pi@garage`: the busy screen of `root@build`, with
    /// `pi@garage` lost and waiting 4 s to try again.
    static let remoteHosts: DashboardSnapshot = {
        var snapshot = busy
        snapshot.stateDirectory = "root@build:/root/.local/state/bgtask"
        snapshot.hosts = [
            HostBadge(name: "root@build", connection: .connected, isCurrent: true),
            HostBadge(name: "pi@garage", connection: .lost(reason: "ssh: connect to host garage port 22: Connection refused",
                                                           retryAt: at(3.2)), isCurrent: false),
        ]
        return snapshot
    }()

    /// The same two hosts after `H`: `pi@garage` on screen, never connected yet.
    static let remoteHostLost: DashboardSnapshot = {
        var snapshot = DashboardSnapshot(now: now, stateDirectory: "pi@garage:",
                                         problem: "cannot reach pi@garage: ssh: connect to host garage port 22: Connection refused")
        snapshot.hosts = [
            HostBadge(name: "root@build", connection: .connected, isCurrent: false),
            HostBadge(name: "pi@garage", connection: .lost(reason: "ssh: connect to host garage port 22: Connection refused",
                                                           retryAt: at(3.2)), isCurrent: true),
        ]
        return snapshot
    }()
}
