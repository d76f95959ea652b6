import FoundationEssentials
import TaskState

/// The conditions menu (`C`): flips one simulated condition per key, as `bgctl conditions set`
/// does, or clears every override, as `bgctl conditions clear` does. It stays open so several
/// conditions can be flipped in a row, and shows what the scheduler now decides with.
public enum ConditionsMenu {
    /// One key of the menu: a condition to flip, or clear for every override.
    public struct Binding: Sendable, Hashable {
        public var key: Character
        /// The condition the key flips; `nil` clears every override.
        public var condition: Conditions.Name?
        public var label: String
    }

    /// The menu's keys, declared once: handling, the menu's lines and its hint line come from here.
    public static let keys: [Binding] = [
        Binding(key: "p", condition: .power, label: "power"),
        Binding(key: "n", condition: .network, label: "network"),
        Binding(key: "i", condition: .idle, label: "idle"),
        Binding(key: "w", condition: .lowpower, label: "low power"),
        Binding(key: "x", condition: nil, label: "clear all"),
    ]

    /// The keys that close the menu, as its hint line names them.
    static let closeKeys = "Esc/C closes"

    /// The words a condition's value is shown in, as in the header.
    static func value(_ name: Conditions.Name, _ on: Bool) -> String {
        switch name {
        case .power: return on ? "ac" : "battery"
        case .network: return on ? "up" : "down"
        case .idle: return on ? "yes" : "no"
        case .lowpower, .expensive: return on ? "on" : "off"
        }
    }

    /// What a key does while the menu is open: a command to send, or nothing (the menu closes on
    /// Esc or `C`; other keys are ignored so a stray key sends nothing).
    static func handle(_ key: Key, conditions: ConditionsRecord?, state: inout DashboardState) -> [DashboardEffect] {
        if key == .escape || key == .character("C") || key == .character("q") {
            state.overlay = .none
            return []
        }
        guard case .character(let character) = key, let binding = keys.first(where: { $0.key == character }) else { return [] }
        guard let name = binding.condition else {
            state.sentConditions = ConditionOverrides()
            return [.send(.clearConditions, summary: "clear every simulated condition")]
        }
        guard let conditions else {
            state.status = DashboardState.Status("conditions not measured yet: start bgtaskd", isError: true)
            return []
        }
        // What the state shows now is no longer waited for.
        for other in Conditions.Name.allCases where state.sentConditions[other] == conditions.effective[other] {
            state.sentConditions[other] = nil
        }
        var overrides = ConditionOverrides()
        let flipped = !(state.sentConditions[name] ?? conditions.effective[name])
        overrides[name] = flipped
        state.sentConditions[name] = flipped
        return [.send(.setConditions(overrides), summary: "simulate \(name.rawValue) \(value(name, flipped))")]
    }

    /// The menu box: each condition's key, what the scheduler decides with, whether that is
    /// simulated and what the machine measured. (`--read-only` never opens it.)
    static func draw(_ grid: inout CellGrid, conditions: ConditionsRecord?, palette: Palette, glyphs: Glyphs) {
        let width = min(grid.size.width - 4, 64)
        let height = keys.count + 4
        let rect = Rect(x: (grid.size.width - width) / 2, y: max(0, (grid.size.height - height) / 2), width: width, height: height)
        grid.fill(x: rect.x, y: rect.y, width: rect.width, height: rect.height, with: Cell(" ", style: palette.text))
        grid.box(rect, title: "Conditions \(glyphs.horizontal) \(closeKeys)", style: palette.title, titleStyle: palette.title, glyphs: glyphs)
        guard let conditions else {
            grid.put("conditions not measured yet: start bgtaskd", x: rect.x + 2, y: rect.y + 2, style: palette.inactive, maxWidth: width - 4)
            return
        }
        grid.put("now", x: rect.x + 18, y: rect.y + 1, style: palette.columnHeader)
        grid.put("measured", x: rect.x + 28, y: rect.y + 1, style: palette.columnHeader)
        for (index, binding) in keys.enumerated() {
            let y = rect.y + 2 + index
            var x = rect.x + 2
            x += grid.put(String(binding.key), x: x, y: y, style: palette.hint)
            grid.put(binding.label, x: x + 1, y: y, style: palette.text, maxWidth: 14)
            guard let name = binding.condition else {
                let simulated = Conditions.Name.allCases.filter(conditions.isSimulated).map(\.rawValue)
                let text = simulated.isEmpty ? "nothing simulated" : "simulated: " + simulated.joined(separator: ", ")
                grid.put(text, x: rect.x + 28, y: y, style: simulated.isEmpty ? palette.inactive : palette.misc, maxWidth: width - 30)
                continue
            }
            let effective = conditions.effective[name]
            let fine = name == .lowpower ? !effective : effective
            var valueX = rect.x + 18
            valueX += grid.put(value(name, effective), x: valueX, y: y, style: fine ? palette.text : palette.error)
            if conditions.isSimulated(name) { grid.put("*", x: valueX, y: y, style: palette.misc) }
            let measured = value(name, conditions.probed[name])
            grid.put(measured, x: rect.x + 28, y: y, style: palette.inactive)
            // Where the measurement came from (a desktop service, or the kernel's files).
            if let source = conditions.sources?[name.rawValue] {
                let sourceX = rect.x + 28 + measured.count + 1
                grid.put("from \(source)", x: sourceX, y: y, style: palette.inactive, maxWidth: max(0, rect.x + width - 2 - sourceX))
            }
        }
        let hint = "a key flips its condition; * marks a simulated one"
        grid.put(hint, x: rect.x + 2, y: rect.y + height - 2, style: palette.inactive, maxWidth: width - 4)
    }
}
