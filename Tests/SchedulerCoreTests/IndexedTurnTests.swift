import Foundation
@testable import SchedulerCore
import TaskState
import Testing

/// The runtime's turn looks only at requests that can matter (``RequestSchedule``); these tests
/// hold it to the answers of a plain scan of every request, the way the policy was first written,
/// over seeded random states: dates, conditions (probed, simulated, from files or a service),
/// disabled, throttled and busy apps, apps without a manifest, usage plans, the recent-use rule,
/// coalescing windows and launch limits.
@Suite struct IndexedTurnTests {
    @Test(arguments: 0..<40) func theIndexedTurnDecidesAsAScanOfEveryRequest(seed: UInt64) {
        var random = Seeded(seed)
        var state = Self.randomState(&random)
        for step in 0..<12 {
            // Half the looks fall exactly on a request's date or a throttle's end, where order matters.
            let edges = state.requests.values.compactMap(\.earliestBeginDate) + state.apps.values.compactMap(\.throttledUntil)
            let now = random.below(2) == 0 && !edges.isEmpty ? edges.sorted()[random.below(edges.count)] : at(Double(random.below(400)))
            let full = state.launchTurn(at: now)
            let due = state.dueTurn(at: now)
            #expect(due.plans == full.plans, "seed \(seed), step \(step): plans")
            let runnable = Set(due.plans.flatMap { $0.requests.map(\.key) })
                .union(due.blockers.filter { $0.value == [.coalescing] || $0.value == [.launchLimit] }.keys)
            #expect(runnable == ScanOfEveryRequest.runnable(state, at: now), "seed \(seed), step \(step): runnable")
            #expect(due.coalescingEnds == ScanOfEveryRequest.holdEnds(state, at: now), "seed \(seed), step \(step): hold's end")
            #expect(due.coalescingEnds == full.coalescingEnds && due.nextLook == full.nextLook, "seed \(seed), step \(step): hold")
            for (key, blockers) in due.blockers {
                #expect(full.blockers[key] == blockers, "seed \(seed), step \(step): blockers of \(key)")
            }
            // What the dashboard shows: a request's own blockers joined with its group's.
            for request in state.requests.values {
                let blockers = state.blockers(for: request, at: now)
                let joined = RequestConditionGroup(request).blockers(joining: blockers.filter { $0.condition == nil },
                                                                     under: state.conditions.effective)
                #expect(joined == blockers, "seed \(seed), step \(step): joined blockers of \(request.key)")
            }
            #expect(state.nextWake(after: now) == ScanOfEveryRequest.nextWake(state, after: now), "seed \(seed), step \(step): next wake")
            // Apart from the oracle's rules: when nothing launches now, nothing would launch at a
            // request's date or a throttle's end before the wake the scheduler sets.
            if full.plans.isEmpty {
                let wake = state.nextWake(after: now)
                for edge in Set(edges) where edge > now && wake.map({ edge < $0 }) ?? true {
                    #expect(state.launchTurn(at: edge).plans.isEmpty, "seed \(seed), step \(step): a launch at \(edge), before the wake at \(String(describing: wake))")
                }
            }
            #expect(state.isWaitingOnConditions(at: now) == ScanOfEveryRequest.isWaitingOnConditions(state, at: now),
                    "seed \(seed), step \(step): waiting on conditions")
            let plan = state.wakePlan(after: now)
            #expect(plan.nextWake == state.nextWake(after: now) && plan.isWaitingOnConditions == state.isWaitingOnConditions(at: now))
            // Change the state between looks, as commands do: the index must follow.
            Self.mutate(&state, &random, now: now)
        }
    }

    /// Every condition group's blockers are the condition blockers ``SchedulerState/blockers(for:at:)``
    /// gives each of its requests, under every combination of conditions.
    @Test func aGroupsConditionsAreEachOfItsRequests() {
        for bits in 0..<32 {
            let probed = Conditions(externalPower: bits & 1 != 0, network: bits & 2 != 0, idle: bits & 4 != 0,
                                    lowPower: bits & 8 != 0, expensive: bits & 16 != 0)
            let state = SchedulerState(settings: SchedulerSettings(), catalog: makeCatalog(),
                                       conditions: ConditionsRecord(probed: probed, probedAt: t0))
            for kind in [TaskKind.appRefresh, .processing] {
                for needs in 0..<8 {
                    let request = PendingRequest(app: Apps.news, identifier: Tasks.refresh, kind: kind,
                                                 requiresNetworkConnectivity: needs & 1 != 0, requiresExternalPower: needs & 2 != 0,
                                                 submittedAt: t0, allowsExpensiveNetworkAccess: needs & 4 != 0 ? false : nil)
                    let group = RequestSchedule.ConditionGroup(request)
                    #expect(group.conditionBlockers(under: probed) == state.blockers(for: request, at: t0).filter { $0.condition != nil })
                }
            }
        }
    }

    static let apps = (0..<6).map { ident("com.example.indexed\($0)") }

    static func identifiers(of app: Identifier) -> [Identifier] { (0..<6).map { ident("\(app).job\($0)") } }

    static func randomState(_ random: inout Seeded) -> SchedulerState {
        var settings = SchedulerSettings()
        settings.coalescingWindowSeconds = [0, 10, 60][random.below(3)]
        settings.maxConcurrentLaunches = 1 + random.below(3)
        settings.usagePrediction = random.below(2) == 0
        settings.processingRecentUseDays = random.below(3) == 0 ? 7 : 0
        // The last app has no manifest.
        let manifests = apps.dropLast().map { app in
            AppManifest(id: app, executable: "/bin/true", permittedIdentifiers: identifiers(of: app), backgroundModes: [.fetch, .processing])
        }
        var snapshot = StateSnapshot()
        for app in apps {
            for identifier in identifiers(of: app) where random.below(3) != 0 {
                snapshot.requests.append(randomRequest(app: app, identifier: identifier, &random))
            }
            if random.below(4) == 0 {
                snapshot.apps.append(AppRecord(id: app, enabled: random.below(2) == 0,
                                               throttledUntil: random.below(2) == 0 ? at(Double(random.below(500))) : nil))
            }
            if random.below(3) == 0 {
                snapshot.usage.append(UsageHistory(app: app, uses: (0..<random.below(30)).map { at(-Double($0) * day - Double(random.below(3600))) }))
            }
        }
        // A running task under a pending request's key holds that request (alreadyRunning).
        for request in snapshot.requests where random.below(8) == 0 {
            snapshot.tasks.append(LaunchedTask(app: request.app, identifier: request.identifier, kind: request.kind, launchReason: "test",
                                               simulated: false, pid: Int32(2000 + snapshot.tasks.count), processGroup: nil,
                                               processStartTicks: nil, launchID: "l\(snapshot.tasks.count)", startedAt: t0, deadline: at(900)))
        }
        let probed = Conditions(externalPower: random.below(2) == 0, network: random.below(2) == 0, idle: random.below(2) == 0,
                                lowPower: random.below(5) == 0, expensive: random.below(3) == 0)
        var record = ConditionsRecord(probed: probed, probedAt: t0)
        if random.below(2) == 0 { record.sources = ["power": "upower", "network": "networkmanager"] }
        snapshot.conditions = ConditionsRecord(probed: probed, overrides: randomOverrides(&random), probedAt: t0)
        return SchedulerState(settings: settings, catalog: ManifestCatalog(manifests: Dictionary(uniqueKeysWithValues: manifests.map { ($0.id, $0) })),
                              snapshot: snapshot, conditions: record)
    }

    static func randomRequest(app: Identifier, identifier: Identifier, _ random: inout Seeded) -> PendingRequest {
        let kind: TaskKind = random.below(2) == 0 ? .appRefresh : .processing
        let earliest: Date? = random.below(4) == 0 ? nil : at(Double(random.below(500)) - 50)
        return PendingRequest(app: app, identifier: identifier, kind: kind, earliestBeginDate: earliest,
                              requiresNetworkConnectivity: random.below(3) == 0, requiresExternalPower: random.below(3) == 0,
                              submittedAt: at(-Double(random.below(100))),
                              allowsExpensiveNetworkAccess: random.below(3) == 0 ? false : nil)
    }

    static func randomOverrides(_ random: inout Seeded) -> ConditionOverrides {
        func maybe() -> Bool? {
            switch random.below(5) {
            case 0: true
            case 1: false
            default: nil
            }
        }
        return ConditionOverrides(externalPower: maybe(), network: maybe(), idle: maybe(), lowPower: maybe(), expensive: maybe())
    }

    /// A submit (new or replacing), a cancel, or launching what is due.
    static func mutate(_ state: inout SchedulerState, _ random: inout Seeded, now: Date) {
        let app = apps[random.below(apps.count)]
        let identifier = identifiers(of: app)[random.below(6)]
        switch random.below(4) {
        case 0:
            let request = randomRequest(app: app, identifier: identifier, &random)
            state.submitRequest(identifier, app: app, kind: request.kind, earliest: request.earliestBeginDate,
                                network: request.requiresNetworkConnectivity, power: request.requiresExternalPower, at: now)
        case 1:
            state.run(.cancel(app: app, identifier: identifier), at: now)
        case 2:
            state.launchDue(at: now, firstPID: Int32(5000 + random.below(1000)))
        default:
            state.run(.cancelAll(app: app), at: now)
        }
    }
}

