import Foundation
import Logging
@testable import SchedulerRuntime
import SchedulerCore
import TaskState
import TestSupport
import Testing

/// The journal as a write-ahead log: commits append batches, a crash replays every whole one in
/// order (dropping a torn last record), and replaying again changes nothing.
@Suite struct JournalTests {
    /// A state directory with its folders, and a group commit on it.
    private func committer(_ env: TestEnvironment, settings: SchedulerSettings = SchedulerSettings()) throws -> GroupCommit {
        for directory in env.paths.directories { try StateFiles.ensureDirectory(directory) }
        return try GroupCommit(paths: env.paths, settings: settings)
    }

    /// A batch that sets `requests/app/job.json` to `value` and logs one event naming it.
    private func batch(_ value: Int, consumed: [String] = [], removals: [String] = []) -> GroupCommit.Batch {
        var batch = GroupCommit.Batch()
        batch.writes = [.init(path: "requests/app/job.json", contents: "\(value)\n")]
        batch.events = #"{"n":\#(value)}"# + "\n"
        batch.consumedCommands = consumed
        batch.removals = removals
        return batch
    }

    /// Whether a checkpoint left the journal as it should: every byte zero, at its size.
    private func isZeroed(_ env: TestEnvironment) throws -> Bool {
        let data = try StateFiles.read(env.paths.journal, maximumSize: 4 << 20)
        return data.count >= JournalFile.preallocatedBytes && data.allSatisfy { $0 == 0 }
    }

