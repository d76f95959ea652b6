import Foundation
import Testing
import SchedulerCore
import TaskState

/// Where conditions come from: a condition a desktop service announces needs no timed re-probe,
/// and a change of source is one event.
@Suite("Condition sources")
struct ConditionSourcesTests {
    static let services = ["power": "upower", "lowpower": "power-profiles-daemon+upower", "idle": "logind", "network": "networkmanager"]
    static let files = ["power": "files", "lowpower": "files", "idle": "files", "network": "files"]

    @Test func announcedConditionsAreNotProbedOnATimer() {
        var state = makeState(probed: Conditions(externalPower: false, network: false, idle: false))
        state.submitRequest(Tasks.backup, kind: .processing, network: true, power: true, at: t0)
        state.updateConditionSources(Self.files, now: t0)
        #expect(state.isWaitingOnConditions(at: t0), "the files announce nothing")
        state.updateConditionSources(Self.services, now: at(1))
        #expect(!state.isWaitingOnConditions(at: at(1)), "the services say when power, network and idle change")
        // Low power that still rests partly on the battery's file is re-probed.
        var partly = Self.services
        partly["idle"] = "files"
        state.updateConditionSources(partly, now: at(2))
        #expect(state.isWaitingOnConditions(at: at(2)))
    }

    @Test func aChangeOfSourceIsOneEventAndTheFirstReadingIsNone() {
        var state = makeState()
        state.updateConditionSources(Self.services, now: t0)
        #expect(state.conditions.sources == Self.services)
        #expect(!state.changes.events.contains { $0.type == .conditionsChanged })
        var gone = Self.services
        gone["power"] = "files"
        gone["lowpower"] = "power-profiles-daemon+files"
        state.updateConditionSources(gone, now: at(1))
        let changes = state.changes.events.filter { $0.type == .conditionsChanged && $0.reason == "source" }
        #expect(changes.map(\.message) == ["condition sources: power from files (was upower), lowpower from power-profiles-daemon+files (was power-profiles-daemon+upower)"])
        // A probe keeps the sources.
        state.updateProbedConditions(Conditions(externalPower: false), batteryPercent: 50, loadAverage: 0, now: at(2))
        #expect(state.conditions.sources == gone)
    }
}
