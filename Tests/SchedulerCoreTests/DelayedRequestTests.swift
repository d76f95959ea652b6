import Foundation
import Testing
@testable import SchedulerCore
import TaskState

/// `willBeginDelayedRequest`: a delayed transfer whose app asks is not begun when its date comes;
/// the app is asked, and begins, changes or cancels it, or is given up on after
/// `delayedRequestAnswerSeconds`.
@Suite("Asking before a delayed transfer begins")
struct DelayedRequestTests {
    private let session = "com.example.news.session"

    /// A download of news due at `at(60)` whose app asks, with a secret header.
    private func delayed(_ state: inout SchedulerState, _ name: String = "d", asks: Bool = true, earliest: Date? = at(60),
                         launchEvents: Bool = true) {
        let request = TransferRequest(app: Apps.news, identifier: ident(name), session: session, direction: .download,
                                      url: "http://127.0.0.1:8080/old", destination: name, earliestBeginDate: earliest,
                                      sessionSendsLaunchEvents: launchEvents,
                                      headers: [TransferHeader(name: "Authorization", value: "Bearer old-token")],
                                      asksBeforeDelayedBegin: asks)
        #expect(state.run(.transferCreate(request), at: t0).outcome.error == nil)
    }

    private func starts(_ effects: [SchedulerEffect]) -> [TransferRecord] {
        effects.compactMap { effect in
            if case .transfer(.start(let record)) = effect { return record }
            return nil
        }
    }

    private func launches(_ effects: [SchedulerEffect]) -> [LaunchPlan] {
        effects.compactMap { effect in
            if case .launch(let plan) = effect { return plan }
            return nil
        }
    }

    private func answer(_ disposition: DelayedRequestAnswer.Disposition, url: String? = nil,
                        headers: [TransferHeader]? = nil, _ name: String = "d") -> CommandAction {
        .transferAnswer(DelayedRequestAnswer(app: Apps.news, identifier: ident(name), disposition: disposition, url: url, headers: headers))
    }

