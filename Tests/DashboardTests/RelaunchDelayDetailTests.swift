import Foundation
import Testing
import Dashboard
import TaskState

/// A transfer held by the relaunch delay: its detail view says the blocker and when it ends.
@Suite("The relaunch delay in a transfer's detail")
struct RelaunchDelayDetailTests {
    static let now = Date(timeIntervalSince1970: 1_795_341_600)

    private func detail(delayed: Bool) throws -> String {
        let app = try Identifier(validating: "com.example.news")
        var record = TransferRecord(app: app, identifier: try Identifier(validating: "feed"), direction: .download,
                                    url: "https://news.example.com/feed.json", state: .waiting,
                                    createdAt: Self.now, updatedAt: Self.now, destination: "feed.json")
        record.relaunchDelayUntil = delayed ? Self.now.addingTimeInterval(120) : nil
        var snapshot = DashboardSnapshot(now: Self.now, stateDirectory: "/state", schedulerPID: 1, transfers: [record])
        if delayed { snapshot.transferBlockers = [record.key: [.relaunchDelay]] }
        var state = DashboardState()
        state.focus = .transfers
        state.overlay = .detail
        return DashboardView.render(snapshot, state: state, size: ScreenSize(width: 160, height: 48), theme: .builtInDefault,
                                    glyphs: .unicode).textLines.joined(separator: "\n")
    }

    @Test func theDetailSaysTheBlockerAndItsEnd() throws {
        let text = try detail(delayed: true)
        let waiting = text.split(separator: "\n").first { $0.contains("waiting for") }
        #expect(waiting?.contains("relaunchDelay") == true, "\(waiting ?? "")")
        let line = text.split(separator: "\n").first { $0.contains("relaunch delay") }
        #expect(line?.contains("until") == true, "\(text)")
        #expect(try !detail(delayed: false).contains("relaunch delay"))
    }
}
