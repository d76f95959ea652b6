import Dashboard
import Foundation
import Testing
import TaskState

private let k = Key.character
private let id = Fixtures.id

@Suite("Key handling: actions and overlays")
struct ActionTests {
    @Test func lOnPendingSimulatesALaunchOfTheSelectedRequest() {
        var h = KeyHarness()
        h.press(.down)
        let effects = h.press(k("l"))
        #expect(effects == [.send(.simulateLaunch(identifier: id("com.example.photos.upload-library"), app: id("com.example.photos")),
                                  summary: "simulate launch of com.example.photos.upload-library")])
        #expect(h.state.status?.isError != true)
    }

    @Test func eOnRunningSimulatesAnExpiration() {
        var h = KeyHarness()
        h.press(k("2"))
        let effects = h.press(k("e"))
        #expect(effects == [.send(.simulateExpiration(identifier: id("com.example.chat.finishing-1"), app: id("com.example.chat")),
                                  summary: "simulate expiration of com.example.chat.finishing-1")])
    }

    @Test func cAsksFirstAndYCancels() {
        var h = KeyHarness()
        h.press(.down)
        #expect(h.press(k("c")).isEmpty)
        #expect(h.state.overlay == .confirmCancel(app: id("com.example.photos"), identifier: id("com.example.photos.upload-library")))
        let effects = h.press(k("y"))
        #expect(effects == [.send(.cancel(app: id("com.example.photos"), identifier: id("com.example.photos.upload-library")),
                                  summary: "cancel com.example.photos.upload-library")])
        #expect(h.state.overlay == .none)
        h.press(k("c"))
        #expect(h.press(k("Y")).count == 1)
    }

    @Test(arguments: [Key.character("n"), .escape, .enter, .character("q"), .character("l"), .down])
    func anyOtherKeyAbandonsTheCancel(_ key: Key) {
        var h = KeyHarness()
        h.press(k("c"))
        let selected = h.selected(.pending)
        #expect(h.press(key).isEmpty)
        #expect(h.state.overlay == .none)
        #expect(h.state.status?.text.contains("abandoned") == true)
        #expect(h.selected(.pending) == selected)
    }

    @Test(arguments: [(Panel.pending, Key.character("l")), (.running, .character("e")), (.pending, .character("c"))])
    func actionsAreRefusedInReadOnlyMode(_ panel: Panel, _ key: Key) {
        var h = KeyHarness(state: DashboardState(readOnly: true))
        h.press(k(Character(String(panel.rawValue + 1))))
        #expect(h.press(key).isEmpty)
        #expect(h.state.overlay == .none)
        #expect(h.state.status?.isError == true)
        #expect(h.state.status?.text.hasPrefix("read-only") == true)
    }

    @Test func actionsOnTheWrongPanelExplainWhereTheyWork() {
        var h = KeyHarness()
        h.press(k("2"))
        #expect(h.press(k("l")).isEmpty)
        #expect(h.state.status == DashboardState.Status("simulate launch works on pending requests: press 1 to focus them", isError: true))
        #expect(h.press(k("c")).isEmpty)
        #expect(h.state.overlay == .none)
        #expect(h.state.status?.text.contains("press 1") == true)
        h.press(k("3"))
        #expect(h.press(k("e")).isEmpty)
        #expect(h.state.status == DashboardState.Status("simulate expiration works on running handlers: press 2 to focus them", isError: true))
    }

    @Test func actionsWithNothingSelectedSayso() {
        var h = KeyHarness(Fixtures.empty)
        #expect(h.press(k("l")).isEmpty)
        #expect(h.state.status?.isError == true)
        #expect(h.state.status?.text.contains("nothing selected") == true)
    }

    @Test func questionMarkTogglesHelpAndEnterTogglesDetails() {
        var h = KeyHarness()
        h.press(k("?"))
        #expect(h.state.overlay == .help)
        h.press(k("?"))
        #expect(h.state.overlay == .none)
        h.press(k("?"), .escape)
        #expect(h.state.overlay == .none)
        h.press(.enter)
        #expect(h.state.overlay == .detail)
        h.press(.enter)
        #expect(h.state.overlay == .none)
        h.press(.enter, .escape)
        #expect(h.state.overlay == .none)
        var empty = KeyHarness(Fixtures.empty)
        empty.press(.enter)
        #expect(empty.state.overlay == .none)
    }

    @Test func tAsksForTheNextThemeAndQQuits() {
        var h = KeyHarness()
        #expect(h.press(k("t")) == [.nextTheme])
        #expect(h.press(k("q")) == [.quit])
        var readOnly = KeyHarness(state: DashboardState(readOnly: true))
        #expect(readOnly.press(k("t"), k("q")) == [.nextTheme, .quit])
    }
}

