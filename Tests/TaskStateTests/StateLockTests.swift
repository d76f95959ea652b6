import Foundation
import Testing
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// A python3 process that takes (or tries to take) a POSIX record lock with `fcntl.lockf`, the
/// same kind of lock `StateLock` uses, and reports on stdout.
private final class PythonLocker {
    let process = Process()
    private let output = Pipe()

    /// `blocking: false` tries once and exits 0 on success, 1 when the lock is held elsewhere.
    init(lockFile: String, blocking: Bool) throws {
        let script = blocking
            ? """
              import fcntl, sys, time
              f = open(sys.argv[1], 'a+')
              fcntl.lockf(f, fcntl.LOCK_EX)
              print('locked', flush=True)
              time.sleep(60)
              """
            : """
              import fcntl, sys
              f = open(sys.argv[1], 'a+')
              try:
                  fcntl.lockf(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
              except OSError:
                  print('busy', flush=True)
                  sys.exit(1)
              print('free', flush=True)
              """
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-c", script, lockFile]
        process.standardOutput = output
        try process.run()
    }

    /// The first line the script prints.
    func firstLine() -> String {
        var collected = Data()
        while !collected.contains(0x0A) {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            collected.append(chunk)
        }
        return String(decoding: collected, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Waits for a script that ends by itself; returns its exit status.
    func exitStatus() -> Int32 {
        process.waitUntilExit()
        return process.terminationStatus
    }

    func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}

@Suite("Scheduler lock")
struct StateLockTests {
    @Test func noHolderWithoutALockFileOrWhenUnlocked() throws {
        try withTemporaryDirectory { dir in
            let paths = StatePaths(root: dir)
            #expect(StateLock.holder(paths) == nil)
            try writeText("", to: paths.lock)
            #expect(StateLock.holder(paths) == nil)
        }
    }

    @Test func anotherProcessHoldingTheLockIsReportedAndRefused() throws {
        try withTemporaryDirectory { dir in
            let paths = StatePaths(root: dir)
            let python = try PythonLocker(lockFile: paths.lock, blocking: true)
            defer { python.stop() }
            #expect(python.firstLine() == "locked")
            let pid = python.process.processIdentifier

            #expect(StateLock.holder(paths) == pid)
            #expect(throws: StateLock.Failure.held(by: pid, path: dir)) { _ = try StateLock.acquire(paths) }
            #expect(StateLock.Failure.held(by: pid, path: dir).description
                    == "another bgtaskd (pid \(pid)) is already running for \(dir)")

            python.stop()
            #expect(StateLock.holder(paths) == nil, "the kernel drops the lock when its holder dies")
            let lock = try StateLock.acquire(paths)
            withExtendedLifetime(lock) {}
        }
    }

    @Test func anAcquiredLockKeepsOtherProcessesOutUntilReleased() throws {
        try withTemporaryDirectory { dir in
            let paths = StatePaths(root: dir)
            var lock: StateLock? = try StateLock.acquire(paths)
            #expect(StateFiles.exists(paths.lock))
            #expect(permissions(paths.lock) == 0o600)

            let blocked = try PythonLocker(lockFile: paths.lock, blocking: false)
            #expect(blocked.firstLine() == "busy")
            #expect(blocked.exitStatus() == 1)

            withExtendedLifetime(lock) {}
            lock = nil // closing the descriptor releases the lock
            let free = try PythonLocker(lockFile: paths.lock, blocking: false)
            #expect(free.firstLine() == "free")
            #expect(free.exitStatus() == 0)
        }
    }

    /// POSIX record locks belong to the process and are dropped when *any* descriptor of the file
    /// is closed; asking who holds the lock from the holding process must not give it away.
    @Test func askingForTheHolderDoesNotReleaseTheLock() throws {
        try withTemporaryDirectory { dir in
            let paths = StatePaths(root: dir)
            let lock = try StateLock.acquire(paths)
            _ = StateLock.holder(paths)
            let other = try PythonLocker(lockFile: paths.lock, blocking: false)
            let answer = other.firstLine()
            #expect(other.exitStatus() == 1)
            #expect(answer == "busy", "after holder() in the locking process another process could take the lock")
            withExtendedLifetime(lock) {}
        }
    }

    @Test func aLinkAtTheLockPathIsNotFollowed() throws {
        try withTemporaryDirectory { dir in
            let paths = StatePaths(root: dir)
            try writeText("", to: "\(dir)/elsewhere")
            try FileManager.default.createSymbolicLink(atPath: paths.lock, withDestinationPath: "\(dir)/elsewhere")
            do throws(StateLock.Failure) {
                _ = try StateLock.acquire(paths)
                Issue.record("the lock followed a symbolic link")
            } catch {
                guard case .state = error else {
                    Issue.record("unexpected \(error)")
                    return
                }
            }
            #expect(StateLock.holder(paths) == nil)
        }
    }
}
