import Foundation
import Testing
import SchedulerCore
import TaskState

@Suite("Submitting and cancelling requests")
struct SubmitTests {
    @Test func aNewRequestIsStoredWithItsEventAndDirtyKeys() throws {
        var state = makeState()
        let result = state.run(.submit(SubmitRequest(app: Apps.news, identifier: Tasks.refresh, kind: .appRefresh,
                                                     earliestBeginDate: at(hour))), at: t0, id: "cmd-1")
        #expect(result.outcome.succeeded)
        #expect(result.outcome.command == "cmd-1")
        #expect(result.outcome.type == .submit)
        #expect(result.outcome.identifier == Tasks.refresh)
        #expect(result.outcome.message == "submitted appRefresh request com.example.news.refresh not before 2026-11-22T11:00:00.000Z")
        #expect(result.launch == nil)

        let request = try #require(state.request(Tasks.refresh))
        #expect(request.kind == .appRefresh)
        #expect(request.earliestBeginDate == at(hour))
        #expect(request.submittedAt == t0)
        #expect(request.commandID == "cmd-1")
        #expect(state.apps[Apps.news] == AppRecord(id: Apps.news), "an app is remembered from its first request")

        let changes = state.takeChanges()
        #expect(changes.requests == [state.key(Tasks.refresh)])
        #expect(changes.apps == [Apps.news])
        #expect(changes.tasks.isEmpty && !changes.conditions)
        #expect(changes.eventTypes == [.submitted])
        let event = try #require(changes.events.first)
        #expect(event.app == Apps.news && event.identifier == Tasks.refresh && event.kind == .appRefresh)
        #expect(event.command == "cmd-1" && event.time == t0)
        #expect(state.takeChanges().isEmpty, "takeChanges starts a fresh set")
    }

    @Test func submittingTheSameIdentifierReplacesThePendingRequest() throws {
        var state = makeState()
        state.submitRequest(Tasks.cleanup, kind: .processing, earliest: at(hour), network: true, at: t0)
        _ = state.takeChanges()

        let result = state.submitRequest(Tasks.cleanup, kind: .processing, earliest: at(2 * hour), power: true, at: at(10))
        #expect(result.outcome.succeeded)
        #expect(result.outcome.message?.hasPrefix("replaced processing request com.example.news.cleanup") == true)
        #expect(state.requests.count == 1)
        let request = try #require(state.request(Tasks.cleanup))
        #expect(request.earliestBeginDate == at(2 * hour))
        #expect(request.submittedAt == at(10))
        #expect(!request.requiresNetworkConnectivity && request.requiresExternalPower, "the new request wins entirely")

        let changes = state.takeChanges()
        #expect(changes.eventTypes == [.replaced])
        #expect(changes.requests == [state.key(Tasks.cleanup)])
        #expect(changes.apps.isEmpty, "the app record did not change")
    }

    @Test func atMostOneAppRefreshPerApp() {
        var state = makeState()
        #expect(state.submitRequest(Tasks.refresh, kind: .appRefresh, at: t0).outcome.succeeded)
        _ = state.takeChanges()
        let refused = state.submitRequest(Tasks.refresh2, kind: .appRefresh, at: at(1))
        #expect(refused.errorName == "tooManyPendingTaskRequests")
        #expect(refused.errorMessage == "com.example.news already has 1 pending appRefresh request (limit 1)")
        #expect(state.request(Tasks.refresh2) == nil)
        let changes = state.takeChanges()
        #expect(changes.requests.isEmpty && changes.apps.isEmpty, "a refusal changes nothing but the log")
        #expect(changes.eventTypes == [.refused])
        #expect(changes.events.first?.reason == "tooManyPendingTaskRequests")
        #expect(changes.events.first?.identifier == Tasks.refresh2)

        // Replacing the one pending refresh is not a second request; other apps have their own limit.
        #expect(state.submitRequest(Tasks.refresh, kind: .appRefresh, earliest: at(hour), at: at(2)).outcome.succeeded)
        #expect(state.submitRequest(ident("com.example.mail.refresh"), app: Apps.mail, kind: .appRefresh, at: at(3)).outcome.succeeded)
        // Processing has its own limit.
        #expect(state.submitRequest(Tasks.cleanup, kind: .processing, at: at(4)).outcome.succeeded)
    }

