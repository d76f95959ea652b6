import Foundation
import Synchronization
import TaskState
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Clients sending over the command socket, and a writer of the inbox beside them, while the
/// scheduler is killed (`kill -9`) again and again, at whatever point of a turn, a commit or a
/// checkpoint it is in: every command a client was told about (applied, queued or not answered)
/// and every command written into the inbox takes effect exactly once, as its event log shows.
@Suite struct CommandSocketCrashTests {
    static let apps = (0..<4).map { "com.example.crash\($0)" }
    static let inboxApp = "com.example.crashinbox"
    static let identifiers = (0..<10).map { "job\($0)" }

    /// The whole records in a journal file (see `docs/state-format.md`, "Group commit and journal").
    static func journalRecords(_ data: Data) -> Int {
        var count = 0
        var start = data.startIndex
        while let newline = data[start...].firstIndex(of: 0x0A) {
            let header = String(decoding: data[start..<newline], as: UTF8.self).split(separator: " ")
            guard header.count == 4, header[0] == "bgtop-journal", let length = Int(header[2]),
                  let end = data.index(newline + 1, offsetBy: length, limitedBy: data.endIndex) else { break }
            count += 1
            start = end
        }
        return count
    }

    @Test func everyCommandTakesEffectExactlyOnceAcrossKills() throws {
        let env = try TestEnvironment()
        for app in Self.apps + [Self.inboxApp] {
            try env.addApp(app, identifiers: Self.identifiers.map { "\(app).\($0)" }, script: "exit 0")
        }
        var daemon = try env.startDaemon()
        let channel = CommandChannel(paths: env.paths)
        let sent = Mutex<[String: CommandChannel.Delivery]>([:])
        let failures = Mutex<[String]>([])
        let running = Atomic<Int>(Self.apps.count + 1)
        let enqueued = Mutex<[String]>([])
        Thread {
            // A writer of the inbox (Maildir-style, durable once renamed), whether or not a
            // scheduler runs.
            for round in 0..<15 {
                for identifier in Self.identifiers {
                    do {
                        let request = SubmitRequest(app: try Identifier(validating: Self.inboxApp),
                                                    identifier: try Identifier(validating: "\(Self.inboxApp).\(identifier)"),
                                                    kind: .processing, earliestBeginDate: Date().addingTimeInterval(86_400 + Double(round)))
                        let command = Command(issuedAt: Date(), issuerPID: getpid(), action: .submit(request))
                        try Inbox(paths: env.paths).enqueue(command)
                        enqueued.withLock { $0.append(command.id) }
                    } catch {
                        failures.withLock { $0.append("\(error)") }
                    }
                    usleep(2_000)
                }
            }
            running.subtract(1, ordering: .sequentiallyConsistent)
        }.start()
        for app in Self.apps {
            Thread {
                // Each client resubmits its app's requests one after another, waiting for each.
                for round in 0..<15 {
                    for identifier in Self.identifiers {
                        do {
                            let request = SubmitRequest(app: try Identifier(validating: app),
                                                        identifier: try Identifier(validating: "\(app).\(identifier)"),
                                                        kind: .processing, earliestBeginDate: Date().addingTimeInterval(86_400 + Double(round)))
                            let command = Command(issuedAt: Date(), issuerPID: getpid(), action: .submit(request))
                            let delivery = try channel.send(command, timeout: 5)
                            sent.withLock { $0[command.id] = delivery }
                        } catch {
                            failures.withLock { $0.append("\(error)") }
                        }
                    }
                }
                running.subtract(1, ordering: .sequentiallyConsistent)
            }.start()
        }
        // Kill it at uneven moments while the clients send, and start it again.
        var kills = 0
        var mostBatchesAtAKill = 0
        var random = SystemRandomNumberGenerator()
        while running.load(ordering: .sequentiallyConsistent) > 0 && kills < 6 {
            usleep(UInt32.random(in: 30_000...250_000, using: &random))
            daemon.crash()
            kills += 1
            let journal = (try? StateFiles.read(env.paths.journal, maximumSize: 64 << 20)) ?? Data()
            mostBatchesAtAKill = max(mostBatchesAtAKill, Self.journalRecords(journal))
            usleep(UInt32.random(in: 0...100_000, using: &random))
            daemon = try env.startDaemon()
        }
        try env.waitUntil("the clients to finish", timeout: 120) { running.load(ordering: .sequentiallyConsistent) == 0 }
        defer { daemon.stop() }
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0.prefix(3) })")
        let commands = sent.withLock { $0 }
        let written = enqueued.withLock { $0 }
        #expect(commands.count == Self.apps.count * Self.identifiers.count * 15)
        #expect(written.count == Self.identifiers.count * 15)
        let ids = Array(commands.keys) + written
        try env.waitUntil("every queued command to be applied", timeout: 60) {
            try Inbox(paths: env.paths).waiting().isEmpty && ids.allSatisfy { StateFiles.exists(env.paths.outcome($0)) }
        }
        // Exactly once: one submitted-or-replaced event per command id.
        var applied: [String: Int] = [:]
        for event in env.events() where event.type == .submitted || event.type == .replaced {
            if let id = event.command { applied[id, default: 0] += 1 }
        }
        let missing = ids.filter { applied[$0] == nil }
        let doubled = applied.filter { $0.value > 1 }
        #expect(missing.isEmpty, "\(missing.count) acknowledged commands never took effect: \(missing.prefix(3))")
        #expect(doubled.isEmpty, "applied twice: \(doubled.prefix(3))")
        let answered = commands.values.filter { if case .applied = $0 { return true } else { return false } }.count
        #expect(kills >= 1 && answered > 0, "killed \(kills) times while the clients sent; \(answered) answered at once")
        // The kills found commits in the journal not yet checkpointed: replay covered several batches.
        #expect(mostBatchesAtAKill > 1, "at most \(mostBatchesAtAKill) batch(es) in the journal at a kill")
    }
}
