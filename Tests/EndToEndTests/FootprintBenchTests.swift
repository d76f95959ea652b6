import Foundation
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `bgbench footprint` at its smallest, in the debug build: the three programs' memory and the two
/// start-to-exit rows and the shell loops are printed, and nothing it started is left running.
/// Functional only.
@Suite struct FootprintBenchTests {
    @Test func bgbenchFootprintPrintsEveryRowAndLeavesNothingRunning() throws {
        let env = try TestEnvironment()
        let bgbench = TestEnvironment.binaries + "/bgbench"
        try #require(FileManager.default.isExecutableFile(atPath: bgbench), "bgbench is built beside bgtaskd (swift build --build-tests)")
        let result = try BoundedProcess.run([bgbench, "footprint", "--settle", "0.5", "--runs", "2", "--loop", "3", "--loop-rounds", "1",
                                             "--directory", env.root], timeout: 120)
        let leftovers = ConditionsBenchTests.processes(mentioning: env.root)
        for pid in leftovers { kill(pid, SIGKILL) }

        #expect(result.status == 0, "\(result)")
        let rows = result.stdout.split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
        for name in ["bgtaskd", "bgtop", "htop"] {
            let row = rows.first { $0.first == name }
            #expect(row.map { $0.count >= 4 && Double($0[1]) ?? 0 > 0 } == true, "memory of \(name): \(result)")
            // Resident pages of the program's own code, read from its smaps.
            #expect(row.map { $0.count >= 5 && Double($0[3]) ?? 0 > 0 } == true, "own code of \(name): \(result)")
        }
        #expect(rows.contains { $0.starts(with: ["bgctl", "status"]) && $0[4] == "2" }, "\(result)")
        #expect(rows.contains { $0.starts(with: ["htop", "--version"]) && $0[4] == "2" }, "\(result)")
        // The shell loops were printed; that each command succeeded is the exit status above (a
        // loop stops at its first failing command, and the bench then fails).
        for loop in [["bgctl", "submit"], ["sqlite3", "insert"], ["htop", "--version"]] {
            let row = rows.first { $0.starts(with: loop) }
            #expect(row.map { $0.count >= 5 && Double($0[2]) != nil } == true, "loop \(loop): \(result)")
        }
        for pipe in [["sh", "loop", "|", "bgctl", "batch"], ["sh", "loop", "|", "sqlite3"]] {
            let row = rows.first { $0.starts(with: pipe) }
            #expect(row.map { $0.count >= pipe.count + 3 && Double($0[pipe.count]) != nil } == true, "loop \(pipe): \(result)")
        }
        let folders = try FileManager.default.contentsOfDirectory(atPath: env.root).filter { $0.hasPrefix("bgbench-") }
        #expect(folders.isEmpty, "left behind: \(folders)")
        #expect(leftovers.isEmpty, "still running after bgbench ended: \(leftovers)")
    }
}
