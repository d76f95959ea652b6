import Dashboard
import Foundation
import Testing
import TaskState

private let k = Key.character
private let id = Fixtures.id

@Suite("Key handling: transfers")
struct TransferKeyTests {
    private func harness(_ state: TransferRecord.State, readOnly: Bool = false) -> KeyHarness {
        let record = Fixtures.transfer("com.example.podcasts", "episode-412", .download, "https://cdn.example.com/e.mp3",
                                       state, done: 1_000, of: 9_000)
        var h = KeyHarness(Fixtures.snapshot(transfers: [record]), state: DashboardState(readOnly: readOnly))
        h.press(k("3"))
        return h
    }

    @Test(arguments: [TransferRecord.State.running, .waiting])
    func pPausesAnActiveTransfer(_ state: TransferRecord.State) {
        var h = harness(state)
        #expect(h.press(k("p")) == [.send(.transferPause(app: id("com.example.podcasts"), identifier: id("episode-412")),
                                          summary: "pause episode-412")])
    }

    @Test func pResumesAPausedTransfer() {
        var h = harness(.paused)
        #expect(h.press(k("p")) == [.send(.transferResume(app: id("com.example.podcasts"), identifier: id("episode-412")),
                                          summary: "resume episode-412")])
    }

    @Test(arguments: [TransferRecord.State.completed, .failed, .cancelled])
    func finishedTransfersCannotBePausedOrCancelled(_ state: TransferRecord.State) {
        var h = harness(state)
        #expect(h.press(k("p")).isEmpty)
        #expect(h.state.status?.isError == true)
        #expect(h.press(k("c")).isEmpty)
        #expect(h.state.overlay == .none)
        #expect(h.state.status?.text == "episode-412 is already \(state.rawValue)")
    }

    @Test func cAsksFirstThenCancelsTheTransfer() {
        var h = harness(.running)
        #expect(h.press(k("c")).isEmpty)
        #expect(h.state.overlay == .confirmCancelTransfer(app: id("com.example.podcasts"), identifier: id("episode-412")))
        #expect(h.press(k("y")) == [.send(.transferCancel(app: id("com.example.podcasts"), identifier: id("episode-412")),
                                          summary: "cancel episode-412")])
        h.press(k("c"))
        #expect(h.press(k("n")).isEmpty)
        #expect(h.state.status?.text.contains("abandoned") == true)
    }

    @Test func transferActionsAreRefusedInReadOnlyMode() {
        var h = harness(.running, readOnly: true)
        #expect(h.press(k("p")).isEmpty)
        #expect(h.press(k("c")).isEmpty)
        #expect(h.state.status?.text.hasPrefix("read-only") == true)
    }

    @Test func pOutsideTheTransfersPanelSaysWhereItWorks() {
        var h = harness(.running)
        h.press(k("1"))
        #expect(h.press(k("p")).isEmpty)
        #expect(h.state.status?.text == "pause or resume works on transfers: press 3 to focus them")
    }
}
