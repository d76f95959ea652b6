import Dashboard
import Foundation
import Testing
import TaskState
#if canImport(Glibc)
import Glibc
#endif

private let k = Key.character

/// The log pager as the shell drives it: `o` asks for the selected launch's part of the log, the
/// real reader answers, keys scroll and search by asking for chunks, inotify's reports read what
/// was appended, and a truncated or replaced log is read again.
@Suite("Log pager")
struct LogPagerTests {
    private func reads(_ effects: [DashboardEffect]) -> [LogRequest] {
        effects.compactMap { if case .readLog(let request) = $0 { return request } else { return nil } }
    }

    /// Opens the pager on the mail app's log from its end, the reads answered.
    private func open(_ fixture: LogPagerFixture, _ h: inout KeyHarness) {
        fixture.answer(h.state.openLog(app: Fixtures.id("com.example.mail"), subject: "end", position: .end, size: h.size), into: &h.state)
    }

    /// The text rows of the pager's lines on screen.
    private func screenLines(_ h: KeyHarness) -> [String] {
        let lines = h.render().textLines
        return lines[1..<(lines.count - 2)].map { String($0.dropFirst(2).dropLast()).trimmingCharacters(in: .whitespaces) }
    }

    @Test func oOnARunningHandlerAsksForItsLaunchAndShowsItsOutput() throws {
        let fixture = try LogPagerFixture()
        var h = KeyHarness()
        h.press(k("2"), k("j"))
        #expect(h.selected(.running) == "com.example.mail/com.example.mail.fetch-now")
        let effects = h.press(k("o"))
        #expect(h.state.overlay == .logPager)
        #expect(reads(effects).map(\.position) == [.launch(launchID: "launch-31337", identifier: "com.example.mail.fetch-now", offset: nil)])
        #expect(h.state.followedLog == Fixtures.id("com.example.mail"))
        fixture.answer(effects, into: &h.state)
        let pager = try #require(h.state.logPager)
        let marker = try #require(pager.lines.first { $0.text.hasPrefix("--- bgtaskd: launch launch-31337 ") })
        #expect(pager.match == marker.offset)
        // Its output fits on screen and reaches the end of the log: it is followed.
        #expect(pager.follow)
        #expect(screenLines(h).contains { $0.hasPrefix("--- bgtaskd: launch launch-31337 appRefresh com.example.mail.fetch-now") })
        #expect(screenLines(h).contains("^[[31mwarning^[[0m: certificate expires in 6 days"))
    }

    @Test func oOnEachPanelNamesTheRowsApp() throws {
        var h = KeyHarness()
        #expect(reads(h.press(k("o"))).map(\.app) == [h.snapshot.pending[h.snapshot.rows(.pending, state: h.state).sourceIndices[0]].request.app])
        #expect(reads(h.press(.escape)).isEmpty && h.state.overlay == .none && h.state.logPager == nil)
        h.press(k("3"))
        #expect(reads(h.press(k("o"))).map(\.position) == [.end])
        h.press(k("q"))
        #expect(h.state.overlay == .none)
        // Events: a launched event with an offset goes to it; one without an app is refused.
        var snapshot = Fixtures.busy
        snapshot.events.append(Event(time: Fixtures.at(-1), type: .launched, app: Fixtures.id("com.example.mail"),
                                     identifier: Fixtures.id("com.example.mail.sync"), message: "launched", logOffset: 1234))
        snapshot.events.append(Event(time: Fixtures.at(0), type: .conditionsChanged, message: "power: battery -> ac"))
        var events = KeyHarness(snapshot)
        events.press(k("4"))
        #expect(events.press(k("o")).isEmpty)
        #expect(events.state.status == DashboardState.Status("this conditionsChanged event names no app: o opens the log of a row's app", isError: true))
        events.press(.down)
        #expect(reads(events.press(k("o"))).map(\.position) == [.launch(launchID: nil, identifier: "com.example.mail.sync", offset: 1234)])
        #expect(events.press(k("o")).isEmpty && events.state.overlay == .none, "o closes the pager too")
        // A transfer's event names a transfer, not a launch: its app's log opens at the end.
        let restarted = try #require(events.ids(.events).firstIndex { $0.contains("transferRestarted") })
        events.press(k("g"))
        for _ in 0..<restarted { events.press(.down) }
        #expect(reads(events.press(k("o"))).map(\.position) == [.end])
        #expect(events.state.logPager?.app == Fixtures.id("com.example.podcasts"))
    }

