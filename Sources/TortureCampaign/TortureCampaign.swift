import Foundation
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// The standing `kill -9` campaign (issue 11): a real `bgtaskd` on a private state folder with two
/// test apps, random commands written into the inbox (some while no scheduler runs), and the
/// scheduler killed with SIGKILL at a random moment of every round and started again. After each
/// restart, once the scheduler has applied everything waiting, and again at the end, it checks
/// that nothing acknowledged is lost or doubled, that no process of the state folder runs
/// unsupervised, and that nothing hung or crashed.
///
/// Seeded: the same seed draws the same rounds, commands and kill moments (what the processes make
/// of them still depends on timing, so a finding is a lead to re-run, not an exact replay).
public struct TortureCampaign {
    /// How long a `bgtaskd` may take to take its lock, apply what waits, or a `bgctl` to answer.
    public static let bound: TimeInterval = 30
    /// How long a process must stay unsupervised (the same pid and start time) to count.
    public static let unsupervisedGrace: TimeInterval = 5

    public var rounds: Int
    public var seed: UInt64
    /// The folder holding `bgtaskd` and `bgctl`.
    public var binaries: String
    /// Where the campaign's folder is made.
    public var parent: String
    /// Keep the folder (state, logs) at the end instead of removing it.
    public var keep = false
    /// Seconds of commands before each kill: drawn uniformly from this range.
    public var roundSeconds: ClosedRange<Double> = 0.3...2.5
    /// Called with a line of progress now and then, and with each finding as it is made.
    public var progress: (String) -> Void = { _ in }
    /// Called with the campaign's folder as soon as it exists, so that a caller cut short (Ctrl-C)
    /// can end its processes (``endProcesses(folder:)``) and remove it.
    public var folderCreated: (String) -> Void = { _ in }

    public init(rounds: Int, seed: UInt64, binaries: String, parent: String) {
        self.rounds = rounds
        self.seed = seed
        self.binaries = binaries
        self.parent = parent
    }

    /// Runs every round and the final audit; every process it or the scheduler started is ended
    /// before it returns. Throws only when it cannot set itself up.
    public func run() throws(TortureError) -> TortureReport {
        let root = try Self.makeFolder(parent: parent)
        folderCreated(root)
        let state = "\(root)/state", config = "\(root)/config"
        guard mkdir(state, 0o700) == 0, mkdir(config, 0o755) == 0, mkdir("\(config)/apps", 0o755) == 0 else {
            throw TortureError("cannot create folders in \(root): \(String(cString: strerror(errno)))")
        }
        let paths = StatePaths(root: state)
        let apps = try TortureApps(root: root, config: config, binaries: binaries)
        let daemon = TortureDaemon(executable: "\(binaries)/bgtaskd", paths: paths, config: config, log: "\(root)/bgtaskd.log")
        var run = TortureRun(campaign: self, paths: paths, apps: apps, daemon: daemon, root: root)
        defer {
            daemon.stop()
            TortureProcesses.killAll(state: state)
            if !keep { try? FileManager.default.removeItem(atPath: root) }
        }
        return try run.go()
    }

    /// Ends, with SIGKILL, the scheduler of a campaign's folder and every process of its apps:
    /// what a run cut short leaves behind.
    public static func endProcesses(folder: String) {
        let paths = StatePaths(root: "\(folder)/state")
        if let scheduler = StateLock.holder(paths) { kill(scheduler, SIGKILL) }
        TortureProcesses.killAll(state: paths.root)
    }

    private static func makeFolder(parent: String) throws(TortureError) -> String {
        var template = Array("\(parent)/bgtorture-XXXXXX".utf8CString)
        guard template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) != nil else {
            throw TortureError("cannot create a folder in \(parent): \(String(cString: strerror(errno)))")
        }
        return template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }
}

/// A failure that ends the campaign before it can report (it could not set itself up).
public struct TortureError: Error, CustomStringConvertible {
    public var description: String

    public init(_ description: String) {
        self.description = description
    }
}
