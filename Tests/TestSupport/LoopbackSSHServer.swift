import Foundation
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// A private `sshd` on a free loopback port, with a host key and a client key made for it: what
/// `bgtop --host` tests and benchmarks connect to. Nothing of the machine's own ssh setup is used
/// or changed (beyond `/run/sshd`, which sshd needs to exist). ``sshCommand`` is the
/// `BGTOP_SSH_COMMAND` that reaches it; ``stop()`` ends sshd and every process it started.
public final class LoopbackSSHServer: @unchecked Sendable {
    public static let sshd = "/usr/sbin/sshd"
    public let directory: String
    public let port: Int
    public let pid: pid_t
    private var stopped = false

    /// The user to log in as: the one running the tests.
    public static var user: String { String(cString: getpwuid(getuid()).pointee.pw_name) }

    /// Whether sshd and ssh-keygen are installed (`.ci/run` installs openssh-server when not).
    public static var isInstalled: Bool {
        FileManager.default.isExecutableFile(atPath: sshd) && FileManager.default.isExecutableFile(atPath: "/usr/bin/ssh-keygen")
            && FileManager.default.isExecutableFile(atPath: "/usr/bin/ssh")
    }

    public init(in root: String) throws {
        directory = root + "/ssh"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        for key in ["host_key", "client_key"] {
            let made = try Spawn.run("/usr/bin/ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "bgtop-test", "-f", "\(directory)/\(key)"],
                                     environment: ProcessInfo.processInfo.environment)
            guard made.0 == 0 else { throw TestFailure("ssh-keygen failed: \(made.2)") }
        }
        try FileManager.default.copyItem(atPath: "\(directory)/client_key.pub", toPath: "\(directory)/authorized_keys")
        // sshd's privilege separation directory; a fresh container may lack it.
        if !FileManager.default.fileExists(atPath: "/run/sshd") {
            try? FileManager.default.createDirectory(atPath: "/run/sshd", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        }
        port = try Self.freePort()
        try """
        Port \(port)
        ListenAddress 127.0.0.1
        HostKey \(directory)/host_key
        PidFile \(directory)/sshd.pid
        AuthorizedKeysFile \(directory)/authorized_keys
        StrictModes no
        UsePAM no
        PermitRootLogin prohibit-password
        PasswordAuthentication no
        KbdInteractiveAuthentication no
        MaxStartups 50

        """.write(toFile: "\(directory)/sshd_config", atomically: true, encoding: .utf8)
        let hostKey = try String(contentsOfFile: "\(directory)/host_key.pub", encoding: .utf8).split(separator: " ").prefix(2).joined(separator: " ")
        try "[127.0.0.1]:\(port) \(hostKey)\n".write(toFile: "\(directory)/known_hosts", atomically: true, encoding: .utf8)
        try """
        Host *
          Port \(port)
          IdentityFile \(directory)/client_key
          IdentitiesOnly yes
          UserKnownHostsFile \(directory)/known_hosts
          StrictHostKeyChecking yes
          LogLevel ERROR

        """.write(toFile: "\(directory)/ssh_config", atomically: true, encoding: .utf8)
        pid = try Spawn.start(Self.sshd, ["-D", "-e", "-f", "\(directory)/sshd_config"], environment: ProcessInfo.processInfo.environment,
                              stdout: "\(directory)/sshd.out", stderr: "\(directory)/sshd.log")
        // Ready once it accepts a connection.
        let deadline = Date().addingTimeInterval(10)
        while !Self.accepts(port) {
            if Date() > deadline || !processIsAlive(pid) {
                stop()
                throw TestFailure("sshd did not start: \(log)")
            }
            usleep(20_000)
        }
    }

    deinit { stop() }

    /// What `BGTOP_SSH_COMMAND` is set to for this server.
    public var sshCommand: String { "ssh -F \(directory)/ssh_config" }

    /// `USER@127.0.0.1`.
    public var destination: String { "\(Self.user)@127.0.0.1" }

    public var log: String { (try? String(contentsOfFile: "\(directory)/sshd.log", encoding: .utf8)) ?? "" }

    /// The pids of the ssh clients that use this server's config (what `bgtop --host` started).
    public func clients() -> [pid_t] {
        processes { $0.first.map { $0.hasSuffix("ssh") } == true && $0.contains("\(directory)/ssh_config") }
    }

    /// Ends sshd and every process it started (its sessions and what runs in them: a remote
    /// `bgctl watch`), then any process whose command line names this server's directory or one
    /// of `mentioning` (an ssh client left behind).
    public func stop(mentioning: [String] = []) {
        if !stopped {
            stopped = true
            let sessions = descendants(of: pid)
            kill(pid, SIGTERM)
            if BoundedProcess.wait(pid, timeout: 5) == nil { BoundedProcess.end(pid) }
            for session in sessions { kill(session, SIGKILL) }
        }
        let marks = [directory] + mentioning
        for leftover in processes({ words in marks.contains { mark in words.contains { $0.contains(mark) } } }) {
            kill(leftover, SIGKILL)
        }
    }

    /// Every process below `parent`, read from /proc.
    public func descendants(of parent: pid_t) -> [pid_t] {
        var parents: [pid_t: pid_t] = [:]
        for name in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = pid_t(name), let stat = try? String(contentsOfFile: "/proc/\(name)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { continue }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            if fields.count > 1, let ppid = pid_t(fields[1]) { parents[pid] = ppid }
        }
        var found: [pid_t] = []
        var frontier = [parent]
        while let next = frontier.popLast() {
            let children = parents.filter { $0.value == next }.map(\.key)
            found += children
            frontier += children
        }
        return found
    }

    /// Processes (not this one) whose argv satisfies `matches`.
    public func processes(_ matches: ([String]) -> Bool) -> [pid_t] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return names.compactMap { name -> pid_t? in
            guard let pid = pid_t(name), pid != getpid(),
                  let data = FileManager.default.contents(atPath: "/proc/\(name)/cmdline"), !data.isEmpty else { return nil }
            let words = data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            return matches(words) && processIsAlive(pid) ? pid : nil
        }
    }

    private static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestFailure("socket: \(errno)") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw TestFailure("bind: \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    private static func accepts(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}
