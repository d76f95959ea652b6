import Foundation
import Testing
@testable import SchedulerCore
import TaskState

/// Review of issue 18 (branch `review18`): defects found in the answer to
/// `willBeginDelayedRequest`. Each test states what should hold; see the review report.
@Suite("Review 18: answers before a delayed begin")
struct DelayedRequestReviewTests {
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

    /// `changeRequest` merges `secretHeaderNames` with a quadratic, case-insensitive scan *before*
    /// the count limit (64) is checked: one `transferAnswer` holds the scheduler's only loop thread.
    /// The same names in a `transferCreate` are refused at once (count checked first). The test
    /// prints both times, measured in the same run; it asserts only the refusals.
    @Test("a 'new' answer with 8000 secret header names is refused as cheaply as a create with them")
    func secretNameFloodIsRefusedCheaply() throws {
        var state = makeState()
        delayedAndAsked(&state)
        let flood = names(8000)
        let clock = ContinuousClock()

        var created: CommandResult?
        let createTime = clock.measure {
            let request = TransferRequest(app: Apps.news, identifier: ident("other"), direction: .download,
                                          url: "https://api.example.com/x", destination: "other", secretHeaderNames: flood)
            created = state.run(.transferCreate(request), at: at(61))
        }
        #expect(created?.outcome.error?.message.contains("secret header names; at most 64") == true)

        var answered: CommandResult?
        let answerTime = clock.measure {
            answered = state.run(.transferAnswer(DelayedRequestAnswer(app: Apps.news, identifier: ident("d"), disposition: .new,
                                                                      url: "https://api.example.com/feed2",
                                                                      secretHeaderNames: flood)), at: at(62))
        }
        #expect(answered?.outcome.error?.message.contains("secret header names; at most 64") == true)
        print("review18: transferCreate with 8000 secret names refused in \(createTime); transferAnswer in \(answerTime)")
    }

    /// `new` with only a URL on another origin keeps the transfer's headers, `Authorization`
    /// included: the bearer token goes to a host it was never meant for, the very thing the
    /// redirect rule (CVE-2018-1000007) prevents. Fails on main.
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

    /// A suspend during the answer window: the launched app's task budget counts awake time
    /// (`noteClocks` moves task deadlines), but `delayedRequestAnswerBy` stays a wall-clock date,
    /// so on wake the question times out in the scheduler's first turn and the request made hours
    /// before goes out as made, before the app (frozen too) could answer. Fails on main.
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
