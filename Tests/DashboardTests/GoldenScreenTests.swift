import Dashboard
import Foundation
import Testing
import TaskState

/// One screen to compare: data, UI state, look, and the sizes to render it at.
struct GoldenCase: Sendable, CustomTestStringConvertible {
    var name: String
    var snapshot: DashboardSnapshot
    var state: DashboardState
    var theme: Theme = .builtInDefault
    var glyphs: Glyphs = .unicode
    var sizes: [ScreenSize] = GoldenCase.standardSizes

    static let standardSizes = [ScreenSize(width: 80, height: 24), ScreenSize(width: 160, height: 48)]

    var testDescription: String { name }

    /// `state` after pressing `keys` on `snapshot` at 80×24 (the effects are ignored).
    static func pressing(_ keys: [Key], on snapshot: DashboardSnapshot, from state: DashboardState = DashboardState()) -> DashboardState {
        var state = state
        for key in keys {
            let layout = DashboardLayout(size: standardSizes[0], snapshot: snapshot, state: state)
            _ = state.handle(key, snapshot: snapshot, layout: layout)
        }
        return state
    }

    /// A state focused on `panel` with the row `id` selected.
    static func focused(_ panel: Panel, id: String?, overlay: DashboardState.Overlay = .none) -> DashboardState {
        var state = DashboardState()
        state.focus = panel
        if let id { state.selection[panel] = id }
        state.overlay = overlay
        return state
    }

