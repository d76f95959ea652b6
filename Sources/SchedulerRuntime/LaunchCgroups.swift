import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// A cgroup v2 of its own for each launch, in a subtree the scheduler makes under its own cgroup
/// (`<cgroup2 mount><own cgroup>/bgtaskd.<pid>/<launch>`): it holds every process of the launch
/// whatever group or session it moves to, counts their CPU time (`cpu.stat`) and, where the
/// memory controller is on, their memory (`memory.current`, `memory.peak`), and ends them all at
/// once (`cgroup.kill`). Where the subtree cannot be made (no cgroup2 mount, no write access to
/// the own cgroup, a read-only mount), ``make()`` says why and the monitor sums `/proc` instead.
///
/// No controller is enabled in the subtree, so the no-internal-processes rule does not apply and
/// the scheduler can stay where it is.
final class LaunchCgroups {
    /// `bgtaskd.<pid>` under the scheduler's own cgroup.
    let root: String
    /// The scheduler's own cgroup, where the subtrees of this and earlier schedulers are.
    private let parent: String
    private let mount: String

    private init(root: String, parent: String, mount: String) {
        self.root = root
        self.parent = parent
        self.mount = mount
    }

    /// Why there is no subtree.
    struct Unavailable: Error, CustomStringConvertible {
        var description: String
    }

    /// The subtree, or why there is none.
    static func make() -> Result<LaunchCgroups, Unavailable> {
        guard let mount = cgroup2Mount() else { return .failure(Unavailable(description: "no cgroup2 filesystem is mounted")) }
        guard let own = ownCgroup() else { return .failure(Unavailable(description: "/proc/self/cgroup names no cgroup v2")) }
        let parent = own == "/" ? mount : mount + own
        removeAbandoned(under: parent)
        let root = "\(parent)/bgtaskd.\(getpid())"
        if mkdir(root, 0o755) != 0 && errno != EEXIST {
            return .failure(Unavailable(description: "cannot make \(root): \(String(cString: strerror(errno)))"))
        }
        guard access("\(root)/cgroup.procs", W_OK) == 0 else {
            rmdir(root)
            return .failure(Unavailable(description: "cannot move processes into \(root)"))
        }
        return .success(LaunchCgroups(root: root, parent: parent, mount: mount))
    }

    /// The cgroup of a launch (made on first use), or `nil` when it cannot be made.
    func cgroup(of launchID: String) -> String? {
        let path = "\(root)/\(Self.name(of: launchID))"
        if mkdir(path, 0o755) != 0 && errno != EEXIST { return nil }
        return path
    }

