import Dashboard
import Foundation
import Testing
import TaskState

/// Presses keys the way the shell does: the layout is rebuilt from the snapshot and state each time.
struct KeyHarness {
    var snapshot: DashboardSnapshot
    var state: DashboardState
    var size = ScreenSize(width: 80, height: 24)

    init(_ snapshot: DashboardSnapshot = Fixtures.busy, state: DashboardState = DashboardState()) {
        self.snapshot = snapshot
        self.state = state
    }

    var layout: DashboardLayout { DashboardLayout(size: size, snapshot: snapshot, state: state) }

    @discardableResult
    mutating func press(_ keys: Key...) -> [DashboardEffect] { press(keys) }

    @discardableResult
    mutating func press(_ keys: [Key]) -> [DashboardEffect] {
        var effects: [DashboardEffect] = []
        for key in keys { effects += state.handle(key, snapshot: snapshot, layout: layout) }
        return effects
    }

    mutating func type(_ text: String) { press(text.map(Key.character)) }

    func ids(_ panel: Panel) -> [String] { snapshot.rows(panel, state: state).ids }

    func selectedIndex(_ panel: Panel) -> Int? { state.currentIndex(panel, rows: snapshot.rows(panel, state: state)) }

    func selected(_ panel: Panel) -> String? { selectedIndex(panel).map { ids(panel)[$0] } }

    func render() -> CellGrid {
        DashboardView.render(snapshot, state: state, size: size, theme: .builtInDefault, glyphs: .unicode)
    }

    /// The screen row showing data row `index` of `panel` as the view draws it, from the marker.
    func markerLine(_ panel: Panel, in grid: CellGrid) -> String? {
        guard let rect = layout.panels[panel] else { return nil }
        let lines = grid.textLines
        return (layout.firstDataRow(panel)..<rect.y + rect.height - 1).map { lines[$0] }.first { Array($0)[1] == "▶" }
    }

    /// The cell a click at the first column of data row `row` (0-based, on screen) of `panel` hits.
    func cell(_ panel: Panel, row: Int) -> (x: Int, y: Int) {
        let rect = layout.panels[panel]!
        return (rect.x + 3, layout.firstDataRow(panel) + row)
    }
}

private let row = Fixtures.rowID
private let k = Key.character

@Suite("Key handling: focus and movement")
struct FocusAndMovementTests {
    @Test func tabBackTabAndDigitsMoveFocus() {
        var h = KeyHarness()
        #expect(h.state.focus == .pending)
        var order: [Panel] = []
        for _ in 0..<5 { h.press(.tab); order.append(h.state.focus) }
        #expect(order == [.running, .transfers, .events, .apps, .pending])
        h.press(.backTab, .backTab)
        #expect(h.state.focus == .events)
        h.press(.backTab, .backTab)
        #expect(h.state.focus == .running)
        for (digit, panel) in zip("54321", [Panel.apps, .events, .transfers, .running, .pending]) {
            h.press(k(digit))
            #expect(h.state.focus == panel)
        }
        #expect(h.press(k("6"), k("0")).isEmpty)
        #expect(h.state.focus == .pending)
    }

    @Test func arrowsAndJKMoveByOneAndClamp() {
        var h = KeyHarness()
        let ids = h.ids(.pending)
        #expect(h.selected(.pending) == ids[0])
        h.press(.up, k("k"))
        #expect(h.selected(.pending) == ids[0])
        h.press(k("j"))
        #expect(h.selected(.pending) == ids[1])
        h.press(.down, .down)
        #expect(h.selected(.pending) == ids[3])
        h.press(k("k"))
        #expect(h.selected(.pending) == ids[2])
        h.press(Array(repeating: .down, count: 20))
        #expect(h.selected(.pending) == ids.last)
    }