    @Test func scrollingUpReadsEarlierChunksAndTheWindowStaysBounded() throws {
        let lines = (0..<20_000).map { "line \($0)\n" }.joined()
        let fixture = try LogPagerFixture(app: "com.example.mail", text: lines)
        var h = KeyHarness()
        open(fixture, &h)
        #expect(h.state.logPager?.lines.count == LogPager.chunkLines)
        #expect(screenLines(h).last == "line 19999")
        // Page up through more than the window holds: every chunk above is read when it is needed.
        for _ in 0..<200 { fixture.press([.pageUp], &h) }
        let pager = try #require(h.state.logPager)
        #expect(pager.lines.count <= LogPager.capacity)
        #expect(!pager.follow && !pager.reachesEnd)
        let first = try #require(screenLines(h).first)
        #expect(first == "line \(20_000 - 200 * 20 - 21)")
        // g reads the start, G the end, following again.
        fixture.press([k("g")], &h)
        #expect(screenLines(h).first == "line 0")
        fixture.press([k("G")], &h)
        #expect(screenLines(h).last == "line 19999")
        #expect(h.state.logPager?.follow == true)
    }

    @Test func anAppendIsReadWhenTheLogChangesAndAnUnfinishedLineIsReadAgain() throws {
        let fixture = try LogPagerFixture()
        var h = KeyHarness()
        open(fixture, &h)
        try fixture.append("half a li")
        fixture.answer(h.state.logFileChanged(), into: &h.state)
        #expect(screenLines(h).last == "half a li")
        try fixture.append("ne\nand another\n")
        let effects = h.state.logFileChanged()
        #expect(reads(effects).count == 1)
        fixture.answer(effects, into: &h.state)
        #expect(Array(screenLines(h).suffix(2)) == ["half a line", "and another"])
        // Not following: what is appended is read, but the view stays where it is until f.
        fixture.press([.pageUp], &h)
        #expect(h.state.logPager?.follow == false)
        try fixture.append("later\n")
        let quiet = h.state.logFileChanged()
        fixture.answer(quiet, into: &h.state)
        #expect(!screenLines(h).contains("later"))
        fixture.press([k("f")], &h)
        fixture.answer(h.state.logFileChanged(), into: &h.state)
        #expect(screenLines(h).last == "later")
    }

    @Test func aTruncatedOrReplacedLogIsReadAgainFromItsEnd() throws {
        let fixture = try LogPagerFixture()
        var h = KeyHarness()
        open(fixture, &h)
        #expect(truncate(fixture.logPath(), 0) == 0)
        try fixture.append("fresh start\n")
        fixture.answer(h.state.logFileChanged(), into: &h.state)
        #expect(screenLines(h).filter { !$0.isEmpty } == ["fresh start"])
        #expect(h.state.logPager?.message == "the log was truncated or replaced; reading it again from its end")

        try Data("rotated in\n".utf8).write(to: URL(fileURLWithPath: fixture.logPath() + ".1"))
        #expect(rename(fixture.logPath() + ".1", fixture.logPath()) == 0)
        fixture.answer(h.state.logFileChanged(), into: &h.state)
        #expect(screenLines(h).filter { !$0.isEmpty } == ["rotated in"])
    }