    static let all: [GoldenCase] = {
        let busy = Fixtures.busy
        let row = Fixtures.rowID
        var cases: [GoldenCase] = [
            GoldenCase(name: "empty", snapshot: Fixtures.empty, state: DashboardState()),
            GoldenCase(name: "busy", snapshot: busy, state: DashboardState()),
            GoldenCase(name: "expiring", snapshot: Fixtures.expiring, state: focused(.running, id: nil)),
            GoldenCase(name: "throttled", snapshot: Fixtures.throttled, state: DashboardState()),
            GoldenCase(name: "transfers", snapshot: Fixtures.transfers,
                       state: focused(.transfers, id: row("com.example.news", "feed-archive"))),
            GoldenCase(name: "filterActive", snapshot: busy,
                       state: pressing([.character("/")] + "photos".map(Key.character) + [.enter], on: busy)),
            GoldenCase(name: "filterEditing", snapshot: busy,
                       state: pressing([.character("/")] + "weather".map(Key.character), on: busy)),
            GoldenCase(name: "filterNoMatch", snapshot: busy,
                       state: pressing([.character("/")] + "zzz".map(Key.character) + [.enter], on: busy)),
            GoldenCase(name: "helpOverlay", snapshot: busy, state: pressing([.character("?")], on: busy)),
            GoldenCase(name: "helpOverlayReadOnly", snapshot: busy,
                       state: pressing([.character("?")], on: busy, from: DashboardState(readOnly: true))),
            GoldenCase(name: "detailPending", snapshot: busy,
                       state: focused(.pending, id: row("com.example.weather", "com.example.weather.refresh"), overlay: .detail)),
            GoldenCase(name: "detailPendingManyBlockers", snapshot: busy,
                       state: focused(.pending, id: row("org.example.backup", "org.example.backup.nightly"), overlay: .detail)),
            GoldenCase(name: "pendingPredictedUse", snapshot: Fixtures.predicted, state: focused(.pending, id: nil)),
            GoldenCase(name: "detailPredictedUse", snapshot: Fixtures.predicted,
                       state: focused(.pending, id: row("com.example.reader", "com.example.reader.refresh"), overlay: .detail)),
            GoldenCase(name: "detailHeldPush", snapshot: busy,
                       state: focused(.pending, id: row("com.example.chat", "push-5e1f0a9c"), overlay: .detail)),
            GoldenCase(name: "detailLongHistory", snapshot: Fixtures.longHistory,
                       state: focused(.pending, id: row("com.example.weather", "com.example.weather.refresh"), overlay: .detail)),
            GoldenCase(name: "detailRunning", snapshot: busy,
                       state: focused(.running, id: row("com.example.mail", "com.example.mail.fetch-now"), overlay: .detail)),
            GoldenCase(name: "detailExpiring", snapshot: Fixtures.expiring,
                       state: focused(.running, id: row("com.example.weather", "com.example.weather.refresh"), overlay: .detail)),
            GoldenCase(name: "detailTransfer", snapshot: Fixtures.transfers,
                       state: focused(.transfers, id: row("com.example.news", "feed-archive"), overlay: .detail)),
            GoldenCase(name: "confirmCancel", snapshot: busy,
                       state: pressing([.character("j"), .character("c")], on: busy)),
            GoldenCase(name: "tooSmall", snapshot: busy, state: DashboardState(),
                       sizes: [ScreenSize(width: 79, height: 24), ScreenSize(width: 80, height: 23)]),
            GoldenCase(name: "tooSmallAscii", snapshot: busy, state: DashboardState(), glyphs: .ascii,
                       sizes: [ScreenSize(width: 79, height: 24)]),
            GoldenCase(name: "ascii", snapshot: busy, state: DashboardState(), glyphs: .ascii),
            GoldenCase(name: "mono", snapshot: busy, state: DashboardState(), theme: .monochrome),
            GoldenCase(name: "monoTransfers", snapshot: Fixtures.transfers, state: focused(.transfers, id: nil), theme: .monochrome),
            GoldenCase(name: "readOnly", snapshot: busy,
                       state: pressing([.character("l")], on: busy, from: DashboardState(readOnly: true))),
            GoldenCase(name: "schedulerDown", snapshot: Fixtures.schedulerDown, state: DashboardState()),
            GoldenCase(name: "focusPending", snapshot: busy,
                       state: focused(.pending, id: row("com.example.podcasts", "com.example.podcasts.download"))),
            GoldenCase(name: "focusRunning", snapshot: busy,
                       state: focused(.running, id: row("com.example.photos", "com.example.photos.thumbnails"))),
            GoldenCase(name: "focusTransfers", snapshot: busy,
                       state: focused(.transfers, id: row("com.example.photos", "upload-IMG_2041"))),
            GoldenCase(name: "wrongPanelAction", snapshot: busy,
                       state: pressing([.character("2"), .character("l")], on: busy)),
            GoldenCase(name: "bulkPending", snapshot: Fixtures.bulk(1_000),
                       state: pressing([.end, .character("k")], on: Fixtures.bulk(1_000))),
            GoldenCase(name: "conditionsMenu", snapshot: busy, state: pressing([.character("C")], on: busy)),
            GoldenCase(name: "conditionsMenuMono", snapshot: busy, state: pressing([.character("C")], on: busy), theme: .monochrome),
            GoldenCase(name: "conditionsMenuAscii", snapshot: busy, state: pressing([.character("C")], on: busy), glyphs: .ascii),
            GoldenCase(name: "timeline", snapshot: Fixtures.timeline, state: pressing([.character("T")], on: Fixtures.timeline)),
            GoldenCase(name: "timelineMono", snapshot: Fixtures.timeline, state: pressing([.character("T")], on: Fixtures.timeline),
                       theme: .monochrome),
            GoldenCase(name: "timelineAscii", snapshot: Fixtures.timeline, state: pressing([.character("T")], on: Fixtures.timeline),
                       glyphs: .ascii),
            GoldenCase(name: "timelineZoomedRuns", snapshot: Fixtures.timeline,
                       state: pressing([.character("T"), .character("+")] + Array(repeating: .down, count: 9) + [.enter],
                                       on: Fixtures.timeline)),
            GoldenCase(name: "timelineScrolledMonoAscii", snapshot: Fixtures.timeline,
                       state: pressing([.character("T"), .character("-"), .left, .down], on: Fixtures.timeline),
                       theme: .monochrome, glyphs: .ascii),
            GoldenCase(name: "timelineEmpty", snapshot: Fixtures.empty, state: pressing([.character("T")], on: Fixtures.empty)),
        ]
        // The apps panel (5), its detail and its switch-off confirmation; identifiers without
        // their app's prefix where narrow; a focused panel taking the spare rows. Each in colour,
        // monochrome and ASCII.
        let apps = Fixtures.withApps
        let stubborn = Fixtures.appRowID("com.example.stubborn")
        let looks: [(suffix: String, theme: Theme, glyphs: Glyphs)] = [("", .builtInDefault, .unicode), ("Mono", .monochrome, .unicode),
                                                                       ("Ascii", .builtInDefault, .ascii)]
        for look in looks {
            cases += [
                GoldenCase(name: "appsPanel" + look.suffix, snapshot: apps, state: focused(.apps, id: stubborn),
                           theme: look.theme, glyphs: look.glyphs),
                GoldenCase(name: "detailApp" + look.suffix, snapshot: apps,
                           state: focused(.apps, id: Fixtures.appRowID("com.example.weather"), overlay: .detail),
                           theme: look.theme, glyphs: look.glyphs),
                GoldenCase(name: "confirmAppSwitch" + look.suffix, snapshot: apps,
                           state: pressing([.character("d")], on: apps, from: focused(.apps, id: stubborn)),
                           theme: look.theme, glyphs: look.glyphs),
                GoldenCase(name: "identifierPrefix" + look.suffix, snapshot: Fixtures.stubborn, state: DashboardState(),
                           theme: look.theme, glyphs: look.glyphs),
                GoldenCase(name: "focusGrows" + look.suffix, snapshot: Fixtures.busyTransfers, state: focused(.transfers, id: nil),
                           theme: look.theme, glyphs: look.glyphs),
                // CPU% and MEM, sorted by CPU (s five times from remaining), with a launch being ended.
                GoldenCase(name: "runningResources" + look.suffix, snapshot: Fixtures.withResources,
                           state: pressing(Array(repeating: .character("s"), count: 5), on: Fixtures.withResources,
                                           from: focused(.running, id: nil)),
                           theme: look.theme, glyphs: look.glyphs),
            ]
        }
        // VoIP standing: the PUSH column's marker (block, ring, Nmiss) and the detail's line.
        let voipApps = Fixtures.withVoIPApps
        cases += [
            GoldenCase(name: "appsPanelVoIP", snapshot: voipApps, state: focused(.apps, id: Fixtures.appRowID("com.example.phone"))),
            GoldenCase(name: "detailAppVoIP", snapshot: voipApps,
                       state: focused(.apps, id: Fixtures.appRowID("com.example.phone"), overlay: .detail)),
            GoldenCase(name: "appsPanelVoIPAscii", snapshot: voipApps, state: focused(.apps, id: Fixtures.appRowID("com.example.talk")),
                       theme: .monochrome, glyphs: .ascii),
        ]
        // The log pager (o) on the running mail handler's launch: following it, after a search,
        // while a search is typed; monochrome and ASCII.
        let mailLaunch: [Key] = [.character("2"), .character("j"), .character("o")]
        let pager = LogPagerFixture.state(pressing: mailLaunch)
        cases += [
            GoldenCase(name: "logPager", snapshot: busy, state: pager),
            GoldenCase(name: "logPagerSearch", snapshot: busy,
                       state: LogPagerFixture.state(pressing: mailLaunch + [.character("/")] + "error".map(Key.character) + [.enter])),
            GoldenCase(name: "logPagerSearchTyping", snapshot: busy,
                       state: LogPagerFixture.state(pressing: mailLaunch + [.character("/")] + "quota".map(Key.character))),
            GoldenCase(name: "logPagerMono", snapshot: busy, state: pager, theme: .monochrome),
            GoldenCase(name: "logPagerAscii", snapshot: busy, state: pager, glyphs: .ascii),
        ]
        // A running task's totals, and a launch being ended after its tasks finished.
        let resources = Fixtures.withResources
        cases += [
            GoldenCase(name: "detailResources", snapshot: resources,
                       state: focused(.running, id: row("com.example.photos", "com.example.photos.thumbnails"), overlay: .detail)),
            GoldenCase(name: "detailEndingLaunch", snapshot: resources,
                       state: focused(.running, id: "launch/com.example.news-1795348790000", overlay: .detail)),
        ]
        // Events: select the third-newest event through the view's own row ids.
        let events = busy.rows(.events, state: focused(.events, id: nil))
        cases.append(GoldenCase(name: "focusEvents", snapshot: busy, state: focused(.events, id: events.ids[2])))
        cases.append(GoldenCase(name: "remoteHosts", snapshot: Fixtures.remoteHosts, state: DashboardState()))
        cases.append(GoldenCase(name: "remoteHostLost", snapshot: Fixtures.remoteHostLost, state: DashboardState()))
        cases.append(GoldenCase(name: "remoteHostsMono", snapshot: Fixtures.remoteHosts, state: DashboardState(), theme: .monochrome,
                                glyphs: .ascii, sizes: [ScreenSize(width: 160, height: 48)]))
        return cases
    }()
}

