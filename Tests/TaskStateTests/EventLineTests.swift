import Foundation
import Testing
import TaskState

/// `Event.jsonLine()` writes the event log's lines without JSONEncoder: each line must be the very
/// bytes `JSONFormat.encodeLine` makes of the same event, whatever its fields hold.
@Suite struct EventLineTests {
    /// Text with every character JSON escapes, a slash (never escaped here) and some that are not ASCII.
    static let awkward: String = {
        var text = "a/b \"q\" \\ é \u{2028} 🙂 \u{7f}"
        for byte in 0..<0x20 { text.unicodeScalars.append(Unicode.Scalar(UInt8(byte))) }
        return text
    }()

    private func expectSameBytes(_ event: Event, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let direct = try event.jsonLine()
        let encoded = Array(try JSONFormat.encodeLine(event))
        #expect(direct == encoded, "\(String(decoding: direct, as: UTF8.self)) vs \(String(decoding: encoded, as: UTF8.self))",
                sourceLocation: sourceLocation)
    }

    @Test func everyFieldAndEveryKindMatchesTheEncoder() throws {
        let app = try Identifier(validating: "com.example.app")
        let identifier = try Identifier(validating: "com.example.app.refresh")
        for (index, type) in Event.Kind.allCases.enumerated() {
            try expectSameBytes(Event(time: Date(timeIntervalSince1970: 1_796_220_252.123 + Double(index)), type: type, app: app,
                                      identifier: identifier, kind: TaskKind.allCases[index % TaskKind.allCases.count], pid: 4242,
                                      command: "18ed74cd7e76b482-951732f207423ea7", reason: Self.awkward, message: Self.awkward,
                                      logOffset: 1 << 40, peakMemoryBytes: 123_456_789))
            try expectSameBytes(Event(time: Date(timeIntervalSince1970: -62_135_596_800), type: type, message: ""))
        }
    }

    /// Each optional field present or absent on its own: 2^8 combinations.
    @Test func anyMixOfFieldsMatchesTheEncoder() throws {
        let app = try Identifier(validating: "com.example.app")
        for mask in 0..<256 {
            func has(_ bit: Int) -> Bool { mask & (1 << bit) != 0 }
            try expectSameBytes(Event(time: Date(timeIntervalSince1970: Double(mask) * 86_400.5), type: .submitted,
                                      app: has(0) ? app : nil, identifier: has(1) ? app : nil, kind: has(2) ? .processing : nil,
                                      pid: has(3) ? -1 : nil, command: has(4) ? "c" : nil, reason: has(5) ? "" : nil,
                                      message: "m\(mask)", logOffset: has(6) ? 0 : nil, peakMemoryBytes: has(7) ? Int64.max : nil))
        }
    }

    /// Every single character from U+0000 to U+00FF, in a message of its own.
    @Test func everyLatinCharacterIsEscapedAsTheEncoderDoes() throws {
        for scalar in 0..<0x100 {
            var message = "x"
            message.unicodeScalars.append(Unicode.Scalar(UInt8(scalar)))
            try expectSameBytes(Event(time: Date(timeIntervalSince1970: 0), type: .commandRejected, message: message))
        }
    }

    @Test func anEventWithCPUSecondsIsTheEncodersLine() throws {
        try expectSameBytes(Event(time: Date(), type: .completed, message: "done", cpuSeconds: 0.000123, peakMemoryBytes: 1))
        try expectSameBytes(Event(time: Date(), type: .completed, message: "done", cpuSeconds: 3))
    }
}