    private func read(_ path: String) -> String? {
        (try? StateFiles.read(path)).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The journal's record body is written without JSONEncoder: whatever a file or an event line
    /// holds (quotes, backslashes, every control character, non-ASCII text, line and paragraph
    /// separators), the line is one line of JSON that decodes to the same batch, as
    /// JSONEncoder's own would.
    @Test func aRecordBodyDecodesToTheBatchWhateverItsFilesHold() throws {
        let hostile = "\"quoted\" \\ back\\slash /slash\n\t\r" + (0..<0x20).map { String(UnicodeScalar(UInt8($0))) }.joined()
            + "\u{7F} é 漢字 🙂 \u{2028}\u{2029} end"
        var batch = GroupCommit.Batch()
        batch.writes = [.init(path: "requests/app/job.json", contents: hostile), .init(path: "tasks/a b/\"x\".json", contents: ""),
                        .init(path: "outcomes/id.json", contents: "{\n  \"message\" : \"submitted\"\n}\n")]
        batch.removals = ["transfers/app/t.json", hostile]
        batch.events = #"{"detail":"a \"b\" \\ c"}"# + "\n" + hostile + "\n"
        batch.eventLogOffset = 1_234_567
        batch.consumedCommands = ["inbox/new/x.json"]
        for leftovers in [nil, [String](), ["uploads/app/t.body", hostile]] {
            batch.leftovers = leftovers
            let line = batch.journalLine()
            #expect(line.last == 0x0A && !line.dropLast().contains(0x0A), "one line")
            let decoded = try JSONFormat.decode(GroupCommit.Batch.self, from: line)
            let reference = try JSONFormat.decode(GroupCommit.Batch.self, from: try JSONFormat.encodeLine(batch))
            for other in [decoded, reference] {
                #expect(other.writes.map(\.path) == batch.writes.map(\.path) && other.writes.map(\.contents) == batch.writes.map(\.contents))
                #expect(other.removals == batch.removals && other.events == batch.events && other.leftovers == batch.leftovers)
                #expect(other.eventLogOffset == batch.eventLogOffset && other.consumedCommands == batch.consumedCommands && other.format == batch.format)
            }
        }
    }

    @Test func aTornLastRecordAmongSeveralIsSetAsideAndTheWholeOnesAreKept() throws {
        let bodies = ["first", "second", "third"].map { Data("{\"batch\":\"\($0)\"}\n".utf8) }
        let whole = bodies.reduce(into: Data()) { $0.append(JournalFile.record($1)) }
        let next = JournalFile.record(Data("{\"batch\":\"fourth\"}\n".utf8))
        // Cut short in the header, in the body, and whole in length but with a byte changed.
        var flipped = next
        flipped[flipped.count - 3] ^= 0x20
        for torn in [next.prefix(9), next.prefix(next.count - 4), flipped] {
            let contents = JournalFile.parse(whole + torn)
            #expect(contents.batches == bodies)
            #expect(contents.torn == Data(torn))
        }
        #expect(JournalFile.parse(whole + next).batches == bodies + [Data("{\"batch\":\"fourth\"}\n".utf8)])
        #expect(JournalFile.parse(whole + next).torn == nil)
        // A record after a torn one is never replayed: it is kept aside with it.
        let middle = JournalFile.parse(JournalFile.record(bodies[0]) + flipped + next)
        #expect(middle.batches == [bodies[0]])
        #expect(middle.torn == flipped + next)
    }

    /// Zeros after the records are where they end, not a torn record; what a torn write left
    /// before them is kept aside without them.
    @Test func zerosEndTheRecords() throws {
        let bodies = ["first", "second"].map { Data("{\"batch\":\"\($0)\"}\n".utf8) }
        let whole = bodies.reduce(into: Data()) { $0.append(JournalFile.record($1)) }
        let zeros = Data(count: 10_000)
        let clean = JournalFile.parse(whole + zeros)
        #expect(clean.batches == bodies && clean.torn == nil && clean.recordsEnd == whole.count)
        let torn = JournalFile.record(Data("{\"batch\":\"third\"}\n".utf8)).prefix(20)
        let cut = JournalFile.parse(whole + torn + zeros)
        #expect(cut.batches == bodies && cut.torn == Data(torn))
        #expect(JournalFile.parse(zeros + whole).batches.isEmpty && JournalFile.parse(zeros + whole).torn == nil)
    }

    /// A record is written over zeros the file already has, never past its end: its fdatasync
    /// then flushes data alone (a longer file would commit the file system's journal too). A
    /// checkpoint zeroes what the records used and keeps the size.
    @Test func recordsGoOverTheZerosAndACheckpointKeepsTheSize() throws {
        let env = try TestEnvironment()
        let commit = try committer(env)
        _ = try commit.replayJournal()
        let length = try #require(StateFiles.size(of: env.paths.journal))
        #expect(length == Int64(JournalFile.preallocatedBytes))
        #expect(try StateFiles.read(env.paths.journal, maximumSize: 4 << 20).allSatisfy { $0 == 0 })
        for value in 1...20 { try commit.commit(batch(value)) }
        #expect(StateFiles.size(of: env.paths.journal) == length)
        #expect(try commit.journal.contents().batches.count == 20)
        try commit.checkpoint()
        #expect(StateFiles.size(of: env.paths.journal) == length)
        #expect(try StateFiles.read(env.paths.journal, maximumSize: 4 << 20).allSatisfy { $0 == 0 })
        try commit.commit(batch(21))
        #expect(try commit.journal.contents().batches.count == 1)
    }

    /// A checkpoint that a crash cut short after its first zero byte leaves old records behind
    /// it. The next scheduler replays nothing, and zeroes them before its first record: else a
    /// new record ending where an old one began would bring that old batch back after it.
    @Test func oldRecordsBehindTheFirstZeroAreNeverReplayedAfterNewOnes() throws {
        let env = try TestEnvironment()
        let commit = try committer(env)
        _ = try commit.replayJournal()
        var big = batch(1)
        big.writes[0].contents = String(repeating: "x", count: 6000) + "\n"
        try commit.commit(big)
        try commit.commit(batch(2))
        // The crash came after the first zero byte reached the disk.
        var bytes = try StateFiles.read(env.paths.journal, maximumSize: 4 << 20)
        let old = JournalFile.parse(bytes).batches
        #expect(old.count == 2 && JournalFile.record(old[0]).count > 4096)
        bytes[0] = 0
        try bytes.write(to: URL(fileURLWithPath: env.paths.journal))

        let next = try committer(env)
        #expect(try next.replayJournal().replayed == 0)
        // A first record exactly as long as the old first one: the old second would follow it whole.
        let same = Data(String(decoding: old[0], as: UTF8.self).replacingOccurrences(of: "x", with: "y").utf8)
        #expect(JournalFile.record(same).count == JournalFile.record(old[0]).count && same != old[0])
        try next.journal.append(same)
        #expect(try next.journal.contents().batches == [same])
    }

    /// A journal longer than any replay reads is refused at once, before a byte of it is read:
    /// a sparse file of terabytes would otherwise be read for hours.
    @Test func aJournalTooLongIsRefusedWithoutReadingIt() throws {
        let env = try TestEnvironment()
        for directory in env.paths.directories { try StateFiles.ensureDirectory(directory) }
        let descriptor = open(env.paths.journal, O_WRONLY | O_CREAT, 0o600)
        #expect(descriptor >= 0 && ftruncate(descriptor, off_t(JournalFile.maximumBytes) + 1) == 0)
        close(descriptor)
        // Refused for its length, which is checked before the first read.
        #expect {
            _ = try JournalFile(path: env.paths.journal)
        } throws: { error in
            guard case .tooLarge(_, let bytes)? = error as? StateError else { return false }
            return bytes == JournalFile.maximumBytes + 1
        }
    }

