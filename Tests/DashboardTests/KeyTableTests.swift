import Dashboard
import Foundation
import Testing
import TaskState

/// One key of the table, with the binding it belongs to: a test argument per key.
struct BoundKey: Sendable, CustomTestStringConvertible {
    let binding: Int
    let trigger: KeyTrigger
    let command: KeyCommand

    var testDescription: String { "\(KeyBindings.table[binding].keys): \(trigger) → \(command)" }

    static let all: [BoundKey] = KeyBindings.table.enumerated().flatMap { index, binding in
        binding.triggers.map { BoundKey(binding: index, trigger: $0.trigger, command: $0.command) }
    }
}

/// Key handling walks the table: every key does what its binding says, in every panel, with and
/// without read-only mode, and keys the table does not bind do nothing.
@Suite("The key table: key handling")
struct KeyTableHandlingTests {
    @Test func everyKeyIsBoundOnce() {
        let triggers = BoundKey.all.map(\.trigger)
        #expect(Set(triggers).count == triggers.count, "bound twice: \(triggers.filter { t in triggers.filter { $0 == t }.count > 1 })")
        #expect(!KeyBindings.table.isEmpty)
    }

    @Test(arguments: BoundKey.all)
    func theKeyDoesWhatItsBindingSays(_ bound: BoundKey) {
        let binding = KeyBindings.table[bound.binding]
        for panel in Panel.allCases {
            let start = KeyTableTests.harness(focus: panel)
            let key = KeyTableTests.key(for: bound.trigger, start)
            #expect(KeyBindings.lookup(key)?.command == bound.command)
            if case .act(let action) = bound.command {
                expectAction(action, binding: binding, key: key, from: start)
            } else if binding.refusedInReadOnly {
                expectMenuRefusedInReadOnly(key: key, from: start)
            } else {
                #expect(!binding.refusedInReadOnly)
                expectCommand(bound.command, key: key, from: start)
            }
        }
    }

