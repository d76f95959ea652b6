import Foundation
import TaskState
import Testing

/// When a commit replaces `daemon.json`: whenever what it says changes, but its commit time only
/// once a second.
@Suite struct DaemonHeartbeatTests {
    static let second = Date(timeIntervalSince1970: 1_795_000_000)

    static func heartbeat(updatedAt offset: Double, nextWakeAt: Date? = nil, pid: Int32 = 40) -> DaemonHeartbeat {
        DaemonHeartbeat(pid: pid, version: "0.1.0", startedAt: second.addingTimeInterval(-60),
                        updatedAt: second.addingTimeInterval(offset), nextWakeAt: nextWakeAt, configDirectory: "/c")
    }

    @Test func theFirstHeartbeatIsAlwaysWritten() {
        #expect(Self.heartbeat(updatedAt: 0.5).needsWriting(over: nil))
    }

    @Test func commitsWithinTheSameSecondDoNotRewriteIt() {
        let written = Self.heartbeat(updatedAt: 0.0)
        #expect(!Self.heartbeat(updatedAt: 0.0).needsWriting(over: written))
        #expect(!Self.heartbeat(updatedAt: 0.999).needsWriting(over: written))
        #expect(Self.heartbeat(updatedAt: 1.0).needsWriting(over: written))
        // A clock set back is a change of second too.
        #expect(Self.heartbeat(updatedAt: -0.001).needsWriting(over: written))
    }

    @Test func anyOtherChangeIsWrittenAtOnce() {
        let wake = Self.second.addingTimeInterval(30)
        let written = Self.heartbeat(updatedAt: 0.1, nextWakeAt: wake)
        #expect(Self.heartbeat(updatedAt: 0.2, nextWakeAt: wake.addingTimeInterval(0.001)).needsWriting(over: written))
        #expect(Self.heartbeat(updatedAt: 0.2, nextWakeAt: nil).needsWriting(over: written))
        #expect(Self.heartbeat(updatedAt: 0.2, nextWakeAt: wake, pid: 41).needsWriting(over: written))
        var moved = Self.heartbeat(updatedAt: 0.2, nextWakeAt: wake)
        moved.configDirectory = "/d"
        #expect(moved.needsWriting(over: written))
        #expect(!Self.heartbeat(updatedAt: 0.2, nextWakeAt: wake).needsWriting(over: written))
    }
}
