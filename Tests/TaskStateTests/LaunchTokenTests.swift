import Foundation
import Testing
import TaskState

/// A MAC of the right shape (64 lowercase hex digits).
private let sampleMAC = String(repeating: "0123456789abcdef", count: 4)

/// The shape of a launch token and the `launchToken` field of a command (issue 11, item 11):
/// any program may write the inbox, so the text is bounded and checked before anything uses it.
@Suite("Launch tokens on the wire")
struct LaunchTokenTests {
    static let mac = sampleMAC
    static let good = "com.example.news:com.example.news-1795341600000:\(mac)"

    @Test func aWellFormedTokenIsTakenApart() throws {
        let token = try LaunchToken(validating: Self.good)
        #expect(token.app == ident("com.example.news"))
        #expect(token.launchID == "com.example.news-1795341600000")
        #expect(token.mac == Self.mac)
        #expect(token.text == Self.good)
        #expect(try LaunchToken(app: token.app, launchID: token.launchID, mac: token.mac) == token)
    }

    @Test("malformed tokens are refused with the reason and without their text", arguments: [
        ("", LaunchTokenError.empty),
        ("com.example.news", .wrongParts(1)),
        ("com.example.news:id", .wrongParts(2)),
        ("a:b:c:\(sampleMAC)", .wrongParts(4)),
        (":id:\(sampleMAC)", .badApp),
        ("com/example:id:\(sampleMAC)", .badApp),
        ("com.example.news::\(sampleMAC)", .badLaunchID),
        ("com.example.news:.id:\(sampleMAC)", .badLaunchID),
        ("com.example.news:id with space:\(sampleMAC)", .badLaunchID),
        ("com.example.news:\(String(repeating: "i", count: 193)):\(sampleMAC)", .badLaunchID),
        ("com.example.news:id:\(sampleMAC.dropLast())", .badMAC),
        ("com.example.news:id:\(sampleMAC)0", .badMAC),
        ("com.example.news:id:\(sampleMAC.uppercased())", .badMAC),
        ("com.example.news:id:\(sampleMAC.dropLast())g", .badMAC),
        ("com.example.news:id:\(String(repeating: "0", count: 500))", .tooLong(520)),
    ])
    func malformed(_ text: String, _ expected: LaunchTokenError) {
        #expect(throws: expected) { try LaunchToken(validating: text) }
        let reason = expected.description
        #expect(reason.hasPrefix("a launch token is <app>:<launch id>:<64 lowercase hex digits>"), "\(reason)")
        if text.count > 20 { #expect(!reason.contains(text)) }
    }

    @Test func theEnvironmentGivesATokenNothingOrTheReason() throws {
        #expect(try LaunchToken.from(environment: [:]).get() == nil)
        #expect(try LaunchToken.from(environment: ["BGTASK_LAUNCH_TOKEN": ""]).get() == nil, "empty is unset")
        #expect(try LaunchToken.from(environment: ["BGTASK_LAUNCH_TOKEN": Self.good]).get()?.text == Self.good)
        #expect(throws: LaunchTokenError.wrongParts(1)) {
            try LaunchToken.from(environment: ["BGTASK_LAUNCH_TOKEN": "nonsense"]).get()
        }
    }

    @Test func aCommandCarriesItsTokenAndLeavesTheFieldOutWithoutOne() throws {
        let action = CommandAction.cancel(app: ident("com.example.news"), identifier: ident("com.example.news.refresh"))
        let token = try LaunchToken(validating: Self.good)
        let with = Command(id: Command.newID(at: referenceDate), issuedAt: referenceDate, issuerPID: 7, launchToken: token, action: action)
        let data = try JSONFormat.encode(with)
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(object["launchToken"] as? String == Self.good)
        #expect(try JSONFormat.decode(Command.self, from: data) == with)

        let without = Command(id: Command.newID(at: referenceDate), issuedAt: referenceDate, action: action)
        let plain = try #require(try JSONSerialization.jsonObject(with: try JSONFormat.encode(without)) as? [String: Any])
        #expect(plain["launchToken"] == nil)
        #expect(plain.keys.sorted() == ["app", "format", "id", "identifier", "issuedAt", "type"])
    }

    @Test func aCommandWithAMalformedTokenDoesNotDecode() throws {
        let text = """
            {"id":"x1","issuedAt":"2026-11-22T10:00:00Z","type":"cancelAll","app":"com.example.news","launchToken":"com.example.news:id:\(Self.mac.dropLast())"}
            """
        let error = try #require(throws: StateError.self) { try JSONFormat.decode(Command.self, from: Data(text.utf8)) }
        #expect(error.description.contains("launchToken"), "\(error)")
        #expect(error.description.contains("its last part is not 64 lowercase hex digits"), "\(error)")
        let wrongType = """
            {"id":"x1","issuedAt":"2026-11-22T10:00:00Z","type":"cancelAll","app":"com.example.news","launchToken":42}
            """
        #expect(throws: StateError.self) { try JSONFormat.decode(Command.self, from: Data(wrongType.utf8)) }
    }
}
