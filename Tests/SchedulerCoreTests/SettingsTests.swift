import Foundation
import Testing
import SchedulerCore
import TaskState

@Suite("Scheduler settings")
struct SettingsTests {
    /// A fresh config directory holding `settings.json` with `text` (none when nil), removed after `body`.
    private func withConfig<T>(_ text: String?, _ body: (String) throws -> T) throws -> T {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bgtop-settings-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        if let text { try Data(text.utf8).write(to: URL(fileURLWithPath: SchedulerSettings.path(inConfig: dir))) }
        return try body(dir)
    }

    private func loadError(_ text: String) throws -> SettingsError? {
        try withConfig(text) { dir -> SettingsError? in
            do throws(SettingsError) {
                _ = try SchedulerSettings.load(configDirectory: dir)
                return nil
            } catch {
                #expect(error.path == SchedulerSettings.path(inConfig: dir))
                #expect(error.description == "\(error.path): \(error.reason)")
                return error
            }
        }
    }

    @Test func defaults() {
        let settings = SchedulerSettings()
        #expect(settings.appRefreshBudgetSeconds == 30)
        #expect(settings.processingBudgetSeconds == 600)
        #expect(settings.finishingBudgetSeconds == 30)
        #expect(settings.expirationGraceSeconds == 5)
        #expect(settings.coalescingWindowSeconds == 600)
        #expect(settings.throttleInitialSeconds == 60)
        #expect(settings.throttleMaximumSeconds == 3600)
        #expect(settings.maximumPendingAppRefresh == 1)
        #expect(settings.maximumPendingProcessing == 10)
        #expect(settings.budget(for: .appRefresh) == 30)
        #expect(settings.budget(for: .processing) == 600)
        #expect(settings.budget(for: .finishing) == 30)
    }

    @Test func missingKeysTakeTheDefaults() throws {
        let empty = try JSONFormat.decode(SchedulerSettings.self, from: Data("{}".utf8))
        #expect(empty == SchedulerSettings())
        let some = try JSONFormat.decode(SchedulerSettings.self, from: Data(#"{"appRefreshBudgetSeconds": 12, "maximumPendingProcessing": 3}"#.utf8))
        var expected = SchedulerSettings()
        expected.appRefreshBudgetSeconds = 12
        expected.maximumPendingProcessing = 3
        #expect(some == expected)
    }

    @Test func encodeDecodeRoundTrip() throws {
        var settings = SchedulerSettings()
        settings.expirationGraceSeconds = 2.5
        settings.eventLogKeptFiles = 7
        let back = try JSONFormat.decode(SchedulerSettings.self, from: try JSONFormat.encode(settings))
        #expect(back == settings)
    }

    @Test func aMissingFileGivesTheDefaults() throws {
        let settings = try withConfig(nil) { try SchedulerSettings.load(configDirectory: $0) }
        #expect(settings == SchedulerSettings())
    }

    @Test func aFileIsReadWithDefaultsForTheRest() throws {
        let settings = try withConfig(#"{"processingBudgetSeconds": 120, "expirationGraceSeconds": 0, "coalescingWindowSeconds": 0}"#) {
            try SchedulerSettings.load(configDirectory: $0)
        }
        #expect(settings.processingBudgetSeconds == 120)
        #expect(settings.expirationGraceSeconds == 0)
        #expect(settings.coalescingWindowSeconds == 0)
        #expect(settings.appRefreshBudgetSeconds == 30)
    }

    @Test func anUnknownKeyIsRefused() throws {
        let error = try #require(try loadError(#"{"appRefreshBudgetSeconds": 10, "throttleInitalSeconds": 5}"#))
        #expect(error.reason == "unknown key 'throttleInitalSeconds'")
    }

    @Test("invalid values are refused with the key named", arguments: [
        (#"{"appRefreshBudgetSeconds": -1}"#, "appRefreshBudgetSeconds must be a positive number of seconds, not -1.0"),
        (#"{"processingBudgetSeconds": 0}"#, "processingBudgetSeconds must be a positive number of seconds, not 0.0"),
        (#"{"expirationGraceSeconds": -5}"#, "expirationGraceSeconds must be zero or more, not -5.0"),
        (#"{"coalescingWindowSeconds": -0.5}"#, "coalescingWindowSeconds must be zero or more, not -0.5"),
        (#"{"maximumPendingAppRefresh": 0}"#, "maximumPendingAppRefresh must be from 1 to 1000, not 0"),
        (#"{"maximumPendingProcessing": -3}"#, "maximumPendingProcessing must be from 1 to 1000, not -3"),
        (#"{"eventLogMaximumBytes": 100}"#, "eventLogMaximumBytes must be from 4096 to 1099511627776, not 100"),
        (#"{"lowPowerBatteryPercent": 101}"#, "lowPowerBatteryPercent must be from 0 to 100, not 101"),
        (#"{"appRefreshBudgetSeconds": 1e300}"#, "appRefreshBudgetSeconds must be at most 86400, not 1e+300"),
    ])
    func invalidValues(_ text: String, _ reason: String) throws {
        let error = try #require(try loadError(text))
        #expect(error.reason == reason)
    }

    @Test("values of the wrong type or bad JSON are refused", arguments: [
        (#"{"appRefreshBudgetSeconds": "thirty"}"#, "appRefreshBudgetSeconds"),
        (#"{"maximumPendingProcessing": 2.5}"#, ""), // Foundation gives no key for this one
        (#"{"lowPowerBatteryPercent": null, "idleLoadAverage": true}"#, "idleLoadAverage"),
        (#"{"appRefreshBudgetSeconds": 30,"#, "not valid JSON"),
        (#"[1, 2]"#, "expected"),
    ])
    func wrongTypes(_ text: String, _ fragment: String) throws {
        let error = try #require(try loadError(text))
        #expect(fragment.isEmpty || error.reason.contains(fragment), "\(error.reason)")
    }

    @Test func throttleDelayDoublesUpToTheMaximum() {
        let settings = SchedulerSettings()
        #expect(settings.throttleDelay(level: 0) == 0)
        #expect(settings.throttleDelay(level: -1) == 0)
        #expect((1...7).map { settings.throttleDelay(level: $0) } == [60, 120, 240, 480, 960, 1920, 3600])
        #expect(settings.throttleDelay(level: 1000) == 3600)

        var custom = SchedulerSettings()
        custom.throttleInitialSeconds = 10
        custom.throttleMaximumSeconds = 50
        #expect((1...4).map { custom.throttleDelay(level: $0) } == [10, 20, 40, 50])
    }
}
