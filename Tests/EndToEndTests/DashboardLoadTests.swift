import Foundation
import Synchronization
import TaskState
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `bgtop` while the scheduler is busy: reloads are coalesced, yet keys are answered and the
/// screen ends on the final state. Functional only: speed is `bgbench dashboard-load`'s business.
@Suite struct DashboardLoadTests {
    /// Submits into the inbox from a thread, cycling over `pairs`, until stopped.
    final class SubmitStream: Sendable {
        private let state = Mutex<(count: Int, last: String?, failure: String?)>((0, nil, nil))
        private let stopping = Atomic<Bool>(false)
        private let done = DispatchSemaphore(value: 0)

        init(paths: StatePaths, pairs: [(Identifier, Identifier)]) {
            let later = Date().addingTimeInterval(86_400)
            Thread.detachNewThread { [self] in
                let inbox = Inbox(paths: paths)
                var index = 0
                while !stopping.load(ordering: .relaxed) {
                    let (app, identifier) = pairs[index % pairs.count]
                    let request = SubmitRequest(app: app, identifier: identifier, kind: .processing, earliestBeginDate: later)
                    do {
                        try inbox.enqueue(Command(issuedAt: Date(), issuerPID: getpid(), action: .submit(request)))
                        state.withLock {
                            $0.count += 1
                            $0.last = identifier.rawValue
                        }
                    } catch {
                        state.withLock { $0.failure = "\(error)" }
                        break
                    }
                    index += 1
                }
                done.signal()
            }
        }

        var count: Int { state.withLock { $0.count } }
        var last: String? { state.withLock { $0.last } }
        var failure: String? { state.withLock { $0.failure } }

        func stop() {
            guard !stopping.exchange(true, ordering: .relaxed) else { return }
            done.wait()
        }
    }

    @Test func keysAreAnsweredDuringABurstAndTheScreenEndsOnTheFinalState() throws {
        let env = try TestEnvironment()
        // Rotated every 4 KiB: the event log is renamed under the dashboard again and again.
        try env.writeSettings(["eventLogMaximumBytes": 4096, "eventLogKeptFiles": 2])
        let pairs = try addApps(env, prefix: "com.example.burst", count: 30)
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        let tmux = try dashboard(env)
        try tmux.waitFor("Pending requests (0)")

        let stream = SubmitStream(paths: env.paths, pairs: pairs)
        defer { stream.stop() }
        // The burst is on screen, without any key press.
        try tmux.waitForScreen("the burst to show", timeout: 10) { !$0.contains("Pending requests (0)") && $0.contains("burst") }

        // Keys are answered while it goes on: the help overlay opens and closes.
        let appliedBeforeKeys = stream.count
        tmux.send("?")
        try tmux.waitFor("this help", timeout: 10)
        tmux.send("?")
        try tmux.waitForScreen("the help to close", timeout: 10) { !$0.contains("this help") }
        // Every pair submitted at least once, and more submits applied after the keys were.
        try env.waitUntil("a full round of submits", timeout: 60) { stream.count >= pairs.count && stream.count > appliedBeforeKeys + 50 }
        #expect(stream.failure == nil, "\(stream.failure ?? "")")
        #expect(stream.count > appliedBeforeKeys, "the keys were pressed while submits were streaming")
        stream.stop()

        // Once the scheduler has applied the last of them, the screen shows the final state:
        // every request, and the last submit as the newest event.
        try env.waitUntil("the inbox to drain", timeout: 60) { ((try? StateFiles.names(in: env.paths.inboxNew)) ?? ["x"]).isEmpty }
        let last = try #require(stream.last)
        #expect(try env.requests().count == pairs.count)
        let final = try tmux.waitForScreen("the final state", timeout: 10) { screen in
            screen.contains("Pending requests (\(pairs.count))") && newestEvent(screen)?.contains("\(last) not before") == true
        }
        #expect(final.contains("\(pairs.count) pending"))

        tmux.send("q")
        try tmux.waitFor("bgtop exited 0")
    }

