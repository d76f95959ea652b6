import Foundation
@testable import SchedulerRuntime
import TaskState
import Testing

/// The pure parts of a push subscription's stream: cutting lines, reading ntfy's events,
/// the backoff between attempts.
@Suite struct PushStreamPartsTests {
    @Test func linesAreCutAcrossChunksAndEmptyOnesAndCarriageReturnsDropped() throws {
        var lines = StreamLines()
        #expect(try lines.append(Array(#"{"id":"a","ev"#.utf8)) == [])
        #expect(lines.unfinishedBytes == 13)
        #expect(try lines.append(Array("ent\":\"open\"}\r\n\n{\"x\":1}\n{\"y\"".utf8)) == [#"{"id":"a","event":"open"}"#, #"{"x":1}"#])
        #expect(lines.unfinishedBytes == 4)
    }

    @Test func aLineLongerThanTheCapIsRefusedBeforeItsEnd() throws {
        var lines = StreamLines()
        let long = [UInt8](repeating: UInt8(ascii: "x"), count: StreamLines.maximumLineBytes)
        #expect(try lines.append(long + [UInt8(ascii: "\n")]).count == 1, "a line of exactly the cap is taken")
        #expect(throws: StreamLines.LineTooLong.self) { try lines.append(long + [UInt8(ascii: "x")]) }
    }

    @Test func messagesBecomePushesWithTheirIdSourceAndPriority() throws {
        let app = try Identifier(validating: "com.example.alerts")
        let line = #"{"id":"hwQ2YpKdmg","time":1635528741,"event":"message","topic":"t","message":"{\"aps\":{\"content-available\":1}}","priority":5}"#
        let event = try NtfyStreamEvent(line: line)
        let push = try event.push(for: app, source: "https://ntfy.example/t").get()
        #expect(push.messageID == "hwQ2YpKdmg")
        #expect(push.source == "https://ntfy.example/t")
        #expect(push.priority == .immediate)
        #expect(push.payload.text == #"{"aps":{"content-available":1}}"#)
        #expect([nil, 1, 2, 3, 4, 5].map { NtfyStreamEvent.pushPriority(ntfy: $0) }
            == [.conserve, .conserve, .conserve, .conserve, .immediate, .immediate])
    }

    @Test func bodiesThatAreNoPushAndLinesThatAreNoEventAreRefusedInOneLine() throws {
        let app = try Identifier(validating: "com.example.alerts")
        let plain = NtfyStreamEvent(id: "abc", event: "message", message: "[1]")
        #expect(throws: NtfyStreamEvent.PushRefusal.self) { try plain.push(for: app, source: "s").get() }
        if case .failure(let refusal) = plain.push(for: app, source: "s") {
            #expect(refusal.description == "message abc is not a push: push payload must be a JSON object, like {\"aps\":{\"content-available\":1}}")
        }
        let longID = NtfyStreamEvent(id: String(repeating: "i", count: 100), event: "message", message: #"{"aps":{"content-available":1}}"#)
        #expect(throws: NtfyStreamEvent.PushRefusal.self) { try longID.push(for: app, source: "s").get() }
        #expect(throws: NtfyStreamEvent.Unreadable.self) { try NtfyStreamEvent(line: "garbage\u{1}") }
        #expect(throws: NtfyStreamEvent.Unreadable.self) { try NtfyStreamEvent(line: #"{"event":"open"}"#) }
        // A number that stops the decoder read as an integer (`JSONNumberLimit`), in the event's
        // own `priority` and in the push it carries: refused, the scheduler still running.
        let trapping = "1" + String(repeating: "0", count: 200) + "e-184"
        #expect(throws: NtfyStreamEvent.Unreadable.self) {
            try NtfyStreamEvent(line: #"{"id":"a","event":"message","message":"x","priority":\#(trapping)}"#)
        }
        let body = NtfyStreamEvent(id: "abc", event: "message", message: #"{"aps":{"content-available":1},"n":\#(trapping)}"#)
        #expect(throws: NtfyStreamEvent.PushRefusal.self) { try body.push(for: app, source: "s").get() }
    }

    @Test func aMessageBodysTypeMakesAVoIPPushAndAnyOtherTypeIsNoPush() throws {
        let app = try Identifier(validating: "com.example.phone")
        func push(_ body: String) -> Result<PushRequest, NtfyStreamEvent.PushRefusal> {
            NtfyStreamEvent(id: "m1", event: "message", message: body).push(for: app, source: "s")
        }
        #expect(try push(#"{"aps":{"content-available":1},"type":"voip"}"#).get().type == .voip)
        #expect(try push(#"{"aps":{"content-available":1},"type":"background"}"#).get().type == .background)
        #expect(try push(#"{"aps":{"content-available":1}}"#).get().type == .background)
        guard case .failure(let ring) = push(#"{"aps":{"content-available":1},"type":"ring"}"#) else {
            Issue.record("type ring made a push")
            return
        }
        #expect(ring.description == "message m1 is not a push: push type must be background or voip, not 'ring'")
        guard case .failure(let number) = push(#"{"aps":{"content-available":1},"type":5}"#) else {
            Issue.record("type 5 made a push")
            return
        }
        #expect(number.description.contains("must be the string background or voip"))
    }

    @Test func theBackoffDoublesFromOneSecondToFiveMinutes() {
        let delays = (0...12).map { ReconnectBackoff.delay(afterFailures: $0) }
        #expect(delays == [1, 1, 2, 4, 8, 16, 32, 64, 128, 256, 300, 300, 300])
        #expect(ReconnectBackoff.delay(afterFailures: .max) == 300)
    }
}