    @Test func appendedRecordsReadBackInOrderAndSurviveAReopen() throws {
        let env = try TestEnvironment()
        _ = try committer(env)
        let journal = try JournalFile(path: env.paths.journal)
        let bodies = (1...5).map { Data("{\"n\":\($0)}\n".utf8) }
        for body in bodies { try journal.append(body) }
        #expect(journal.batchCount == 5)
        #expect(try journal.contents().batches == bodies)
        // A scheduler started again goes on after what is there (it replays and clears first).
        let reopened = try JournalFile(path: env.paths.journal)
        #expect(reopened.size == journal.size)
        try reopened.clear()
        #expect(try isZeroed(env))
        #expect(try reopened.contents().isEmpty)
    }

    @Test func commitsStayInTheJournalUntilTheCheckpoint() throws {
        let env = try TestEnvironment()
        let commit = try committer(env)
        for value in 1...3 { try commit.commit(batch(value)) }
        #expect(commit.journal.batchCount == 3, "each commit appends; none syncs the file system")
        #expect(read(env.state + "/requests/app/job.json") == "3\n")
        try commit.checkpointIfQuiet()
        #expect(commit.journal.batchCount == 3, "no checkpoint right after a commit")
        #expect(commit.quietCheckpointDate(now: Date()) != nil)
        try commit.checkpoint()
        #expect(try isZeroed(env))
        #expect(commit.quietCheckpointDate(now: Date()) == nil)
    }

    @Test func aFullJournalIsCheckpointedAtOnce() throws {
        let env = try TestEnvironment()
        let commit = try committer(env)
        for value in 1..<GroupCommit.maximumBatches { try commit.commit(batch(value)) }
        #expect(commit.journal.batchCount == GroupCommit.maximumBatches - 1)
        try commit.commit(batch(GroupCommit.maximumBatches))
        #expect(commit.journal.batchCount == 0)
        #expect(try isZeroed(env))
    }

    @Test func replayAppliesEveryBatchInOrderIntoAnEmptyDirectory() throws {
        let first = try TestEnvironment()
        let commit = try committer(first)
        try commit.commit(batch(1, consumed: ["inbox/new/c1.json"]))
        try commit.commit(batch(2, consumed: ["inbox/new/c2.json"], removals: ["requests/app/other.json"]))
        try commit.commit(batch(3))
        let journal = try StateFiles.read(first.paths.journal)

        // As after a power loss: the journal is there, nothing the batches wrote is, and the
        // consumed inbox files came back.
        let second = try TestEnvironment()
        let replaying = try committer(second)
        try journal.write(to: URL(fileURLWithPath: second.paths.journal))
        for name in ["c1.json", "c2.json"] { try Data("{}".utf8).write(to: URL(fileURLWithPath: "\(second.paths.inboxNew)/\(name)")) }
        try StateFiles.ensureDirectory(second.state + "/requests/app")
        try Data("other\n".utf8).write(to: URL(fileURLWithPath: second.state + "/requests/app/other.json"))
        let recovery = try replaying.replayJournal()
        #expect(recovery.replayed == 3)
        #expect(recovery.dropped == nil)
        #expect(read(second.state + "/requests/app/job.json") == "3\n")
        #expect(read(second.paths.events) == "{\"n\":1}\n{\"n\":2}\n{\"n\":3}\n")
        #expect(!StateFiles.exists("\(second.paths.inboxNew)/c1.json") && !StateFiles.exists("\(second.paths.inboxNew)/c2.json"))
        #expect(!StateFiles.exists(second.state + "/requests/app/other.json"))
        #expect(try isZeroed(second))
    }