    /// An action works in the binding's panels, says where it works elsewhere, and is refused
    /// everywhere in read-only mode.
    private func expectAction(_ action: PanelAction, binding: KeyBinding, key: Key, from start: KeyHarness) {
        #expect(binding.refusedInReadOnly)
        let panel = start.state.focus
        var h = start
        let effects = h.press(key)
        if binding.panels.contains(panel) {
            let asksFirst = h.state.overlay != .none
            #expect(effects.count == 1 || asksFirst, "\(action.verb) did nothing in \(panel)")
            #expect(h.state.status?.isError != true)
        } else {
            let home = binding.panels[0]
            #expect(effects.isEmpty)
            #expect(h.state.status == DashboardState.Status(
                "\(action.verb) works on \(home.title.lowercased()): press \(home.rawValue + 1) to focus them", isError: true))
        }
        var readOnly = start
        readOnly.state.readOnly = true
        #expect(readOnly.press(key).isEmpty)
        #expect(readOnly.state.overlay == .none)
        #expect(readOnly.state.status == DashboardState.Status("read-only: \(action.verb) is disabled", isError: true))
    }

    /// A key that opens a menu of commands (the conditions) opens it anywhere, sending nothing
    /// yet, and is refused in read-only mode.
    private func expectMenuRefusedInReadOnly(key: Key, from start: KeyHarness) {
        var h = start
        #expect(h.press(key).isEmpty)
        #expect(h.state.overlay != .none)
        #expect(h.state.status?.isError != true)
        var readOnly = start
        readOnly.state.readOnly = true
        #expect(readOnly.press(key).isEmpty)
        #expect(readOnly.state.overlay == .none)
        #expect(readOnly.state.status?.isError == true && readOnly.state.status?.text.hasPrefix("read-only: ") == true)
    }

    /// Any other command does the same with or without read-only mode, and what it promises.
    private func expectCommand(_ command: KeyCommand, key: Key, from start: KeyHarness) {
        var plain = start
        let effects = plain.press(key)
        var readOnly = start
        readOnly.state.readOnly = true
        #expect(readOnly.press(key) == effects, "\(command) differs in read-only mode")
        readOnly.state.readOnly = false
        #expect(readOnly.state == plain.state, "\(command) differs in read-only mode")
        var h = start
        expectOutcome(command, key: key, &h)
    }

    /// Presses `key` and checks the outcome `command` promises.
    private func expectOutcome(_ command: KeyCommand, key: Key, _ h: inout KeyHarness) {
        let before = h.state
        let focus = before.focus
        let count = h.ids(focus).count
        let selected = h.selectedIndex(focus) ?? 0
        let runningOffset = h.state.visibleOffset(.running, rows: h.snapshot.rows(.running, state: h.state), layout: h.layout)
        let eventsSelected = h.selectedIndex(.events) ?? 0
        let effects = h.press(key)
        switch command {
        case .quit, .nextTheme:
            #expect(effects == [command == .quit ? .quit : .nextTheme])
            #expect(h.state == before)
            return
        case .toggleHelp:
            #expect(h.state.overlay == .help)
            h.press(key)
            #expect(h.state.overlay == .none)
        case .openTimeline:
            #expect(h.state.overlay == .timeline(TimelinePosition()))
            h.press(key)
            #expect(h.state.overlay == .none)
        case .toggleDetails:
            #expect(h.state.overlay == .detail)
            h.press(key)
            #expect(h.state.overlay == .none)
        case .closeOverlayOrClearFilter:
            #expect(h.state == before)
            h.state.overlay = .help
            h.press(key)
            #expect(h.state.overlay == .none)
            h.state.filter = "mail"
            h.press(key)
            #expect(h.state.filter.isEmpty && h.state.status?.text == "filter cleared")
        case .focusNext:
            #expect(h.state.focus.rawValue == (focus.rawValue + 1) % Panel.allCases.count)
        case .focusPrevious:
            #expect(h.state.focus.rawValue == (focus.rawValue + Panel.allCases.count - 1) % Panel.allCases.count)
        case .focus(let panel):
            #expect(h.state.focus == panel)
        case .move(let movement):
            let page = max(1, h.layout.visibleRows(focus))
            let expected: Int
            switch movement {
            case .rows(let rows): expected = selected + rows
            case .pageUp: expected = selected - page
            case .pageDown: expected = selected + page
            case .first: expected = 0
            case .last: expected = count - 1
            }
            #expect(h.selectedIndex(focus) == min(max(0, expected), count - 1))
        case .editFilter:
            #expect(h.state.isEditingFilter)
        case .nextSortColumn:
            #expect(h.state.sortColumn[focus] == 1)
        case .reverseSort:
            #expect(h.state.sortReversed[focus] == true)
        case .act:
            Issue.record("actions are checked by expectAction")
        case .openConditions:
            Issue.record("menus refused in read-only mode are checked by expectMenuRefusedInReadOnly")
        case .selectUnderPointer:
            #expect(h.state.focus == .running && h.selectedIndex(.running) == runningOffset + 1)
        case .scrollUnderPointer(let rows):
            #expect(h.state.focus == .events && h.selectedIndex(.events) == eventsSelected + rows)
        case .openLog:
            // The selected row's app log is asked for, or the row names no app and the status says so.
            if h.state.overlay == .logPager {
                #expect(effects.count == 1 && h.state.followedLog != nil)
            } else {
                #expect(effects.isEmpty && h.state.status?.isError == true)
            }
            return
        case .switchHost:
            // The shell knows the hosts; the view only asks.
            #expect(effects == [.switchHost])
            #expect(h.state == before)
            return
        }
        #expect(effects.isEmpty)
    }

    @Test func keysTheTableDoesNotBindDoNothing() {
        let bound = Set(BoundKey.all.map(\.trigger))
        let characters = (0x20...0x7e).map { Key.character(Character(UnicodeScalar(UInt8($0)))) }
        let specials: [Key] = [.up, .down, .left, .right, .pageUp, .pageDown, .home, .end, .enter, .escape, .tab, .backTab, .backspace]
        let unbound = (characters + specials).filter { !bound.contains(KeyTrigger($0)) }
        #expect(unbound.contains(.character("x")) && unbound.contains(.left))
        for key in unbound {
            var h = KeyHarness()
            h.press(.down, .down)
            let before = h.state
            #expect(h.press(key).isEmpty, "\(key)")
            #expect(h.state == before, "\(key) changed the view")
        }
    }
}

enum KeyTableTests {
    /// The busy screen with apps focused on `panel`, each panel's selection in the middle of its rows, so
    /// that every movement shows.
    static func harness(focus panel: Panel) -> KeyHarness {
        var h = KeyHarness(Fixtures.withApps)
        // Tall enough that the panels without focus show several rows, for the mouse.
        h.size = ScreenSize(width: 160, height: 48)
        for panel in Panel.allCases { h.state.selectionIndex[panel] = h.ids(panel).count / 2 }
        h.state.focus = panel
        return h
    }

    /// A key that pulls `trigger`: mouse actions land on the second row of the running handlers
    /// (a click) or on the third row of the events (the wheel, from the events' first row).
    static func key(for trigger: KeyTrigger, _ h: KeyHarness) -> Key {
        switch trigger {
        case .key(let key): return key
        case .click:
            let cell = h.cell(.running, row: 1)
            return .click(x: cell.x, y: cell.y)
        case .wheelUp, .wheelDown:
            let cell = h.cell(.events, row: 2)
            return trigger == .wheelUp ? .wheelUp(x: cell.x, y: cell.y) : .wheelDown(x: cell.x, y: cell.y)
        }
    }
}
