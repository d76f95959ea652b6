import Foundation
import Testing
import SchedulerCore
import TaskState

@Suite("Attached processes and hand-over")
struct AttachmentTests {
    /// A state where pid `pid` of `news` is attached with handlers for `identifiers`, changes taken.
    private func attached(_ identifiers: [Identifier], pid: Int32 = 4242, at now: Date = t0) -> SchedulerState {
        var state = makeState()
        let result = state.run(.attach(app: Apps.news, pid: pid, identifiers: identifiers), at: now)
        #expect(result.outcome.succeeded, "\(String(describing: result.errorMessage))")
        _ = state.takeChanges()
        return state
    }

    // MARK: - Attach

    @Test func attachIsRefusedForAnAppWithoutAManifest() {
        var state = makeState()
        let result = state.run(.attach(app: Apps.ghost, pid: 4242, identifiers: []), at: t0)
        #expect(result.errorName == "unknownApp")
        #expect(result.errorMessage == "app com.example.ghost has no usable manifest")
        #expect(state.apps[Apps.ghost] == nil)
        #expect(state.attachedPIDs.isEmpty)
        let changes = state.takeChanges()
        #expect(changes.eventTypes == [.refused])
        #expect(changes.events.first?.reason == "unknownApp")
        #expect(changes.apps.isEmpty)
    }

    @Test func attachIsRefusedForIdentifiersTheAppMayNotUse() {
        var state = makeState()
        let one = state.run(.attach(app: Apps.news, pid: 4242,
                                    identifiers: [Tasks.refresh, ident("com.example.mail.refresh")]), at: t0)
        #expect(one.errorName == "notPermitted")
        #expect(one.errorMessage == "com.example.mail.refresh is not in com.example.news's permittedIdentifiers")

        let two = state.run(.attach(app: Apps.news, pid: 4242,
                                    identifiers: [ident("zzz.other"), Tasks.cleanup, ident("aaa.other")]), at: t0)
        #expect(two.errorName == "notPermitted")
        #expect(two.errorMessage == "zzz.other, aaa.other are not in com.example.news's permittedIdentifiers",
                "every foreign identifier, in the order given")