    @Test func replayingTheSameJournalTwiceChangesNothing() throws {
        let env = try TestEnvironment()
        try Data("{\"n\":0}\n".utf8).write(to: URL(fileURLWithPath: env.paths.events))
        let commit = try committer(env)
        for value in 1...4 { try commit.commit(batch(value)) }
        let journal = try StateFiles.read(env.paths.journal)
        let log = "{\"n\":0}\n{\"n\":1}\n{\"n\":2}\n{\"n\":3}\n{\"n\":4}\n"
        #expect(read(env.paths.events) == log)

        // Killed with every batch written out: the replay writes the same files and no event twice.
        let restarted = try committer(env)
        #expect(try restarted.replayJournal().replayed == 4)
        #expect(read(env.paths.events) == log)
        #expect(read(env.state + "/requests/app/job.json") == "4\n")
        // Killed again before the emptied journal reached the disk: the same batches replay again.
        try journal.write(to: URL(fileURLWithPath: env.paths.journal))
        #expect(try committer(env).replayJournal().replayed == 4)
        #expect(read(env.paths.events) == log)
        #expect(read(env.state + "/requests/app/job.json") == "4\n")
    }

    /// The expiry alarm marks a due task `expiring` in its file outside the journal. A replay of
    /// the batch that wrote it as running must not bring it back: the next scheduler would expire
    /// it again and signal its process a second time. Another launch under the same key is
    /// written as its batch says.
    @Test func replayKeepsATaskTheExpiryAlarmMarkedExpiring() throws {
        let env = try TestEnvironment()
        let commit = try committer(env)
        let start = Date(timeIntervalSince1970: 1_795_341_600)
        let running = LaunchedTask(app: try Identifier(validating: "com.example.alarm"),
                                   identifier: try Identifier(validating: "com.example.alarm.work"), kind: .appRefresh,
                                   launchReason: "scheduled", simulated: false, pid: 4242, processGroup: 4242,
                                   processStartTicks: 77, launchID: "launch-1", startedAt: start, deadline: start.addingTimeInterval(30))
        let path = env.paths.task(running.key)
        func batch(_ task: LaunchedTask) throws -> GroupCommit.Batch {
            var batch = GroupCommit.Batch()
            batch.writes = [.init(path: String(path.dropFirst(env.state.count + 1)),
                                  contents: String(decoding: try JSONFormat.encode(task), as: UTF8.self))]
            return batch
        }
        try commit.commit(try batch(running))
        // The alarm, at the deadline: the file says expiring; then the scheduler is killed.
        var expiring = running
        expiring.state = .expiring
        expiring.expiringSince = running.deadline
        expiring.killDeadline = running.deadline.addingTimeInterval(5)
        expiring.unrecordedExpiry = true
        try StateFiles.write(try JSONFormat.encode(expiring), to: path, durable: false)
        #expect(try committer(env).replayJournal().replayed == 1)
        #expect(try JSONFormat.decode(LaunchedTask.self, from: try StateFiles.read(path)) == expiring)

        // A new launch of the same identifier, journaled as running over the old one's expiring file.
        var relaunched = running
        relaunched.launchID = "launch-2"
        relaunched.pid = 4343
        let again = try committer(env)
        try again.commit(try batch(relaunched))
        try StateFiles.write(try JSONFormat.encode(expiring), to: path, durable: false)
        #expect(try committer(env).replayJournal().replayed == 1)
        #expect(try JSONFormat.decode(LaunchedTask.self, from: try StateFiles.read(path)) == relaunched)
    }

