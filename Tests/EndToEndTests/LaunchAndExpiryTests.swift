import Foundation
import TestSupport
import Testing
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// submit → simulate-launch → the app sees its environment → simulate-expiration → the app's trap
/// runs → it completes, or it is killed and throttled. Real daemon, real bash apps, real signals.
@Suite struct LaunchAndExpiryTests {
    @Test func simulatedLaunchRunsTheAppWithItsEnvironmentAndExpiryRunsItsTrap() throws {
        let env = try TestEnvironment()
        try env.addApp("com.example.weather", identifiers: ["com.example.weather.refresh"], script: """
        echo "start $BGTASK_APP_ID $BGTASK_LAUNCH_REASON $BGTASK_TASK_IDS $BGTASK_STATE_DIR $$ $(ps -o pgid= $$ | tr -d ' ')" >> "$OUT"
        trap 'echo expired >> "$OUT"; "$BGCTL" complete com.example.weather.refresh --failure >> "$OUT" 2>&1; exit 0' USR1
        sleep 30 & wait $!
        """)
        let daemon = try env.startDaemon()
        defer { daemon.stop() }

        let submitted = try env.bgctl("submit", "--app", "com.example.weather", "--id", "com.example.weather.refresh",
                                      "--kind", "refresh", "--earliest", "+3600")
        #expect(submitted.status == 0, "\(submitted)")
        let pending = try env.requests()
        #expect(pending.count == 1)
        #expect(pending.first?["blockers"] as? [String] == ["earliestBeginDate"])

        let launched = try env.bgctl("simulate-launch", "com.example.weather.refresh")
        #expect(launched.status == 0, "\(launched)")
        #expect(launched.stdout.contains("launched com.example.weather (pid"))
        try env.waitUntil("the app to start") { env.output(of: "com.example.weather").count == 1 }
        let fields = env.output(of: "com.example.weather")[0].split(separator: " ").map(String.init)
        #expect(fields[0...4] == ["start", "com.example.weather", "simulated", "com.example.weather.refresh", env.state])
        #expect(fields[5] == fields[6], "the app leads its own process group")

        let tasks = try env.tasks()
        #expect(tasks.count == 1)
        #expect(tasks.first?["state"] as? String == "running")
        #expect(tasks.first?["simulated"] as? Bool == true)
        #expect(tasks.first?["pid"] as? Int == Int(fields[5]))
        #expect(try env.requests().isEmpty, "a launch consumes the request")

        let again = try env.bgctl("simulate-launch", "com.example.weather.refresh")
        #expect(again.status == 1)
        #expect(again.stderr == "bgctl: noSuchRequest: no task request with identifier com.example.weather.refresh has been scheduled\n")

        let expired = try env.bgctl("simulate-expiration", "com.example.weather.refresh")
        #expect(expired.status == 0, "\(expired)")
        // A commit writes its files before it appends its events: wait for the completion's too.
        try env.waitUntil("the trap to complete the task") { try env.tasks().isEmpty && !env.events(.completed).isEmpty }
        #expect(env.output(of: "com.example.weather").contains("expired"))
        let completed = env.events(.completed)
        #expect(completed.count == 1)
        #expect(completed.first?.reason == "failure")
        #expect(completed.first?.message.contains("after its expiration") == true)
        #expect(env.events(.killed).isEmpty)
    }

