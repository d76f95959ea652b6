import Foundation
import Testing
import TaskState

@Suite("State snapshot")
struct StateSnapshotTests {
    private let app = ident("com.example.news")

    private func write<T: Encodable>(_ value: T, to path: String) throws {
        try FileManager.default.createDirectory(atPath: StateFiles.directoryName(of: path), withIntermediateDirectories: true)
        try StateFiles.write(try JSONFormat.encode(value), to: path, durable: false)
    }

    @Test func anEmptyDirectoryIsAnEmptySnapshot() throws {
        try withTemporaryDirectory { dir in
            let snapshot = StateSnapshot.load(StatePaths(root: dir))
            #expect(snapshot.requests.isEmpty && snapshot.tasks.isEmpty && snapshot.apps.isEmpty && snapshot.transfers.isEmpty)
            #expect(snapshot.conditions == nil && snapshot.heartbeat == nil)
            #expect(snapshot.unreadable.isEmpty)
        }
    }

    @Test func goodFilesLoadAndGarbageIsListedAsUnreadable() throws {
        try withTemporaryDirectory { dir in
            let paths = StatePaths(root: dir)
            let request = PendingRequest(app: app, identifier: ident("refresh"), kind: .appRefresh,
                                         earliestBeginDate: referenceDate.addingTimeInterval(60), submittedAt: referenceDate,
                                         commandID: "c1")
            let task = LaunchedTask(app: app, identifier: ident("db.cleanup"), kind: .processing, launchReason: "processing",
                                    simulated: false, pid: 100, processGroup: 100, processStartTicks: 42, launchID: "l1",
                                    startedAt: referenceDate, deadline: referenceDate.addingTimeInterval(600))
            let record = AppRecord(id: app, enabled: false, throttleLevel: 2, throttledUntil: referenceDate, launchCount: 3)
            let transfer = TransferRecord(app: app, identifier: ident("download.1"), direction: .download,
                                          url: "http://127.0.0.1/x", state: .waiting, createdAt: referenceDate, updatedAt: referenceDate)
            let conditions = ConditionsRecord(probed: Conditions(externalPower: false), overrides: ConditionOverrides(network: false),
                                              batteryPercent: 50, probedAt: referenceDate)
            let heartbeat = DaemonHeartbeat(pid: 9, version: "test", startedAt: referenceDate, updatedAt: referenceDate,
                                            nextWakeAt: nil, configDirectory: "/c")
            try write(request, to: paths.request(request.key))
            try write(task, to: paths.task(task.key))
            try write(record, to: paths.app(app))
            try write(transfer, to: paths.transfer(transfer.key))
            try write(conditions, to: paths.conditions)
            try write(heartbeat, to: paths.heartbeat)

            // Garbage of every sort.
            let garbage = "\(paths.requests)/\(app)/garbage.json"
            try writeText("{{{", to: garbage)
            let misplaced = "\(paths.requests)/\(app)/other.json"
            try write(request, to: misplaced) // contents name .../refresh, file says other
            let wrongApp = "\(paths.tasks)/com.example.mail/db.cleanup.json"
            try write(task, to: wrongApp) // a news task filed under mail
            let badFolder = "\(paths.requests)/bad folder"
            try FileManager.default.createDirectory(atPath: badFolder, withIntermediateDirectories: true)
            let badApp = "\(paths.apps)/com.example.mail.json"
            try write(record, to: badApp) // names com.example.news
            try writeText("[]", to: "\(paths.apps)/empty.json")
            try StateFiles.write(Data("{}".utf8), to: "\(paths.requests)/\(app)/.in-progress.tmp", durable: false)

            let snapshot = StateSnapshot.load(paths)
            #expect(snapshot.requests == [request])
            #expect(snapshot.tasks == [task])
            #expect(snapshot.apps == [record])
            #expect(snapshot.transfers == [transfer])
            #expect(snapshot.conditions == conditions)
            #expect(snapshot.conditions?.effective == Conditions(externalPower: false, network: false))
            #expect(snapshot.heartbeat == heartbeat)

            let unreadable = Dictionary(uniqueKeysWithValues: snapshot.unreadable.map { ($0.path, $0.reason) })
            #expect(Set(unreadable.keys) == [garbage, misplaced, wrongApp, badFolder, badApp, "\(paths.apps)/empty.json"],
                    "\(unreadable)")
            #expect(unreadable[garbage]?.contains("not valid JSON") == true)
            #expect(unreadable[misplaced] == "contents name com.example.news/refresh, which belongs elsewhere")
            #expect(unreadable[wrongApp] == "contents name com.example.news/db.cleanup, which belongs elsewhere")
            #expect(unreadable[badFolder] == "'bad folder' is not a valid app identifier")
            #expect(unreadable[badApp] == "contents name com.example.news, which belongs elsewhere")
        }
    }

    @Test func anUnreadableConditionsFileIsListed() throws {
        try withTemporaryDirectory { dir in
            let paths = StatePaths(root: dir)
            try writeText("{\"probed\": 1}", to: paths.conditions)
            let snapshot = StateSnapshot.load(paths)
            #expect(snapshot.conditions == nil)
            #expect(snapshot.unreadable.map(\.path) == [paths.conditions])
        }
    }

    @Test func recordHelpers() {
        let request = PendingRequest(app: app, identifier: ident("r"), kind: .appRefresh,
                                     earliestBeginDate: referenceDate.addingTimeInterval(-10), submittedAt: referenceDate)
        #expect(request.readyDate == referenceDate, "an earliest date in the past is ready at submission")
        var later = request
        later.earliestBeginDate = referenceDate.addingTimeInterval(30)
        #expect(later.readyDate == referenceDate.addingTimeInterval(30))
        later.earliestBeginDate = nil
        #expect(later.readyDate == referenceDate)

        let task = LaunchedTask(app: app, identifier: ident("r"), kind: .appRefresh, launchReason: "appRefresh", simulated: false,
                                pid: 1, processGroup: nil, processStartTicks: nil, launchID: "l",
                                startedAt: referenceDate, deadline: referenceDate.addingTimeInterval(30))
        #expect(task.remaining(at: referenceDate.addingTimeInterval(10)) == 20)
        #expect(task.remaining(at: referenceDate.addingTimeInterval(40)) == 0)

        let record = AppRecord(id: app, throttledUntil: referenceDate)
        #expect(record.isThrottled(at: referenceDate.addingTimeInterval(-1)))
        #expect(!record.isThrottled(at: referenceDate))
        #expect(!AppRecord(id: app).isThrottled(at: referenceDate))
    }

    @Test func conditionOverridesApplyAndMerge() {
        let probed = Conditions(externalPower: true, network: true, idle: false, lowPower: false)
        let overrides = ConditionOverrides(network: false, lowPower: true)
        #expect(overrides.applied(to: probed) == Conditions(externalPower: true, network: false, idle: false, lowPower: true))
        #expect(ConditionOverrides().isEmpty && !overrides.isEmpty)
        let merged = overrides.merging(ConditionOverrides(network: true, idle: true))
        #expect(merged == ConditionOverrides(network: true, idle: true, lowPower: true))
        let record = ConditionsRecord(probed: probed, overrides: overrides, probedAt: referenceDate)
        #expect(record.isSimulated(.network) && record.isSimulated(.lowpower) && !record.isSimulated(.power))
    }
}