    @Test func pageHomeEndMove() {
        var h = KeyHarness()
        let ids = h.ids(.events)
        h.press(k("4"))
        let page = h.layout.visibleRows(.events)
        #expect(page >= 1)
        h.press(.pageDown)
        #expect(h.selected(.events) == ids[page])
        h.press(.pageDown)
        #expect(h.selected(.events) == ids[2 * page])
        h.press(.pageUp)
        #expect(h.selected(.events) == ids[page])
        h.press(.end)
        #expect(h.selected(.events) == ids.last)
        h.press(.pageDown)
        #expect(h.selected(.events) == ids.last)
        h.press(.home)
        #expect(h.selected(.events) == ids.first)
        h.press(.pageUp)
        #expect(h.selected(.events) == ids.first)
        h.press(k("G"))
        #expect(h.selected(.events) == ids.last)
        h.press(k("g"))
        #expect(h.selected(.events) == ids.first)
    }

    @Test func movementOnAnEmptyPanelDoesNothing() {
        var h = KeyHarness(Fixtures.empty)
        #expect(h.press(.down, .end, .pageDown, .home, .up).isEmpty)
        #expect(h.selected(.pending) == nil)
        #expect(h.state.selection.isEmpty)
    }

    @Test func eachPanelKeepsItsOwnSelection() {
        var h = KeyHarness()
        h.press(.down, .down, k("2"), .down, k("1"))
        #expect(h.selected(.pending) == h.ids(.pending)[2])
        #expect(h.selected(.running) == h.ids(.running)[1])
    }
}

@Suite("Key handling: selection follows its item")
struct SelectionIdentityTests {
    @Test func selectionFollowsTheItemWhenRowsAreResorted() {
        var h = KeyHarness()
        let podcasts = row("com.example.podcasts", "com.example.podcasts.download")
        h.state.selection[.pending] = podcasts
        let before = h.selectedIndex(.pending)
        // The request is replaced with a far later begin date: it sorts last now.
        let index = h.snapshot.pending.firstIndex { $0.request.identifier.rawValue == "com.example.podcasts.download" }!
        h.snapshot.pending[index].request.earliestBeginDate = Fixtures.at(86_400)
        #expect(h.selectedIndex(.pending) != before)
        #expect(h.selected(.pending) == podcasts)
        #expect(h.ids(.pending).last == podcasts)
        h.press(.up)
        #expect(h.selected(.pending) == h.ids(.pending)[h.ids(.pending).count - 2])
    }

    @Test func selectionFollowsTheItemWhenARowAboveDisappears() {
        var h = KeyHarness()
        h.press(.down, .down, .down)
        let chosen = h.selected(.pending)!
        let above = h.ids(.pending)[1]
        h.snapshot.pending.removeAll { Fixtures.rowID($0.request.app.rawValue, $0.request.identifier.rawValue) == above }
        #expect(h.selected(.pending) == chosen)
        #expect(h.selectedIndex(.pending) == 2)
        #expect(h.markerLine(.pending, in: h.render())?.contains(String(chosen.split(separator: "/")[0].suffix(10))) == true)
    }

    @Test func whenTheSelectedRowDisappearsTheSelectionStaysAtItsPlace() {
        var h = KeyHarness()
        h.press(.down, .down)
        let ids = h.ids(.pending)
        h.snapshot.pending.removeAll { Fixtures.rowID($0.request.app.rawValue, $0.request.identifier.rawValue) == ids[2] }
        #expect(h.selected(.pending) == ids[3])
        h.snapshot.pending.removeAll()
        #expect(h.selected(.pending) == nil)
    }

    @Test func eventSelectionFollowsTheEventWhenTheLogWindowMoves() {
        var h = KeyHarness()
        h.press(k("4"), .down, .down)
        let chosen = h.snapshot.events[h.snapshot.rows(.events, state: h.state).sourceIndices[h.selectedIndex(.events)!]]
        // The snapshot keeps the most recent events: a new one arrives and the oldest drops out.
        h.snapshot.events.removeFirst()
        h.snapshot.events.append(Fixtures.event(0, .submitted, app: "com.example.mail", id: "com.example.mail.refresh", "submitted"))
        let now = h.snapshot.events[h.snapshot.rows(.events, state: h.state).sourceIndices[h.selectedIndex(.events)!]]
        #expect(now == chosen)
    }
}

