import Foundation
import Testing
@testable import SchedulerCore
import TaskState

/// The answer to `willBeginDelayedRequest` is input: it cannot hold the scheduler, carry a
/// secret to another origin, or be outrun by a suspend.
@Suite("Answers before a delayed begin: what a client cannot get around")
struct DelayedRequestAnswerRulesTests {
    private let session = "com.example.news.session"

    private func delayedAndAsked(_ state: inout SchedulerState) {
        let request = TransferRequest(app: Apps.news, identifier: ident("d"), session: session, direction: .download,
                                      url: "https://api.example.com/feed", destination: "d", earliestBeginDate: at(60),
                                      headers: [TransferHeader(name: "Authorization", value: "Bearer t0ken")],
                                      asksBeforeDelayedBegin: true)
        #expect(state.run(.transferCreate(request), at: t0).outcome.error == nil)
        _ = state.effectsOfTime(at: at(60))
        #expect(state.blockers(of: "d", at: at(61)) == [.awaitingAnswer])
    }

    /// Distinct, valid RFC 9110 tokens: `n` of them fit easily in one 64 KiB inbox command.
    private func names(_ n: Int) -> [String] {
        (0..<n).map { "x\(String($0, radix: 36))" }
    }

    /// The names are counted before they are merged (the merge once ran before the count and held
    /// the scheduler's loop for seconds): a flood is refused with the rule's line, as at creation.
    @Test("a 'new' answer with 8000 secret header names is refused as cheaply as a create with them")
    func secretNameFloodIsRefusedCheaply() throws {
        var state = makeState()
        delayedAndAsked(&state)
        let flood = names(8000)
        let request = TransferRequest(app: Apps.news, identifier: ident("other"), direction: .download,
                                      url: "https://api.example.com/x", destination: "other", secretHeaderNames: flood)
        #expect(state.run(.transferCreate(request), at: at(61)).outcome.error?.message == "8000 secret header names; at most 64")
        let answered = state.run(.transferAnswer(DelayedRequestAnswer(app: Apps.news, identifier: ident("d"), disposition: .new,
                                                                      url: "https://api.example.com/feed2",
                                                                      secretHeaderNames: flood)), at: at(62))
        #expect(answered.outcome.error?.message == "8000 secret header names; at most 64")
        #expect(state.transfer("d")?.delayedRequestOutcome == nil, "refused: nothing changed")
    }

    /// `new` with only a URL on another origin keeps the transfer's headers but not its secrets:
    /// a bearer token given for one host does not go to another (RFC 9110 §15.4, as on a
    /// redirect; curl since CVE-2018-1000007).
    @Test("a 'new' answer that moves the transfer to another origin does not carry its secrets there")
    func newOriginDropsSecrets() throws {
        var state = makeState()
        delayedAndAsked(&state)
        let result = state.run(.transferAnswer(DelayedRequestAnswer(app: Apps.news, identifier: ident("d"), disposition: .new,
                                                                    url: "https://elsewhere.example.net/feed")), at: at(61))
        #expect(result.outcome.error == nil)
        let started = state.effectsOfTime(at: at(61)).compactMap { effect -> TransferRecord? in
            if case .transfer(.start(let record)) = effect { return record }
            return nil
        }
        let record = try #require(started.first)
        #expect(record.url == "https://elsewhere.example.net/feed")
        #expect(!(record.headers ?? []).contains { $0.name.lowercased() == "authorization" },
                "the secret of api.example.com is sent to elsewhere.example.net: \(record.redactedHeaders ?? [])")
    }

    /// A suspend during the answer window: the answer time counts awake time, as the app's
    /// budget does, so on wake the app still has its time to answer and the request made hours
    /// before does not go out as made.
    @Test("a suspend during the answer window does not time the question out")
    func suspendDoesNotTimeOutTheQuestion() throws {
        var state = makeState()
        state.noteClocks(ClockReading(wall: at(59), awake: 1000, sinceBoot: 5000))
        delayedAndAsked(&state)
        // 2 s awake after the question, then the lid closed for an hour.
        state.noteClocks(ClockReading(wall: at(62), awake: 1003, sinceBoot: 5003))
        state.noteClocks(ClockReading(wall: at(3662), awake: 1003.5, sinceBoot: 8603))
        let effects = state.effectsOfTime(at: at(3662))
        let started = effects.contains { effect in
            if case .transfer(.start) = effect { return true }
            return false
        }
        #expect(!started, "the stale request went out on wake")
        #expect(state.transfer("d")?.delayedRequestOutcome == nil, "\(String(describing: state.transfer("d")?.delayedRequestOutcome))")
    }
}
