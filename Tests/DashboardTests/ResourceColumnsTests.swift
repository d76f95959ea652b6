import Dashboard
import Foundation
import TaskState
import Testing

/// The running panel's CPU% and MEM: sorted the htop way (highest first, unsampled last), laid
/// out to fit 80 columns, and a launch being ended shown as such.
@Suite struct ResourceColumnsTests {
    private func state(sortedBy column: Int) -> DashboardState {
        var state = DashboardState()
        state.focus = .running
        state.sortColumn[.running] = column
        return state
    }

    private let ending = "launch/com.example.news-1795348790000"

    @Test func cpuAndMemorySortHighestFirstWithUnsampledLaunchesLast() {
        let snapshot = Fixtures.withResources
        let row = Fixtures.rowID
        #expect(snapshot.rows(.running, state: state(sortedBy: 5)).ids == [
            row("com.example.mail", "com.example.mail.fetch-now"), row("com.example.photos", "com.example.photos.thumbnails"),
            row("com.example.chat", "com.example.chat.finishing-1"), row("org.example.backup", "org.example.backup.prune"), ending,
        ])
        #expect(snapshot.rows(.running, state: state(sortedBy: 6)).ids == [
            row("com.example.photos", "com.example.photos.thumbnails"), row("com.example.mail", "com.example.mail.fetch-now"),
            row("com.example.chat", "com.example.chat.finishing-1"), row("org.example.backup", "org.example.backup.prune"), ending,
        ])
        // Without a sample there is nothing to end: only the tasks are rows.
        #expect(!Fixtures.busy.rows(.running, state: state(sortedBy: 5)).ids.contains(ending))
    }

    @Test func theColumnsFitEightyCellsAndShowHtopsUnits() {
        let screen = DashboardView.render(Fixtures.withResources, state: state(sortedBy: 5), size: ScreenSize(width: 80, height: 24),
                                          theme: .builtInDefault, glyphs: .unicode).textLines
        let header = screen.first { $0.contains("CPU%") } ?? ""
        #expect(header.contains("MEM") && header.contains("STATE") && !header.contains("ELAPSED"), "\(header)")
        func line(_ text: String) -> String { screen.first { $0.contains(text) } ?? "" }
        #expect(line("31337").contains("92.4") && line("31337").contains("44M"), "\(line("31337"))")
        #expect(line("31200").contains("12.5") && line("31200").contains("310M"), "\(line("31200"))")
        #expect(line("30001").contains(" - ") && line("30001").contains("7.0M"), "\(line("30001"))")
        #expect(line("31500").contains("ending") && line("31500").contains("2.3M"), "\(line("31500"))")

        let wide = DashboardView.render(Fixtures.withResources, state: state(sortedBy: 5), size: ScreenSize(width: 160, height: 48),
                                        theme: .builtInDefault, glyphs: .unicode).textLines
        #expect(wide.contains { $0.contains("ELAPSED") && $0.contains("CPU%") })
        // Each figure under its own header, whichever columns are shown.
        for lines in [screen, wide] {
            #expect(lines.contains { $0.contains("31337") && $0.contains("92.4  44M   running") }, "\(lines)")
        }
    }

    @Test func anEndingLaunchCannotBeExpiredButItsAppTakesAPush() {
        let snapshot = Fixtures.withResources
        var state = state(sortedBy: 5)
        state.selection[.running] = ending
        let layout = DashboardLayout(size: ScreenSize(width: 80, height: 24), snapshot: snapshot, state: state)
        #expect(state.handle(.character("e"), snapshot: snapshot, layout: layout).isEmpty)
        #expect(state.status?.isError == true)
        #expect(state.status?.text.contains("being ended") == true, "\(String(describing: state.status))")
        let push = state.handle(.character("P"), snapshot: snapshot, layout: layout)
        #expect(push.count == 1)
        #expect("\(push)".contains("com.example.news"), "\(push)")
    }
}
