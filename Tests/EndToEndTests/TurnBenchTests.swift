import Foundation
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `bgbench turn` at small sizes, in the debug build: every row is printed with its ratio, and a
/// bad size is one line and a failure. Functional only: the figures are the benchmark's business.
@Suite struct TurnBenchTests {
    @Test func bgbenchTurnPrintsARowPerSizeWithItsRatio() throws {
        let bgbench = TestEnvironment.binaries + "/bgbench"
        try #require(FileManager.default.isExecutableFile(atPath: bgbench), "bgbench is built beside bgtaskd (swift build --build-tests)")
        let env = try TestEnvironment()
        let result = try BoundedProcess.run([bgbench, "turn", "--pending", "10", "300", "--transfers", "1", "20", "--turns", "6",
                                             "--window-pending", "10", "300",
                                             "--daemon-pending", "10", "300", "--daemon-transfers", "1", "20", "--daemon-turns", "4",
                                             "--directory", env.root], timeout: 180)
        let leftovers = ConditionsBenchTests.processes(mentioning: env.root)
        for pid in leftovers { kill(pid, SIGKILL) }
        #expect(result.status == 0, "\(result)")
        let rows = result.stdout.split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
        // Phase 1's rows, 1b's (every dated request within one window), then phase 2's: pending,
        // transfers, ..., the count, the ratio.
        let small = rows.filter { $0.first == "10" }
        let large = rows.filter { $0.first == "300" }
        #expect(small.count == 3 && large.count == 3, "\(result)")
        #expect(result.stdout.contains("1b. The same, every dated request due within one coalescing window"), "\(result)")
        #expect(small.count == 3 && small[1][1] == "1" && small[1][4] == "6" && small[1].last == "1.00x", "\(result)")
        #expect(large.count == 3 && large[1][1] == "20" && large[1][4] == "6" && large[1].last?.hasSuffix("x") == true, "\(result)")
        #expect(small.first?[1] == "1" && small.first?[4] == "6" && small.first?.last == "1.00x", "\(result)")
        #expect(large.first?[1] == "20" && large.first?[4] == "6" && large.first?.last?.hasSuffix("x") == true, "\(result)")
        #expect(small.last?.last == "1.00x" && small.last?.dropLast().last == "4", "\(result)")
        #expect(large.last?[1] == "20" && large.last?.dropLast().last == "4", "\(result)")
        let folders = try FileManager.default.contentsOfDirectory(atPath: env.root).filter { $0.hasPrefix("bgbench-") }
        #expect(folders.isEmpty, "left behind: \(folders)")
        #expect(leftovers.isEmpty, "still running after bgbench ended: \(leftovers)")
    }

    @Test func aSizeOutOfRangeIsOneLineAndAFailure() throws {
        let result = try BoundedProcess.run([TestEnvironment.binaries + "/bgbench", "turn", "--pending", "0"], timeout: 60)
        #expect(result.status != 0)
        #expect(result.stderr.contains("--pending must be from 1 to 1000000"), "\(result)")
    }
}
