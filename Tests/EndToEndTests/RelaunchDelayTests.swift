import Foundation
import LoopbackServer
import TaskState
import TestSupport
import Testing

/// The relaunch rate limiter end to end: a bash app's handler, launched by the real scheduler,
/// creates a download with `bgctl` (carrying its launch token); from the second launch on each
/// one's waits a longer delay (`relaunchDelay`, with its end in `bgctl list --json`), up to the
/// hour's cap, `simulate-launch` of a held one lifts the delay, and after `bgctl app used` the next
/// launch's begins at once.
@Suite struct RelaunchDelayEndToEndTests {
    static let app = "com.example.relauncher"
    static let refresh = "com.example.relauncher.refresh"

    private func transfer(_ env: TestEnvironment, _ id: String) throws -> [String: Any]? {
        (try env.list()["transfers"] as? [[String: Any]])?.first { $0["identifier"] as? String == id }
    }

    /// Launches the app for its refresh; its handler creates download `t<n>` and completes.
    private func launch(_ env: TestEnvironment, _ n: Int) async throws {
        #expect(try env.bgctl("submit", "--app", Self.app, "--id", Self.refresh, "--kind", "refresh", "--earliest", "+3600").status == 0)
        let launched = try env.bgctl("simulate-launch", Self.refresh)
        #expect(launched.status == 0, "\(launched)")
        try await env.eventually("launch \(n)'s download") { env.output(of: Self.app).contains { $0.hasPrefix("download-\(n) ") } }
        try await env.eventually("launch \(n) to end") { try env.tasks().isEmpty }
        let line = env.output(of: Self.app).first { $0.hasPrefix("download-\(n) ") }
        #expect(line?.hasPrefix("download-\(n) 0 download t\(n) of ") == true, "\(line ?? "")")
    }

    @Test func aTransferCreatedInTheBackgroundWaitsAGrowingDelayUntilAPersonUsesTheApp() async throws {
        let env = try TestEnvironment()
        let server = try await LoopbackServer.start()
        try server.url("/generated/1000?seed=4").write(toFile: env.root + "/url", atomically: true, encoding: .utf8)
        try env.addApp(Self.app, identifiers: [Self.refresh], script: """
        N=$(( $(cat '\(env.root)/count' 2>/dev/null || echo 0) + 1 )); echo $N > '\(env.root)/count'
        R=$("$BGCTL" transfer download --app \(Self.app) --id "t$N" "$(cat '\(env.root)/url')" --to "t$N.bin" 2>&1); echo "download-$N $? $R" >> "$OUT"
        "$BGCTL" complete \(Self.refresh) --success > /dev/null
        """)
        let daemon = try env.startDaemon()
        defer { daemon.stop() }

        try await launch(env, 1)
        try await env.eventually("t1, created in the first launch, to finish at once") { try transfer(env, "t1")?["state"] as? String == "completed" }
        #expect(try transfer(env, "t1")?["relaunchDelayUntil"] == nil)

        // Each later launch's transfer waits twice as long as the one before, at most an hour. The
        // delay is read from what the scheduler recorded (the creation's event and the record's
        // end), which stays true once the delay has passed; the last one, an hour long, is the one
        // seen held, so a test that gets to it late on a busy machine still finds it waiting.
        let delays: [Double] = [60, 120, 240, 480, 960, 1920, 3600]
        for (offset, delay) in delays.enumerated() {
            let n = offset + 2
            try await launch(env, n)
            let record = try #require(try transfer(env, "t\(n)"))
            let until = try #require(record["relaunchDelayUntil"] as? String, "\(record)")
            let created = try #require(env.events(.transferCreated).first { $0.identifier?.rawValue == "t\(n)" })
            #expect(created.message.hasSuffix("created, relaunch delay \(Int(delay)) s"), "\(created.message)")
            let end = try #require(ISO8601DateFormatter.withFractions.date(from: until), "\(until)")
            #expect(abs(end.timeIntervalSince(created.time) - delay) < 0.002, "launch \(n)'s delay is \(Int(delay)) s")
        }
        let last = "t\(delays.count + 1)"
        let held = try #require(try transfer(env, last))
        #expect(held["state"] as? String == "waiting")
        #expect(held["blockers"] as? [String] == ["relaunchDelay"], "\(held)")

        let lifted = try env.bgctl("simulate-launch", last, "--app", Self.app)
        #expect(lifted.stdout == "lifted the relaunch delay of transfer \(last) of \(Self.app)\n", "\(lifted)")
        try await env.eventually("\(last) to finish once lifted") { try transfer(env, last)?["state"] as? String == "completed" }

        #expect(try env.bgctl("app", "used", Self.app).status == 0)
        let afterUse = delays.count + 2
        try await launch(env, afterUse)
        try await env.eventually("t\(afterUse), after a person's use, to finish at once") {
            try transfer(env, "t\(afterUse)")?["state"] as? String == "completed"
        }
        #expect(try transfer(env, "t\(afterUse)")?["relaunchDelayUntil"] == nil)
        #expect(env.events(.launched).count == afterUse)
        await server.shutdown()
    }
}

private extension ISO8601DateFormatter {
    static var withFractions: ISO8601DateFormatter {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter
    }
}
