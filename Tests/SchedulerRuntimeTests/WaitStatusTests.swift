import Foundation
@testable import SchedulerRuntime
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `waitpid` statuses of real children, as the `exited` events word them.
@Suite struct WaitStatusTests {
    private func status(ofRunning arguments: [String], killWith signal: Int32? = nil) throws -> WaitStatus {
        let pid = try Spawn.start("/bin/bash", arguments, environment: ProcessInfo.processInfo.environment,
                                  stdout: "/dev/null", stderr: "/dev/null")
        if let signal { kill(pid, signal) }
        var raw: Int32 = 0
        while waitpid(pid, &raw, 0) < 0 && errno == EINTR {}
        return WaitStatus(raw)
    }

    @Test func anExitCodeAndAKillingSignalAreToldApart() throws {
        let exited = try status(ofRunning: ["-c", "exit 3"])
        #expect(exited == .exited(code: 3) && exited.signal == nil)
        #expect(exited.description == "exited with status 3")
        let killed = try status(ofRunning: ["-c", "sleep 30"], killWith: SIGKILL)
        #expect(killed == .killed(signal: SIGKILL) && killed.signal == SIGKILL)
        #expect(killed.description == "was killed by signal 9")
        #expect(WaitStatus.unknown.description == "exited")
    }
}
