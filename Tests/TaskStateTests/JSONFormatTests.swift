import Foundation
import Testing
@testable import TaskState

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

    /// Dates are read with integer arithmetic too: the same `Date` as `Date.ISO8601FormatStyle`
    /// reads, to the last bit, for what the programs write (with and without the fraction) over
    /// 1900 to 9999; and for text the fast path leaves alone (impossible days and times, offsets,
    /// other fraction lengths, stray characters) the format style's answer, date or refusal.
    @Test func datesAreReadAsTheISO8601FormatStyleReadsThem() {
        let withFraction = Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: .gmt)
        let withoutFraction = Date.ISO8601FormatStyle(includingFractionalSeconds: false, timeZone: .gmt)
        func reference(_ text: String) -> Date? {
            (try? withFraction.parse(text)) ?? (try? withoutFraction.parse(text))
        }
        let range = SafeNumber.writableDates
        var generator = SystemRandomNumberGenerator()
        var texts: [String] = []
        for _ in 0..<20_000 {
            let milliseconds = Int64.random(in: Int64(range.lowerBound * 1000)...Int64(range.upperBound * 1000), using: &generator)
            let written = JSONFormat.string(from: Date(timeIntervalSince1970: TimeInterval(milliseconds) / 1000))
            texts.append(written)
            texts.append(String(written.dropLast(5)) + "Z")
            // What the programs write takes the integer path, not the format style's (but near 2001).
            let nearReference = (milliseconds / 1000 - 978_307_200).magnitude < 1 << 23 + 1
            #expect(nearReference || (UTCText.parse(written) != nil && UTCText.parse(String(written.dropLast(5)) + "Z") != nil), "\(written)")
        }
        texts += ["2024-02-29T23:59:59.999Z", "2023-02-29T00:00:00Z", "2100-02-29T00:00:00Z", "2000-02-29T12:00:00.000Z",
                  "2026-04-31T00:00:00Z", "2026-13-01T00:00:00Z", "2026-00-10T00:00:00Z", "2026-11-00T00:00:00Z",
                  "2026-11-22T24:00:00Z", "2026-11-22T23:60:00Z", "2026-11-22T23:59:60Z", "0000-01-01T00:00:00Z",
                  "9999-12-31T23:59:59.999Z", "2026-11-22T10:00:00.25Z", "2026-11-22T10:00:00.2500Z",
                  "2026-11-22T10:00:00+02:00", "2026-11-22t10:00:00Z", "2026-11-22T10:00:00z", "2026-11-22 10:00:00Z",
                  "2026-1-22T10:00:00.000Z", "+026-11-22T10:00:00.000Z", "2026-11-22T10:00:00.-50Z", "2026-11-22T1a:00:00Z",
                  "", "Z", "2026-11-22T10:00:00.000",
                  // Where the style's arithmetic differs: the fast path leaves them to it.
                  "2000-12-31T23:59:59.999Z", "2001-01-01T00:00:00.001Z", "2001-02-15T12:00:00.123Z", "2000-10-20T01:02:03.457Z",
                  "1582-10-04T00:00:00Z", "0001-01-19T03:14:43Z", "1899-12-31T23:59:59.999Z"]
        #expect(texts.suffix(33).allSatisfy { $0 == "2024-02-29T23:59:59.999Z" || $0 == "2000-02-29T12:00:00.000Z"
            || $0 == "9999-12-31T23:59:59.999Z" || UTCText.parse($0) == nil })
        for text in texts {
            let read = JSONFormat.date(from: text)
            let expected = reference(text)
            #expect(read?.timeIntervalSinceReferenceDate.bitPattern == expected?.timeIntervalSinceReferenceDate.bitPattern,
                    "\(text): \(String(describing: read)) against the format style's \(String(describing: expected))")
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
