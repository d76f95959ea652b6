import Foundation
import Testing
import TaskState

@Suite("Command inbox")
struct InboxTests {
    private func command(at offset: TimeInterval, _ action: CommandAction) -> Command {
        let issued = referenceDate.addingTimeInterval(offset)
        return Command(id: Command.newID(at: issued), issuedAt: issued, issuerPID: 123, action: action)
    }

    @Test func enqueuedCommandWaitsAndDecodes() throws {
        try withTemporaryDirectory { dir in
            let inbox = Inbox(paths: StatePaths(root: dir))
            #expect(try inbox.waiting() == [], "no inbox yet means nothing waiting")
            let sent = command(at: 0, .cancelAll(app: ident("com.example.news")))
            try inbox.enqueue(sent)

            #expect(try inbox.waiting() == ["\(sent.id).json"])
            #expect(try inbox.read("\(sent.id).json") == sent)
            #expect(inbox.path(of: "\(sent.id).json") == "\(dir)/inbox/new/\(sent.id).json")
            #expect(try allEntries("\(dir)/inbox/tmp") == [], "the temporary copy was renamed away")
            #expect(permissions("\(dir)/inbox/new") == 0o700)
        }
    }

    @Test func waitingFollowsIssueOrderNotWriteOrder() throws {
        try withTemporaryDirectory { dir in
            let inbox = Inbox(paths: StatePaths(root: dir))
            let commands = (0..<12).map { step in
                command(at: Double(step) * 0.125 + (step >= 10 ? 4096 : 0),
                        .complete(app: ident("com.a"), identifier: ident("t\(step)"), success: step % 2 == 0))
            }
            var order = Array(commands.indices)
            order.swapAt(0, 11)
            order.swapAt(3, 7)
            order.swapAt(5, 6)
            for index in order { try inbox.enqueue(commands[index]) }

            let waiting = try inbox.waiting()
            #expect(waiting == commands.map { "\($0.id).json" })
            #expect(try waiting.map { try inbox.read($0) } == commands)
            #expect(try inbox.waiting(limit: 3) == Array(commands.prefix(3).map { "\($0.id).json" }))
        }
    }

    @Test func stragglersAndGarbageAreHandled() throws {
        try withTemporaryDirectory { dir in
            let paths = StatePaths(root: dir)
            let inbox = Inbox(paths: paths)
            try inbox.enqueue(command(at: 0, .clearConditions))
            try writeText("half-written", to: "\(paths.inboxNew)/.partial.json")
            try writeText("notes", to: "\(paths.inboxNew)/README")
            try writeText("{ this is not json", to: "\(paths.inboxNew)/zzz.json")
            let waiting = try inbox.waiting()
            #expect(waiting.count == 2, "dot-files and non-JSON names are not commands: \(waiting)")
            #expect(waiting.last == "zzz.json")
            #expect(throws: StateError.self) { try inbox.read("zzz.json") }
            do throws(StateError) {
                _ = try inbox.read("zzz.json")
            } catch {
                #expect(error.description.contains("not valid JSON"), "\(error.description)")
            }
            #expect(throws: StateError.self) { try inbox.read("missing.json") }
        }
    }
}
