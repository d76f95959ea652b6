import Foundation
@testable import SchedulerRuntime
import TaskState
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Making and checking launch tokens, and keeping their key (issue 11, item 11).
@Suite("Launch key")
struct LaunchKeyTests {
    static let news = try! Identifier(validating: "com.example.news")
    static let mail = try! Identifier(validating: "com.example.mail")
    static let launchID = "com.example.news-1795341600000"

    @Test func aTokenVerifiesWithTheKeyThatMadeIt() throws {
        let key = LaunchKey.generate()
        let token = try key.token(app: Self.news, launchID: Self.launchID)
        #expect(token.app == Self.news)
        #expect(token.launchID == Self.launchID)
        #expect(token.mac.count == 64)
        #expect(key.verifies(token))
        #expect(key.verifies(try LaunchToken(validating: token.text)), "after the trip through the environment")
        #expect(try key.token(app: Self.news, launchID: Self.launchID) == token, "the same launch, the same token")
        #expect(try key.token(app: Self.news, launchID: Self.launchID + "-simulated") != token)
    }

    @Test func aTokenClaimingAnotherAppDoesNotVerify() throws {
        let key = LaunchKey.generate()
        let token = try key.token(app: Self.news, launchID: Self.launchID)
        let claimed = try LaunchToken(app: Self.mail, launchID: token.launchID, mac: token.mac)
        #expect(!key.verifies(claimed))
        let otherLaunch = try LaunchToken(app: Self.news, launchID: "com.example.news-1", mac: token.mac)
        #expect(!key.verifies(otherLaunch))
    }

    @Test func aForgedOrAlteredMACDoesNotVerify() throws {
        let key = LaunchKey.generate()
        let token = try key.token(app: Self.news, launchID: Self.launchID)
        let zeros = try LaunchToken(app: Self.news, launchID: Self.launchID, mac: String(repeating: "0", count: 64))
        #expect(!key.verifies(zeros))
        // Every single digit changed in turn: none of them still verifies.
        let digits = Array(token.mac)
        for index in digits.indices {
            var changed = digits
            changed[index] = changed[index] == "0" ? "1" : "0"
            let altered = try LaunchToken(app: Self.news, launchID: Self.launchID, mac: String(changed))
            #expect(!key.verifies(altered), "digit \(index)")
        }
    }

    @Test func aTruncatedTokenIsNotATokenAtAll() throws {
        let token = try LaunchKey.generate().token(app: Self.news, launchID: Self.launchID)
        #expect(throws: LaunchTokenError.badMAC) { try LaunchToken(validating: String(token.text.dropLast())) }
        #expect(throws: LaunchTokenError.badMAC) { try LaunchToken(validating: String(token.text.dropLast(32))) }
        #expect(throws: LaunchTokenError.wrongParts(2)) { try LaunchToken(validating: String(token.text.dropLast(65))) }
    }

    @Test func aTokenOfAnotherKeyDoesNotVerify() throws {
        let token = try LaunchKey.generate().token(app: Self.news, launchID: Self.launchID)
        #expect(!LaunchKey.generate().verifies(token))
        #expect(LaunchKey(bytes: [UInt8](repeating: 7, count: 31)) == nil)
        #expect(LaunchKey(bytes: [UInt8](repeating: 7, count: 33)) == nil)
        let fixed = try #require(LaunchKey(bytes: [UInt8](repeating: 7, count: 32)))
        let again = try #require(LaunchKey(bytes: [UInt8](repeating: 7, count: 32)))
        #expect(again.verifies(try fixed.token(app: Self.news, launchID: Self.launchID)), "the key is its bytes")
    }

    // MARK: - The key file

    private func withStateDirectory(_ body: (StatePaths) throws -> Void) throws {
        let root = FileManager.default.temporaryDirectory.path + "/bgtop-launchkey-\(UUID().uuidString.prefix(8))"
        #expect(mkdir(root, 0o700) == 0)
        defer { try? FileManager.default.removeItem(atPath: root) }
        try body(StatePaths(root: root))
    }