/// The policy's questions answered by looking at every pending request: the oracle.
enum ScanOfEveryRequest {
    static func runnable(_ state: SchedulerState, at now: Date) -> Set<TaskKey> {
        Set(state.requests.values.filter { state.blockers(for: $0, at: now).isEmpty && state.catalog.manifests[$0.app] != nil }.map(\.key))
    }

    /// When a coalescing hold at `now` ends: the last date, within the window after the earliest
    /// runnable request was ready, of a request that waits only for that date.
    static func holdEnds(_ state: SchedulerState, at now: Date) -> Date? {
        let ready = state.requests.values.filter { runnable(state, at: now).contains($0.key) }.map(\.readyDate)
        guard let earliest = ready.min() else { return nil }
        let windowEnd = earliest.addingTimeInterval(state.settings.coalescingWindowSeconds)
        guard now < windowEnd else { return nil }
        return state.requests.values.compactMap { request -> Date? in
            guard state.blockers(for: request, at: now) == [.earliestBeginDate], let date = request.earliestBeginDate, date <= windowEnd,
                  state.catalog.manifests[request.app] != nil, state.blockers(for: request, at: date).isEmpty else { return nil }
            return date
        }.max()
    }

    static func nextWake(_ state: SchedulerState, after now: Date) -> Date? {
        let turn = state.launchTurn(at: now)
        var candidates: [Date] = state.nextTaskDeadline(after: now).map { [$0] } ?? []
        let coming = nextCoalescedTurn(state, turn, now: now)
        #expect(coming.map { [$0.first, $0.date] } == state.nextCoalescedTurn(turn, now: now).map { [$0.first, $0.date] })
        for request in state.requests.values {
            guard let ready = state.timedReadiness(of: request, blockers: turn.blockers[request.key] ?? [], at: now) else { continue }
            if let ends = turn.coalescingEnds, ready <= ends { continue }
            // Dated from the coming group's first date on: ready no sooner than it, and held for
            // the group until its turn (one wake-up for the lot).
            if let coming, let date = request.earliestBeginDate, date > now, date >= coming.first { continue }
            candidates.append(ready)
        }
        if let look = turn.nextLook { candidates.append(look) }
        if let coming { candidates.append(coming.date) }
        if let transfer = state.nextTransferWake(after: now) { candidates.append(transfer) }
        if let session = state.nextSessionLaunchWake(after: now) { candidates.append(session) }
        if let push = state.nextPushWake(after: now) { candidates.append(push) }
        if let report = state.nextVoIPReportDeadline() { candidates.append(report) }
        return candidates.min()
    }