@Suite("Key handling: mouse")
struct MouseTests {
    @Test func clickSelectsTheRowUnderTheCursorAndFocusesItsPanel() {
        var h = KeyHarness()
        // Tall enough that the running panel, not focused, shows two rows.
        h.size = ScreenSize(width: 160, height: 48)
        let target = h.cell(.running, row: 1)
        let hit = h.layout.hit(x: target.x, y: target.y)
        #expect(hit?.0 == .running && hit?.1 == 1)
        h.press(.click(x: target.x, y: target.y))
        #expect(h.state.focus == .running)
        #expect(h.selected(.running) == h.ids(.running)[1])
        #expect(h.markerLine(.running, in: h.render())?.contains("31337") == true)
    }

    @Test func clickOnAPanelsHeaderOrBorderOnlyFocuses() {
        var h = KeyHarness()
        h.press(.down)
        let before = h.selected(.pending)
        // Its column header, or where its box is compact, its top border.
        h.press(.click(x: 10, y: h.layout.firstDataRow(.transfers) - 1))
        #expect(h.state.focus == .transfers)
        #expect(h.state.selection[.transfers] == nil)
        h.press(.click(x: 0, y: h.layout.panels[.pending]!.y))
        #expect(h.state.focus == .pending)
        #expect(h.selected(.pending) == before)
        h.press(.click(x: 5, y: 0), .click(x: 5, y: h.size.height - 1))
        #expect(h.state.focus == .pending)
    }

    @Test func clickBelowTheLastRowOfAShortPanelSelectsNothing() {
        var h = KeyHarness(Fixtures.expiring)
        #expect(h.layout.visibleRows(.running) >= 2)
        h.press(.click(x: 5, y: h.layout.firstDataRow(.running) + 1))
        #expect(h.selected(.running) == h.ids(.running)[1])
        if h.layout.visibleRows(.running) > 2 {
            h.press(.click(x: 5, y: h.layout.firstDataRow(.running) + 2))
            #expect(h.selected(.running) == h.ids(.running)[1])
        }
    }

    @Test func clickAfterScrollingSelectsTheRowShown() {
        var h = KeyHarness(Fixtures.bulk(1_000))
        h.press(.end)
        let target = h.cell(.pending, row: 0)
        h.press(.click(x: target.x, y: target.y))
        let shownFirst = h.render().textLines[target.y]
        #expect(shownFirst.contains(String(h.selected(.pending)!.split(separator: "/")[1])))
        #expect(h.selectedIndex(.pending) == 1_000 - h.layout.visibleRows(.pending))
    }

    @Test func clickSelectsTheRowShownWhenTheSelectionWasMovedByAResort() {
        var h = KeyHarness()
        // The selected request now sorts last: the view scrolls to show it, state.scroll stays 0.
        let podcasts = Fixtures.rowID("com.example.podcasts", "com.example.podcasts.download")
        h.state.selection[.pending] = podcasts
        let index = h.snapshot.pending.firstIndex { $0.request.identifier.rawValue == "com.example.podcasts.download" }!
        h.snapshot.pending[index].request.earliestBeginDate = Fixtures.at(86_400)
        let target = h.cell(.pending, row: 0)
        let shown = h.render().textLines[target.y]
        h.press(.click(x: target.x, y: target.y))
        let app = h.selected(.pending)!.split(separator: "/")[0]
        #expect(shown.contains(String(app.suffix(10))))
    }

