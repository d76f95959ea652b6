import Dashboard
import Foundation
import Testing
import TaskState

/// The conditions menu says where each measurement came from, when the scheduler recorded it.
@Suite("The conditions menu: sources")
struct ConditionSourceTests {
    private func menuLines(_ conditions: ConditionsRecord) -> [String] {
        let snapshot = Fixtures.snapshot(conditions: conditions)
        let state = GoldenCase.pressing([.character("C")], on: snapshot)
        let grid = DashboardView.render(snapshot, state: state, size: ScreenSize(width: 80, height: 24),
                                        theme: .builtInDefault, glyphs: .unicode)
        return grid.textLines.map { String($0) }
    }

    @Test func eachMeasurementNamesItsSource() throws {
        var record = Fixtures.busyConditions
        record.sources = ["power": "upower", "network": "networkmanager", "idle": "files", "lowpower": "power-profiles-daemon+upower"]
        let lines = menuLines(record)
        let power = try #require(lines.first { $0.contains("battery") && $0.contains("from ") })
        #expect(power.contains("from upower"))
        #expect(lines.contains { $0.contains("from networkmanager") })
        #expect(lines.contains { $0.contains("from files") })
        #expect(lines.contains { $0.contains("from power-profiles-daemon") })
    }

    @Test func aRecordWithoutSourcesShowsNone() {
        #expect(!menuLines(Fixtures.busyConditions).contains { $0.contains("from ") })
    }
}