@Suite("Key handling: filter and sort")
struct FilterAndSortTests {
    @Test func slashEditsTheFilterEnterKeepsItEscClearsIt() {
        var h = KeyHarness()
        h.press(k("/"))
        #expect(h.state.isEditingFilter)
        h.type("photoz")
        h.press(.backspace)
        h.type("s")
        #expect(h.state.filter == "photos")
        #expect(h.ids(.pending) == [row("com.example.photos", "com.example.photos.upload-library")])
        h.press(.enter)
        #expect(!h.state.isEditingFilter)
        #expect(h.state.filter == "photos")
        #expect(h.ids(.running) == [row("com.example.photos", "com.example.photos.thumbnails")])
        h.press(.escape)
        #expect(h.state.filter.isEmpty)
        #expect(h.ids(.pending).count == 8)
        h.press(k("/"))
        h.type("mail")
        h.press(.escape)
        #expect(!h.state.isEditingFilter)
        #expect(h.state.filter.isEmpty)
    }

    @Test func keysAreTextWhileEditingTheFilter() {
        var h = KeyHarness()
        h.press(k("/"))
        #expect(h.press(k("q"), k("t"), k("l"), k("c"), k("?"), k("2")).isEmpty)
        #expect(h.state.filter == "qtlc?2")
        #expect(h.state.focus == .pending && h.state.overlay == .none)
        h.press(.backspace, .backspace, .backspace, .backspace, .backspace, .backspace, .backspace)
        #expect(h.state.filter.isEmpty && h.state.isEditingFilter)
    }

    @Test func filterMatchesTheBlockerWordsTheTableShows() {
        var h = KeyHarness()
        h.press(k("/"))
        h.type("begin date")
        h.press(.enter)
        #expect(h.ids(.pending).count == 2)
    }

    @Test func sCyclesSortColumnsAndSReversesTheOrder() {
        var h = KeyHarness()
        let byEarliest = h.ids(.pending)
        #expect(byEarliest.first == row("net.example.indexer-with-a-long-name", "net.example.indexer.reindex-everything-now"))
        #expect(byEarliest.last == row("org.example.backup", "org.example.backup.nightly"))
        h.press(k("s"))
        #expect(h.state.sortColumn[.pending] == 1)
        #expect(h.state.status?.text.contains("app") == true)
        #expect(h.ids(.pending) == byEarliest.sorted())
        h.press(k("S"))
        #expect(h.ids(.pending) == byEarliest.sorted().reversed())
        h.press(k("S"))
        #expect(h.ids(.pending) == byEarliest.sorted())
        h.press(k("s"))
        let identifiers = h.ids(.pending).map { $0.split(separator: "/")[1] }
        #expect(identifiers == identifiers.sorted())
        h.press(k("s"), k("s"), k("s"))
        #expect(h.state.sortColumn[.pending] == 0)
        #expect(h.ids(.pending) == byEarliest)
    }

    @Test func sortingKeepsTheSelectedItem() {
        var h = KeyHarness()
        h.press(k("2"), .down)
        let chosen = h.selected(.running)
        h.press(k("s"), k("S"), k("s"))
        #expect(h.selected(.running) == chosen)
        #expect(h.ids(.running) != KeyHarness().ids(.running))
    }

    @Test func sortAppliesToTheFocusedPanelOnly() {
        var h = KeyHarness()
        let events = h.ids(.events)
        h.press(k("s"), k("S"))
        #expect(h.ids(.events) == events)
        h.press(k("4"), k("S"))
        #expect(h.ids(.events) == events.reversed())
    }
}
