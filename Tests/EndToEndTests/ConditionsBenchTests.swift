import Foundation
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `bgbench conditions` at the smallest size, in the debug build: it starts its bus, the mocks,
/// dbus-monitor and bgtaskd, prints both rows, and ends everything it started. Functional only:
/// the figures are the benchmark's business, not a test's.
@Suite struct ConditionsBenchTests {
    @Test func bgbenchConditionsPrintsThePeerAndTheSchedulerAndLeavesNothingRunning() throws {
        let env = try TestEnvironment()
        let bgbench = TestEnvironment.binaries + "/bgbench"
        try #require(FileManager.default.isExecutableFile(atPath: bgbench), "bgbench is built beside bgtaskd (swift build --build-tests)")
        let result = try BoundedProcess.run([bgbench, "conditions", "--changes", "2", "--directory", env.root], timeout: 180)
        let leftovers = Self.processes(mentioning: env.root)
        for pid in leftovers { kill(pid, SIGKILL) }

        #expect(result.status == 0, "\(result)")
        let lines = result.stdout.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        for name in ["peer: dbus-monitor prints the PropertiesChanged", "bgtaskd: conditions.json shows the new value",
                     "bgtaskd's own share (conditions.json - dbus-monitor)"] {
            let row = lines.first { $0.hasPrefix(name) }
            // The last column is the number of changes measured.
            #expect(row?.split(separator: " ").last == "2", "row \(name): \(result)")
        }
        #expect(lines.contains { $0.hasPrefix("ratio, bgtaskd p50 ÷ dbus-monitor p50: ") }, "\(result)")
        // Its folder is gone, and with it every process that ran there: the bus, the mocks,
        // dbus-monitor and bgtaskd all name it in their arguments or environment.
        let folders = try FileManager.default.contentsOfDirectory(atPath: env.root).filter { $0.hasPrefix("bgbench-") }
        #expect(folders.isEmpty, "left behind: \(folders)")
        #expect(leftovers.isEmpty, "still running after bgbench ended: \(leftovers)")
    }

    @Test func aMissingToolIsOneLineAndAFailure() throws {
        let env = try TestEnvironment()
        // A PATH whose only folder holds dbus-daemon and dbus-monitor, not busctl.
        let tools = "\(env.root)/tools"
        try FileManager.default.createDirectory(atPath: tools, withIntermediateDirectories: true)
        for program in ["dbus-daemon", "dbus-monitor"] {
            try FileManager.default.createSymbolicLink(atPath: "\(tools)/\(program)", withDestinationPath: "/usr/bin/\(program)")
        }
        let result = try env.run(TestEnvironment.binaries + "/bgbench", ["conditions", "--changes", "1", "--directory", env.root],
                                 environment: ["PATH": tools])
        #expect(result.status != 0, "\(result)")
        #expect(result.stderr == "bgbench: bgbench conditions needs busctl (Debian: systemd); it is not on PATH\n", "\(result)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: env.root).filter { $0.hasPrefix("bgbench-") }.isEmpty)
    }

    /// Processes other than this one whose command line or environment contains `text`.
    static func processes(mentioning text: String) -> [pid_t] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { entry -> pid_t? in
            guard let pid = pid_t(entry), pid != getpid(), processIsAlive(pid) else { return nil }
            let found = ["cmdline", "environ"].contains { file in
                guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/\(file)") else { return false }
                return String(decoding: data, as: UTF8.self).contains(text)
            }
            return found ? pid : nil
        }
    }
}
