import Foundation
import Testing
import TaskState

@Suite("JSON conventions")
struct JSONFormatTests {
    private struct Stamped: Codable, Equatable {
        var when: Date
        var zebra: Int
        var alpha: String
    }

    @Test func datesAreISO8601InUTCWithZAndMilliseconds() {
        #expect(JSONFormat.string(from: referenceDate) == "2026-11-22T10:00:00.000Z")
        #expect(JSONFormat.string(from: referenceDate.addingTimeInterval(0.25)) == "2026-11-22T10:00:00.250Z")
    }

    /// Dates are written with integer arithmetic, not `Date.ISO8601FormatStyle`: the text is the
    /// format style's, to the millisecond, over the whole range files hold (1900 to 9999): leap
    /// days, century years, the ends of the range, dates before 1970, random ones.
    @Test func datesAreWrittenAsTheISO8601FormatStyleWritesThem() {
        let style = Date.ISO8601FormatStyle(includingFractionalSeconds: false, timeZone: .gmt)
        func reference(_ milliseconds: Int64) -> String {
            let whole = milliseconds >= 0 ? milliseconds / 1000 : (milliseconds - 999) / 1000
            let fraction = milliseconds - whole * 1000
            var text = style.format(Date(timeIntervalSince1970: TimeInterval(whole)))
            text.removeLast()
            return text + "." + String(String(fraction + 1000).dropFirst()) + "Z"
        }
        let range = SafeNumber.writableDates
        var samples: [Int64] = [0, -1, 1, 999, -999, 951_782_400_000, 951_868_800_000, 4_107_542_400_000, -2_208_988_800_000,
                                -2_203_891_200_000, 253_402_300_799_999, 946_684_799_999, 1_798_761_599_999]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<20_000 {
            samples.append(Int64.random(in: Int64(range.lowerBound * 1000)...Int64(range.upperBound * 1000), using: &generator))
        }
        for milliseconds in samples {
            let date = Date(timeIntervalSince1970: TimeInterval(milliseconds) / 1000)
            let written = JSONFormat.string(from: date)
            #expect(written == reference(milliseconds), "\(milliseconds) ms since 1970")
            #expect(JSONFormat.date(from: written).map { JSONFormat.string(from: $0) } == written, "\(written) reads back")
        }
    }

    @Test func datesParseWithAndWithoutFraction() {
        #expect(JSONFormat.date(from: "2026-11-22T10:00:00Z") == referenceDate)
        #expect(JSONFormat.date(from: "2026-11-22T10:00:00.250Z") == referenceDate.addingTimeInterval(0.25))
        #expect(JSONFormat.date(from: "22/11/2026") == nil)
        #expect(JSONFormat.date(from: "") == nil)
    }

    @Test func encoderWritesSortedKeysAndZuluDates() throws {
        let value = Stamped(when: referenceDate.addingTimeInterval(1.5), zebra: 1, alpha: "a/b")
        let text = String(decoding: try JSONFormat.encode(value), as: UTF8.self)
        #expect(text.contains("\"when\" : \"2026-11-22T10:00:01.500Z\""), "\(text)")
        #expect(text.contains("\"a/b\""), "slashes are not escaped: \(text)")
        let alpha = try #require(text.range(of: "\"alpha\""))
        let when = try #require(text.range(of: "\"when\""))
        let zebra = try #require(text.range(of: "\"zebra\""))
        #expect(alpha.lowerBound < when.lowerBound && when.lowerBound < zebra.lowerBound)
        #expect(text.hasSuffix("}\n"))
    }

    @Test func roundTripKeepsDates() throws {
        let dates = [referenceDate, referenceDate.addingTimeInterval(0.125), referenceDate.addingTimeInterval(86_400 * 365.25 + 0.5),
                     Date(timeIntervalSince1970: 0)]
        for date in dates {
            let value = Stamped(when: date, zebra: 2, alpha: "x")
            let back = try JSONFormat.decode(Stamped.self, from: try JSONFormat.encode(value))
            #expect(back == value)
            let line = try JSONFormat.encodeLine(value)
            #expect(line.last == 0x0A)
            #expect(!line.dropLast().contains(0x0A), "a log line has no inner newline")
            #expect(try JSONFormat.decode(Stamped.self, from: line) == value)
        }
    }

    /// Every millisecond of a second: the text read from a file must be written back unchanged,
    /// and a date built from whole milliseconds must be written with those milliseconds.
    @Test func millisecondsSurviveAReadWriteCycle() throws {
        var rewritten: [String] = []
        var misformatted: [String] = []
        for millisecond in 0..<1000 {
            let text = String(format: "2027-11-22T16:00:00.%03dZ", millisecond)
            let date = try #require(JSONFormat.date(from: text))
            if JSONFormat.string(from: date) != text { rewritten.append("\(text) -> \(JSONFormat.string(from: date))") }
            let built = Date(timeIntervalSince1970: 1_826_899_200 + Double(millisecond) / 1000)
            if JSONFormat.string(from: built) != text { misformatted.append("\(text) -> \(JSONFormat.string(from: built))") }
        }
        let rewrittenCount = rewritten.count, misformattedCount = misformatted.count
        #expect(rewrittenCount == 0, "change when read and written back, e.g. \(rewritten.prefix(3).joined(separator: ", "))")
        #expect(misformattedCount == 0, "lose a millisecond when written, e.g. \(misformatted.prefix(3).joined(separator: ", "))")
    }

    @Test func badDatesAndBadJSONGiveShortReasons() {
        let badDate = Data(#"{"when": "yesterday", "zebra": 1, "alpha": "a"}"#.utf8)
        #expect(throws: StateError.malformed("field 'when': 'yesterday' is not an ISO 8601 date")) {
            try JSONFormat.decode(Stamped.self, from: badDate)
        }
        do {
            _ = try JSONFormat.decode(Stamped.self, from: Data("{not json".utf8))
            Issue.record("bad JSON decoded")
        } catch {
            #expect(error.description.contains("not valid JSON"), "\(error.description)")
        }
        #expect(throws: StateError.malformed("missing key 'alpha'")) {
            try JSONFormat.decode(Stamped.self, from: Data(#"{"when": "2026-11-22T10:00:00Z", "zebra": 1}"#.utf8))
        }
        #expect(throws: StateError.malformed("field 'zebra': expected an integer")) {
            try JSONFormat.decode(Stamped.self, from: Data(#"{"when": "2026-11-22T10:00:00Z", "zebra": "1", "alpha": "a"}"#.utf8))
        }
    }
}