    @Test func answersToReadsNoLongerAskedForAreDropped() throws {
        let fixture = try LogPagerFixture()
        var h = KeyHarness()
        let first = reads(h.state.openLog(app: Fixtures.id("com.example.mail"), subject: "end", position: .end, size: h.size))
        let second = reads(h.press(k("g")))
        #expect(first.count == 1 && second.count == 1 && first[0].serial != second[0].serial)
        #expect(h.state.receiveLog(LogReader.read(first[0], paths: fixture.paths)).isEmpty)
        #expect(h.state.logPager?.lines.isEmpty == true)
        _ = h.state.receiveLog(LogReader.read(second[0], paths: fixture.paths))
        #expect(h.state.logPager?.lines.first?.offset == 0)
    }

    @Test func slashSearchesTheWindowThenTheLogBothWays() throws {
        var text = "needle at the top\n" + (0..<3000).map { "filler \($0)\n" }.joined()
        text += "a NEEDLE in the middle\n" + (0..<100).map { "more \($0)\n" }.joined()
        let fixture = try LogPagerFixture(text: text)
        var h = KeyHarness()
        open(fixture, &h)
        // Typed like the filter: keys are text (q does not close), Enter runs it.
        fixture.press([k("/")] + "needq".map(k) + [.backspace] + "le".map(k), &h)
        #expect(h.state.logPager?.searchDraft == "needle")
        #expect(h.render().textLines[22].contains("search: needle_"))
        fixture.press([.enter], &h)
        let middle = try #require(h.state.logPager?.match)
        #expect(h.state.logPager?.lines.first { $0.offset == middle }?.text == "a NEEDLE in the middle")
        // n: older, beyond the window (read from the log); N: newer again.
        fixture.press([k("n")], &h)
        #expect(h.state.logPager?.match == 0)
        #expect(screenLines(h).contains("needle at the top"))
        fixture.press([k("n")], &h)
        #expect(h.state.logPager?.message == "no match for \"needle\" above")
        fixture.press([k("N")], &h)
        #expect(h.state.logPager?.match == middle)
        // Escape abandons a search being typed without closing the pager.
        fixture.press([k("/"), k("x"), .escape], &h)
        #expect(h.state.overlay == .logPager && h.state.logPager?.searchDraft == nil)
    }

    @Test func aLogThatIsNotAFileIsSaidSoInThePager() throws {
        let fixture = try LogPagerFixture()
        #expect(unlink(fixture.logPath()) == 0)
        #expect(mkfifo(fixture.logPath(), 0o600) == 0)
        var h = KeyHarness()
        open(fixture, &h)
        #expect(h.state.logPager?.problem == "logs/com.example.mail.log is a FIFO, not a regular file")
        #expect(h.render().textLines[1].contains("logs/com.example.mail.log is a FIFO, not a regular file"))
    }

    @Test func theHintLineIsDrawnFromThePagerKeyTable() throws {
        let fixture = try LogPagerFixture()
        var h = KeyHarness()
        h.size = ScreenSize(width: 160, height: 48)
        open(fixture, &h)
        for glyphs in [Glyphs.unicode, .ascii] {
            let grid = DashboardView.render(h.snapshot, state: h.state, size: h.size, theme: .builtInDefault, glyphs: glyphs)
            let hints = grid.textLines[47]
            for binding in LogPagerKeys.table {
                #expect(hints.contains("\(binding.keys(for: glyphs)) \(binding.label)"), "\(binding.label) missing from: \(hints)")
            }
        }
        // bgtop --help lists the same bindings.
        for binding in LogPagerKeys.table {
            #expect(LogPagerKeys.commandLineHelp.split(separator: "\n").contains { $0.hasPrefix("  \(binding.keys) ") && $0.hasSuffix(" \(binding.label)") })
        }
        // Every pager key is bound once, and the table's keys are the pager's keys.
        let triggers = LogPagerKeys.table.flatMap { $0.triggers.map(\.trigger) }
        #expect(Set(triggers).count == triggers.count)
        for binding in LogPagerKeys.table {
            for (trigger, command) in binding.triggers {
                if case .key(let key) = trigger { #expect(LogPagerKeys.lookup(key) == command) }
            }
        }
    }
}
