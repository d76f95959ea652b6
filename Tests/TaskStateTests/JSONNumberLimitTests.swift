import Foundation
import Testing
@testable import TaskState

/// Numbers that stop FoundationEssentials' `JSONDecoder` when read as integers are refused
/// before decoding, by every reader (``JSONNumberLimit``).
@Suite struct JSONNumberLimitTests {
    /// Both found to trap the decoder (a precondition, not an error): 201 and 135 characters.
    static let trapping = ["1" + String(repeating: "0", count: 200) + "e-184",
                           "0." + String(repeating: "0", count: 130) + "1e147"]

    @Test func aLongNumberIsFoundOutsideStringsOnly() {
        let long = String(repeating: "7", count: 65)
        #expect(JSONNumberLimit.firstTooLong(in: Data(#"{"a":\#(long)}"#.utf8)) == 5)
        #expect(JSONNumberLimit.firstTooLong(in: Data(#"{"a":"\#(long)"}"#.utf8)) == nil, "digits in a string are text")
        #expect(JSONNumberLimit.firstTooLong(in: Data(#"{"a\"":"\"\#(long)"}"#.utf8)) == nil, "escaped quotes keep the string open")
        #expect(JSONNumberLimit.firstTooLong(in: Data(#"[\#(String(repeating: "7", count: 64))]"#.utf8)) == nil, "64 is allowed")
        #expect(JSONNumberLimit.firstTooLong(in: Data(#"[1e300, -0.5, 1700000000.25]"#.utf8)) == nil)
    }

    @Test(arguments: trapping)
    func everyDecoderRefusesATrappingNumber(_ number: String) throws {
        let command = #"{"format":\#(number),"id":"0001-x","issuedAt":"2026-11-22T10:00:00Z","type":"status"}"#
        #expect(throws: StateError.self) { try JSONFormat.decode(Command.self, from: Data(command.utf8)) }
        #expect(JSONValue(parsing: Data(#"{"n":\#(number)}"#.utf8)) == nil)
        #expect(throws: PushPayloadError.notJSON) {
            try PushPayload(validating: #"{"aps":{"content-available":1},"n":\#(number)}"#)
        }
        let line = #"{"message":"x","time":"2026-11-22T10:00:00.000Z","type":"daemonStarted","n":\#(number)}"#
        #expect(EventLog.decodeLines(Data((line + "\n").utf8)).unreadable == 1)
    }
}