    @Test func anAppThatIgnoresExpirationIsKilledWithItsGroupAndThrottled() throws {
        let env = try TestEnvironment()
        try env.writeSettings(["expirationGraceSeconds": 0.5, "throttleInitialSeconds": 120])
        try env.addApp("com.example.stubborn", identifiers: ["com.example.stubborn.sync"], script: """
        trap 'echo ignoring >> "$OUT"' USR1
        sleep 30 &
        echo "child $!" >> "$OUT"
        while true; do wait; done
        """)
        let daemon = try env.startDaemon()
        defer { daemon.stop() }

        #expect(try env.bgctl("submit", "--app", "com.example.stubborn", "--id", "com.example.stubborn.sync", "--kind", "processing",
                              "--earliest", "+600").status == 0)
        #expect(try env.bgctl("simulate-launch", "com.example.stubborn.sync").status == 0)
        try env.waitUntil("the app's child") { env.output(of: "com.example.stubborn").first?.hasPrefix("child ") == true }
        let pid = try #require(try env.tasks().first?["pid"] as? Int)
        let child = try #require(Int32(env.output(of: "com.example.stubborn")[0].dropFirst("child ".count)))

        #expect(try env.bgctl("simulate-expiration", "com.example.stubborn.sync").status == 0)
        try env.waitUntil("the kill") { !env.events(.killed).isEmpty }
        try env.waitUntil("the group to be gone") { !processIsAlive(Int32(pid)) && !processIsAlive(child) }
        #expect(env.output(of: "com.example.stubborn").contains("ignoring"))
        #expect(try env.tasks().isEmpty)

        let apps = try env.bgctl("apps", "--json")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(apps.stdout.utf8)) as? [String: Any])
        let app = try #require((report["apps"] as? [[String: Any]])?.first)
        #expect(app["throttleLevel"] as? Int == 1)
        #expect(app["killCount"] as? Int == 1)
        #expect(app["throttledUntil"] is String)
        // What bgtop's apps panel shows: the launch's reason, the overrun that throttled the
        // app, and the day's counts the scheduler keeps in the app record.
        #expect(app["lastLaunchReason"] as? String == "simulated")
        #expect(app["throttleCause"] as? String == "com.example.stubborn.sync overran")
        let day = try #require(app["last24h"] as? [String: Int])
        #expect(day == ["launches": 1, "expiries": 1, "kills": 1])

        // A throttled app's next request waits, and says why.
        #expect(try env.bgctl("submit", "--app", "com.example.stubborn", "--id", "com.example.stubborn.sync", "--kind", "processing").status == 0)
        let blockers = try env.requests().first?["blockers"] as? [String] ?? []
        #expect(blockers.contains("throttled"))
    }

    @Test func aDueRequestLaunchesOnItsOwnAndExpiresAtItsDeadline() throws {
        let env = try TestEnvironment()
        try env.writeSettings(["appRefreshBudgetSeconds": 1, "expirationGraceSeconds": 5])
        try env.addApp("com.example.news", identifiers: ["com.example.news.refresh"], script: """
        echo "start $BGTASK_LAUNCH_REASON $(date +%s.%N)" >> "$OUT"
        trap 'echo "expired $(date +%s.%N)" >> "$OUT"; "$BGCTL" complete com.example.news.refresh --success; exit 0' USR1
        sleep 30 & wait $!
        """)
        let daemon = try env.startDaemon()
        defer { daemon.stop() }

        let submittedAt = Date()
        #expect(try env.bgctl("submit", "--app", "com.example.news", "--id", "com.example.news.refresh", "--kind", "refresh",
                              "--earliest", "+1").status == 0)
        try env.waitUntil("the launch", timeout: 10) { env.output(of: "com.example.news").count >= 1 }
        let start = env.output(of: "com.example.news")[0].split(separator: " ")
        #expect(start[1] == "appRefresh")
        let startedAt = try #require(Double(start[2]))
        #expect(startedAt >= submittedAt.timeIntervalSince1970 + 1, "earliestBeginDate is a floor")

        try env.waitUntil("the expiry", timeout: 10) { env.output(of: "com.example.news").count >= 2 }
        #expect(env.output(of: "com.example.news")[1].hasPrefix("expired "), "the app heard its expiry")
        // A commit writes its files before it appends its events (the expiry's too, when it came in
        // the completion's commit): wait for the completion's event as well.
        try env.waitUntil("completion") { try env.tasks().isEmpty && !env.events(.completed).isEmpty }
        #expect(env.events(.expired).count == 1)
        // The budget counts from the launch, as the scheduler recorded both (the script's own
        // clock starts after the shell has started, which a loaded machine delays; the signal
        // can reach the app before the expiry's commit, so the events are read after completion).
        let launched = try #require(env.events(.launched).first?.time)
        let expired = try #require(env.events(.expired).first?.time)
        #expect(expired.timeIntervalSince(launched) >= 0.999, "the budget is 1 s")
        #expect(expired.timeIntervalSince(launched) < 4, "expiry is not late by seconds")
        #expect(env.events(.killed).isEmpty)
    }

    @Test func conditionsOverridesHoldAndReleaseProcessingRequests() throws {
        let env = try TestEnvironment()
        try env.addApp("com.example.backup", identifiers: ["com.example.backup.nightly"], script: """
        echo "start" >> "$OUT"
        "$BGCTL" complete com.example.backup.nightly --success
        """)
        let daemon = try env.startDaemon()
        defer { daemon.stop() }

        #expect(try env.bgctl("conditions", "set", "power=battery", "idle=yes").status == 0)
        let shown = try env.bgctl("conditions")
        #expect(shown.stdout.contains("power=battery (simulated)"))
        #expect(try env.bgctl("submit", "--app", "com.example.backup", "--id", "com.example.backup.nightly",
                              "--kind", "processing", "--requires-power").status == 0)
        let blockers = try env.requests().first?["blockers"] as? [String] ?? []
        #expect(blockers == ["externalPower"])
        usleep(300_000)
        #expect(env.output(of: "com.example.backup").isEmpty, "nothing launches on battery")

        #expect(try env.bgctl("conditions", "set", "power=ac").status == 0)
        try env.waitUntil("the launch on external power") { env.output(of: "com.example.backup") == ["start"] }
        try env.waitUntil("completion") { !env.events(.completed).isEmpty }
        #expect(env.events(.completed).first?.reason == "success")
    }

    @Test func aFinishingTaskBegunByARunningAppExpiresWithItsSignal() throws {
        let env = try TestEnvironment()
        try env.writeSettings(["finishingBudgetSeconds": 0.5, "expirationGraceSeconds": 5])
        try env.addApp("com.example.chat", identifiers: ["com.example.chat.refresh"], script: """
        trap 'echo "expired $ID" >> "$OUT"; "$BGCTL" complete "$ID" --failure; exit 0' USR1
        ID=$("$BGCTL" begin-finishing --name "send message" --pid $$)
        echo "began $ID" >> "$OUT"
        "$BGCTL" complete com.example.chat.refresh --success
        sleep 30 & wait $!
        """)
        let daemon = try env.startDaemon()
        defer { daemon.stop() }

        #expect(try env.bgctl("submit", "--app", "com.example.chat", "--id", "com.example.chat.refresh", "--kind", "refresh",
                              "--earliest", "+600").status == 0)
        #expect(try env.bgctl("simulate-launch", "com.example.chat.refresh").status == 0)
        try env.waitUntil("the finishing task's expiry") { env.output(of: "com.example.chat").count >= 2 }
        #expect(env.output(of: "com.example.chat") == ["began finishing-1", "expired finishing-1"])
        // A commit writes its files before it appends its events: wait for both completions' too.
        try env.waitUntil("both tasks to end") { try env.tasks().isEmpty && env.events(.completed).count == 2 }
        let expired = env.events(.expired)
        #expect(expired.map { $0.identifier?.rawValue } == ["finishing-1"])
        #expect(env.events(.completed).compactMap { $0.identifier?.rawValue }.sorted() == ["com.example.chat.refresh", "finishing-1"])
        #expect(env.events(.killed).isEmpty)
    }
}
