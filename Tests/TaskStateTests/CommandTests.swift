import Foundation
import Testing
import TaskState

@Suite("Commands on disk")
struct CommandTests {
    static let app = ident("com.example.news")
    static let task = ident("com.example.news.refresh")

    /// One example of every action, with optional fields both set and left out.
    static let actions: [CommandAction] = [
        .submit(SubmitRequest(app: app, identifier: task, kind: .appRefresh)),
        .submit(SubmitRequest(app: app, identifier: ident("db.cleanup"), kind: .processing,
                              earliestBeginDate: referenceDate.addingTimeInterval(3600.125),
                              requiresNetworkConnectivity: true, requiresExternalPower: true)),
        .cancel(app: app, identifier: task),
        .cancelAll(app: app),
        .simulateLaunch(identifier: task, app: nil),
        .simulateLaunch(identifier: task, app: app),
        .simulateExpiration(identifier: task, app: nil),
        .simulateExpiration(identifier: task, app: app),
        .complete(app: app, identifier: task, success: true),
        .complete(app: app, identifier: task, success: false),
        .beginFinishing(app: app, name: "send message", pid: 4242),
        .beginFinishing(app: app, name: nil, pid: 1),
        .setAppEnabled(app: app, enabled: false),
        .setAppEnabled(app: app, enabled: true),
        .setConditions(ConditionOverrides(externalPower: false, network: true)),
        .setConditions(ConditionOverrides(idle: false, lowPower: true)),
        .clearConditions,
        .attach(app: app, pid: 4242, identifiers: [task]),
        .detach(app: app, pid: 4242),
        .transferCreate(TransferRequest(app: app, identifier: ident("episode-1"), direction: .download,
                                        url: "https://example.com/e.mp3", destination: "e.mp3")),
        .transferCreate(TransferRequest(app: app, identifier: ident("photo-1"), session: "com.example.news.session",
                                        direction: .upload, url: "http://127.0.0.1:8080/up", sourceFile: "/tmp/photo",
                                        earliestBeginDate: referenceDate.addingTimeInterval(60), isDiscretionary: true,
                                        sessionSendsLaunchEvents: true, countOfBytesClientExpectsToSend: 123,
                                        countOfBytesClientExpectsToReceive: 45, timeoutIntervalForRequest: 30,
                                        timeoutIntervalForResource: 3600)),
        .transferCancel(app: app, identifier: ident("episode-1")),
        .transferPause(app: app, identifier: ident("episode-1")),
        .transferResume(app: app, identifier: ident("episode-1")),
        .transferAcknowledge(app: app, identifier: ident("episode-1")),
        .push(PushRequest(app: app)),
        .push(PushRequest(app: app, payload: try! PushPayload(validating: #"{"aps":{"content-available":1},"x":"ü"}"#),
                          priority: .conserve, expiration: referenceDate.addingTimeInterval(600), collapseID: "scores",
                          messageID: "m-1", source: "https://ntfy.example/topic")),
        .answerPush(app: app, identifier: ident("push-1a2b"), result: .noData),
        .attach(app: app, pid: 4242, identifiers: [], acceptsPushes: true),
        .appUsed(app: app, uses: [referenceDate, referenceDate.addingTimeInterval(-3600.25)]),
        .push(PushRequest(app: app, source: "bgctl", type: .voip)),
        .reportCall(CallReport(app: app, uuid: "6F1C2A3B-0D4E-4F5A-8B6C-7D8E9FA0B1C2", handle: "+1 (555) 010-2030", notifier: "dbus")),
        .reportCall(CallReport(app: app, uuid: "6F1C2A3B-0D4E-4F5A-8B6C-7D8E9FA0B1C2", handle: "sip:bob@example.org")),
        .transferCreate(TransferRequest(app: app, identifier: ident("later"), direction: .download, url: "https://example.com/later",
                                        destination: "later", earliestBeginDate: referenceDate.addingTimeInterval(3600),
                                        asksBeforeDelayedBegin: true)),
        .transferAnswer(DelayedRequestAnswer(app: app, identifier: ident("later"), disposition: .continue)),
        .transferAnswer(DelayedRequestAnswer(app: app, identifier: ident("later"), disposition: .new, url: "https://example.com/v2",
                                             headers: [TransferHeader(name: "Authorization", value: "Bearer x")],
                                             secretHeaderNames: ["X-Key"])),
        .transferAnswer(DelayedRequestAnswer(app: app, identifier: ident("later"), disposition: .new, headers: [])),
        .setConditions(ConditionOverrides(expensive: true)),
        .submit(SubmitRequest(app: app, identifier: task, kind: .processing, allowsExpensiveNetworkAccess: false)),
        .transferCreate(TransferRequest(app: app, identifier: ident("big"), direction: .download, url: "https://example.com/big",
                                        destination: "big", isDiscretionary: true, allowsExpensiveNetworkAccess: true)),
    ]

    @Test("every action survives encode and decode", arguments: actions)
    func roundTrip(_ action: CommandAction) throws {
        let command = Command(id: Command.newID(at: referenceDate), issuedAt: referenceDate.addingTimeInterval(0.5),
                              issuerPID: 77, action: action)
        let data = try JSONFormat.encode(command)
        let back = try JSONFormat.decode(Command.self, from: data)
        #expect(back == command)
        #expect(back.action.name == action.name)

        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(object["type"] as? String == action.name.rawValue)
        #expect(object["format"] as? Int == JSONFormat.version)
        #expect(object["issuedAt"] as? String == "2026-11-22T10:00:00.500Z")
    }

    @Test func everyActionNameIsCovered() {
        let covered = Set(Self.actions.map(\.name.rawValue))
        #expect(covered == Set(CommandAction.Name.allCases.map(\.rawValue)))
        // The names on disk are a contract: this list only grows.
        let contract: Set<String> = ["submit", "cancel", "cancelAll", "simulateLaunch", "simulateExpiration", "complete",
                                     "beginFinishing", "setAppEnabled", "setConditions", "clearConditions", "attach", "detach",
                                     "transferCreate", "transferCancel", "transferPause", "transferResume", "transferAcknowledge",
                                     "push", "answerPush", "appUsed", "reportCall", "transferAnswer"]
        #expect(covered == contract)
    }

    @Test func aFlatObjectWrittenByHandDecodes() throws {
        let json = """
        {"id": "0001-abc", "issuedAt": "2026-11-22T10:00:00Z", "type": "submit",
         "app": "com.example.news", "identifier": "db.cleanup", "kind": "processing"}
        """
        let command = try JSONFormat.decode(Command.self, from: Data(json.utf8))
        #expect(command.id == "0001-abc")
        #expect(command.issuedAt == referenceDate)
        #expect(command.issuerPID == nil)
        #expect(command.action == .submit(SubmitRequest(app: Self.app, identifier: ident("db.cleanup"), kind: .processing,
                                                        requiresNetworkConnectivity: false, requiresExternalPower: false)))
    }

    @Test("a missing field is a decode error naming the field", arguments: [
        (#"{"id":"c1","issuedAt":"2026-11-22T10:00:00Z","type":"complete","app":"com.a","identifier":"t"}"#, "success"),
        (#"{"id":"c1","issuedAt":"2026-11-22T10:00:00Z","type":"submit","app":"com.a","identifier":"t"}"#, "kind"),
        (#"{"id":"c1","issuedAt":"2026-11-22T10:00:00Z","type":"cancel","app":"com.a"}"#, "identifier"),
        (#"{"id":"c1","issuedAt":"2026-11-22T10:00:00Z","type":"beginFinishing","app":"com.a"}"#, "pid"),
        (#"{"id":"c1","issuedAt":"2026-11-22T10:00:00Z","type":"setConditions"}"#, "overrides"),
        (#"{"id":"c1","issuedAt":"2026-11-22T10:00:00Z","type":"cancelAll"}"#, "app"),
        (#"{"id":"c1","type":"clearConditions"}"#, "issuedAt"),
    ])
    func missingField(_ json: String, _ field: String) {
        #expect(throws: DecodingError.self) { try JSONFormat.decoder().decode(Command.self, from: Data(json.utf8)) }
        do {
            _ = try JSONFormat.decode(Command.self, from: Data(json.utf8))
            Issue.record("decoded without '\(field)'")
        } catch {
            #expect(error.description.contains("missing key '\(field)'"), "\(error.description)")
        }
    }

    /// The rules any writer of commands meets: `null` is the same as an absent optional field and
    /// an error for a required one, keys of no field are ignored, and of two bad fields the one
    /// declared first is named, whatever order the object has them in.
    @Test func nullsUnknownKeysAndTheFirstBadFieldFollowOneRule() throws {
        let nulls = #"{"id":"c1","issuedAt":"2026-11-22T10:00:00Z","type":"submit","app":"com.example.news","identifier":"db.cleanup","#
            + #""kind":"processing","earliestBeginDate":null,"issuerPID":null,"sha256":null,"unknown":{"nested":[1,2]},"zzz":"x"}"#
        let command = try JSONFormat.decode(Command.self, from: Data(nulls.utf8))
        #expect(command.issuerPID == nil)
        #expect(command.action == .submit(SubmitRequest(app: Self.app, identifier: ident("db.cleanup"), kind: .processing)))
        let fields = [#""id":"c1""#, #""issuedAt":"2026-11-22T10:00:00Z""#, #""type":"cancelAll""#, #""app":"com.a""#]
        #expect(throws: Never.self) { try JSONFormat.decode(Command.self, from: Data(("{" + fields.joined(separator: ",") + "}").utf8)) }
        for (index, name) in ["id", "issuedAt", "type"].enumerated() {
            var nulled = fields
            nulled[index] = "\"\(name)\":null"
            do {
                _ = try JSONFormat.decode(Command.self, from: Data(("{" + nulled.joined(separator: ",") + "}").utf8))
                Issue.record("decoded with \(name) null")
            } catch {
                #expect(error.description.contains("'\(name)'"), "\(name): \(error.description)")
            }
        }
        // `pid` is declared before `priority`: it is the one named, in either order.
        for json in [#"{"id":"c1","issuedAt":"2026-11-22T10:00:00Z","type":"detach","app":"com.a","priority":"high","pid":"one"}"#,
                     #"{"pid":"one","priority":"high","id":"c1","issuedAt":"2026-11-22T10:00:00Z","type":"detach","app":"com.a"}"#] {
            do {
                _ = try JSONFormat.decode(Command.self, from: Data(json.utf8))
                Issue.record("decoded: \(json)")
            } catch {
                #expect(error.description.contains("pid") && !error.description.contains("priority"), "\(error.description)")
            }
        }
    }

    @Test func unknownTypeAndBadIdentifiersAreRefused() {
        #expect(throws: StateError.self) {
            try JSONFormat.decode(Command.self, from: Data(#"{"id":"c","issuedAt":"2026-11-22T10:00:00Z","type":"reboot"}"#.utf8))
        }
        #expect(throws: StateError.self) {
            try JSONFormat.decode(Command.self, from: Data(
                #"{"id":"c","issuedAt":"2026-11-22T10:00:00Z","type":"cancelAll","app":"../../etc"}"#.utf8))
        }
    }

    @Test func newIDsSortInIssueOrderAndAreFileNameSafe() {
        var previous = ""
        for step in 0..<50 {
            let id = Command.newID(at: referenceDate.addingTimeInterval(Double(step) * 0.001))
            #expect(Command.isValidID(id), "\(id)")
            #expect(id.count == 33)
            #expect(id > previous)
            previous = id
        }
        #expect(Command.newID(at: referenceDate) != Command.newID(at: referenceDate), "random part differs")
        #expect(!Command.isValidID(""))
        #expect(!Command.isValidID("../x"))
        #expect(!Command.isValidID(String(repeating: "a", count: 65)))
    }
}
