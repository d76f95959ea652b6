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
        #expect(world.waits.waits[key]?.ownBlockers.contains(.earliestBeginDate) == false)

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
        for key in answered { #expect(world.waits.waits[key]?.ownBlockers.contains(.earliestBeginDate) == false) }
        #expect(world.waits.waits.values.filter { $0.ownBlockers.contains(.earliestBeginDate) }.count == 997)
    }

    /// A wait keeps the conditions out of its own blockers: a change of conditions answers no
    /// request held by something of its own, and each wait, joined with the new conditions, reads
    /// as the policy says.
    @Test func aConditionChangeAnswersNoHeldRequestAndTheJoinedWaitsFollowIt() throws {
        var world = try World()
        _ = world.update(changed: nil, at: Self.now)
        let offline = Conditions(network: false)
        world.records.conditions = ConditionsRecord(probed: offline, probedAt: Self.now)
        #expect(world.update(changed: [], at: Self.now).isEmpty)
        let held = world.waits.waits.values.filter { $0.blockers(under: offline) == [.earliestBeginDate, .network, .noManifest] }
        #expect(held.count == 500, "the requests that need the network")
        #expect(world.waits.waits.values.filter { $0.blockers(under: offline) == [.earliestBeginDate, .noManifest] }.count == 500)
    }

    /// Requests held by nothing of their own go to the launch turn when their group's conditions
    /// let them through, and come back to their own (no) blockers when the conditions hold them.
    @Test func aConditionChangeOpensAndClosesAGroupToTheLaunchTurn() throws {
        var world = try World()
        // Six requests of six apps made ready (one launch serves all of an app's); three need the network.
        let ready = try (0..<6).map { TaskKey(app: try Identifier(validating: "com.example.app\($0)"),
                                              identifier: try Identifier(validating: "job\($0 % 2)")) }
        for key in ready { world.requests[key]?.earliestBeginDate = nil }
        var catalog = ManifestCatalog()
        for key in ready {
            catalog.manifests[key.app] = AppManifest(id: key.app, executable: "/bin/true", permittedIdentifiers: [key.identifier],
                                                     backgroundModes: [.processing])
        }
        var settings = SchedulerSettings()
        settings.maxConcurrentLaunches = 1
        func update(changed: Set<TaskKey>?) -> Set<TaskKey> {
            world.waits.update(records: world.records, changed: changed, request: { world.requests[$0] },
                               allKeys: { Array(world.requests.keys) }, settings: settings, catalog: catalog,
                               configurationChanged: false, now: Self.now)
        }
        _ = update(changed: nil)
        let networked = ready.filter { world.requests[$0]?.requiresNetworkConnectivity == true }
        #expect(networked.count == 3)
        let queued = { ready.filter { world.waits.waits[$0]?.ownBlockers == [.launchLimit] } }
        #expect(queued().count == ready.count - 1, "one launches, the others wait for the launch limit")

        world.records.conditions = ConditionsRecord(probed: Conditions(network: false), probedAt: Self.now)
        let answered = update(changed: [])
        for key in networked {
            #expect(world.waits.waits[key]?.blockers(under: Conditions(network: false)) == [.network], "\(key) waits for the network")
        }
        #expect(queued().count == ready.count - networked.count - 1, "the launch turn went over the others only")
        #expect(!answered.isEmpty && answered.isSubset(of: Set(ready)), "only ready requests answered: \(answered)")

        world.records.conditions = ConditionsRecord(probed: Conditions(), probedAt: Self.now)
        _ = update(changed: [])
        #expect(queued().count == ready.count - 1, "back in the launch turn")
    }

    @Test func anAppRecordAsksOnlyThatAppsRequests() throws {
        var world = try World()
        _ = world.update(changed: nil, at: Self.now)
        let app = try Identifier(validating: "com.example.app7")
        world.records.apps = [AppRecord(id: app, enabled: false)]
        let answered = world.update(changed: [], at: Self.now)
        #expect(answered.count == 10)
        #expect(answered.allSatisfy { $0.app == app && world.waits.waits[$0]?.ownBlockers.contains(.appDisabled) == true })
    }
}
