import Foundation
import Testing
import Dashboard
import TaskState

/// The CPU monitor's last stop of an app, in the apps panel and the app's detail view.
@Suite("The CPU monitor in the apps panel")
struct CPUMonitorRowTests {
    static let now = Date(timeIntervalSince1970: 1_795_341_600)
    static let app = try! Identifier(validating: "com.example.spinner")

    private func screen(stoppedAgo: TimeInterval?, detail: Bool) -> String {
        var record = AppRecord(id: Self.app)
        record.lastCpuLimitAt = stoppedAgo.map { Self.now.addingTimeInterval(-$0) }
        record.lastCpuLimitReason = stoppedAgo == nil ? nil : "cpuLimit: 97% of a core over 20 s (limit 80%)"
        let manifest = AppManifest(id: Self.app, executable: "/bin/true", permittedIdentifiers: [], backgroundModes: [.fetch])
        let snapshot = DashboardSnapshot(now: Self.now, stateDirectory: "/state", schedulerPID: 1,
                                         apps: [DashboardSnapshot.AppRow(app: Self.app, record: record, manifest: manifest)])
        var state = DashboardState()
        state.focus = .apps
        if detail { state.overlay = .detail }
        return DashboardView.render(snapshot, state: state, size: ScreenSize(width: 160, height: 48), theme: .builtInDefault,
                                    glyphs: .unicode).textLines.joined(separator: "\n")
    }

    @Test func aStopWithinADayIsAProblemOfTheApp() {
        let row = screen(stoppedAgo: 130, detail: false).split(separator: "\n").first { $0.contains("com.example.spinner") }
        #expect(row?.contains("cpuLimit 2m 10s ago") == true, "\(row ?? "")")
        let old = screen(stoppedAgo: 2 * 86_400, detail: false).split(separator: "\n").first { $0.contains("com.example.spinner") }
        #expect(old?.contains("cpuLimit") == false, "a stop two days ago is history, not a problem")
    }

    @Test func theDetailViewSaysWhatWasMeasured() {
        let text = screen(stoppedAgo: 130, detail: true)
        #expect(text.contains("cpu monitor"))
        #expect(text.contains("expired a task 2m 10s ago: cpuLimit: 97% of a core over 20 s (limit 80%)"))
        #expect(!screen(stoppedAgo: nil, detail: true).contains("cpu monitor"))
    }
}
