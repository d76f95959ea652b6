import Foundation
import Testing
import SchedulerCore
import TaskState

/// `processingRecentUseDays`: processing requests are for apps a person used lately.
@Suite("Recent use of processing apps")
struct RecentUseRuleTests {
    static func settings(days: Double) -> SchedulerSettings {
        var settings = SchedulerSettings()
        settings.processingRecentUseDays = days
        return settings
    }

    @Test func offByDefaultAProcessingRequestOfANeverUsedAppRuns() throws {
        #expect(SchedulerSettings().processingRecentUseDays == 0)
        var state = makeState()
        state.submitRequest(Tasks.cleanup, kind: .processing, at: t0)
        let request = try #require(state.request(Tasks.cleanup))
        #expect(state.blockers(for: request, at: t0).isEmpty)
        #expect(state.launchDue(at: t0).count == 1)
    }

    @Test func aNeverUsedAppWaitsWithoutATimerAndAUseReleasesIt() throws {
        var state = makeState(settings: Self.settings(days: 7))
        state.submitRequest(Tasks.cleanup, kind: .processing, at: t0)
        let request = try #require(state.request(Tasks.cleanup))
        #expect(state.blockers(for: request, at: t0) == [.notRecentlyUsed])
        #expect(!Blocker.notRecentlyUsed.isTimed)
        // Only a use clears it: nothing wakes the scheduler for it.
        #expect(state.nextWake(after: t0) == nil)
        #expect(state.launchDue(at: at(3 * day)).isEmpty)
        #expect(state.run(.appUsed(app: Apps.news, uses: [at(3 * day)]), at: at(3 * day)).outcome.succeeded)
        #expect(state.blockers(for: request, at: at(3 * day)).isEmpty)
        let launched = state.launchDue(at: at(3 * day))
        #expect(launched.map(\.app) == [Apps.news])
    }

    @Test func aUseOlderThanTheWindowHoldsProcessingButNotAppRefresh() throws {
        var state = makeState(settings: Self.settings(days: 7))
        #expect(state.run(.appUsed(app: Apps.news, uses: [t0]), at: t0).outcome.succeeded)
        state.submitRequest(Tasks.cleanup, kind: .processing, at: at(7 * day))
        state.submitRequest(Tasks.refresh, kind: .appRefresh, at: at(7 * day))
        let processing = try #require(state.request(Tasks.cleanup))
        let refresh = try #require(state.request(Tasks.refresh))
        // Exactly seven days after the use still counts; a second later it does not.
        #expect(state.blockers(for: processing, at: at(7 * day)).isEmpty)
        #expect(state.blockers(for: processing, at: at(7 * day + 1)) == [.notRecentlyUsed])
        #expect(!state.blockers(for: refresh, at: at(7 * day + 1)).contains(.notRecentlyUsed))
        // Other blockers are listed with it, so the detail view shows all of them.
        var busy = makeState(settings: Self.settings(days: 7), probed: Conditions(idle: false))
        busy.submitRequest(Tasks.cleanup, kind: .processing, at: t0)
        #expect(busy.blockers(for: try #require(busy.request(Tasks.cleanup)), at: t0) == [.idle, .notRecentlyUsed])
        #expect(!busy.isWaitingOnConditions(at: t0), "no probe for a request that waits for a person as well")
    }

    @Test func simulateLaunchIgnoresTheRule() throws {
        var state = makeState(settings: Self.settings(days: 7))
        state.submitRequest(Tasks.cleanup, kind: .processing, at: t0)
        let result = state.run(.simulateLaunch(identifier: Tasks.cleanup, app: Apps.news), at: t0)
        #expect(result.outcome.succeeded, "\(result.outcome)")
    }

    @Test func theSettingIsReadAndBounded() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("recent-use-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        func write(_ text: String) throws {
            try Data(text.utf8).write(to: URL(fileURLWithPath: SchedulerSettings.path(inConfig: directory)))
        }
        try write(#"{"processingRecentUseDays": 7}"#)
        #expect(try SchedulerSettings.load(configDirectory: directory).processingRecentUseDays == 7)
        for bad in ["-1", "366"] {
            try write(#"{"processingRecentUseDays": \#(bad)}"#)
            #expect(throws: SettingsError.self) { try SchedulerSettings.load(configDirectory: directory) }
        }
    }
}
