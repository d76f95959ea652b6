import Foundation
import SchedulerCore
import StateFeed
import TaskState
import Testing

/// The lines of `bgctl watch --json` without processes: request lines are checked, long lines
/// are bounded, and a replica fed the publisher's lines holds what the mirror holds.
@Suite struct FeedTests {
    @Test func linesAreSplitAcrossReadsAndALongLineIsDroppedOnce() {
        var reader = BoundedLineReader(limit: 16)
        #expect(reader.take(Array("ab".utf8)) == [])
        #expect(reader.take(Array("c\nde\n".utf8)) == [.text(Data("abc".utf8)), .text(Data("de".utf8))])
        // 40 bytes without a newline: reported once, not kept, and the line after it is whole.
        #expect(reader.take([UInt8](repeating: 0x61, count: 20)) == [.tooLong])
        #expect(reader.take([UInt8](repeating: 0x61, count: 20)) == [])
        #expect(reader.take(Array("zz\nok\n".utf8)) == [.text(Data("ok".utf8))])
        #expect(reader.take(Array(String(repeating: "b", count: 16).utf8) + [0x0A]) == [.tooLong])
        #expect(reader.take(Array("fine\n".utf8)) == [.text(Data("fine".utf8))])
    }

    @Test func aCommandRequestBecomesTheInboxCommand() throws {
        let line = #"{"type":"command","id":"r-1","command":{"type":"simulateLaunch","identifier":"com.example.a.refresh","app":"com.example.a"}}"#
        let parsed = FeedRequest.parse(Data(line.utf8))
        let app = try Identifier(validating: "com.example.a")
        let identifier = try Identifier(validating: "com.example.a.refresh")
        #expect(parsed == .success(.command(id: "r-1", action: .simulateLaunch(identifier: identifier, app: app))))
    }

