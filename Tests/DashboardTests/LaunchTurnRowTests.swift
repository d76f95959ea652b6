import Foundation
import Testing
import Dashboard
import TaskState

/// How a request held by coalescing across apps, or queued by `maxConcurrentLaunches`, reads in
/// the pending panel and its detail view.
@Suite("Coalescing and the launch limit in the pending panel")
struct LaunchTurnRowTests {
    static let now = Date(timeIntervalSince1970: 1_795_341_600)  // 2026-11-22T10:00:00Z

    @Test func aCoalescingHoldSaysWhenItEnds() {
        var row = DashboardSnapshot.PendingRow(request: UsageWaitTests.request, blockers: [.coalescing])
        row.coalescingEnds = Self.now.addingTimeInterval(12)
        #expect(row.waitingLabels(under: Conditions()) == ["coalescing 10:00:12"])
        row.coalescingEnds = nil
        #expect(row.waitingLabels(under: Conditions()) == ["coalescing"])
    }

    @Test func aQueuedLaunchReadsQueued() {
        let row = DashboardSnapshot.PendingRow(request: UsageWaitTests.request, blockers: [.launchLimit])
        #expect(row.waitingLabels(under: Conditions()) == ["queued"])
    }

    @Test func theDetailViewListsTheHoldOnlyWhileItHolds() {
        var held = DashboardSnapshot.PendingRow(request: UsageWaitTests.request, blockers: [.coalescing])
        held.coalescingEnds = Self.now.addingTimeInterval(12)
        let heldText = detailText(held)
        #expect(heldText.contains("launches by"))
        #expect(heldText.contains("10:00:12"))
        let line = heldText.split(separator: "\n").first { $0.contains("to launch in one wake-up") }
        #expect(line?.contains("waiting") == true, "\(heldText)")

        let free = detailText(DashboardSnapshot.PendingRow(request: UsageWaitTests.request, blockers: [.earliestBeginDate]))
        #expect(!free.contains("coming due"), "a blocker that never held the request is not listed")
        #expect(!free.contains("maxConcurrentLaunches"))
    }

    private func detailText(_ row: DashboardSnapshot.PendingRow) -> String {
        let snapshot = DashboardSnapshot(now: Self.now, stateDirectory: "/state", schedulerPID: 1, pending: [row])
        var state = DashboardState()
        state.focus = .pending
        state.overlay = .detail
        let grid = DashboardView.render(snapshot, state: state, size: ScreenSize(width: 120, height: 60),
                                        theme: .builtInDefault, glyphs: .unicode)
        return grid.textLines.joined(separator: "\n")
    }
}
