import Foundation
import Testing
@testable import SchedulerCore
import TaskState

/// Which attached process takes which type of push (a background push handler takes no call
/// push, a `PushRegistry` no background push), and that a call push in hand holds no background
/// push back. On an injected clock.
@Suite("VoIP push routing")
struct VoIPPushRoutingTests {
    typealias Rules = VoIPRulesTests

    @Test func onlyAProcessRegisteredForVoIPPushesIsHandedOne() throws {
        let refresh = ident("com.example.pusher.refresh")
        var pushOnly = makeState()
        pushOnly.run(.attach(app: Apps.pusher, pid: 700, identifiers: [refresh], acceptsPushes: true), at: t0)
        let launched = try #require(pushOnly.run(Rules.voip(), at: at(1)).launch)
        #expect(launched.handOver == nil, "a background push handler does not take a call push: a new process does")
        #expect(pushOnly.run(.push(PushRequest(app: Apps.pusher, source: "test")), at: at(2)).launch?.handOver?.pid == 700)

        var voipOnly = makeState()
        voipOnly.run(.attach(app: Apps.pusher, pid: 700, identifiers: [refresh], acceptsVoIPPushes: true), at: t0)
        #expect(voipOnly.apps[Apps.pusher]?.attachedProcess?.acceptsVoIPPushes == true)
        #expect(voipOnly.apps[Apps.pusher]?.attachedProcess?.acceptsPushes == nil)
        #expect(voipOnly.run(Rules.voip(), at: at(1)).launch?.handOver?.pid == 700)
        #expect(voipOnly.run(.push(PushRequest(app: Apps.pusher, source: "test")), at: at(2)).launch?.handOver == nil)
        let attached = try #require(voipOnly.changes.events.first { $0.type == .attached })
        #expect(attached.message.contains("VoIP pushes"), "\(attached.message)")
    }

    @Test func aCallPushInHandHoldsNoBackgroundPushBack() throws {
        var state = makeState()
        try Rules.deliverVoIP(&state, pid: 500, at: t0)
        let held = HeldPush(app: Apps.pusher, id: ident("push-bg"), payload: .wakeUp, priority: .immediate, receivedAt: t0)
        #expect(!state.pushBlockers(for: held, at: at(1)).contains(.handlingPush))
        let result = state.run(.push(PushRequest(app: Apps.pusher, source: "test")), at: at(1))
        #expect(result.launch != nil, "\(result.outcome)")
        // A background push in hand still holds the next one.
        let plan = try #require(result.launch)
        state.recordLaunch(plan, pid: 501, processGroup: 501, processStartTicks: 1, now: at(1))
        #expect(state.pushBlockers(for: held, at: at(2)).contains(.handlingPush))
    }
}
