import Foundation
import SchedulerCore
import StateFeed
import TaskState
import Testing

/// ``PendingWaits`` asks the policy again only for the requests a change can touch: the keys it
/// answers after a change are those whose wait changed, not every request's.
@Suite struct PendingWaitsTests {
    static let now = Date(timeIntervalSince1970: 1_795_341_600)

    /// 1 000 requests of 100 apps, each held by its date (an hour away and more) and half by the network.
    struct World {
        var requests: [TaskKey: PendingRequest] = [:]
        var records = StateSnapshot()
        let waits = PendingWaits()

        init() throws {
            for index in 0..<1000 {
                let app = try Identifier(validating: "com.example.app\(index / 10)")
                let request = PendingRequest(app: app, identifier: try Identifier(validating: "job\(index % 10)"), kind: .processing,
                                             earliestBeginDate: PendingWaitsTests.now.addingTimeInterval(3600 + Double(index)),
                                             requiresNetworkConnectivity: index % 2 == 0, submittedAt: PendingWaitsTests.now)
                requests[request.key] = request
            }
        }

        func update(changed: Set<TaskKey>?, at now: Date) -> Set<TaskKey> {
            waits.update(records: records, changed: changed, request: { requests[$0] }, allKeys: { Array(requests.keys) },
                         settings: SchedulerSettings(), catalog: ManifestCatalog(), configurationChanged: false, now: now)
        }
    }

    @Test func aChangedRequestIsTheOnlyOneAskedAgain() throws {
        var world = try World()
        #expect(world.update(changed: nil, at: Self.now).count == 1000)
        #expect(world.update(changed: [], at: Self.now).isEmpty, "nothing changed, nothing answered")

        let key = try TaskKey(app: Identifier(validating: "com.example.app3"), identifier: Identifier(validating: "job4"))
        world.requests[key]?.earliestBeginDate = nil
        #expect(world.update(changed: [key], at: Self.now) == [key])
        #expect(world.waits.waits[key]?.blockers.contains(.earliestBeginDate) == false)

        world.requests[key] = nil
        #expect(world.update(changed: [key], at: Self.now) == [key])
        #expect(world.waits.waits[key] == nil)
        #expect(world.waits.waits.count == 999)
    }

    @Test func theClockPassingADateAsksOnlyTheRequestsItHeld() throws {
        let world = try World()
        _ = world.update(changed: nil, at: Self.now)
        // Three dates pass: the requests at +3600, +3601 and +3602 s.
        let later = Self.now.addingTimeInterval(3602)
        let answered = world.update(changed: [], at: later)
        #expect(answered.count == 3)
        for key in answered { #expect(world.waits.waits[key]?.blockers.contains(.earliestBeginDate) == false) }
        #expect(world.waits.waits.values.filter { $0.blockers.contains(.earliestBeginDate) }.count == 997)
    }

    @Test func aConditionChangeAnswersTheRequestsWhoseWaitChanged() throws {
        var world = try World()
        _ = world.update(changed: nil, at: Self.now)
        world.records.conditions = ConditionsRecord(probed: Conditions(network: false), probedAt: Self.now)
        let answered = world.update(changed: [], at: Self.now)
        #expect(answered.count == 500, "the requests that need the network")
        #expect(answered.allSatisfy { world.waits.waits[$0]?.blockers == [.earliestBeginDate, .network, .noManifest] })
    }

    @Test func anAppRecordAsksOnlyThatAppsRequests() throws {
        var world = try World()
        _ = world.update(changed: nil, at: Self.now)
        let app = try Identifier(validating: "com.example.app7")
        world.records.apps = [AppRecord(id: app, enabled: false)]
        let answered = world.update(changed: [], at: Self.now)
        #expect(answered.count == 10)
        #expect(answered.allSatisfy { $0.app == app && world.waits.waits[$0]?.blockers.contains(.appDisabled) == true })
    }
}