        #expect(state.apps[Apps.news]?.attachedProcess == nil)
        #expect(state.attachedPIDs.isEmpty)
        let changes = state.takeChanges()
        #expect(changes.eventTypes == [.refused, .refused])
        #expect(changes.events.allSatisfy { $0.reason == "notPermitted" && $0.app == Apps.news })
    }

    @Test(arguments: [Int32(0), -1, Int32.min])
    func attachNeedsAPositivePid(_ pid: Int32) {
        var state = makeState()
        let result = state.run(.attach(app: Apps.news, pid: pid, identifiers: [Tasks.refresh]), at: t0)
        #expect(result.errorName == "invalidCommand")
        // Caught by the bounds check every command goes through first (NumericBounds.pid).
        #expect(result.errorMessage == "bad pid '\(pid)': expected a whole number from 1 to 4194304")
        #expect(state.apps[Apps.news]?.attachedProcess == nil)
        #expect(state.takeChanges().eventTypes == [.refused])
    }

    @Test func attachRecordsTheProcessAndAnAttachedEvent() throws {
        var state = makeState()
        let result = state.run(.attach(app: Apps.news, pid: 4242,
                                       identifiers: [Tasks.refresh, Tasks.cleanup, Tasks.refresh]),
                               at: at(5), id: "cmd-attach")
        #expect(result.outcome.succeeded)
        #expect(result.outcome.message == "pid 4242 attached to com.example.news")
        #expect(result.outcome.type == .attach)
        #expect(result.launch == nil)

        let record = try #require(state.apps[Apps.news]?.attachedProcess)
        #expect(record == AttachedProcess(pid: 4242, identifiers: [Tasks.cleanup, Tasks.refresh], attachedAt: at(5)),
                "identifiers sorted, once each; start time and group are learnt later")
        #expect(state.attachedPIDs == [4242])

        let changes = state.takeChanges()
        #expect(changes.apps == [Apps.news])
        #expect(changes.eventTypes == [.attached])
        let event = try #require(changes.events.first)
        #expect(event.app == Apps.news)
        #expect(event.pid == 4242)
        #expect(event.command == "cmd-attach")
        #expect(event.reason == nil)
        #expect(event.time == at(5))
        #expect(event.message.hasPrefix("com.example.news: pid 4242 attached; due tasks go to it ("))
        #expect(event.message.contains("com.example.news.cleanup"))
        #expect(event.message.contains("com.example.news.refresh"))
    }

    @Test func attachWithNoIdentifiersSaysSo() throws {
        var state = makeState()
        #expect(state.run(.attach(app: Apps.news, pid: 7, identifiers: []), at: t0).outcome.succeeded)
        #expect(state.apps[Apps.news]?.attachedProcess?.identifiers == [])
        let event = try #require(state.takeChanges().events.first)
        #expect(event.message == "com.example.news: pid 7 attached; due tasks go to it (no identifiers)")
    }

    @Test func aNewerAttachReplacesTheOlder() throws {
        var state = attached([Tasks.refresh], pid: 100)
        let result = state.run(.attach(app: Apps.news, pid: 200, identifiers: [Tasks.cleanup]), at: at(10))
        #expect(result.outcome.message == "pid 200 attached to com.example.news")
        let record = try #require(state.apps[Apps.news]?.attachedProcess)
        #expect(record.pid == 200)
        #expect(record.identifiers == [Tasks.cleanup])
        #expect(record.attachedAt == at(10))
        #expect(state.attachedPIDs == [200], "one process per app")
        let event = try #require(state.takeChanges().events.first)
        #expect(event.type == .attached)
        #expect(event.message == "com.example.news: pid 200 attached instead of pid 100; due tasks go to it (com.example.news.cleanup)")

        // The same process attaching again replaces nothing.
        state.run(.attach(app: Apps.news, pid: 200, identifiers: [Tasks.cleanup, Tasks.backup]), at: at(20))
        let again = try #require(state.takeChanges().events.first)
        #expect(!again.message.contains("instead of"))
        #expect(state.apps[Apps.news]?.attachedProcess?.identifiers == [Tasks.backup, Tasks.cleanup])
    }

    @Test func attachmentsOfDifferentAppsAreIndependent() {
        var state = attached([Tasks.refresh], pid: 100)
        state.run(.attach(app: Apps.mail, pid: 200, identifiers: [Tasks.shared]), at: t0)
        #expect(state.apps[Apps.news]?.attachedProcess?.pid == 100)
        #expect(state.apps[Apps.mail]?.attachedProcess?.pid == 200)
        #expect(state.attachedPIDs == [100, 200])
    }

    // MARK: - Hand-over

    @Test func aDueLaunchIsHandedOverWhenTheProcessHandlesEveryIdentifier() throws {
        var state = attached([Tasks.refresh, Tasks.cleanup, Tasks.backup])
        state.submitRequest(Tasks.refresh, kind: .appRefresh, at: t0)
        state.submitRequest(Tasks.cleanup, kind: .processing, at: t0)
        let plan = try #require(state.dueLaunches(at: at(1)).first)
        #expect(plan.requests.map(\.identifier) == [Tasks.refresh, Tasks.cleanup])
        #expect(plan.handOver == state.apps[Apps.news]?.attachedProcess)
        #expect(plan.handOver?.pid == 4242)
        #expect(!plan.simulated)
    }

    @Test func aDueLaunchStartsAProcessWhenOneIdentifierHasNoHandler() throws {
        var state = attached([Tasks.refresh])
        state.submitRequest(Tasks.refresh, kind: .appRefresh, at: t0)
        state.submitRequest(Tasks.cleanup, kind: .processing, at: t0)
        let plan = try #require(state.dueLaunches(at: at(1)).first)
        #expect(plan.requests.count == 2)
        #expect(plan.handOver == nil, "cleanup has no handler in the attached process")

        // Alone, the refresh would be handed over.
        var alone = attached([Tasks.refresh])
        alone.submitRequest(Tasks.refresh, kind: .appRefresh, at: t0)
        #expect(alone.dueLaunches(at: at(1)).first?.handOver?.pid == 4242)
    }

    @Test func noHandOverWithoutAnAttachmentOfThatApp() throws {
        var state = makeState()
        state.run(.attach(app: Apps.mail, pid: 300, identifiers: [Tasks.shared]), at: t0)
        state.submitRequest(Tasks.shared, app: Apps.news, kind: .processing, at: t0)
        state.submitRequest(Tasks.shared, app: Apps.mail, kind: .processing, at: t0)
        let plans = state.dueLaunches(at: at(1))
        #expect(plans.map(\.app) == [Apps.mail, Apps.news])
        #expect(plans.first?.handOver?.pid == 300)
        #expect(plans.last?.handOver == nil, "mail's process is not news's")
    }

    @Test func theHandOverCarriesTheIdentityTheRuntimeRecorded() throws {
        var state = attached([Tasks.refresh])
        state.recordAttachmentIdentity(of: Apps.news, pid: 4242, startTicks: 777, processGroup: 4242)
        state.submitRequest(Tasks.refresh, kind: .appRefresh, at: t0)
        let target = try #require(state.dueLaunches(at: at(1)).first?.handOver)
        #expect(target.processStartTicks == 777)
        #expect(target.processGroup == 4242)
    }

    @Test func aSimulatedLaunchIsHandedOverToo() throws {
        var state = attached([Tasks.backup])
        state.submitRequest(Tasks.backup, kind: .processing, earliest: at(3 * day), at: t0)
        let result = state.run(.simulateLaunch(identifier: Tasks.backup, app: nil), at: at(10))
        let plan = try #require(result.launch)
        #expect(plan.simulated)
        #expect(plan.handOver?.pid == 4242)

        var other = attached([Tasks.refresh])
        other.submitRequest(Tasks.backup, kind: .processing, at: t0)
        let notHandled = try #require(other.run(.simulateLaunch(identifier: Tasks.backup, app: nil), at: at(10)).launch)
        #expect(notHandled.handOver == nil)
    }

    @Test func recordingAHandedOverLaunchSaysSoAndCreatesTheTaskWithThatPid() throws {
        var state = attached([Tasks.refresh, Tasks.cleanup])
        state.submitRequest(Tasks.refresh, kind: .appRefresh, at: t0)
        state.submitRequest(Tasks.cleanup, kind: .processing, at: t0)
        let plan = try #require(state.dueLaunches(at: at(10)).first)
        let target = try #require(plan.handOver)
        _ = state.takeChanges()
        state.recordLaunch(plan, pid: target.pid, processGroup: nil, processStartTicks: 55, now: at(10))

        #expect(state.requests.isEmpty, "handed-over requests are consumed like launched ones")
        let refresh = try #require(state.task(Tasks.refresh))
        #expect(refresh.pid == 4242)
        #expect(refresh.processGroup == nil)
        #expect(refresh.processStartTicks == 55)
        #expect(refresh.launchID == plan.launchID)
        #expect(refresh.deadline == at(40))
        #expect(state.task(Tasks.cleanup)?.pid == 4242)
        #expect(state.apps[Apps.news]?.launchCount == 1)
        #expect(state.apps[Apps.news]?.attachedProcess?.pid == 4242, "the process stays attached")

        let changes = state.takeChanges()
        #expect(changes.eventTypes == [.launched, .launched])
        #expect(changes.events.allSatisfy { $0.pid == 4242 && $0.reason == "appRefresh" })
        #expect(changes.events.map(\.message) == [
            "com.example.news: handed to running pid 4242: com.example.news.refresh (appRefresh, budget 30 s)",
            "com.example.news: handed to running pid 4242: com.example.news.cleanup (appRefresh, budget 600 s)",
        ])
    }

    @Test func aLaunchWithoutHandOverStillSaysLaunched() throws {
        var state = makeState()
        state.submitRequest(Tasks.refresh, kind: .appRefresh, at: t0)
        let plan = try #require(state.dueLaunches(at: at(10)).first)
        #expect(plan.handOver == nil)
        _ = state.takeChanges()
        state.recordLaunch(plan, pid: 900, processGroup: 900, processStartTicks: nil, now: at(10))
        #expect(state.takeChanges().events.first?.message
                == "com.example.news: launched pid 900 for com.example.news.refresh (appRefresh, budget 30 s)")
    }

    @Test func aHandedOverTaskThatOverrunsKillsOnlyAProcessThatDoesNotLeadItsGroup() throws {
        var state = attached([Tasks.refresh])
        state.submitRequest(Tasks.refresh, kind: .appRefresh, at: t0)
        let plan = try #require(state.dueLaunches(at: t0).first)
        state.recordLaunch(plan, pid: 4242, processGroup: plan.handOver?.processGroup, processStartTicks: nil, now: t0)
        let key = state.key(Tasks.refresh)
        #expect(state.expire(at: at(30)) == [.notifyExpiration(pid: 4242, signal: "SIGUSR1", tasks: [key])])
        #expect(state.expire(at: at(35)) == [.kill(pid: 4242, processGroup: nil, tasks: [key])])
    }

    // MARK: - Detach and release

    @Test func detachReleasesTheAttachment() throws {
        var state = attached([Tasks.refresh])
        let result = state.run(.detach(app: Apps.news, pid: 4242), at: at(30), id: "cmd-detach")
        #expect(result.outcome.succeeded)
        #expect(result.outcome.message == "pid 4242 detached from com.example.news")
        #expect(result.outcome.type == .detach)
        #expect(state.apps[Apps.news]?.attachedProcess == nil)
        #expect(state.attachedPIDs.isEmpty)

        let changes = state.takeChanges()
        #expect(changes.apps == [Apps.news])
        #expect(changes.eventTypes == [.detached])
        let event = try #require(changes.events.first)
        #expect(event.pid == 4242)
        #expect(event.reason == "detached")
        #expect(event.command == "cmd-detach")
        #expect(event.message == "com.example.news: pid 4242 detached; due tasks start a new process")

        state.submitRequest(Tasks.refresh, kind: .appRefresh, at: at(31))
        #expect(state.dueLaunches(at: at(31)).first?.handOver == nil)
    }

    @Test func detachKeepsTheTasksTheProcessCarries() throws {
        var state = attached([Tasks.refresh])
        state.submitRequest(Tasks.refresh, kind: .appRefresh, at: t0)
        let plan = try #require(state.dueLaunches(at: t0).first)
        state.recordLaunch(plan, pid: 4242, processGroup: nil, processStartTicks: nil, now: t0)
        state.run(.detach(app: Apps.news, pid: 4242), at: at(1))
        #expect(state.task(Tasks.refresh)?.pid == 4242, "tasks already handed over run on")
        #expect(state.watchedPIDs == [4242], "still watched for its task")
    }

    @Test func detachOfAnotherPidChangesNothing() throws {
        var state = attached([Tasks.refresh])
        let result = state.run(.detach(app: Apps.news, pid: 99), at: at(30))
        #expect(result.outcome.succeeded, "never refused")
        #expect(result.outcome.message == "pid 99 was not attached to com.example.news")
        #expect(state.apps[Apps.news]?.attachedProcess?.pid == 4242)
        #expect(state.takeChanges().isEmpty)

        // An app with nothing attached, and an app with no record at all.
        #expect(state.run(.detach(app: Apps.mail, pid: 4242), at: at(31)).outcome.message
                == "pid 4242 was not attached to com.example.mail")
        #expect(state.run(.detach(app: Apps.ghost, pid: 4242), at: at(31)).outcome.succeeded)
        #expect(state.takeChanges().isEmpty)
    }

    @Test func theExitOfTheAttachedProcessReleasesIt() throws {
        var state = attached([Tasks.refresh])
        state.submitRequest(Tasks.refresh, kind: .appRefresh, at: t0)
        let plan = try #require(state.dueLaunches(at: t0).first)
        state.recordLaunch(plan, pid: 4242, processGroup: nil, processStartTicks: nil, now: t0)
        _ = state.takeChanges()

        state.processExited(pid: 4242, status: "exited with status 0", now: at(3))
        #expect(state.apps[Apps.news]?.attachedProcess == nil)
        #expect(state.tasks.isEmpty)
        #expect(state.watchedPIDs.isEmpty)
        let changes = state.takeChanges()
        #expect(changes.eventTypes == [.exited, .detached])
        let detached = try #require(changes.events.last)
        #expect(detached.app == Apps.news)
        #expect(detached.pid == 4242)
        #expect(detached.reason == "exited with status 0")
        #expect(detached.command == nil)
        #expect(detached.message == "com.example.news: pid 4242 is gone (exited with status 0); due tasks start a new process")
    }

    @Test func anotherProcessExitingLeavesTheAttachment() {
        var state = attached([Tasks.refresh])
        state.processExited(pid: 4243, status: "exited", now: at(3))
        #expect(state.apps[Apps.news]?.attachedProcess?.pid == 4242)
        #expect(state.takeChanges().isEmpty)
    }

    @Test func afterARestartDeadAttachmentsAreReleasedAndLiveOnesKept() throws {
        var state = attached([Tasks.refresh], pid: 100)
        state.run(.attach(app: Apps.mail, pid: 200, identifiers: [Tasks.shared]), at: t0)
        state.recordAttachmentIdentity(of: Apps.mail, pid: 200, startTicks: 9, processGroup: nil)
        _ = state.takeChanges()

        var asked: [Int32: UInt64?] = [:]
        state.adoptAttachments(now: at(60)) { process in
            asked[process.pid] = process.processStartTicks
            return process.pid == 200
        }
        #expect(asked == [100: nil, 200: 9], "each attachment is checked with what is known of it")
        #expect(state.apps[Apps.news]?.attachedProcess == nil)
        #expect(state.apps[Apps.mail]?.attachedProcess?.pid == 200)
        #expect(state.attachedPIDs == [200])

        let changes = state.takeChanges()
        #expect(changes.eventTypes == [.detached])
        #expect(changes.apps == [Apps.news])
        let event = try #require(changes.events.first)
        #expect(event.app == Apps.news)
        #expect(event.reason == "gone after a scheduler restart")
        #expect(event.message == "com.example.news: pid 100 is gone (gone after a scheduler restart); due tasks start a new process")

        state.adoptAttachments(now: at(61)) { _ in true }
        #expect(state.takeChanges().isEmpty, "live attachments are kept without an event")
    }

    @Test func releaseAttachmentOnlyReleasesThatPid() {
        var state = attached([Tasks.refresh])
        let otherPid = state.releaseAttachment(of: Apps.news, pid: 1, reason: "gone", now: at(1))
        let otherApp = state.releaseAttachment(of: Apps.mail, pid: 4242, reason: "gone", now: at(1))
        #expect(!otherPid && !otherApp)
        #expect(state.takeChanges().isEmpty)
        let released = state.releaseAttachment(of: Apps.news, pid: 4242, reason: "gone", now: at(1))
        #expect(released)
        #expect(state.takeChanges().events.map(\.message) == ["com.example.news: pid 4242 is gone (gone); due tasks start a new process"])
    }

    // MARK: - What the runtime reads and records

    @Test func attachedPidsAreWatched() throws {
        var state = attached([Tasks.refresh])
        #expect(state.watchedPIDs == [4242])
        state.submitRequest(Tasks.cleanup, kind: .processing, at: t0)
        state.launchDue(at: t0, firstPID: 1000)
        #expect(state.watchedPIDs == [1000, 4242])
        state.run(.detach(app: Apps.news, pid: 4242), at: at(1))
        #expect(state.watchedPIDs == [1000])
    }

    @Test func theIdentityIsRecordedOnlyForTheAttachedPid() throws {
        var state = attached([Tasks.refresh])
        state.recordAttachmentIdentity(of: Apps.news, pid: 4243, startTicks: 1, processGroup: 4243)
        state.recordAttachmentIdentity(of: Apps.mail, pid: 4242, startTicks: 1, processGroup: 4242)
        #expect(state.takeChanges().isEmpty)
        #expect(state.apps[Apps.mail] == nil)
        var record = try #require(state.apps[Apps.news]?.attachedProcess)
        #expect(record.processStartTicks == nil && record.processGroup == nil)

        state.recordAttachmentIdentity(of: Apps.news, pid: 4242, startTicks: 123_456, processGroup: 4242)
        record = try #require(state.apps[Apps.news]?.attachedProcess)
        #expect(record.processStartTicks == 123_456)
        #expect(record.processGroup == 4242)
        #expect(record.identifiers == [Tasks.refresh] && record.attachedAt == t0, "the rest is kept")
        let changes = state.takeChanges()
        #expect(changes.apps == [Apps.news], "the app file is rewritten")
        #expect(changes.events.isEmpty)

        // A process that does not lead its own group.
        state.recordAttachmentIdentity(of: Apps.news, pid: 4242, startTicks: 123_456, processGroup: nil)
        #expect(state.apps[Apps.news]?.attachedProcess?.processGroup == nil)
    }
}