@Suite("Golden screens")
struct GoldenScreenTests {
    @Test(arguments: GoldenCase.all)
    func screen(_ golden: GoldenCase) {
        for size in golden.sizes {
            let grid = DashboardView.render(golden.snapshot, state: golden.state, size: size, theme: golden.theme, glyphs: golden.glyphs)
            #expect(grid.size == size)
            GoldenScreen.assertMatches(grid, named: "\(golden.name)-\(size.width)x\(size.height)")
        }
    }

    @Test func everyGoldenFileBelongsToACase() {
        let expected = Set(GoldenCase.all.flatMap { golden in golden.sizes.map { "\(golden.name)-\($0.width)x\($0.height).golden" } })
        let present = ((try? FileManager.default.contentsOfDirectory(atPath: GoldenScreen.directory.path)) ?? [])
            .filter { $0.hasSuffix(".golden") }
        let stale = Set(present).subtracting(expected).sorted()
        #expect(stale.isEmpty, "golden files no case renders (delete them): \(stale.joined(separator: ", "))")
    }

    @Test func encodingAssignsLettersInOrderOfFirstAppearance() {
        var grid = CellGrid(size: ScreenSize(width: 3, height: 2))
        let red = CellStyle(foreground: .rgb(255, 0, 0), bold: true)
        grid.put("ab", x: 1, y: 0, style: red)
        grid.put("c", x: 0, y: 1, style: CellStyle(background: .rgb(0, 0, 16), dim: true, reverse: true, underline: true))
        let text = GoldenScreen.encode(grid, name: "tiny")
        #expect(text == """
            # bgtop golden screen tiny, 3x2; rows end with ¶
            -- text
             ab¶
            c  ¶
            -- styles
            ABB¶
            CAA¶
            -- legend
            A fg=default bg=default
            B fg=#ff0000 bg=default bold
            C fg=default bg=#000010 dim reverse underline

            """)
    }

    @Test func firstDifferenceNamesTheLine() {
        #expect(GoldenScreen.firstDifference(expected: "a\nb\nc", actual: "a\nb\nc") == nil)
        #expect(GoldenScreen.firstDifference(expected: "a\nb\nc", actual: "a\nX\nc") == "line 2 differs\n  expected: b\n  actual:   X")
        #expect(GoldenScreen.firstDifference(expected: "a", actual: "a\nb") == "line 2 differs\n  expected: <end of file>\n  actual:   b")
    }
}
