import Dashboard
import Foundation
import Testing
import TaskState

private let k = Key.character

/// `C` and the conditions menu's keys. Fixtures.busy: probed battery, network up, not idle, low
/// power off; network simulated down.
@Suite("Key handling: the conditions menu")
struct ConditionsMenuTests {
    @Test func cOpensTheMenuAndEachKeyFlipsItsConditionFromWhatTheSchedulerUses() {
        var h = KeyHarness()
        #expect(h.press(k("C")).isEmpty)
        #expect(h.state.overlay == .conditions)
        #expect(h.press(k("p")) == [.send(.setConditions(ConditionOverrides(externalPower: true)), summary: "simulate power ac")])
        // Network is simulated down: the flip brings it up.
        #expect(h.press(k("n")) == [.send(.setConditions(ConditionOverrides(network: true)), summary: "simulate network up")])
        #expect(h.press(k("i")) == [.send(.setConditions(ConditionOverrides(idle: true)), summary: "simulate idle yes")])
        #expect(h.press(k("w")) == [.send(.setConditions(ConditionOverrides(lowPower: true)), summary: "simulate lowpower on")])
        #expect(h.press(k("x")) == [.send(.clearConditions, summary: "clear every simulated condition")])
        // The menu stays open for the next flip.
        #expect(h.state.overlay == .conditions)
    }

    /// Review of issue 15, item 7: `n` twice before the state is read again flips twice (down,
    /// then up), instead of sending the same override twice; once the state shows the sent
    /// value, the flip is from the state again.
    @Test func aSecondPressBeforeTheStateShowsTheFirstFlipsBack() {
        var h = KeyHarness()
        h.press(k("C"))
        #expect(h.press(k("n")) == [.send(.setConditions(ConditionOverrides(network: true)), summary: "simulate network up")])
        #expect(h.press(k("n")) == [.send(.setConditions(ConditionOverrides(network: false)), summary: "simulate network down")])
        #expect(h.press(k("n")) == [.send(.setConditions(ConditionOverrides(network: true)), summary: "simulate network up")])
        // The scheduler applied it: the state now shows network up, simulated.
        h.snapshot.conditions?.overrides.network = true
        h.snapshot.conditions?.effective.network = true
        #expect(h.press(k("n")) == [.send(.setConditions(ConditionOverrides(network: false)), summary: "simulate network down")])
        #expect(h.press(k("x")) == [.send(.clearConditions, summary: "clear every simulated condition")])
        #expect(h.state.sentConditions == ConditionOverrides())
    }

    @Test(arguments: [Key.escape, .character("C"), .character("q")])
    func escCOrQClosesTheMenuWithoutSendingAnything(_ key: Key) {
        var h = KeyHarness()
        h.press(k("C"))
        #expect(h.press(key).isEmpty)
        #expect(h.state.overlay == .none)
    }

    @Test(arguments: [Key.character("l"), .character("e"), .character("d"), .down, .enter])
    func otherKeysDoNothingWhileTheMenuIsOpen(_ key: Key) {
        var h = KeyHarness()
        h.press(k("C"))
        let selected = h.selected(.pending)
        #expect(h.press(key).isEmpty)
        #expect(h.state.overlay == .conditions)
        #expect(h.selected(.pending) == selected)
    }

    @Test func readOnlyRefusesTheMenu() {
        var h = KeyHarness(state: DashboardState(readOnly: true))
        #expect(h.press(k("C")).isEmpty)
        #expect(h.state.overlay == .none)
        #expect(h.state.status?.isError == true)
        #expect(h.state.status?.text.hasPrefix("read-only") == true)
    }

    @Test func withoutMeasuredConditionsAFlipIsRefusedButClearStillGoes() {
        var h = KeyHarness(Fixtures.snapshot(conditions: nil))
        h.press(k("C"))
        #expect(h.press(k("p")).isEmpty)
        #expect(h.state.status?.text.contains("not measured") == true)
        #expect(h.press(k("x")) == [.send(.clearConditions, summary: "clear every simulated condition")])
    }
}
