import Foundation
import Testing
import Dashboard
import TaskState

/// How a request held by usage prediction reads in the pending panel.
@Suite("Usage prediction in the pending panel")
struct UsageWaitTests {
    static let request = PendingRequest(app: try! Identifier(validating: "com.example.reader"),
                                        identifier: try! Identifier(validating: "com.example.reader.refresh"),
                                        kind: .appRefresh, submittedAt: Date(timeIntervalSince1970: 1_795_341_600))

    @Test func aPredictedUseSaysWhenTheUseIsExpectedAndWhenTheRefreshGoes() {
        let use = Date(timeIntervalSince1970: 1_795_335_000)  // 2026-11-22T08:10:00Z
        let row = DashboardSnapshot.PendingRow(request: Self.request, blockers: [.predictedUse],
                                               plannedLaunch: use.addingTimeInterval(-600), predictedUse: use)
        #expect(row.waitingLabels(under: Conditions()) == ["use ~08:10, refresh 08:00"])
    }

    @Test func aRarelyUsedAppSaysWhenItsDailyRefreshGoes() {
        let row = DashboardSnapshot.PendingRow(request: Self.request, blockers: [.throttled, .rarelyUsed],
                                               plannedLaunch: Date(timeIntervalSince1970: 1_795_335_000))
        #expect(row.waitingLabels(under: Conditions()) == ["throttled", "rarely used: refresh 08:10"])
        #expect(DashboardSnapshot.PendingRow(request: Self.request, blockers: [.predictedUse]).waitingLabels(under: Conditions()) == ["predicted use"])
    }
}