    static func nextCoalescedTurn(_ state: SchedulerState, _ turn: LaunchTurn, now: Date) -> (first: Date, date: Date)? {
        guard turn.plans.isEmpty, turn.coalescingEnds == nil,
              !turn.blockers.values.contains(where: { $0 == [.launchLimit] }) else { return nil }
        var dated: [(key: TaskKey, date: Date)] = []
        for request in state.requests.values {
            guard turn.blockers[request.key] == [.earliestBeginDate], let date = request.earliestBeginDate,
                  state.catalog.manifests[request.app] != nil, state.blockers(for: request, at: date).isEmpty else { continue }
            dated.append((request.key, date))
        }
        guard let first = dated.map(\.date).min() else { return nil }
        let group = dated.filter { $0.date <= first.addingTimeInterval(state.settings.coalescingWindowSeconds) }
        guard let last = group.map(\.date).max() else { return nil }
        return (first, last)
    }

    static func isWaitingOnConditions(_ state: SchedulerState, at now: Date) -> Bool {
        let conditions = state.conditions
        let requestWaits = state.requests.values.contains { request in
            let blockers = state.blockers(for: request, at: now)
            guard !blockers.isEmpty else { return false }
            return blockers.allSatisfy { blocker in
                if blocker.isTimed { return true }
                guard let name = blocker.condition else { return false }
                return !conditions.isSimulated(name)
            } && blockers.contains { $0.condition.map(conditions.isProbedFromFiles) ?? false }
        }
        // Transfers and pushes are not indexed: the same code answers for them either way.
        var withoutRequests = state
        for key in state.requests.keys { withoutRequests.removeRequest(key) }
        return requestWaits || withoutRequests.isWaitingOnConditions(at: now)
    }
}

/// A small seeded generator (SplitMix64) for reproducible random states.
struct Seeded {
    private var state: UInt64

    init(_ seed: UInt64) { state = seed &* 0x9E37_79B9_7F4A_7C15 &+ 1 }

    mutating func below(_ bound: Int) -> Int {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return Int((value ^ (value >> 31)) % UInt64(bound))
    }
}
