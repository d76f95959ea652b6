import Foundation
import TaskState
import TestSupport
import Testing

/// The library sends the launch token it inherits (`BGTASK_LAUNCH_TOKEN`) with every command, so
/// a program started from another app's handler, which inherits that app's token, cannot act as
/// itself by mistake; a launched app acts on its own work as before (issue 11, item 11).
@Suite struct LaunchTokenLibraryTests {
    static let launcher = "com.example.launcher"
    static let launcherRefresh = "com.example.launcher.refresh"

    @Test func aLibraryAppActsWithTheTokenItInherits() throws {
        let env = try TestEnvironment()
        try env.addFixture(mode: "resubmit")
        // Another app whose handler only notes its token (as it would pass it to a child it starts).
        try env.addApp(Self.launcher, identifiers: [Self.launcherRefresh], script: "echo \"$BGTASK_LAUNCH_TOKEN\" >> \"$OUT\"\n")
        let daemon = try env.startDaemon()
        defer { daemon.stop() }

        // Launched by the scheduler, the fixture's handler submits its next refresh: its own app.
        try env.launchFixtureTask()
        try env.waitUntil("the handler's resubmission") {
            !env.fixtureEvents("resubmitted").isEmpty || !env.fixtureEvents("resubmit-failed").isEmpty
        }
        #expect(env.fixtureEvents("resubmit-failed").isEmpty, "\(env.fixtureEvents())")
        // A commit writes its files before it appends its events: wait for both.
        try env.waitUntil("the fixture's task to end") { try env.tasks().isEmpty && !env.events(.completed).isEmpty }
        #expect(env.events(.completed).map(\.app?.rawValue) == [TestEnvironment.fixtureID])

        #expect(try env.bgctl("submit", "--app", Self.launcher, "--id", Self.launcherRefresh, "--kind", "refresh",
                              "--earliest", "+3600").status == 0)
        #expect(try env.bgctl("simulate-launch", Self.launcherRefresh).status == 0)
        try env.waitUntil("the launcher's token") { !env.output(of: Self.launcher).isEmpty }
        let token = env.output(of: Self.launcher)[0]
        #expect(LaunchToken.from(environment: ["BGTASK_LAUNCH_TOKEN": token]).map { $0?.app.rawValue } == .success(Self.launcher))

        // The fixture run from the launcher's handler: it inherits the launcher's token.
        let inherited = ["BGTASK_LAUNCH_TOKEN": token]
        let submitted = try env.runFixture(["submit", TestEnvironment.refreshID, "appRefresh", "7200"], environment: inherited)
        #expect(submitted.status == 3, "\(submitted)")
        #expect(submitted.stdout == "error notPermitted: a submit from a launch of \(Self.launcher) may not act on \(TestEnvironment.fixtureID); it carries \(Self.launcher)'s launch token (BGTASK_LAUNCH_TOKEN)\n")
        let cancelled = try env.runFixture(["cancel", TestEnvironment.refreshID], environment: inherited)
        #expect(cancelled.stdout == "pending: \(TestEnvironment.refreshID)\n", "the cancel was refused: \(cancelled)")
        #expect(env.events(.refused).filter { $0.reason == "notPermitted" }.count == 2)

        // Not a token at all: the library says so and sends nothing.
        let malformed = try env.runFixture(["submit", TestEnvironment.refreshID], environment: ["BGTASK_LAUNCH_TOKEN": "garbage"])
        #expect(malformed.status == 3)
        #expect(malformed.stdout == "error unavailable: BGTASK_LAUNCH_TOKEN is not usable: a launch token is <app>:<launch id>:<64 lowercase hex digits>; this one has 1 part\n")

        // Run by a person (no token), the same program acts on its own app.
        let byHand = try env.runFixture(["cancel", TestEnvironment.refreshID])
        #expect(byHand.stdout == "pending: \n")
    }
}