    /// The cgroup `pid` is in when it is `launchID`'s in a subtree of a scheduler before this
    /// one (`<own cgroup>/bgtaskd.<other pid>/launch.<id>`, read from `/proc/<pid>/cgroup`): a
    /// launch adopted after a restart keeps its cgroup, its CPU time and its children in it.
    func launchCgroup(of launchID: String, holding pid: Int32) -> String? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/cgroup", encoding: .utf8),
              let line = text.split(separator: "\n").first(where: { $0.hasPrefix("0::/") }) else { return nil }
        let relative = String(line.dropFirst(3))
        guard !relative.contains("..") else { return nil }
        let path = mount + relative
        let url = URL(fileURLWithPath: path)
        let subtree = url.deletingLastPathComponent()
        guard url.lastPathComponent == Self.name(of: launchID), subtree.lastPathComponent.hasPrefix("bgtaskd."),
              subtree.deletingLastPathComponent().path == URL(fileURLWithPath: parent).path,
              subtree.path != URL(fileURLWithPath: root).path else { return nil }
        return path
    }

    /// `launch.<id>`, with what a directory name cannot hold replaced.
    private static func name(of launchID: String) -> String {
        "launch." + String(launchID.unicodeScalars.prefix(200).map { scalar -> Character in
            let c = Character(scalar)
            return c.isASCII && (c.isLetter || c.isNumber || c == "-" || c == "_" || c == ".") ? c : "_"
        })
    }

    /// Moves `pid` into `cgroup`. False when it could not (gone, another user's, no permission).
    @discardableResult
    func place(_ pid: Int32, in cgroup: String) -> Bool {
        let descriptor = open("\(cgroup)/cgroup.procs", O_WRONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        let text = Array("\(pid)".utf8)
        return write(descriptor, text, text.count) == text.count
    }

    func pids(in cgroup: String) -> [Int32] {
        guard let text = try? String(contentsOfFile: "\(cgroup)/cgroup.procs", encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { Int32($0) }
    }

    /// `usage_usec` of `cpu.stat`, in seconds.
    func cpuSeconds(of cgroup: String) -> Double? {
        guard let text = try? String(contentsOfFile: "\(cgroup)/cpu.stat", encoding: .utf8),
              let line = text.split(separator: "\n").first(where: { $0.hasPrefix("usage_usec ") }),
              let micro = Double(line.dropFirst("usage_usec ".count)) else { return nil }
        return micro / 1_000_000
    }

    /// `memory.current` and `memory.peak`, where the memory controller is on.
    func memory(of cgroup: String) -> (current: Int64?, peak: Int64?) {
        func number(_ file: String) -> Int64? {
            (try? String(contentsOfFile: "\(cgroup)/\(file)", encoding: .utf8)).flatMap {
                Int64($0.trimmedWhitespace())
            }
        }
        return (number("memory.current"), number("memory.peak"))
    }

    /// SIGKILLs every process in `cgroup` (`cgroup.kill`). False where the kernel has no such file.
    func killAll(in cgroup: String) -> Bool {
        let descriptor = open("\(cgroup)/cgroup.kill", O_WRONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        return write(descriptor, "1", 1) == 1
    }

    /// Removes an empty launch cgroup, and the subtree of the scheduler before this one it was
    /// adopted from once that is empty too (its scheduler is gone).
    func remove(_ cgroup: String) {
        rmdir(cgroup)
        let subtree = URL(fileURLWithPath: cgroup).deletingLastPathComponent().path
        if subtree != URL(fileURLWithPath: root).path { rmdir(subtree) }
    }

    /// Removes the subtree, once its launches' cgroups are empty (others stay for the next scheduler).
    func removeRoot() {
        for name in (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? [] where name.hasPrefix("launch.") {
            rmdir("\(root)/\(name)")
        }
        rmdir(root)
    }

    /// Empty subtrees of schedulers that are gone (a `kill -9` leaves them): removed, so they do
    /// not pile up. A cgroup that still holds processes cannot be removed, and is not.
    private static func removeAbandoned(under parent: String) {
        for name in (try? FileManager.default.contentsOfDirectory(atPath: parent)) ?? [] where name.hasPrefix("bgtaskd.") {
            guard let pid = Int32(name.dropFirst("bgtaskd.".count)), pid != getpid(), kill(pid, 0) != 0, errno == ESRCH else { continue }
            let path = "\(parent)/\(name)"
            for child in (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [] where child.hasPrefix("launch.") {
                rmdir("\(path)/\(child)")
            }
            rmdir(path)
        }
    }

    /// Where the cgroup2 filesystem is mounted (`/proc/self/mountinfo`).
    static func cgroup2Mount() -> String? {
        guard let text = try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") {
            let halves = line.components(separatedBy: " - ")
            guard halves.count == 2, halves[1].hasPrefix("cgroup2 ") else { continue }
            let fields = halves[0].split(separator: " ")
            if fields.count > 4 { return String(fields[4]) }
        }
        return nil
    }

    /// The scheduler's own cgroup v2 path (the `0::` line of `/proc/self/cgroup`).
    static func ownCgroup() -> String? {
        guard let text = try? String(contentsOfFile: "/proc/self/cgroup", encoding: .utf8),
              let line = text.split(separator: "\n").first(where: { $0.hasPrefix("0::") }) else { return nil }
        let path = String(line.dropFirst(3))
        return path.hasPrefix("/") && !path.contains("..") ? path : nil
    }
}