    @Test(arguments: [
        ("not json", FeedError.Code.malformed),
        ("[1,2]", .malformed),
        (#"{"id":"x"}"#, .malformed),
        (#"{"type":7}"#, .malformed),
        (#"{"type":"shell","id":"a"}"#, .unknownType),
        (#"{"type":"log","id":"a"}"#, .malformed),
        (#"{"type":"log","id":"a","request":{"app":"../etc","position":{"end":{}},"maximumLines":5,"serial":1}}"#, .malformed),
        (#"{"type":"follow","app":"com.example/../x"}"#, .malformed),
        (#"{"type":"command","id":"../etc"}"#, .malformed),
        (#"{"type":"command","id":"a","command":"submit"}"#, .malformed),
        (#"{"type":"command","command":{"type":"cancel","app":"../x","identifier":"y"}}"#, .malformed),
        (#"{"type":"command","command":{"type":"cancel","app":"com.a"}}"#, .malformed),
        (#"{"type":"command","command":{"type":"nope"}}"#, .malformed),
        (#"{"type":"command","command":{"type":"attach","app":"com.a","pid":1,"identifiers":[]}}"#, .refused),
        (#"{"type":"command","command":{"type":"clearConditions","launchToken":"abc"}}"#, .refused),
        (#"{"type":"command","command":{"type":"clearConditions","id":"mine"}}"#, .refused),
    ])
    func badRequestsAreRefusedWithACode(_ line: String, _ code: FeedError.Code) {
        guard case .failure(let error) = FeedRequest.parse(Data(line.utf8)) else {
            Issue.record("accepted: \(line)")
            return
        }
        #expect(error.code == code, "\(line): \(error.message)")
        #expect(!error.message.contains("\n"))
    }

    @Test func hostileBytesAreRefused() {
        let deep = String(repeating: "[", count: 20_000) + String(repeating: "]", count: 20_000)
        for line in [Data([0xff, 0xfe, 0x00, 0x7b]), Data(deep.utf8), Data(repeating: 0x20, count: WatchFeed.maximumRequestLine + 1)] {
            guard case .failure(let error) = FeedRequest.parse(line) else {
                Issue.record("accepted \(line.count) hostile bytes")
                continue
            }
            #expect([.malformed, .tooLong].contains(error.code))
        }
    }

    @Test func aReplicaFedThePublishersLinesHoldsWhatTheMirrorHolds() throws {
        let root = FileManager.default.temporaryDirectory.path + "/feed-replica-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: root) }
        let paths = StatePaths(root: root)
        try StateFiles.ensureDirectory(root)
        let app = try Identifier(validating: "com.example.a")
        func request(_ name: String) throws -> PendingRequest {
            PendingRequest(app: app, identifier: try Identifier(validating: name), kind: .processing, submittedAt: Date(timeIntervalSince1970: 1_700_000_000))
        }
        func write(_ request: PendingRequest) throws {
            try FileManager.default.createDirectory(atPath: "\(paths.requests)/\(app)", withIntermediateDirectories: true)
            try StateFiles.write(try JSONFormat.encode(request), to: paths.request(request.key), durable: false)
        }
        func log(_ text: String) throws {
            _ = try EventLog(paths: paths).append(try JSONFormat.encodeLine(Event(time: Date(), type: .submitted, app: app, message: text)))
        }
        try write(try request("com.example.a.one"))
        try write(try request("com.example.a.two"))
        try log("first")

        let mirror = StateMirror(paths: paths)
        var publisher = FeedPublisher()
        let around = FeedPublisher.Surroundings(stateDirectory: root, configDirectory: root + "/config", schedulerPID: 42,
                                                directoryProblem: nil, settings: SchedulerSettings(), catalog: ManifestCatalog())
        var replica = FeedReplica()
        let first = try JSONFormat.encodeLine(publisher.snapshot(mirror, around))
        #expect(try replica.apply(line: first.dropLast()) == nil)
        #expect(replica.hasSnapshot && replica.schedulerPID == 42)
        #expect(Set(replica.snapshot.requests) == Set(mirror.snapshot.requests))
        #expect(replica.events.map(\.message) == ["first"])

        // One request changes, one goes, one comes; an event is appended; the scheduler stops.
        var changed = try request("com.example.a.one")
        changed.requiresExternalPower = true
        try write(changed)
        unlink(paths.request(try request("com.example.a.two").key))
        try write(try request("com.example.a.three"))
        try log("second")
        mirror.reloadAll()
        var stopped = around
        stopped.schedulerPID = nil
        let change = publisher.change(mirror, stopped)
        #expect(change.requests?.set.count == 2)
        #expect(change.requests?.removed.map(\.identifier.rawValue) == ["com.example.a.two"])
        #expect(change.cleared == ["schedulerPID"])
        #expect(try replica.apply(line: try JSONFormat.encodeLine(change).dropLast()) == nil)
        #expect(Set(replica.snapshot.requests) == Set(mirror.snapshot.requests))
        #expect(replica.snapshot.requests.count == 2)
        #expect(replica.schedulerPID == nil)
        #expect(replica.events.map(\.message) == ["first", "second"])
        // Nothing more changed: nothing to say.
        #expect(publisher.change(mirror, stopped).isEmpty)
    }

    @Test func aReplicaRefusesAFeedItCannotRead() {
        var replica = FeedReplica()
        #expect(throws: FeedReplica.Broken.self) { try replica.apply(line: Data("garbage".utf8)) }
        #expect(throws: FeedReplica.Broken.self) { try replica.apply(line: Data(#"{"type":"change"}"#.utf8)) }
        #expect(throws: FeedReplica.Broken.self) { try replica.apply(line: Data(#"{"type":"snapshot","version":99}"#.utf8)) }
        // A kind of line from a newer watch is passed over.
        #expect((try? replica.apply(line: Data(#"{"type":"progress","lines":[]}"#.utf8))) == .some(nil))
    }

    /// A `log` line comes back with its request's id, so the reader knows which read it answers
    /// (and which reads a lost connection left unanswered).
    @Test func aLogLineIsAnsweredWithItsRequestsID() throws {
        var replica = FeedReplica()
        let app = try Identifier(validating: "com.example.weather")
        let excerpt = LogExcerpt(app: app, serial: 3, position: .end, file: nil, fileSize: 0, lines: [])
        let line = try JSONFormat.encodeLine(FeedLog(id: "log-7", excerpt: excerpt)).dropLast()
        #expect(try replica.apply(line: line) == .log(id: "log-7", excerpt))
        let unnamed = try JSONFormat.encodeLine(FeedLog(id: nil, excerpt: excerpt)).dropLast()
        #expect(try replica.apply(line: unnamed) == .log(id: nil, excerpt))
        #expect(try replica.apply(line: Data(#"{"type":"logChanged","app":"com.example.weather"}"#.utf8)) == .logChanged(app))
    }
}
