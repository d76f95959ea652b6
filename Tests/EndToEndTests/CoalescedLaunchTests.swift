import Foundation
import TestSupport
import Testing
import TaskState

/// Launches coalesced across apps, with the real scheduler: five apps whose refreshes come due a
/// few seconds apart start in one turn, and `maxConcurrentLaunches` queues a burst.
@Suite struct CoalescedLaunchTests {
    static func addQuickApps(_ env: TestEnvironment, count: Int, seconds: Int = 0) throws -> [String] {
        try (1...count).map { number in
            let app = "com.example.co\(number)"
            try env.addApp(app, identifiers: ["\(app).refresh"], script: """
            echo "start $$" >> "$OUT"
            sleep \(seconds)
            "$BGCTL" complete \(app).refresh --success >> "$OUT" 2>&1

            """)
            return app
        }
    }

    @Test func fiveAppsDueSecondsApartLaunchInOneTurn() throws {
        let env = try TestEnvironment()
        try env.writeSettings(["coalescingWindowSeconds": 60, "maxConcurrentLaunches": 8, "usagePrediction": false])
        let apps = try Self.addQuickApps(env, count: 5)
        let daemon = try env.startDaemon()
        defer { daemon.stop() }

        let submittedAt = Date()
        for (offset, app) in apps.enumerated() {
            let result = try env.bgctl("submit", "--app", app, "--id", "\(app).refresh", "--kind", "refresh",
                                       "--earliest", "+\(2 + 2 * offset)")
            #expect(result.status == 0, "\(result)")
        }
        let lastDue = submittedAt.addingTimeInterval(10)

        try env.waitUntil("all five apps to launch", timeout: 40) { env.events(.launched).count == 5 }
        let launched = env.events(.launched)
        #expect(Set(launched.map(\.app?.rawValue)) == Set(apps))
        #expect(Set(launched.map(\.time)).count == 1, "one turn: \(launched.map(\.time))")
        let turn = try #require(launched.first?.time)
        #expect(turn >= lastDue.addingTimeInterval(-1), "not before the last app's date (\(turn) vs \(lastDue))")
        try env.waitUntil("all five to complete", timeout: 20) { env.events(.completed).count == 5 }
    }

    @Test func aHeldRequestIsListedAsCoalescingUntilTheLastDate() throws {
        let env = try TestEnvironment()
        try env.writeSettings(["coalescingWindowSeconds": 600, "maxConcurrentLaunches": 8, "usagePrediction": false])
        let apps = try Self.addQuickApps(env, count: 2)
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        // The later one first: a request due now with nothing coming is launched in its own turn.
        #expect(try env.bgctl("submit", "--app", apps[1], "--id", "\(apps[1]).refresh", "--kind", "refresh", "--earliest", "+300").status == 0)
        #expect(try env.bgctl("submit", "--app", apps[0], "--id", "\(apps[0]).refresh", "--kind", "refresh").status == 0)
        let first = try #require(try env.requests().first { $0["app"] as? String == apps[0] })
        #expect(first["blockers"] as? [String] == ["coalescing"])
        #expect(first["coalescingUntil"] != nil)
        let plain = try env.bgctl("list")
        #expect(plain.stdout.contains("coalescing (until "), "\(plain.stdout)")
        #expect(env.events(.launched).isEmpty)
    }

    @Test func aBurstLargerThanTheLimitStartsAsEarlierLaunchesEnd() throws {
        let env = try TestEnvironment()
        try env.writeSettings(["coalescingWindowSeconds": 0, "maxConcurrentLaunches": 2, "usagePrediction": false])
        let apps = try Self.addQuickApps(env, count: 3, seconds: 1)
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        // One date for all three, a whole second a little ahead: they come due in the same turn.
        let due = ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: (Date().timeIntervalSince1970 + 3).rounded(.up)))
        for app in apps {
            let result = try env.bgctl("submit", "--app", app, "--id", "\(app).refresh", "--kind", "refresh", "--earliest", due)
            #expect(result.status == 0, "\(result)")
        }
        try env.waitUntil("all three to complete", timeout: 30) { env.events(.completed).count == 3 }
        let launched = env.events(.launched).sorted { $0.time < $1.time }
        let completed = env.events(.completed).sorted { $0.time < $1.time }
        #expect(launched.count == 3)
        #expect(launched[0].time == launched[1].time, "two start together")
        #expect(launched[2].time >= completed[0].time, "the third waits for a launch to end")
        #expect(env.events(.launched).allSatisfy { $0.message.contains("launched pid") })
    }
}
