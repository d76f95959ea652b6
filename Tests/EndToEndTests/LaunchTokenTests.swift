import Foundation
import TaskState
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Each launch gets a token in its environment (`BGTASK_LAUNCH_TOKEN`); `bgctl` run from its
/// handler script carries it, and the scheduler then lets it act on its own app only, while
/// `bgctl` from a terminal acts as the user (issue 11, item 11). Real scheduler, real bash apps.
@Suite struct LaunchTokenTests {
    static let alpha = "com.example.alpha"
    static let alphaRefresh = "com.example.alpha.refresh"
    static let beta = "com.example.beta"
    static let betaRefresh = "com.example.beta.refresh"

    /// One line a handler wrote: `<what> <exit status> <bgctl's output>`.
    private func line(_ env: TestEnvironment, _ what: String) -> String? {
        env.output(of: Self.alpha).first { $0.hasPrefix("\(what) ") }
    }

    /// Adds beta, an app that does nothing when launched.
    private func addBeta(_ env: TestEnvironment) throws {
        try env.addApp(Self.beta, identifiers: [Self.betaRefresh], script: "exit 0\n")
    }

    /// Submits beta's refresh for an hour from now (from a terminal: no token).
    private func submitBeta(_ env: TestEnvironment) throws {
        let submitted = try env.bgctl("submit", "--app", Self.beta, "--id", Self.betaRefresh, "--kind", "refresh", "--earliest", "+3600")
        #expect(submitted.status == 0, "\(submitted)")
    }

    /// Submits alpha's refresh for later and launches it now.
    private func launchAlpha(_ env: TestEnvironment) throws {
        let submitted = try env.bgctl("submit", "--app", Self.alpha, "--id", Self.alphaRefresh, "--kind", "refresh", "--earliest", "+3600")
        #expect(submitted.status == 0, "\(submitted)")
        let launched = try env.bgctl("simulate-launch", Self.alphaRefresh)
        #expect(launched.status == 0, "\(launched)")
    }

    private func pendingIdentifiers(_ env: TestEnvironment) throws -> [String] {
        try env.requests().compactMap { $0["identifier"] as? String }.sorted()
    }

    @Test func aHandlersBgctlActsOnItsOwnAppOnlyAndATerminalsOnAnyApp() throws {
        let env = try TestEnvironment()
        try env.addApp(Self.alpha, identifiers: [Self.alphaRefresh], script: """
        R=$("$BGCTL" cancel --app \(Self.beta) --id \(Self.betaRefresh) 2>&1); echo "cancel-beta $? $R" >> "$OUT"
        R=$("$BGCTL" conditions set lowpower=on 2>&1); echo "conditions $? $R" >> "$OUT"
        R=$("$BGCTL" simulate-launch \(Self.betaRefresh) 2>&1); echo "simulate-beta $? $R" >> "$OUT"
        R=$("$BGCTL" complete \(Self.alphaRefresh) --success 2>&1); echo "complete-own $? $R" >> "$OUT"
        """)
        try addBeta(env)
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        try submitBeta(env)

        try launchAlpha(env)
        try env.waitUntil("the handler's last command") { line(env, "complete-own") != nil }
        let why = "it carries \(Self.alpha)'s launch token (BGTASK_LAUNCH_TOKEN)"
        #expect(line(env, "cancel-beta") == "cancel-beta 1 bgctl: notPermitted: a cancel from a launch of \(Self.alpha) may not act on \(Self.beta); \(why)")
        #expect(line(env, "conditions") == "conditions 1 bgctl: notPermitted: a setConditions from a launch of \(Self.alpha) may not change the conditions, which apply to every app; \(why)")
        #expect(line(env, "simulate-beta") == "simulate-beta 1 bgctl: notPermitted: a simulateLaunch from a launch of \(Self.alpha) may not act on \(Self.beta); \(why)")
        #expect(line(env, "complete-own") == "complete-own 0 completed \(Self.alphaRefresh) successfully")

        // Nothing of beta's changed, and the refusals are in the log.
        #expect(try pendingIdentifiers(env) == [Self.betaRefresh])
        #expect(StateSnapshot.load(env.paths).conditions?.overrides == ConditionOverrides())
        #expect(env.events(.launched).map(\.app?.rawValue) == [Self.alpha])
        let refused = env.events(.refused).filter { $0.reason == "notPermitted" }
        #expect(refused.count == 3, "\(refused.map(\.message))")
        #expect(refused.allSatisfy { $0.message.contains("from a launch of \(Self.alpha)") })
        #expect(env.events(.completed).map(\.app?.rawValue) == [Self.alpha])
        try env.waitUntil("alpha's task to be gone") { try env.tasks().isEmpty }

        // From a terminal, with no token, bgctl acts as the user: on any app.
        let cancelled = try env.bgctl("cancel", "--app", Self.beta, "--id", Self.betaRefresh)
        #expect(cancelled.status == 0, "\(cancelled)")
        #expect(cancelled.stdout == "cancelled \(Self.betaRefresh)\n")
        #expect(try pendingIdentifiers(env).isEmpty)
        #expect(try env.bgctl("conditions", "set", "lowpower=on").status == 0)
        #expect(daemon.isRunning)
    }