    @Test func atMostTenProcessingRequestsPerApp() {
        var state = makeState()
        for number in 0..<10 {
            #expect(state.submitRequest(Tasks.processing(number), kind: .processing, at: at(Double(number))).outcome.succeeded)
        }
        let refused = state.submitRequest(Tasks.processing(10), kind: .processing, at: at(20))
        #expect(refused.errorName == "tooManyPendingTaskRequests")
        #expect(refused.errorMessage == "com.example.news already has 10 pending processing requests (limit 10)")
        #expect(state.requests.count == 10)

        #expect(state.submitRequest(Tasks.processing(3), kind: .processing, earliest: at(day), at: at(21)).outcome.succeeded,
                "replacing one of the ten is allowed")
        #expect(state.submitRequest(Tasks.refresh, kind: .appRefresh, at: at(22)).outcome.succeeded, "refresh has its own limit")

        state.run(.cancel(app: Apps.news, identifier: Tasks.processing(0)), at: at(23))
        #expect(state.submitRequest(Tasks.processing(10), kind: .processing, at: at(24)).outcome.succeeded)
    }

    @Test func limitsComeFromTheSettings() {
        var settings = SchedulerSettings()
        settings.maximumPendingAppRefresh = 2
        settings.maximumPendingProcessing = 1
        var state = makeState(settings: settings)
        #expect(state.submitRequest(Tasks.refresh, kind: .appRefresh, at: t0).outcome.succeeded)
        #expect(state.submitRequest(Tasks.refresh2, kind: .appRefresh, at: t0).outcome.succeeded)
        #expect(state.submitRequest(Tasks.cleanup, kind: .processing, at: t0).outcome.succeeded)
        #expect(state.submitRequest(Tasks.backup, kind: .processing, at: t0).errorName == "tooManyPendingTaskRequests")
    }

    @Test func anIdentifierOutsideTheManifestIsNotPermitted() {
        var state = makeState()
        let result = state.submitRequest(ident("com.example.news.unlisted"), kind: .appRefresh, at: t0)
        #expect(result.errorName == "notPermitted")
        #expect(result.errorMessage == "com.example.news.unlisted is not in com.example.news's permittedIdentifiers")
        // Another app's identifier is not permitted either.
        #expect(state.submitRequest(ident("com.example.mail.refresh"), kind: .appRefresh, at: t0).errorName == "notPermitted")
        #expect(state.requests.isEmpty)
        #expect(state.apps.isEmpty)
        #expect(state.takeChanges().eventTypes == [.refused, .refused])
    }

    @Test func aMissingBackgroundModeIsNotPermitted() {
        var state = makeState()
        let noFetch = state.submitRequest(ident("refresh"), app: Apps.processingOnly, kind: .appRefresh, at: t0)
        #expect(noFetch.errorName == "notPermitted")
        #expect(noFetch.errorMessage?.contains("'fetch' background mode") == true, "\(noFetch.errorMessage ?? "")")
        let noProcessing = state.submitRequest(ident("sync"), app: Apps.fetchOnly, kind: .processing, at: t0)
        #expect(noProcessing.errorName == "notPermitted")
        #expect(noProcessing.errorMessage?.contains("'processing' background mode") == true)
        // The declared kinds are fine.
        #expect(state.submitRequest(ident("refresh"), app: Apps.processingOnly, kind: .processing, at: t0).outcome.succeeded)
        #expect(state.submitRequest(ident("sync"), app: Apps.fetchOnly, kind: .appRefresh, at: t0).outcome.succeeded)
    }

    @Test func aDisabledAppIsUnavailable() {
        var state = makeState()
        #expect(state.run(.setAppEnabled(app: Apps.news, enabled: false), at: t0).outcome.succeeded)
        for kind in [TaskKind.appRefresh, .processing] {
            let result = state.submitRequest(kind == .appRefresh ? Tasks.refresh : Tasks.cleanup, kind: kind, at: at(1))
            #expect(result.errorName == "unavailable")
            #expect(result.errorMessage == "background work is switched off for com.example.news")
        }
        state.run(.setAppEnabled(app: Apps.news, enabled: true), at: at(2))
        #expect(state.submitRequest(Tasks.refresh, kind: .appRefresh, at: at(3)).outcome.succeeded)
    }

    @Test func appRefreshIsUnavailableInLowPowerButProcessingIsAccepted() {
        var state = makeState()
        state.run(.setConditions(ConditionOverrides(lowPower: true)), at: t0)
        let refused = state.submitRequest(Tasks.refresh, kind: .appRefresh, at: at(1))
        #expect(refused.errorName == "unavailable")
        #expect(refused.errorMessage == "app refresh is unavailable in low power mode")
        #expect(state.submitRequest(Tasks.cleanup, kind: .processing, at: at(2)).outcome.succeeded)

        var probedLow = makeState(probed: Conditions(externalPower: false, lowPower: true))
        #expect(probedLow.submitRequest(Tasks.refresh, kind: .appRefresh, at: t0).errorName == "unavailable")
        probedLow.updateProbedConditions(Conditions(externalPower: true), batteryPercent: 80, loadAverage: 0.1, now: at(60))
        #expect(probedLow.submitRequest(Tasks.refresh, kind: .appRefresh, at: at(61)).outcome.succeeded)
    }

    @Test func anAppWithoutManifestIsUnknown() {
        var state = makeState()
        let result = state.submitRequest(ident("whatever"), app: Apps.ghost, kind: .appRefresh, at: t0)
        #expect(result.errorName == "unknownApp")
        #expect(result.errorMessage == "app com.example.ghost has no usable manifest")
        #expect(state.apps[Apps.ghost] == nil)
        let changes = state.takeChanges()
        #expect(changes.eventTypes == [.refused])
        #expect(changes.events.first?.app == Apps.ghost)
    }

    @Test func finishingTasksCannotBeSubmitted() {
        var state = makeState()
        let result = state.submitRequest(Tasks.refresh, kind: .finishing, at: t0)
        #expect(result.errorName == "invalidCommand")
        #expect(state.requests.isEmpty)
    }

    @Test func appRefreshDropsProcessingOnlyConstraints() throws {
        var state = makeState()
        state.submitRequest(Tasks.refresh, kind: .appRefresh, network: true, power: true, at: t0)
        let request = try #require(state.request(Tasks.refresh))
        #expect(!request.requiresNetworkConnectivity && !request.requiresExternalPower)
    }

    @Test func cancelRemovesPendingRequests() {
        var state = makeState()
        state.submitRequest(Tasks.refresh, kind: .appRefresh, at: t0)
        state.submitRequest(Tasks.cleanup, kind: .processing, at: t0)
        state.submitRequest(Tasks.backup, kind: .processing, at: t0)
        _ = state.takeChanges()

        let one = state.run(.cancel(app: Apps.news, identifier: Tasks.cleanup), at: at(1))
        #expect(one.outcome.message == "cancelled com.example.news.cleanup")
        #expect(state.request(Tasks.cleanup) == nil)
        var changes = state.takeChanges()
        #expect(changes.requests == [state.key(Tasks.cleanup)])
        #expect(changes.eventTypes == [.cancelled])

        let none = state.run(.cancel(app: Apps.news, identifier: Tasks.cleanup), at: at(2))
        #expect(none.outcome.succeeded)
        #expect(none.outcome.message == "no pending request to cancel")
        #expect(state.takeChanges().isEmpty)

        let all = state.run(.cancelAll(app: Apps.news), at: at(3))
        #expect(all.outcome.message == "cancelled com.example.news.backup, com.example.news.refresh")
        #expect(state.requests.isEmpty)
        changes = state.takeChanges()
        #expect(changes.requests == [state.key(Tasks.backup), state.key(Tasks.refresh)])
        #expect(changes.eventTypes == [.cancelled, .cancelled])
    }
}
