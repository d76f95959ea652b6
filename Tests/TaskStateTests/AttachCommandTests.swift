import Foundation
import Testing
import TaskState

@Suite("attach and detach commands on disk")
struct AttachCommandTests {
    static let app = ident("com.example.news")

    static let actions: [CommandAction] = [
        .attach(app: app, pid: 4242, identifiers: [ident("com.example.news.refresh"), ident("db.cleanup")]),
        .attach(app: app, pid: 1, identifiers: []),
        .detach(app: app, pid: 4242),
    ]

    @Test("attach and detach survive encode and decode", arguments: actions)
    func roundTrip(_ action: CommandAction) throws {
        let command = Command(id: Command.newID(at: referenceDate), issuedAt: referenceDate, issuerPID: 9, action: action)
        let data = try JSONFormat.encode(command)
        let back = try JSONFormat.decode(Command.self, from: data)
        #expect(back == command)
        #expect(back.action.name == action.name)

        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(object["type"] as? String == action.name.rawValue)
        #expect(object["app"] as? String == "com.example.news")
        switch action {
        case .attach(_, let pid, let identifiers, _, _):
            #expect(object["type"] as? String == "attach")
            #expect(object["pid"] as? Int == Int(pid))
            #expect(object["identifiers"] as? [String] == identifiers.map(\.rawValue), "an empty list is written, not left out")
        case .detach(_, let pid):
            #expect(object["type"] as? String == "detach")
            #expect(object["pid"] as? Int == Int(pid))
            #expect(object["identifiers"] == nil)
        default:
            Issue.record("unexpected action \(action)")
        }
    }

    @Test func aFlatAttachWrittenByHandDecodes() throws {
        let json = """
        {"id": "a1", "issuedAt": "2026-11-22T10:00:00Z", "type": "attach", "app": "com.example.news",
         "pid": 321, "identifiers": ["com.example.news.refresh"]}
        """
        let command = try JSONFormat.decode(Command.self, from: Data(json.utf8))
        #expect(command.action == .attach(app: Self.app, pid: 321, identifiers: [ident("com.example.news.refresh")]))
        let detach = try JSONFormat.decode(Command.self, from: Data(
            #"{"id":"d1","issuedAt":"2026-11-22T10:00:00Z","type":"detach","app":"com.example.news","pid":321}"#.utf8))
        #expect(detach.action == .detach(app: Self.app, pid: 321))
    }

    /// `acceptsVoIPPushes` is its own field beside `acceptsPushes`: each is written only when
    /// true, and a command without it (an older library's) reads as false.
    @Test func theTwoPushFlagsAreSeparateFieldsDefaultingToFalse() throws {
        let both = Command(id: "v1", issuedAt: referenceDate, issuerPID: 9,
                           action: .attach(app: Self.app, pid: 7, identifiers: [], acceptsPushes: false, acceptsVoIPPushes: true))
        let data = try JSONFormat.encode(both)
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(object["acceptsVoIPPushes"] as? Bool == true)
        #expect(object["acceptsPushes"] == nil)
        #expect(try JSONFormat.decode(Command.self, from: data) == both)
        let older = try JSONFormat.decode(Command.self, from: Data(
            #"{"id":"o1","issuedAt":"2026-11-22T10:00:00Z","type":"attach","app":"com.example.news","pid":7,"identifiers":[],"acceptsPushes":true}"#.utf8))
        #expect(older.action == .attach(app: Self.app, pid: 7, identifiers: [], acceptsPushes: true, acceptsVoIPPushes: false))
    }

    @Test("a missing field is a decode error naming the field", arguments: [
        (#"{"id":"c1","issuedAt":"2026-11-22T10:00:00Z","type":"attach","app":"com.a","pid":5}"#, "identifiers"),
        (#"{"id":"c1","issuedAt":"2026-11-22T10:00:00Z","type":"attach","app":"com.a","identifiers":[]}"#, "pid"),
        (#"{"id":"c1","issuedAt":"2026-11-22T10:00:00Z","type":"attach","pid":5,"identifiers":[]}"#, "app"),
        (#"{"id":"c1","issuedAt":"2026-11-22T10:00:00Z","type":"detach","app":"com.a"}"#, "pid"),
        (#"{"id":"c1","issuedAt":"2026-11-22T10:00:00Z","type":"detach","pid":5}"#, "app"),
    ])
    func missingField(_ json: String, _ field: String) {
        do {
            let command = try JSONFormat.decode(Command.self, from: Data(json.utf8))
            Issue.record("decoded without '\(field)': \(command.action)")
        } catch {
            #expect(error.description.contains("missing key '\(field)'"), "\(error.description)")
        }
    }

    @Test func anInvalidIdentifierInTheListIsRefused() {
        #expect(throws: StateError.self) {
            try JSONFormat.decode(Command.self, from: Data(
                #"{"id":"c","issuedAt":"2026-11-22T10:00:00Z","type":"attach","app":"com.a","pid":5,"identifiers":["../x"]}"#.utf8))
        }
    }
}
