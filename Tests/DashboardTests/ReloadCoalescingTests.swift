import Dashboard
import StateFeed
import Foundation
import Testing
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// Which files a burst of inotify reports makes the dashboard read again, and when.
@Suite struct StateChangeSetTests {
    let paths = StatePaths(root: "/s")
    let configApps = "/c/apps"

    private func key(_ app: String, _ id: String) -> TaskKey {
        TaskKey(app: try! Identifier(validating: app), identifier: try! Identifier(validating: id))
    }

    private func changes(_ reports: [(String, String, Int32)]) -> StateChangeSet {
        var set = StateChangeSet()
        for (directory, name, mask) in reports {
            set.add(directory: directory, name: name, mask: UInt32(mask), paths: paths, configApps: configApps)
        }
        return set
    }

    @Test func aBurstNamesEachRecordOnce() {
        // One request replaced five times (temp file, rename), another created, a task gone.
        var reports: [(String, String, Int32)] = []
        for _ in 0..<5 {
            reports.append(("/s/requests/com.a", ".tmp-123", IN_CLOSE_WRITE))
            reports.append(("/s/requests/com.a", "com.a.sync.json", IN_MOVED_TO))
        }
        reports.append(("/s/requests/com.b", "com.b.refresh.json", IN_MOVED_TO))
        reports.append(("/s/tasks/com.c", "com.c.x.json", IN_DELETE))
        let set = changes(reports)
        #expect(set.records == [.request(key("com.a", "com.a.sync")), .request(key("com.b", "com.b.refresh")),
                                .task(key("com.c", "com.c.x"))])
        #expect(!set.everything)
        #expect(!set.eventLog && !set.heartbeat && !set.conditions && !set.configuration)
    }

    @Test func rootFilesAreNamedByWhatTheyHold() {
        let set = changes([("/s", "events.jsonl", IN_MODIFY), ("/s", "events.1.jsonl", IN_MOVED_TO), ("/s", "daemon.json", IN_MOVED_TO),
                           ("/s", "journal.json", IN_CLOSE_WRITE), ("/s", "daemon.lock", IN_CLOSE_WRITE)])
        #expect(set.eventLog)
        #expect(set.heartbeat)
        #expect(!set.conditions)
        #expect(set.records.isEmpty)
        #expect(!set.everything)
        #expect(changes([("/s", "conditions.json", IN_MOVED_TO)]).conditions)
    }

    @Test func progressFilesStandForTheirTransferAndPartialDataIsIgnored() {
        let set = changes([("/s/transfers/com.d", "dl.progress", IN_CLOSE_WRITE), ("/s/transfers/com.d", "dl.json", IN_MOVED_TO),
                           ("/s/transfers/com.d", "dl.partial", IN_MODIFY), ("/s/transfers/com.d", "dl.partial.validator", IN_MOVED_TO)])
        #expect(set.records == [.transfer(key("com.d", "dl"))])
    }

    @Test func appRecordsAndManifests() {
        let set = changes([("/s/apps", "com.e.json", IN_MOVED_TO), (configApps, "com.e.json", IN_DELETE)])
        #expect(set.records == [.app(try! Identifier(validating: "com.e"))])
        #expect(set.configuration)
    }

    @Test func anAppFolderThatAppearsOrGoesIsReadAlone() {
        let app = try! Identifier(validating: "com.new")
        let created = changes([("/s/requests", "com.new", IN_CREATE | IN_ISDIR), ("/s/transfers", "com.new", IN_MOVED_TO | IN_ISDIR)])
        #expect(created.folders == [.requests(app), .transfers(app)])
        #expect(!created.everything)
        let gone = changes([("/s/tasks", "com.new", IN_DELETE | IN_ISDIR), ("/s/tasks/com.new", "", IN_DELETE_SELF)])
        #expect(gone.folders == [.tasks(app)])
        #expect(!gone.everything)
    }

    @Test func otherFoldersAndOverflowReadEverything() {
        #expect(changes([("/s", "requests", IN_CREATE | IN_ISDIR)]).everything)
        #expect(changes([("/s/requests", "not an app!", IN_CREATE | IN_ISDIR)]).everything)
        #expect(changes([("/s", "", IN_DELETE_SELF)]).everything)
        #expect(changes([("", "", IN_Q_OVERFLOW)]).everything)
        #expect(!changes([("/s/requests/com.a", "com.a.x.json", IN_MOVED_TO)]).everything)
    }

    @Test func namesThatAreNotRecordsChangeNothing() {
        let set = changes([("/s/requests/com.a", "notes.txt", IN_CLOSE_WRITE), ("/s/requests/not valid!", "x.json", IN_MOVED_TO),
                           ("/s/outcomes", "1.json", IN_MOVED_TO), ("/s/requests/com.a", ".x.json", IN_MOVED_TO)])
        #expect(set.isEmpty)
        #expect(StateChangeSet().isEmpty)
    }
}

@Suite struct ReloadPacingTests {
    @Test func nothingPendingMeansNoTimeout() {
        let pacing = ReloadPacing(interval: 0.2)
        #expect(pacing.due == nil)
        #expect(pacing.pollTimeout(at: 10) == -1)
        #expect(!pacing.isDue(at: 10))
    }

    @Test func aLoneChangeIsReadAtOnce() {
        var pacing = ReloadPacing(interval: 0.2)
        pacing.changed(at: 10)
        #expect(pacing.isDue(at: 10))
        #expect(pacing.pollTimeout(at: 10) == 0)
        pacing.reloaded(at: 10.01)
        // After a quiet spell, the next change is read at once too.
        pacing.changed(at: 11)
        #expect(pacing.isDue(at: 11))
    }

    @Test func aStreamOfChangesIsReadOncePerInterval() {
        var pacing = ReloadPacing(interval: 0.2)
        var reloads: [Double] = []
        // Reports every 5 ms for two seconds; the loop wakes for each report and for the timeout.
        var now = 0.0
        while now < 2 {
            pacing.changed(at: now)
            if pacing.isDue(at: now) {
                reloads.append(now)
                pacing.reloaded(at: now)
            }
            now += 0.005
        }
        #expect(reloads.first == 0)
        #expect(reloads.count >= 9 && reloads.count <= 11, "\(reloads.count) reloads in 2 s")
        for (earlier, later) in zip(reloads, reloads.dropFirst()) {
            #expect(later - earlier >= 0.2 - 1e-9)
        }
    }

    @Test func theTimeoutWaitsForTheRestOfTheInterval() {
        var pacing = ReloadPacing(interval: 0.2)
        pacing.changed(at: 1)
        pacing.reloaded(at: 1)
        pacing.changed(at: 1.05)
        #expect(!pacing.isDue(at: 1.05))
        #expect(pacing.due == 1.2)
        #expect(pacing.pollTimeout(at: 1.05) == 150)
        #expect(pacing.isDue(at: 1.2))
        // A second report before the reload does not move the deadline.
        pacing.changed(at: 1.1)
        #expect(pacing.due == 1.2)
    }
}
