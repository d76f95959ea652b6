@testable import Dashboard
import Foundation
import TaskState
import Testing

/// Review of issue 17, item 1: figures from `resources.json` or the ssh feed that no decoder
/// should let through still format without trapping, and within the column's cells.
@Suite struct ResourceTextBoundsTests {
    @Test(arguments: [9.3e18, 1e300, Double.greatestFiniteMagnitude, 1e12 + 1])
    func cpuTimeBeyondAnyIntIsClampedNotATrap(_ seconds: Double) {
        // 10^12 s, the most a file may hold, in whole minutes and seconds.
        #expect(ResourceText.cpuTime(seconds) == "16666666666 min 40 s")
    }

    @Test func cpuTimeThatIsNotANumberOrNegativeStaysReadable() {
        #expect(ResourceText.cpuTime(.nan) == "-")
        #expect(ResourceText.cpuTime(.infinity) == "-")
        #expect(ResourceText.cpuTime(-.infinity) == "-")
        #expect(ResourceText.cpuTime(-5) == "0.00 s")
        #expect(ResourceText.cpuTime(125.5) == "2 min 5 s")
    }

    @Test func percentAndMemoryAtTheirExtremesFitTheirColumns() {
        #expect(ResourceText.percent(1e300) == "100000")
        #expect(ResourceText.percent(-1) == "0.0")
        #expect(ResourceText.percent(.nan) == "-")
        #expect(ResourceText.memory(.max).count <= 5, "\(ResourceText.memory(.max))")
        #expect(ResourceText.memory(.min) == "0K")
        #expect(ResourceText.memory(1023) == "0K")
    }
}