    /// A batch's outcomes are written after everything else it does, so a client that reads its
    /// outcome finds the state as its command left it. Seen by a removal that fails (a folder in
    /// place of a request file): the request written before it is there, the outcome is not.
    @Test func outcomesAreWrittenAfterTheRestOfTheBatch() throws {
        let env = try TestEnvironment()
        let commit = try committer(env)
        try FileManager.default.createDirectory(atPath: env.state + "/requests/app/gone.json/inside", withIntermediateDirectories: true)
        var batch = GroupCommit.Batch()
        batch.writes = [.init(path: "outcomes/c1.json", contents: "{}\n"), .init(path: "requests/app/job.json", contents: "1\n")]
        batch.removals = ["requests/app/gone.json"]
        #expect(throws: StateError.self) { try commit.commit(batch) }
        #expect(read(env.state + "/requests/app/job.json") == "1\n")
        #expect(!StateFiles.exists(env.paths.outcome("c1")), "no outcome before the removals")
    }

    @Test func theEventLogIsRotatedOnlyWithAnEmptyJournal() throws {
        let env = try TestEnvironment()
        var settings = SchedulerSettings()
        settings.eventLogMaximumBytes = 8
        settings.eventLogKeptFiles = 2
        let commit = try committer(env, settings: settings)
        try commit.commit(batch(1))
        try commit.commit(batch(2))
        // The second commit found the log past its size: the first batch was checkpointed before
        // the log was rotated, so no batch in the journal names an offset in the rotated file.
        #expect(commit.journal.batchCount == 1)
        #expect(read(env.paths.rotatedEvents(1)) == "{\"n\":1}\n")
        #expect(read(env.paths.events) == "{\"n\":2}\n")
        #expect(try committer(env, settings: settings).replayJournal().replayed == 1)
        #expect(read(env.paths.events) == "{\"n\":2}\n")
    }

    /// A replay the machine stops (here a folder a batch writes into is a file: ENOTDIR, as a full
    /// disk or an I/O error would) fails the start and leaves the journal whole: its batches were
    /// acknowledged. A journal this program cannot read is kept aside, durably, and emptied.
    @Test func aReplayTheMachineStopsKeepsTheJournalAndOneItCannotReadIsSetAside() throws {
        let env = try TestEnvironment()
        let commit = try committer(env)
        try commit.commit(batch(1))
        try commit.commit(batch(2))
        let journal = try #require(read(env.paths.journal))
        try FileManager.default.removeItem(atPath: env.state + "/requests/app")
        try "not a folder".write(toFile: env.state + "/requests/app", atomically: false, encoding: .utf8)
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        #expect(throws: StateError.self) {
            _ = try SchedulerDaemon.replayJournal(try committer(env), paths: env.paths, logger: logger, now: Date())
        }
        #expect(read(env.paths.journal) == journal, "every acknowledged batch is still there")

        try FileManager.default.removeItem(atPath: env.state + "/requests/app")
        let garbled = try committer(env)
        try garbled.journal.clear()
        try garbled.journal.append(Data("not json\n".utf8))
        let events = try SchedulerDaemon.replayJournal(garbled, paths: env.paths, logger: logger, now: Date())
        #expect(events.map(\.type) == [.quarantined])
        #expect(try isZeroed(env))
        let kept = try FileManager.default.contentsOfDirectory(atPath: env.paths.quarantine).filter { $0.hasSuffix("-journal.json") }
        #expect(kept.count == 1)
    }

    /// A journal is state on disk, so input: a path that climbs out is refused even when a
    /// combining mark follows its "/" (one `Character` with it, so no "/" to `String`).
    @Test func aReplayedPathThatClimbsOutIsRefused() throws {
        let env = try TestEnvironment()
        let commit = try committer(env)
        let body = #"{"format":1,"writes":[{"path":"../\u0301escape","contents":"x"}],"removals":[],"events":"","eventLogOffset":0,"consumedCommands":[]}"#
        try commit.journal.append(Data((body + "\n").utf8))
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let events = try SchedulerDaemon.replayJournal(try committer(env), paths: env.paths, logger: logger, now: Date())
        #expect(events.map(\.type) == [.quarantined])
        #expect(!FileManager.default.fileExists(atPath: PathText.parent(env.state) + "/\u{301}escape"), "nothing written beside the state directory")
    }
}
