import Foundation
import TaskState
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A `bgctl watch --json` started with pipes on its stdin and stdout, as ssh would start it:
/// lines are written to it and read from it with a time limit. Ended (and reaped) by ``end()``
/// or when the test lets go of it.
final class FeedProcess: @unchecked Sendable {
    let pid: pid_t
    private var input: Int32
    private var output: Int32
    private var buffered = Data()
    /// Lines of another type than the one a ``next(_:timeout:where:)`` waited for, in order: the
    /// feed does not order a command's `result` against the `change` that shows its effect, so
    /// a wait for one must leave the other for the next wait.
    private var heldBack: [[String: Any]] = []
    private var status: Int32?
    let stderrPath: String

    init(_ env: TestEnvironment, arguments: [String] = ["watch", "--json"]) throws {
        var stdinPipe: [Int32] = [-1, -1], stdoutPipe: [Int32] = [-1, -1]
        guard pipe(&stdinPipe) == 0, pipe(&stdoutPipe) == 0 else { throw TestFailure("pipe: \(errno)") }
        // Ours only: the spawn hands the child its copies, and nothing else the tests start inherits them.
        for end in stdinPipe + stdoutPipe { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        stderrPath = "\(env.root)/watch-\(UUID().uuidString.prefix(6)).err"
        let errors = open(stderrPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        defer { close(errors) }
        var environment = BoundedProcess.environment
        environment["BGTASK_LAUNCH_TOKEN"] = nil
        let started = ProcessSpawn.startInSession(
            TestEnvironment.binaries + "/bgctl", arguments: arguments + ["--state", env.state, "--config", env.config],
            environment: environment, stdin: stdinPipe[0], stdout: stdoutPipe[1], stderr: errors)
        close(stdinPipe[0])
        close(stdoutPipe[1])
        input = stdinPipe[1]
        output = stdoutPipe[0]
        switch started {
        case .success(let pid): self.pid = pid
        case .failure(let error):
            close(input)
            close(output)
            throw TestFailure("cannot start bgctl watch: \(error)")
        }
    }

    deinit { end() }

    var stderr: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }

    /// Writes `text` as is (add the newline yourself).
    func write(_ text: String) { write(Data(text.utf8)) }

    func write(_ data: Data) {
        var offset = 0
        while offset < data.count {
            let n = data.withUnsafeBytes { Glibc.write(input, $0.baseAddress! + offset, data.count - offset) }
            if n <= 0 { return }
            offset += n
        }
    }

    /// Closes the watch's stdin.
    func closeInput() {
        if input >= 0 { close(input) }
        input = -1
    }

    /// Closes the reading end of the watch's stdout: its next write fails with EPIPE.
    func closeOutput() {
        if output >= 0 { close(output) }
        output = -1
    }

    /// The next line, parsed; throws when none comes within `timeout` seconds (generous: under a
    /// full parallel test run a line can take seconds).
    func nextLine(timeout: TimeInterval = 30) throws -> [String: Any] {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let newline = buffered.firstIndex(of: 0x0A) {
                let line = buffered[buffered.startIndex..<newline]
                buffered = Data(buffered[buffered.index(after: newline)...])
                guard let object = try JSONSerialization.jsonObject(with: line) as? [String: Any] else {
                    throw TestFailure("not a JSON object: \(String(decoding: line, as: UTF8.self))")
                }
                return object
            }
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { throw TestFailure("no line within \(timeout) s; stderr: \(stderr)") }
            var poll = KernelPoll<Int>()
            poll.watch(0, output)
            // Read only what poll says is there: a read of an empty pipe would wait past the limit.
            guard poll.wait(milliseconds: Int32(remaining * 1000) + 1)?.isEmpty == false else { continue }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let n = read(output, &chunk, chunk.count)
            if n == 0 { throw TestFailure("the watch ended its output; stderr: \(stderr)") }
            if n > 0 { buffered.append(contentsOf: chunk[0..<n]) }
        }
    }

    /// The next line whose `type` is `type` and that meets `condition`; throws after `timeout`
    /// seconds. Lines of this type that do not meet it are passed over; lines of other types are
    /// held back for a later wait.
    func next(_ type: String, timeout: TimeInterval = 30, where condition: ([String: Any]) -> Bool = { _ in true }) throws -> [String: Any] {
        let deadline = Date().addingTimeInterval(timeout)
        var skipped: [String] = []
        func describe(_ line: [String: Any]) -> String {
            let text = (try? JSONSerialization.data(withJSONObject: line, options: [.sortedKeys])).map { String(decoding: $0, as: UTF8.self) }
            return String((text ?? "?").prefix(600))
        }
        // Held-back lines first; those of this type that do not match are passed over for good.
        var index = 0
        while index < heldBack.count {
            let line = heldBack[index]
            guard line["type"] as? String == type else {
                index += 1
                continue
            }
            heldBack.remove(at: index)
            if condition(line) { return line }
            skipped.append(describe(line))
        }
        while true {
            let line: [String: Any]
            do {
                line = try nextLine(timeout: max(0.01, deadline.timeIntervalSinceNow))
            } catch {
                // Which wait it was, and what came instead.
                throw TestFailure("waiting for a '\(type)' line: \(error); lines skipped: \(skipped.joined(separator: " | ").suffix(3000))")
            }
            if line["type"] as? String == type {
                if condition(line) { return line }
            } else {
                heldBack.append(line)
            }
            skipped.append(describe(line))
        }
    }

    /// Waits up to `timeout` seconds for the watch to exit by itself; its status, or nil.
    func waitForExit(timeout: TimeInterval) -> Int32? {
        if let status { return status }
        status = BoundedProcess.wait(pid, timeout: timeout)
        return status
    }

    /// Ends the watch (SIGKILL when still running) and reaps it.
    func end() {
        closeInput()
        closeOutput()
        if status == nil { status = BoundedProcess.end(pid) }
    }
}
