import Foundation
import SchedulerCore
import TaskState

/// How long reading a large state directory takes, the way `bgtop` and `bgctl list` read it.
enum StateLoadTiming {
    struct Result {
        var snapshot: Double
        var cat: Double
    }

    static func measure(requests: Int, root: String) throws -> Result {
        let paths = StatePaths(root: root)
        try StateDirectoryCheck.prepare(root)
        for directory in paths.directories { try StateFiles.ensureDirectory(directory) }
        let now = Date()
        for index in 0..<requests {
            let app = try Identifier(validating: "com.example.app\(index / 10)")
            let request = PendingRequest(app: app, identifier: try Identifier(validating: "\(app).job\(index % 10)"),
                                         kind: .processing, earliestBeginDate: now.addingTimeInterval(3600),
                                         submittedAt: now)
            try StateFiles.ensureDirectory("\(paths.requests)/\(app)")
            try StateFiles.write(try JSONFormat.encode(request), to: paths.request(request.key), durable: false)
        }
        var snapshotTimes: [Double] = []
        var catTimes: [Double] = []
        for _ in 0..<5 {
            let begin = DispatchTime.now().uptimeNanoseconds
            let snapshot = StateSnapshot.load(paths)
            let state = SchedulerState(settings: SchedulerSettings(), catalog: ManifestCatalog(), snapshot: snapshot,
                                       conditions: ConditionsRecord(probed: Conditions(), probedAt: now))
            let blocked = snapshot.requests.reduce(0) { $0 + state.blockers(for: $1, at: now).count }
            snapshotTimes.append(Double(DispatchTime.now().uptimeNanoseconds - begin) / 1e9)
            precondition(snapshot.requests.count == requests && blocked >= requests)

            // The floor: the same files opened and read, with no decoding and no policy.
            let rawBegin = DispatchTime.now().uptimeNanoseconds
            var bytes = 0
            for app in try StateFiles.names(in: paths.requests) {
                for name in try StateFiles.names(in: "\(paths.requests)/\(app)") {
                    bytes += try StateFiles.read("\(paths.requests)/\(app)/\(name)").count
                }
            }
            catTimes.append(Double(DispatchTime.now().uptimeNanoseconds - rawBegin) / 1e9)
            precondition(bytes > 0)
        }
        return Result(snapshot: Samples(snapshotTimes).median, cat: Samples(catTimes).median)
    }
}
