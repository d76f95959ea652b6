import Foundation
import Testing
@testable import TaskState

/// `KernelPoll` answers by name: with real pipes, only the written one is ready.
@Suite struct KernelPollTests {
    private enum Source: Hashable { case first, second, gone }

    @Test func theReadySourcesAreNamedAndATimeoutNamesNone() throws {
        let first = try WakePipe(), second = try WakePipe(), gone = try WakePipe()
        var poll = KernelPoll<Source>()
        poll.watch(.first, first.readEnd)
        poll.watch(.second, second.readEnd)
        poll.watch(.gone, gone.readEnd)
        poll.remove(.gone)
        #expect(poll.wait(milliseconds: 0) == [], "nothing written: a timeout")

        second.wake()
        gone.wake()
        #expect(poll.wait(milliseconds: 1000) == [.second], "a removed source is not watched")
        first.wake()
        #expect(poll.wait(milliseconds: 1000) == [.first, .second], "still unread, still ready")
        second.drain()
        poll.watch(.first, second.readEnd)
        #expect(poll.wait(milliseconds: 0) == [], "watching another descriptor replaces the old one")
    }
}