    @Test func theKeyIsMadeOnceKeptPrivateAndTheSameAfterARestart() throws {
        try withStateDirectory { paths in
            let first = try LaunchKey.load(paths: paths, now: Date())
            #expect(first.events.map(\.type) == [.launchKeyCreated])
            #expect(first.events.first?.message == "made the launch key (launch.key) for launch tokens")
            var info = stat()
            #expect(lstat(paths.launchKey, &info) == 0)
            #expect(info.st_mode & S_IFMT == S_IFREG)
            #expect(info.st_mode & 0o777 == 0o600)
            #expect(info.st_size == 32)

            let token = try first.key.token(app: Self.news, launchID: Self.launchID)
            let second = try LaunchKey.load(paths: paths, now: Date())
            #expect(second.events.isEmpty)
            #expect(second.key.verifies(token), "a token outlives the scheduler that gave it")
        }
    }

    @Test func aMissingKeyOfAUsedStateDirectoryIsMadeAgainAndOldTokensStopVerifying() throws {
        try withStateDirectory { paths in
            let token = try LaunchKey.load(paths: paths, now: Date()).key.token(app: Self.news, launchID: Self.launchID)
            try StateFiles.write(Data("{}".utf8), to: paths.heartbeat, durable: false)
            #expect(unlink(paths.launchKey) == 0)
            let again = try LaunchKey.load(paths: paths, now: Date())
            #expect(again.events.map(\.type) == [.launchKeyCreated])
            #expect(again.events.first?.message == "there was no launch.key: made a new launch key; launch tokens given out before no longer verify")
            #expect(!again.key.verifies(token))
        }
    }

    @Test("an unusable key file is quarantined and replaced", arguments: ["short", "open", "link", "directory"])
    func anUnusableKeyIsQuarantinedAndReplaced(_ kind: String) throws {
        try withStateDirectory { paths in
            let token = try LaunchKey.load(paths: paths, now: Date()).key.token(app: Self.news, launchID: Self.launchID)
            let outside = "\(paths.root).outside-key"
            defer { unlink(outside) }
            switch kind {
            case "short":
                try StateFiles.write(Data(repeating: 1, count: 31), to: paths.launchKey, durable: false)
            case "open":
                #expect(chmod(paths.launchKey, 0o644) == 0)
            case "link":
                try Data(repeating: 2, count: 32).write(to: URL(fileURLWithPath: outside))
                #expect(unlink(paths.launchKey) == 0)
                #expect(symlink(outside, paths.launchKey) == 0)
            default:
                #expect(unlink(paths.launchKey) == 0)
                #expect(mkdir(paths.launchKey, 0o700) == 0)
            }
            let again = try LaunchKey.load(paths: paths, now: Date())
            #expect(again.events.map(\.type) == [.quarantined, .launchKeyCreated], "\(again.events)")
            #expect(again.events.first?.reason?.hasPrefix("launch.key") == true, "\(again.events)")
            #expect(again.events.last?.message.hasPrefix("launch.key was unusable: made a new launch key") == true)
            #expect(!again.key.verifies(token))
            var info = stat()
            #expect(lstat(paths.launchKey, &info) == 0 && info.st_mode & S_IFMT == S_IFREG && info.st_mode & 0o777 == 0o600)
            let kept = try FileManager.default.contentsOfDirectory(atPath: paths.quarantine)
            #expect(kept.contains { $0.hasSuffix("-launch.key") }, "\(kept)")
            if kind == "link" {
                #expect(FileManager.default.contents(atPath: outside) == Data(repeating: 2, count: 32), "the link's target is untouched")
            }
            #expect(try LaunchKey.load(paths: paths, now: Date()).events.isEmpty, "the new key is kept")
        }
    }
}
