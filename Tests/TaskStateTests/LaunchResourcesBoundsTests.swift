import Foundation
import TaskState
import Testing

/// Review of issue 17, item 1: `resources.json` is input. Figures out of their documented range
/// make it unreadable with the field named; pids past ``LaunchResources/maximumPids`` are dropped.
@Suite struct LaunchResourcesBoundsTests {
    /// A report of one launch with `fields` in place of (or added to) a good entry's.
    private func report(_ fields: [String: String]) -> Data {
        var entry: [String: String] = [
            "launchID": #""com.example.leaky-1795341600000""#, "app": #""com.example.leaky""#, "pids": "[48213, 48220]",
            "cpuSeconds": "0.398681", "cpuPercent": "97.5", "memoryBytes": "27844608", "peakMemoryBytes": "27844608",
            "source": #""cgroup""#, "phase": #""running""#, "sampledAt": #""2026-11-22T10:00:03.622Z""#,
        ]
        entry.merge(fields) { $1 }
        let object = entry.sorted { $0.key < $1.key }.map { "\"\($0.key)\":\($0.value)" }.joined(separator: ",")
        return Data(#"{"version":1,"sampledAt":"2026-11-22T10:00:03.622Z","launches":[{\#(object)}]}"#.utf8)
    }

    @Test func aGoodReportReadsBackAsWritten() throws {
        let decoded = try JSONFormat.decode(ResourceReport.self, from: report([:]))
        let launch = try #require(decoded.launches.first)
        #expect(launch.pids == [48213, 48220])
        #expect(launch.cpuSeconds == 0.398681 && launch.cpuPercent == 97.5 && launch.memoryBytes == 27_844_608)
        #expect(try JSONFormat.decode(ResourceReport.self, from: try JSONFormat.encode(decoded)) == decoded)
    }

    @Test(arguments: [
        ("cpuSeconds", "9.3e18"), ("cpuSeconds", "-1"), ("cpuSeconds", "1000000000001"),
        ("cpuSeconds", #""NaN""#), ("cpuPercent", "1e300"), ("cpuPercent", "-0.5"), ("cpuPercent", "100001"),
        ("memoryBytes", "-1"), ("memoryBytes", "1125899906842625"), ("peakMemoryBytes", "9223372036854775807"),
        ("pids", "[0]"), ("pids", "[-7]"),
    ])
    func aFigureOutOfItsRangeMakesTheFileUnreadableNamingTheField(_ field: String, _ value: String) {
        #expect {
            try JSONFormat.decode(ResourceReport.self, from: report([field: value]))
        } throws: { error in
            "\(error)".contains(field)
        }
    }

    /// Numbers no `Double` or pid holds are refused by the JSON reader itself, before any field.
    @Test(arguments: [("cpuSeconds", "1e400"), ("pids", "[12, 5000000000]")])
    func aNumberBeyondItsTypeMakesTheFileUnreadable(_ field: String, _ value: String) {
        #expect(throws: StateError.self) { try JSONFormat.decode(ResourceReport.self, from: report([field: value])) }
    }

    @Test func theEndsOfEachRangeAreAccepted() throws {
        let decoded = try JSONFormat.decode(ResourceReport.self, from: report([
            "cpuSeconds": "1000000000000", "cpuPercent": "100000", "memoryBytes": "0", "peakMemoryBytes": "1125899906842624",
            "pids": "[1, 4194304]",
        ]))
        let launch = try #require(decoded.launches.first)
        #expect(launch.cpuSeconds == 1e12 && launch.cpuPercent == 1e5 && launch.peakMemoryBytes == 1 << 50)
        #expect(launch.pids == [1, 4_194_304])
    }

    @Test func tenThousandPidsKeepTheFirstSixtyFour() throws {
        let pids = "[" + (1...10_000).map(String.init).joined(separator: ",") + "]"
        let decoded = try JSONFormat.decode(ResourceReport.self, from: report(["pids": pids]))
        #expect(decoded.launches.first?.pids == Array(1...Int32(LaunchResources.maximumPids)))
    }

    @Test func aSnapshotListsAHostileResourcesFileAsUnreadableAndShowsNoSample() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("resources-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        let paths = StatePaths(root: root)
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try report(["cpuSeconds": "9.3e18"]).write(to: URL(fileURLWithPath: paths.resources))
        let snapshot = StateSnapshot.load(paths)
        #expect(snapshot.resources == nil)
        let unreadable = try #require(snapshot.unreadable.first { $0.path == paths.resources }, "\(snapshot.unreadable)")
        #expect(unreadable.reason.contains("cpuSeconds") && unreadable.reason.contains("1000000000000"), "\(unreadable.reason)")
    }
}
