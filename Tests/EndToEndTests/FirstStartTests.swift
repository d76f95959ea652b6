import Foundation
import TestSupport
import Testing
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// `bgtaskd` with no options on an account that has never run it: an empty `HOME`, no XDG or
/// BGTASK variables. It makes what is missing, with the documented modes, or says in one line
/// what is in the way.
@Suite struct FirstStartTests {
    /// An empty home (0700, as `useradd` makes one) and the environment of a fresh login there.
    private func freshAccount(_ env: TestEnvironment) throws -> (home: String, environment: [String: String]) {
        let home = env.root + "/home"
        #expect(mkdir(home, 0o700) == 0)
        var environment = ProcessInfo.processInfo.environment
        for name in ["XDG_CONFIG_HOME", "XDG_STATE_HOME", "BGTASK_STATE_DIR", "BGTASK_CONFIG_DIR", "BGTASK_APP_ID", "BGTASK_LAUNCH_TOKEN"] {
            environment[name] = nil
        }
        environment["HOME"] = home
        return (home, environment)
    }

    private func mode(_ path: String) -> mode_t? {
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR, info.st_uid == geteuid() else { return nil }
        return info.st_mode & 0o777
    }

    /// Runs `bgtaskd` with no options; returns its pid and where its stderr goes.
    private func startDaemon(_ env: TestEnvironment, _ environment: [String: String]) throws -> (pid: pid_t, stderr: String) {
        let log = env.root + "/bgtaskd-\(UUID().uuidString.prefix(6))"
        let pid = try Spawn.start(TestEnvironment.binaries + "/bgtaskd", [], environment: environment, stdout: log + ".out", stderr: log + ".err")
        return (pid, log + ".err")
    }

    @Test func theDefaultsStartOnAnEmptyHome() throws {
        let env = try TestEnvironment()
        let (home, environment) = try freshAccount(env)
        let daemon = try startDaemon(env, environment)
        defer {
            kill(daemon.pid, SIGTERM)
            _ = Spawn.wait(daemon.pid)
        }
        let state = home + "/.local/state/bgtask"
        try env.waitUntil("bgtaskd to hold the lock in \(state)") {
            guard processIsAlive(daemon.pid) else {
                throw TestFailure("bgtaskd stopped: \((try? String(contentsOfFile: daemon.stderr, encoding: .utf8)) ?? "")")
            }
            // Its first commit, made once the whole start has gone through.
            guard StateLock.holder(StatePaths(root: state)) == daemon.pid,
                  let data = try? StateFiles.read(StatePaths(root: state).heartbeat),
                  let heartbeat = try? JSONFormat.decode(DaemonHeartbeat.self, from: data) else { return false }
            return heartbeat.pid == daemon.pid
        }

        // The config directory and its missing parents are private, like the state directory.
        #expect(mode(home + "/.config") == 0o700)
        #expect(mode(home + "/.config/bgtask") == 0o700)
        #expect(mode(home + "/.config/bgtask/apps") == 0o700)
        #expect(mode(state) == 0o700)
        // The state directory's parents keep the documented 0755 less the umask.
        let umaskNow = umask(0o022)
        umask(umaskNow)
        #expect(mode(home + "/.local") == 0o755 & ~umaskNow)
        #expect(mode(home + "/.local/state") == 0o755 & ~umaskNow)

        let (status, stdout, stderr) = try Spawn.run(TestEnvironment.binaries + "/bgctl", ["status"], environment: environment)
        #expect(status == 0, "\(stderr)")
        #expect(stdout.contains("scheduler: running (pid \(daemon.pid))"), "\(stdout)")
        #expect(stdout.contains("config: \(home)/.config/bgtask"), "\(stdout)")
    }

    @Test func aParentInTheWayIsOneLineAndExitOne() throws {
        let env = try TestEnvironment()
        let (home, environment) = try freshAccount(env)

        // ~/.config is a file.
        try Data("not a folder\n".utf8).write(to: URL(fileURLWithPath: home + "/.config"))
        var daemon = try startDaemon(env, environment)
        #expect(Spawn.wait(daemon.pid) == 1)
        var message = try String(contentsOfFile: daemon.stderr, encoding: .utf8)
        #expect(message == "bgtaskd: cannot create config directory \(home)/.config/bgtask/apps: \(home)/.config is a regular file, not a directory\n")

        // ~/.config is a link to nothing.
        unlink(home + "/.config")
        #expect(symlink(home + "/gone", home + "/.config") == 0)
        daemon = try startDaemon(env, environment)
        #expect(Spawn.wait(daemon.pid) == 1)
        message = try String(contentsOfFile: daemon.stderr, encoding: .utf8)
        #expect(message == "bgtaskd: cannot create config directory \(home)/.config/bgtask/apps: \(home)/.config is a symbolic link to "
                + "\(home)/gone, which does not exist; make it a directory or point it at one\n")

        // ~/.local/state is a link to a file.
        unlink(home + "/.config")
        try FileManager.default.createDirectory(atPath: home + "/.local", withIntermediateDirectories: false)
        try Data().write(to: URL(fileURLWithPath: home + "/plain"))
        #expect(symlink(home + "/plain", home + "/.local/state") == 0)
        daemon = try startDaemon(env, environment)
        #expect(Spawn.wait(daemon.pid) == 1)
        message = try String(contentsOfFile: daemon.stderr, encoding: .utf8)
        #expect(message == "bgtaskd: cannot create state directory \(home)/.local/state/bgtask: \(home)/.local/state is a symbolic link to "
                + "\(home)/plain, which is a regular file, not a directory\n")

        // A linked ~/.config (dotfiles kept elsewhere) is followed: that one is fine.
        unlink(home + "/.local/state")
        try FileManager.default.removeItem(atPath: home + "/.config")
        try FileManager.default.createDirectory(atPath: home + "/dotfiles", withIntermediateDirectories: false)
        #expect(symlink(home + "/dotfiles", home + "/.config") == 0)
        daemon = try startDaemon(env, environment)
        defer {
            kill(daemon.pid, SIGTERM)
            _ = Spawn.wait(daemon.pid)
        }
        try env.waitUntil("bgtaskd to start behind a linked ~/.config") {
            guard processIsAlive(daemon.pid) else { throw TestFailure("bgtaskd stopped: \((try? String(contentsOfFile: daemon.stderr, encoding: .utf8)) ?? "")") }
            return StateLock.holder(StatePaths(root: home + "/.local/state/bgtask")) == daemon.pid
        }
        #expect(mode(home + "/dotfiles/bgtask/apps") == 0o700)
    }
}
