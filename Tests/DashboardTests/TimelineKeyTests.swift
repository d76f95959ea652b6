import Dashboard
import Foundation
import Testing
import TaskState

/// `T` opens the timeline; while it is open, its own keys zoom, scroll, pick a lane and close it,
/// and every other key does nothing.
@Suite struct TimelineKeyTests {
    /// The timeline opened on the timeline fixture.
    static func opened() -> KeyHarness {
        var h = KeyHarness(Fixtures.timeline)
        h.press(.character("T"))
        return h
    }

    static func position(_ h: KeyHarness) throws -> TimelinePosition {
        guard case .timeline(let position) = h.state.overlay else { throw TimelineClosed() }
        return position
    }

    struct TimelineClosed: Error {}

    @Test func tOpensAnHourAroundNow() throws {
        let h = Self.opened()
        let position = try Self.position(h)
        #expect(position == TimelinePosition())
        #expect(position.span == 3600 && position.offset == 0)
        let window = position.window(now: Fixtures.now)
        #expect(window.start == Fixtures.at(-2700) && window.end == Fixtures.at(900))
    }

    @Test(arguments: [Key.escape, .character("T"), .character("q")])
    func itsCloseKeysCloseIt(_ key: Key) {
        var h = Self.opened()
        #expect(h.press(key).isEmpty, "q closes the timeline, it does not quit")
        #expect(h.state.overlay == .none)
    }

    @Test func plusAndMinusStepThroughTheZoomsAndStopAtTheEnds() throws {
        var h = Self.opened()
        var spans: [TimeInterval] = []
        for _ in 0..<3 {
            h.press(.character("+"))
            spans.append(try Self.position(h).span)
        }
        #expect(spans == [1800, 600, 600])
        spans = []
        for _ in 0..<6 {
            h.press(.character("-"))
            spans.append(try Self.position(h).span)
        }
        let wider: [TimeInterval] = [1800, 3600, 10_800, 43_200, 86_400, 86_400]
        #expect(spans == wider)
        h.press(.character("="), .character("="))
        #expect(try Self.position(h).span == 3 * 3600, "= is + without shift")
        h.press(.character("_"))
        #expect(try Self.position(h).span == 12 * 3600)
        #expect(try Self.position(h).offset == 0, "zooming a window that follows now keeps following it")
    }

    @Test func arrowsScrollByAQuarterAndZeroComesBackToNow() throws {
        var h = Self.opened()
        h.press(.left)
        #expect(try Self.position(h).offset == -900)
        h.press(.character("h"), .character("h"))
        #expect(try Self.position(h).offset == -2700)
        h.press(.right)
        #expect(try Self.position(h).offset == -1800)
        h.press(.character("l"))
        #expect(try Self.position(h).offset == -900)
        h.press(.character("0"))
        #expect(try Self.position(h).offset == 0)
        h.press(.left, .home)
        #expect(try Self.position(h).offset == 0)
    }

    @Test func zoomingAScrolledWindowKeepsItsMiddle() throws {
        var h = Self.opened()
        h.press(.left, .left)
        let before = try Self.position(h).window(now: Fixtures.now)
        h.press(.character("+"))
        let after = try Self.position(h).window(now: Fixtures.now)
        let middle = { (window: (start: Date, end: Date)) in window.start.timeIntervalSince1970 / 2 + window.end.timeIntervalSince1970 / 2 }
        #expect(middle(before) == middle(after))
        #expect(after.end.timeIntervalSince(after.start) == 1800)
    }

    @Test func scrollingStopsAtTheHistorysEndsEitherWay() throws {
        var h = Self.opened()
        h.press(Array(repeating: .left, count: 200))
        #expect(try Self.position(h).offset == -TimelinePosition.furthestBack)
        h.press(Array(repeating: .right, count: 400))
        #expect(try Self.position(h).offset == TimelinePosition.furthestAhead)
    }

    @Test func upAndDownPickALaneWithinTheLanes() throws {
        var h = Self.opened()
        let lanes = TimelineLanes.apps(h.snapshot)
        #expect(lanes.count > 3)
        h.press(.up)
        #expect(try Self.position(h).lane == 0)
        h.press(.down, .character("j"))
        #expect(try Self.position(h).lane == 2)
        h.press(.character("k"))
        #expect(try Self.position(h).lane == 1)
        h.press(Array(repeating: .down, count: lanes.count + 5))
        #expect(try Self.position(h).lane == lanes.count - 1)
    }

    @Test func enterListsTheLanesRunsAndHidesThem() throws {
        var h = Self.opened()
        h.press(.enter)
        #expect(try Self.position(h).showsRuns)
        h.press(.enter)
        #expect(try !Self.position(h).showsRuns)
    }

    /// The panels' keys do not reach through the timeline: no command is sent, nothing changes.
    @Test(arguments: ["a", "e", "c", "p", "P", "/", "1", "s", "t", "?", "x"])
    func otherKeysDoNothingWhileItIsOpen(_ text: String) throws {
        var h = Self.opened()
        h.press(.character("h"))  // so that a scroll key would show
        let before = h.state
        let key = Key.character(Character(text))
        // Checked, not skipped: a key the timeline binds would make this case assert nothing.
        try #require(TimelineKeys.command(for: key) == nil, "\(text) is a timeline key")
        #expect(h.press(key).isEmpty)
        #expect(h.state == before)
        #expect(h.press(.tab, .backTab, .pageDown, .end).isEmpty)
        #expect(h.state == before)
    }

    @Test func everyTimelineKeyIsBoundOnce() {
        let keys = TimelineKeys.table.flatMap { $0.triggers.map(\.key) }
        #expect(Set(keys).count == keys.count)
        for binding in TimelineKeys.table {
            for trigger in binding.triggers { #expect(TimelineKeys.command(for: trigger.key) == trigger.command) }
        }
    }

    /// The hint line in the footer's place is the table's, in its order, in either glyph set.
    @Test(arguments: [Glyphs.unicode, .ascii])
    func theHintLineIsDrawnFromTheTable(_ glyphs: Glyphs) {
        let h = Self.opened()
        for size in [ScreenSize(width: 80, height: 24), ScreenSize(width: 160, height: 48)] {
            let grid = DashboardView.render(h.snapshot, state: h.state, size: size, theme: .builtInDefault, glyphs: glyphs)
            let expected = " " + TimelineKeys.table.map { "\(glyphs == .ascii ? $0.hint.ascii : $0.hint.key) \($0.hint.label)" }
                .joined(separator: "  ")
            #expect(grid.textLines[size.height - 1].hasPrefix(expected), "\(grid.textLines[size.height - 1])")
        }
    }

    /// docs/dashboard.md lists every timeline binding with its help, as the table says it.
    @Test func theDocsListTheTable() throws {
        let docs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("docs/dashboard.md")
        let text = try String(contentsOf: docs, encoding: .utf8)
        for binding in TimelineKeys.table {
            #expect(text.contains("| \(binding.keys.split(separator: ", ").map { "`\($0)`" }.joined(separator: ", ")) | \(binding.help) |"),
                    "docs/dashboard.md lacks the row for \(binding.keys)")
        }
    }
}