    @Test("when its date comes the app is asked, launched for its session, and nothing begins until it answers")
    func asksAndLaunches() throws {
        var state = makeState()
        delayed(&state)
        #expect(state.transfer("d")?.asksBeforeDelayedBegin == true)
        #expect(state.effectsOfTime(at: at(30)).isEmpty, "before its date nothing is asked")
        #expect(state.nextWake(after: at(30)) == at(60))
        _ = state.takeChanges()

        let effects = state.effectsOfTime(at: at(60))
        #expect(starts(effects).isEmpty)
        let plan = try #require(launches(effects).first)
        #expect(plan.reason == "urlSession")
        #expect(plan.requests.map(\.identifier.rawValue) == [session])
        state.recordLaunch(plan, pid: 900, processGroup: 900, processStartTicks: 1, now: at(60))
        let record = try #require(state.transfer("d"))
        #expect(record.delayedRequestAskedAt == at(60))
        #expect(record.delayedRequestAnswerBy == at(90))
        #expect(record.delayedRequestLaunchedAt == at(60))
        #expect(state.blockers(of: "d", at: at(61)) == [.awaitingAnswer])
        #expect(state.nextWake(after: at(61)).map { $0 <= at(90) } == true)
        let asked = try #require(state.takeChanges().events.first { $0.type == .transferAsked })
        #expect(asked.message == "com.example.news: asked the app whether transfer d begins, changes or is cancelled (answer within 30 s)")
        #expect(starts(state.effectsOfTime(at: at(70))).isEmpty && launches(state.effectsOfTime(at: at(70))).isEmpty,
                "asked once, launched once")
    }

    @Test("continue: it begins as made")
    func continueBegins() throws {
        var state = makeState()
        delayed(&state)
        _ = state.effectsOfTime(at: at(60))
        let result = state.run(answer(.continue), at: at(61))
        #expect(result.outcome.error == nil)
        #expect(result.outcome.message == "transfer d begins as made")
        let started = starts(state.effectsOfTime(at: at(61)))
        #expect(started.map(\.url) == ["http://127.0.0.1:8080/old"])
        #expect(started.first?.headers == [TransferHeader(name: "Authorization", value: "Bearer old-token")])
        #expect(state.transfer("d")?.delayedRequestOutcome == .continued)
        #expect(state.run(answer(.cancel), at: at(62)).outcome.error?.message
                == "transfer d of com.example.news is not waiting for an answer: it was answered already")
        #expect(state.takeChanges().events.contains { $0.type == .transferAnswered && $0.reason == "continue" })
    }

    @Test("new: it begins with the new URL and headers, and no secret reaches the event")
    func newRequest() throws {
        var state = makeState()
        delayed(&state)
        _ = state.effectsOfTime(at: at(60))
        _ = state.takeChanges()
        let fresh = [TransferHeader(name: "Authorization", value: "Bearer fresh-token")]
        let result = state.run(answer(.new, url: "https://example.com/new", headers: fresh), at: at(61))
        #expect(result.outcome.error == nil)
        let started = try #require(starts(state.effectsOfTime(at: at(61))).first)
        #expect(started.url == "https://example.com/new")
        #expect(started.headers == fresh)
        #expect(state.transfer("d")?.delayedRequestOutcome == .changed)
        let events = state.takeChanges().events
        let answered = try #require(events.first { $0.type == .transferAnswered })
        #expect(answered.reason == "new")
        #expect(answered.message == "com.example.news: the app answered about transfer d: begins with a changed request (URL https://example.com/new, headers Authorization)")
        #expect(!events.contains { $0.message.contains("token") })
    }

    @Test("cancel: the transfer is cancelled before any byte goes out")
    func cancel() throws {
        var state = makeState()
        delayed(&state)
        _ = state.effectsOfTime(at: at(60))
        let result = state.run(answer(.cancel), at: at(61))
        #expect(result.outcome.error == nil)
        #expect(result.effects == [.transfer(.cancel(transferKey("d")))])
        #expect(state.transfer("d")?.state == .cancelled)
        #expect(state.transfer("d")?.lastError == "cancelled by the app before its delayed begin")
        #expect(state.transfer("d")?.delayedRequestOutcome == .cancelled)
        #expect(starts(state.effectsOfTime(at: at(62))).isEmpty)
    }

    @Test("no answer in time: it begins as made, with an event; a late answer is refused")
    func timeout() throws {
        var state = makeState()
        delayed(&state)
        _ = state.effectsOfTime(at: at(60))
        #expect(starts(state.effectsOfTime(at: at(89))).isEmpty)
        _ = state.takeChanges()
        #expect(starts(state.effectsOfTime(at: at(90))).map(\.url) == ["http://127.0.0.1:8080/old"])
        #expect(state.transfer("d")?.delayedRequestOutcome == .timedOut)
        let event = try #require(state.takeChanges().events.first { $0.type == .transferAnswerTimedOut })
        #expect(event.message == "com.example.news: no answer about transfer d within 30 s; it begins as made")
        let late = state.run(answer(.cancel), at: at(91))
        #expect(late.outcome.error?.message == "transfer d of com.example.news is not waiting for an answer: no answer came in time and it began as made")
        #expect(state.transfer("d")?.state == .running)
    }

    @Test("bad answers are refused and change nothing: not http(s), nothing new, not asked")
    func badAnswers() throws {
        var state = makeState()
        delayed(&state)
        let early = state.run(answer(.continue), at: at(10))
        #expect(early.outcome.error?.message.hasSuffix("it was not asked (only a transfer with an earliestBeginDate whose app asks is, when its date has come)") == true)
        _ = state.effectsOfTime(at: at(60))
        #expect(state.run(answer(.new, url: "file:///etc/passwd"), at: at(61)).outcome.error?.message
                == "'file:///etc/passwd' is not an http or https URL")
        #expect(state.run(answer(.new), at: at(61)).outcome.error?.message == "'new' needs a URL, header fields, or both")
        let crlf = [TransferHeader(name: "X-Bad", value: "a\r\nInjected: yes")]
        #expect(state.run(answer(.new, headers: crlf), at: at(61)).outcome.error != nil)
        let record = try #require(state.transfer("d"))
        #expect(record.url == "http://127.0.0.1:8080/old" && record.delayedRequestOutcome == nil)
        #expect(state.blockers(of: "d", at: at(61)) == [.awaitingAnswer])
        #expect(state.run(answer(.continue, "nothing"), at: at(61)).outcome.error?.name == "noSuchTask")
    }

    @Test("an attached process is asked without a launch; a transfer without a date or without asking is not asked")
    func whoIsAsked() throws {
        var state = makeState()
        delayed(&state)
        delayed(&state, "plain", asks: false)
        delayed(&state, "now", earliest: nil)
        #expect(state.transfer("now")?.asksBeforeDelayedBegin == nil, "only a delayed transfer asks")
        _ = state.run(.attach(app: Apps.news, pid: 42, identifiers: []), at: at(59))
        _ = state.takeChanges()
        let effects = state.effectsOfTime(at: at(60))
        #expect(launches(effects).isEmpty, "the running process answers")
        #expect(Set(starts(effects).map(\.identifier.rawValue)) == ["plain", "now"])
        #expect(state.takeChanges().events.first { $0.type == .transferAsked }?.message
                == "com.example.news: asked its running process whether transfer d begins, changes or is cancelled (answer within 30 s)")
    }

    @Test("a session without launch events is asked only of a running process, and times out otherwise")
    func noLaunchEvents() {
        var state = makeState()
        delayed(&state, launchEvents: false)
        #expect(launches(state.effectsOfTime(at: at(60))).isEmpty)
        #expect(state.blockers(of: "d", at: at(60)) == [.awaitingAnswer])
        #expect(starts(state.effectsOfTime(at: at(90))).count == 1)
    }
}