    @Test func wheelFocusesThePanelUnderTheCursorAndMovesByThree() {
        var h = KeyHarness()
        let events = h.layout.panels[.events]!
        h.press(.wheelDown(x: 10, y: events.y + 2))
        #expect(h.state.focus == .events)
        #expect(h.selectedIndex(.events) == 3)
        h.press(.wheelDown(x: 10, y: events.y + 2), .wheelUp(x: 10, y: events.y + 1))
        #expect(h.selectedIndex(.events) == 3)
        h.press(.wheelUp(x: 10, y: events.y), .wheelUp(x: 10, y: events.y))
        #expect(h.selectedIndex(.events) == 0)
        h.press(.wheelDown(x: 10, y: 0))
        #expect(h.selectedIndex(.events) == 0)
    }
}

@Suite("Key handling: many rows")
struct ManyRowsTests {
    /// The selected row is inside the visible window, both in the state and on screen.
    private func expectSelectionVisible(_ h: KeyHarness, render: Bool, sourceLocation: SourceLocation = #_sourceLocation) {
        let index = h.selectedIndex(.pending)!
        let offset = h.state.scroll[.pending] ?? 0
        let visible = h.layout.visibleRows(.pending)
        #expect(offset <= index && index < offset + visible, "row \(index) outside \(offset)..<\(offset + visible)",
                sourceLocation: sourceLocation)
        guard render else { return }
        let grid = h.render()
        let name = String(format: "task-%06d", index)
        #expect(h.markerLine(.pending, in: grid)?.contains(name) == true, "marker not on \(name)", sourceLocation: sourceLocation)
        let count = h.snapshot.pending.count
        let counter = " \(offset + 1)-\(min(count, offset + visible))/\(count) "
        #expect(grid.textLines[h.layout.panels[.pending]!.y + h.layout.panels[.pending]!.height - 1].contains(counter),
                "no counter \(counter)", sourceLocation: sourceLocation)
    }

    @Test func scrollingKeepsTheSelectionVisibleWithAThousandRows() {
        var h = KeyHarness(Fixtures.bulk(1_000))
        let keys: [Key] = [.down, .down, .down, .down, .down, .down, .down, .pageDown, .pageDown, .up, .pageUp, .end, .up, .up,
                           .pageUp, .pageUp, .home, .down, k("G"), k("g"), .pageDown, .pageDown, .pageDown, .down]
        for key in keys {
            h.press(key)
            expectSelectionVisible(h, render: true)
        }
        #expect(h.selectedIndex(.pending) == 16)
        for _ in 0..<40 { h.press(.wheelDown(x: 10, y: h.layout.panels[.pending]!.y + 2)) }
        expectSelectionVisible(h, render: true)
        #expect(h.selectedIndex(.pending) == 16 + 3 * 40)
    }

    @Test func aHundredThousandPendingRowsScrollAndRender() {
        let count = 100_000
        var h = KeyHarness(Fixtures.bulk(count))
        let visible = h.layout.visibleRows(.pending)
        let first = h.render()
        let bottom = h.layout.panels[.pending]!.y + h.layout.panels[.pending]!.height - 1
        #expect(first.textLines[bottom].contains(" 1-\(visible)/100000 "))
        #expect(first.textLines[1].contains("100000 pending"))
        h.press(.end)
        #expect(h.selectedIndex(.pending) == count - 1)
        expectSelectionVisible(h, render: true)
        h.press(.pageUp, .up)
        expectSelectionVisible(h, render: true)
        h.press(.home)
        #expect(h.selectedIndex(.pending) == 0)
        expectSelectionVisible(h, render: true)
    }
}