    @Test func aBurstIsReadFileByFileNotByReadingTheWholeLogAgain() throws {
        let env = try TestEnvironment()
        // A long history, as after days of work: about 3 MB of events, under the 4 MiB rotation.
        var history = Data()
        var line = 0
        while history.count < 3_000_000 {
            line += 1
            history.append(try JSONFormat.encodeLine(Event(time: Date(timeIntervalSince1970: 1_700_000_000 + Double(line)), type: .submitted,
                                                            message: "com.example.old: submitted processing request old.\(line)")))
        }
        try EventLog(paths: env.paths).append(history)
        let pairs = try addApps(env, prefix: "com.example.long", count: 20)
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        let tmux = try dashboard(env)
        // The events take the spare rows when focused: the twenty apps' manifest events are newer.
        tmux.send("4")
        try tmux.waitFor("old.\(line)")
        let pid = try #require(pidOfDashboard(state: env.state))
        let before = try #require(bytesRead(by: pid))

        // Every pair twice: 400 submits, each an append to the log and a request file.
        let inbox = Inbox(paths: env.paths)
        let later = Date().addingTimeInterval(86_400)
        for (app, identifier) in pairs + pairs {
            try inbox.enqueue(Command(issuedAt: Date(), issuerPID: getpid(),
                                      action: .submit(SubmitRequest(app: app, identifier: identifier, kind: .processing, earliestBeginDate: later))))
        }
        let last = pairs.last!.1.rawValue
        try tmux.waitForScreen("the final state", timeout: 30) { screen in
            screen.contains("Pending requests (\(pairs.count))") && newestEvent(screen)?.contains("replaced processing request \(last)") == true
        }
        let read = try #require(bytesRead(by: pid)) - before
        // What changed is a few hundred small files and lines; reading the log again even once
        // would be more than all of that.
        #expect(read > 0)
        #expect(read < history.count, "bgtop read \(read) bytes for 400 submits; the log alone is \(history.count)")

        tmux.send("q")
        try tmux.waitFor("bgtop exited 0")
    }

    /// Bytes the process has read through read(2) and the like (`rchar` in `/proc/<pid>/io`).
    private func bytesRead(by pid: Int32) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/io", encoding: .utf8) else { return nil }
        return text.split(separator: "\n").first { $0.hasPrefix("rchar:") }.flatMap { Int($0.dropFirst("rchar:".count).trimmingCharacters(in: .whitespaces)) }
    }

    private func pidOfDashboard(state: String) -> Int32? {
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = Int32(entry), let command = try? String(contentsOfFile: "/proc/\(entry)/cmdline", encoding: .utf8) else { continue }
            let words = command.split(separator: "\0")
            if words.first?.hasSuffix("/bgtop") == true, words.contains(Substring(state)) { return pid }
        }
        return nil
    }

    /// The first row under the events panel's column titles (newest first by default).
    private func newestEvent(_ screen: String) -> String? {
        let lines = screen.split(separator: "\n", omittingEmptySubsequences: false)
        guard let title = lines.firstIndex(where: { $0.contains("4 Events (") }), title + 2 < lines.count else { return nil }
        return String(lines[title + 2])
    }

    /// `count` apps `<prefix>NN`, ten processing identifiers each; returns every (app, identifier).
    private func addApps(_ env: TestEnvironment, prefix: String, count: Int) throws -> [(Identifier, Identifier)] {
        var pairs: [(Identifier, Identifier)] = []
        for app in 0..<count {
            let id = String(format: "\(prefix)%02d", app)
            let identifiers = (0..<10).map { "\(id).t\($0)" }
            try env.addApp(id, identifiers: identifiers, modes: ["processing"], script: "exit 0\n")
            pairs += identifiers.map { (try! Identifier(validating: id), try! Identifier(validating: $0)) }
        }
        return pairs
    }

    /// bgtop on the environment's state, in a 160×48 tmux window.
    private func dashboard(_ env: TestEnvironment) throws -> TmuxSession {
        try TmuxSession(command: "\(TestEnvironment.binaries)/bgtop --state \(env.state) --config \(env.config); "
                        + "echo \"bgtop exited $?\"; sleep 60", width: 160, height: 48)
    }
}
