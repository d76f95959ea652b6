import Dashboard
import Foundation
import Testing
import TaskState

private let k = Key.character
private let stubborn = Fixtures.appRowID("com.example.stubborn")
private let backup = Fixtures.appRowID("org.example.backup")

@Suite("Apps panel: keys")
struct AppsPanelKeyTests {
    @Test func fiveFocusesTheAppsPanelWhichComesAfterEventsInTabOrder() {
        var h = KeyHarness(Fixtures.withApps)
        h.press(k("5"))
        #expect(h.state.focus == .apps)
        h.press(.tab)
        #expect(h.state.focus == .pending)
        h.press(.backTab)
        #expect(h.state.focus == .apps)
        h.press(.backTab)
        #expect(h.state.focus == .events)
        h.press(.tab)
        #expect(h.state.focus == .apps)
        // One row per app, sorted by name.
        #expect(h.ids(.apps) == ["com.example.broken", "com.example.mail", "com.example.stubborn", "com.example.weather",
                                 "net.example.ghost", "org.example.backup"].map(Fixtures.appRowID))
    }

    @Test func dAsksFirstAndYSwitchesTheAppOff() {
        var h = KeyHarness(Fixtures.withApps, state: GoldenCase.focused(.apps, id: stubborn))
        #expect(h.press(k("d")).isEmpty)
        #expect(h.state.overlay == .confirmAppSwitch(app: Fixtures.id("com.example.stubborn"), enable: false))
        #expect(h.render().textLines.contains { $0.contains("Switch background work for com.example.stubborn off?") })
        let effects = h.press(k("y"))
        #expect(effects == [.send(.setAppEnabled(app: Fixtures.id("com.example.stubborn"), enabled: false),
                                  summary: "switch com.example.stubborn off")])
        #expect(h.state.overlay == .none)
    }

    @Test func dOnAnAppThatIsOffSwitchesItOnAndAnyOtherKeyAbandons() {
        var h = KeyHarness(Fixtures.withApps, state: GoldenCase.focused(.apps, id: backup))
        h.press(k("d"))
        #expect(h.state.overlay == .confirmAppSwitch(app: Fixtures.id("org.example.backup"), enable: true))
        // The answer is consumed: `q` does not quit, and nothing is sent.
        #expect(h.press(k("q")).isEmpty)
        #expect(h.state.overlay == .none)
        #expect(h.state.status?.text == "org.example.backup left off")
        h.press(k("d"))
        #expect(h.press(k("Y")) == [.send(.setAppEnabled(app: Fixtures.id("org.example.backup"), enabled: true),
                                        summary: "switch org.example.backup on")])
    }

    @Test func dIsRefusedInReadOnlyModeAndOutsideTheAppsPanel() {
        var h = KeyHarness(Fixtures.withApps, state: GoldenCase.focused(.apps, id: stubborn))
        h.state.readOnly = true
        #expect(h.press(k("d")).isEmpty)
        #expect(h.state.overlay == .none)
        #expect(h.state.status == DashboardState.Status("read-only: switch an app off or on is disabled", isError: true))

        var elsewhere = KeyHarness(Fixtures.withApps)
        #expect(elsewhere.press(k("d")).isEmpty)
        #expect(elsewhere.state.overlay == .none)
        #expect(elsewhere.state.status?.text.contains("press 5") == true)
    }

    @Test func enterOpensTheAppsDetailWithItsWorkAndWeek() {
        var h = KeyHarness(Fixtures.withApps, state: GoldenCase.focused(.apps, id: Fixtures.appRowID("com.example.weather")))
        h.size = ScreenSize(width: 160, height: 48)
        h.press(.enter)
        #expect(h.state.overlay == .detail)
        let text = h.render().textLines.joined(separator: "\n")
        for expected in ["background work", "pid 30950", "24 launches, 1 expiry, 1 kill", "3 of 3", "requests", "…refresh",
                         "week of use", "history", "throttled for 15m"] {
            #expect(text.contains(expected), "\(expected)")
        }
        h.press(.enter)
        #expect(h.state.overlay == .none)
    }

    @Test func filterAndSortWorkOnApps() {
        var h = KeyHarness(Fixtures.withApps)
        h.press(k("5"), k("/"))
        h.type("throttled")
        h.press(.enter)
        #expect(h.ids(.apps) == [stubborn])
        h.press(.escape)
        // Sort by throttle: the throttled app first.
        h.press(k("s"))
        #expect(h.ids(.apps).first == stubborn)
        #expect(h.state.status?.text == "Apps: sorted by throttle")
        // By last launch: the newest first.
        h.press(k("s"))
        #expect(h.ids(.apps).first == Fixtures.appRowID("com.example.mail"))
    }

    @Test func aClickSelectsAnAppEvenWhenItsBoxIsCompact() {
        var h = KeyHarness(Fixtures.withApps)
        #expect(!h.layout.showsColumnHeader(.apps))
        let rect = h.layout.panels[.apps]!
        h.press(.click(x: 5, y: h.layout.firstDataRow(.apps)))
        #expect(h.state.focus == .apps)
        #expect(h.selected(.apps) == h.ids(.apps)[0])
        // Focused, the box grows and shows its header: the same app stays selected and in view.
        #expect(h.layout.showsColumnHeader(.apps))
        #expect(h.layout.panels[.apps]!.height > rect.height)
        #expect(h.markerLine(.apps, in: h.render())?.contains("broken") == true)
    }
}

