import Foundation
import Testing
import Dashboard
import TaskState

/// `willBeginDelayedRequest` in a transfer's detail: that the app is asked, until when, and how
/// the question ended (the change, the cancel and the timeout).
@Suite("The question before a delayed begin in a transfer's detail")
struct DelayedRequestDetailTests {
    static let now = Date(timeIntervalSince1970: 1_795_341_600)

    private func detail(_ change: (inout TransferRecord) -> Void) throws -> [String] {
        let app = try Identifier(validating: "com.example.news")
        var record = TransferRecord(app: app, identifier: try Identifier(validating: "feed"), direction: .download,
                                    url: "https://news.example.com/feed.json", state: .waiting,
                                    createdAt: Self.now, updatedAt: Self.now, destination: "feed.json")
        record.asksBeforeDelayedBegin = true
        record.earliestBeginDate = Self.now
        change(&record)
        var snapshot = DashboardSnapshot(now: Self.now, stateDirectory: "/state", schedulerPID: 1, transfers: [record])
        if record.delayedRequestAskedAt != nil && record.delayedRequestOutcome == nil {
            snapshot.transferBlockers = [record.key: [.awaitingAnswer]]
        }
        var state = DashboardState()
        state.focus = .transfers
        state.overlay = .detail
        return DashboardView.render(snapshot, state: state, size: ScreenSize(width: 160, height: 48), theme: .builtInDefault,
                                    glyphs: .unicode).textLines
    }

    private func line(_ lines: [String], _ label: String) -> String? {
        lines.first { $0.contains(label) }?.trimmingCharacters(in: .whitespaces)
    }

    @Test func beforeTheDateItSaysTheAppWillBeAsked() throws {
        let lines = try detail { _ in }
        #expect(line(lines, "asks app")?.contains("before it begins") == true, "\(lines)")
        #expect(line(lines, "asked app") == nil)
    }

    @Test func whileAskedItSaysUntilWhenAndTheBlocker() throws {
        let lines = try detail { record in
            record.delayedRequestAskedAt = Self.now
            record.delayedRequestAnswerBy = Self.now.addingTimeInterval(30)
        }
        #expect(line(lines, "waiting for")?.contains("awaitingAnswer") == true, "\(lines)")
        #expect(line(lines, "asked app") != nil)
        #expect(line(lines, "answer")?.contains("waiting until") == true, "\(lines)")
    }

    @Test(arguments: [(DelayedRequestOutcome.changed, "changed the request"), (.cancelled, "cancelled it"),
                      (.timedOut, "none in time: began as made"), (.continued, "begin as made")])
    func afterwardsItSaysHowItEnded(outcome: DelayedRequestOutcome, text: String) throws {
        let lines = try detail { record in
            record.delayedRequestAskedAt = Self.now
            record.delayedRequestAnswerBy = Self.now.addingTimeInterval(30)
            record.delayedRequestOutcome = outcome
        }
        #expect(line(lines, "answer")?.contains(text) == true, "\(lines)")
    }
}
