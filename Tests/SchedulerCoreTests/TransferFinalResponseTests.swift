import Foundation
import Testing
@testable import SchedulerCore
import TaskState

/// `recordFinalResponse`: what the completing response said is kept on the record for an awaiting app.
@Suite struct TransferFinalResponseTests {
    @Test func theCompletingResponseIsKeptWithoutSetCookie() {
        var state = makeState()
        state.createTransfer(upload("u"), at: at(0))
        #expect(state.startDue(at: at(1)) == [transferKey("u")])
        state.recordFinalResponse(transferKey("u"), statusCode: 201,
                               headers: [TransferHeader(name: "Location", value: "/put/u/1"),
                                         TransferHeader(name: "Set-Cookie", value: "sid=SECRET")],
                               bodyFile: "u.response", now: at(2))
        state.transferEnded(transferKey("u"), .completed(statusCode: 201), bytesTransferred: 5, bytesExpected: 5, now: at(2))
        let record = state.transfer("u")
        #expect(record?.state == .completed)
        #expect(record?.responseStatusCode == 201)
        #expect(record?.responseHeaders == [TransferHeader(name: "Location", value: "/put/u/1")])
        #expect(record?.responseBodyFile == "u.response")
    }

    @Test func aTransferCancelledMeanwhileKeepsNoAnswerAndABodyFileMustBeAPlainName() {
        var state = makeState()
        state.createTransfer(download("d"), at: at(0))
        state.createTransfer(upload("u"), at: at(0))
        #expect(state.startDue(at: at(1)).count == 2)
        state.run(.transferCancel(app: Apps.news, identifier: ident("d")), at: at(2))
        state.recordFinalResponse(transferKey("d"), statusCode: 200, headers: [], bodyFile: nil, now: at(3))
        #expect(state.transfer("d")?.responseStatusCode == nil)
        state.recordFinalResponse(transferKey("u"), statusCode: 200, headers: [], bodyFile: "../../elsewhere", now: at(3))
        #expect(state.transfer("u")?.responseStatusCode == 200)
        #expect(state.transfer("u")?.responseBodyFile == nil)
        #expect(state.transfer("u")?.responseHeaders == nil)
    }
}
