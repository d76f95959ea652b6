import Foundation
import TestSupport
import Testing

/// `bgbench turn` at small sizes, in the debug build: every row is printed with its ratio, and a
/// bad size is one line and a failure. Functional only: the figures are the benchmark's business.
@Suite struct TurnBenchTests {
    @Test func bgbenchTurnPrintsARowPerSizeWithItsRatio() throws {
        let bgbench = TestEnvironment.binaries + "/bgbench"
        try #require(FileManager.default.isExecutableFile(atPath: bgbench), "bgbench is built beside bgtaskd (swift build --build-tests)")
        let result = try BoundedProcess.run([bgbench, "turn", "--pending", "10", "300", "--transfers", "1", "20", "--turns", "6"], timeout: 120)
        #expect(result.status == 0, "\(result)")
        let rows = result.stdout.split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
        let first = rows.first { $0.first == "10" }
        let second = rows.first { $0.first == "300" }
        #expect(first?[1] == "1" && first?[4] == "6" && first?.last == "1.00x", "\(result)")
        #expect(second?[1] == "20" && second?[4] == "6" && second?.last?.hasSuffix("x") == true, "\(result)")
    }

    @Test func aSizeOutOfRangeIsOneLineAndAFailure() throws {
        let result = try BoundedProcess.run([TestEnvironment.binaries + "/bgbench", "turn", "--pending", "0"], timeout: 60)
        #expect(result.status != 0)
        #expect(result.stderr.contains("--pending must be from 1 to 1000000"), "\(result)")
    }
}
