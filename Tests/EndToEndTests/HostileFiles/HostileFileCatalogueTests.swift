import Foundation
import TaskState
import TestSupport
import Testing

/// The standing campaign of issue 11: every kind of hostile file (``HostileKind``) at every path
/// the programs read (``HostilePath/all``), with the real `bgtaskd`, `bgctl` and `bgtop --batch`.
///
/// Promised for each: no program hangs (each step has a time limit), with or without a
/// scheduler running, and none crashes (dies of a signal); the scheduler starts and keeps
/// applying commands, except for what it cannot run without a usable copy of (`settings.json`,
/// `daemon.lock`, the folders `inbox/new` and the config's `apps`), where it refuses with one
/// line naming it; it stops on SIGTERM; and nothing outside the state directory is moved or
/// changed. Run: `swift test --skip-build --filter HostileFileCatalogueTests`.
///
/// Serialized: its cases start some 1 500 processes, and run all at once they would starve the
/// timing checks of other suites running beside it.
@Suite(.serialized) struct HostileFileCatalogueTests {
    /// Files and folders without a usable copy of which the scheduler refuses to start.
    static let refusedAtStart: Set<String> = ["settings.json", "daemon.lock", "inbox/new", "apps"]

    @Test(arguments: HostilePath.all)
    func everyHostileKindAt(_ path: HostilePath) throws {
        for kind in HostileKind.allCases {
            do {
                try check(kind, at: path)
            } catch {
                Issue.record("\(kind) at \(path): \(error)")
            }
        }
    }

    private func check(_ kind: HostileKind, at path: HostilePath) throws {
        let env = try TestEnvironment("hostile\(kind)")
        let session = try HostileSession(env)
        let canary = try HostilePlanter.plant(kind, at: path, in: env)
        let name = String(path.relative.split(separator: "/").last ?? "")
        let mayRefuse = Self.refusedAtStart.contains(name) || Self.refusedAtStart.contains(path.relative)
        // With no scheduler, nothing holds a FIFO's other end: the readers alone must not block.
        try readersFinish(session)
        switch try session.startDaemon() {
        case .refused(let status, let stderr):
            let line = stderr.split(separator: "\n").last.map(String.init) ?? ""
            guard mayRefuse, (1..<128).contains(status), line.hasPrefix("bgtaskd: "), line.contains(name) else {
                throw TestFailure("bgtaskd exited \(status) at start: \(stderr)")
            }
            try readersFinish(session)
        case .running(let daemon):
            let submitted = try session.roundTrip()
            guard submitted.status == 0 else { throw TestFailure("submit through the inbox failed: \(submitted)") }
            let launched = try session.bgctl("simulate-launch", "\(HostileSession.probeApp).job")
            guard launched.status == 0 else { throw TestFailure("simulate-launch failed: \(launched)") }
            try readersFinish(session)
            guard daemon.isRunning else { throw TestFailure("bgtaskd exited \(daemon.exited ?? -1) while running: \(daemon.stderr)") }
            let stopped = try daemon.stop()
            guard stopped == 0 else { throw TestFailure("bgtaskd stopped with status \(stopped): \(daemon.stderr)") }
        }
        if let canary, !canary.isIntact {
            throw TestFailure("\(canary.path), outside the state directory, was moved or changed")
        }
    }

    /// The read-only programs end, without dying of a signal, whatever they think of the files.
    private func readersFinish(_ session: HostileSession) throws {
        let readers: [(String, () throws -> TestEnvironment.Result)] = [
            ("bgctl status", { try session.bgctl("status") }),
            ("bgctl list", { try session.bgctl("list", "--json") }),
            ("bgctl events", { try session.bgctl("events") }),
            ("bgctl apps", { try session.bgctl("apps") }),
            ("bgtop --batch", { try session.bgtopBatch() }),
        ]
        for (name, run) in readers {
            let result = try run()
            guard result.status < 128 else { throw TestFailure("\(name) crashed: \(result)") }
        }
    }
}