@Suite("Layout: the focused panel grows")
struct FocusedLayoutTests {
    private static let size = ScreenSize(width: 80, height: 24)

    @Test(arguments: Panel.allCases)
    func atEightyByTwentyFourAllFivePanelsShowAndTheFocusedOneGetsTheSpareRows(_ focus: Panel) {
        let snapshot = Fixtures.withApps
        var state = DashboardState()
        state.focus = focus
        let layout = DashboardLayout(size: Self.size, snapshot: snapshot, state: state)
        let rows = Panel.allCases.map { snapshot.rows($0, state: state).count }
        for panel in Panel.allCases {
            #expect(layout.visibleRows(panel) >= 1, "\(panel) shows a row")
            if panel != focus { #expect(layout.visibleRows(panel) <= layout.visibleRows(focus) || layout.visibleRows(focus) >= rows[focus.rawValue]) }
        }
        // The focused panel shows as many rows as it has, up to what the screen allows.
        #expect(layout.visibleRows(focus) >= min(rows[focus.rawValue], 5))
        let heights = Panel.allCases.map { layout.panels[$0]!.height }
        #expect(heights.reduce(0, +) == Self.size.height - 4)
    }

    @Test func aFocusedPanelWithFewRowsLeavesTheRestToTheOthers() {
        var state = DashboardState()
        state.focus = .running
        let snapshot = Fixtures.expiring
        let layout = DashboardLayout(size: ScreenSize(width: 160, height: 48), snapshot: snapshot, state: state)
        // Two running handlers: the box holds them and no more; events take the rows they can use.
        #expect(layout.visibleRows(.running) == 2)
        #expect(layout.visibleRows(.events) >= 3)
    }

    @Test func onATallTerminalTheFocusedPanelTakesWhatItCanUse() {
        var state = DashboardState()
        var bulk = Fixtures.bulk(1_000)
        bulk.events = Fixtures.busyEvents
        let size = ScreenSize(width: 160, height: 48)
        let focusedLayout = DashboardLayout(size: size, snapshot: bulk, state: state)
        // Every other panel keeps its full box with a header and one row.
        for panel in Panel.allCases where panel != .pending { #expect(focusedLayout.panels[panel]!.height == 4) }
        #expect(focusedLayout.visibleRows(.pending) == 48 - 4 - 4 * 4 - 3)
        #expect(focusedLayout.visibleRows(.events) == 1)
        // Focus moves to the events: they take what they can show, the pending panel what is left.
        state.focus = .events
        let eventsLayout = DashboardLayout(size: size, snapshot: bulk, state: state)
        #expect(eventsLayout.visibleRows(.events) == Fixtures.busyEvents.count)
        #expect(eventsLayout.visibleRows(.pending) == 48 - 4 - 4 * 3 - (Fixtures.busyEvents.count + 3) - 3)
    }
}

@Suite("Identifiers beside their app")
struct IdentifierPrefixTests {
    @Test func narrowColumnsDropTheAppsPrefixAndWideOnesShowTheWhole() {
        var h = KeyHarness(Fixtures.stubborn)
        let narrow = h.render().textLines.joined(separator: "\n")
        #expect(narrow.contains("…refresh"))
        #expect(narrow.contains("…cleanup"))
        #expect(!narrow.contains("com.example.stubborn.refresh"))
        h.size = ScreenSize(width: 160, height: 48)
        let wide = h.render().textLines.joined(separator: "\n")
        #expect(wide.contains("com.example.stubborn.refresh"))
        #expect(wide.contains("com.example.stubborn.cleanup"))
    }
}