    @Test func aLaunchTokenStillVerifiesAfterARestartAndAMadeUpOneDoesNot() throws {
        let env = try TestEnvironment()
        try env.addApp(Self.alpha, identifiers: [Self.alphaRefresh], script: """
        echo "token $BGTASK_LAUNCH_TOKEN" >> "$OUT"
        "$BGCTL" complete \(Self.alphaRefresh) --success
        """)
        try addBeta(env)
        var daemon = try env.startDaemon()
        defer { daemon.stop() }
        try submitBeta(env)
        try launchAlpha(env)
        try env.waitUntil("the handler's token") { line(env, "token") != nil }
        let text = String(try #require(line(env, "token")).dropFirst("token ".count))
        let token = try LaunchToken(validating: text)
        #expect(token.app.rawValue == Self.alpha)
        #expect(!env.events().contains { $0.message.contains(token.mac) }, "the log never gives a token away")
        try env.waitUntil("alpha's task to be gone") { try env.tasks().isEmpty }

        #expect(daemon.stop() == 0)
        daemon = try env.startDaemon()

        // The same token, from a new scheduler: verified, so it is alpha's and alpha's only.
        let withToken = ["BGTASK_LAUNCH_TOKEN": text]
        let other = try env.bgctl("cancel", "--app", Self.beta, "--id", Self.betaRefresh, environment: withToken)
        #expect(other.status == 1, "\(other)")
        #expect(other.stderr.hasPrefix("bgctl: notPermitted: a cancel from a launch of \(Self.alpha) may not act on \(Self.beta)"), "\(other)")
        let own = try env.bgctl("submit", "--app", Self.alpha, "--id", Self.alphaRefresh, "--kind", "refresh",
                                "--earliest", "+3600", environment: withToken)
        #expect(own.status == 0, "\(own)")
        #expect(try pendingIdentifiers(env) == [Self.alphaRefresh, Self.betaRefresh])

        // A token of the right shape that this scheduler did not make: refused, whatever it acts on.
        let forgedMAC = String(token.mac.reversed()) == token.mac ? String(repeating: "0", count: 64) : String(token.mac.reversed())
        let forged = "\(token.app):\(token.launchID):\(forgedMAC)"
        let refused = try env.bgctl("cancel", "--app", Self.alpha, "--id", Self.alphaRefresh, environment: ["BGTASK_LAUNCH_TOKEN": forged])
        #expect(refused.status == 1, "\(refused)")
        #expect(refused.stderr.hasPrefix("bgctl: notPermitted: the command's launch token (BGTASK_LAUNCH_TOKEN) claims a launch of \(Self.alpha) but was not made by this scheduler"),
                "\(refused)")
        #expect(!refused.stderr.contains(forgedMAC), "the token is not repeated")
        #expect(try pendingIdentifiers(env) == [Self.alphaRefresh, Self.betaRefresh])

        // Not a token at all: bgctl says so in one line and sends nothing.
        let malformed = try env.bgctl("cancel", "--app", Self.alpha, "--id", Self.alphaRefresh,
                                      environment: ["BGTASK_LAUNCH_TOKEN": "\(token.app):\(token.launchID)"])
        #expect(malformed.status == 2, "\(malformed)")
        #expect(malformed.stderr == "bgctl: BGTASK_LAUNCH_TOKEN is not usable: a launch token is <app>:<launch id>:<64 lowercase hex digits>; this one has 2 parts; unset it to act as the user\n")
        #expect(try pendingIdentifiers(env) == [Self.alphaRefresh, Self.betaRefresh])

        // No scheduler: bgctl's offline check refuses it the same way (taking the token's app on
        // trust) instead of queueing it.
        #expect(daemon.stop() == 0)
        let offline = try env.bgctl("cancel", "--app", Self.beta, "--id", Self.betaRefresh, environment: withToken)
        #expect(offline.status == 1, "\(offline)")
        #expect(offline.stderr.hasPrefix("bgctl: notPermitted: a cancel from a launch of \(Self.alpha) may not act on \(Self.beta)"), "\(offline)")
        #expect(try Inbox(paths: env.paths).waiting().isEmpty, "nothing was queued")

        // A new key (the old one lost) makes the old token void, and says so.
        #expect(unlink(env.paths.launchKey) == 0)
        daemon = try env.startDaemon()
        #expect(env.events(.launchKeyCreated).last?.message.hasPrefix("there was no launch.key: made a new launch key") == true,
                "\(env.events(.launchKeyCreated).map(\.message))")
        let void = try env.bgctl("cancel", "--app", Self.alpha, "--id", Self.alphaRefresh, environment: withToken)
        #expect(void.status == 1, "\(void)")
        #expect(void.stderr.contains("was not made by this scheduler"), "\(void)")
        #expect(try pendingIdentifiers(env) == [Self.alphaRefresh, Self.betaRefresh])
    }

    @Test func anInboxCommandWithAMalformedTokenIsQuarantinedWithTheReason() async throws {
        let env = try TestEnvironment()
        try addBeta(env)
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        try submitBeta(env)

        let id = Command.newID()
        let text = """
            {"id":"\(id)","issuedAt":"\(JSONFormat.string(from: Date()))","type":"cancelAll","app":"\(Self.beta)",\
            "launchToken":"\(Self.beta):x:\(String(repeating: "A", count: 64))"}
            """
        let temporary = "\(env.paths.inboxTemporary)/\(id).json"
        try Data(text.utf8).write(to: URL(fileURLWithPath: temporary))
        #expect(rename(temporary, "\(env.paths.inboxNew)/\(id).json") == 0)
        try await env.eventually("the outcome") { StateFiles.exists(env.paths.outcome(id)) }
        let outcome = try JSONFormat.decode(CommandOutcome.self, from: try StateFiles.read(env.paths.outcome(id)))
        #expect(outcome.error?.name == "invalidCommand", "\(outcome)")
        #expect(outcome.error?.message.contains("launchToken") == true, "\(outcome)")
        #expect(outcome.error?.message.contains("its last part is not 64 lowercase hex digits") == true, "\(outcome)")
        #expect(env.events(.commandRejected).count == 1)
        #expect(try pendingIdentifiers(env) == [Self.betaRefresh])
    }
}
