import Foundation
import Testing
import TaskState

/// Formatting and conversions of numbers from outside never trap: far-off dates, NaN and
/// infinities are written or shown as something, not a crash (issue 11, item 8).
@Suite struct NumberSafetyTests {
    static let hostile: [Double] = [1e300, -1e300, .nan, .infinity, -.infinity, 9.3e18, -9.3e18, -0.0, 253_402_300_800, -62_135_596_801]

    @Test(arguments: hostile)
    func datesAreAlwaysWritable(_ seconds: Double) throws {
        let text = JSONFormat.string(from: Date(timeIntervalSince1970: seconds))
        #expect(text.hasSuffix("Z"))
        #expect(JSONFormat.date(from: text) != nil, "\(text) reads back")
    }

    @Test func theEndsOfTheWritableYearsAreExact() {
        #expect(JSONFormat.string(from: Date(timeIntervalSince1970: 1e300)) == "9999-12-31T23:59:59.999Z")
        #expect(JSONFormat.string(from: Date(timeIntervalSince1970: -1e300)) == "1900-01-01T00:00:00.000Z")
        #expect(JSONFormat.string(from: Date(timeIntervalSince1970: .nan)) == "1970-01-01T00:00:00.000Z")
        #expect(JSONFormat.string(from: Date(timeIntervalSince1970: 1_795_341_600.25)) == "2026-11-22T10:00:00.250Z")
    }

    @Test(arguments: hostile)
    func durationsAndConversionsDoNotTrap(_ seconds: Double) {
        #expect(!DurationText.compact(seconds).isEmpty)
        #expect(!DurationText.until(Date(timeIntervalSince1970: seconds), from: Date()).isEmpty)
        _ = SafeNumber.int64(seconds)
        _ = SafeNumber.int(seconds, .up)
        _ = Command.newID(at: Date(timeIntervalSince1970: seconds))
        #expect(!SafeNumber.secondsText(seconds).isEmpty)
    }

    @Test func saturatingConversions() {
        #expect(SafeNumber.int64(1e300) == .max)
        #expect(SafeNumber.int64(-1e300) == .min)
        #expect(SafeNumber.int64(.nan) == 0)
        #expect(SafeNumber.int64(2.5) == 3)
        #expect(SafeNumber.int64(2.5, .down) == 2)
        #expect(SafeNumber.int64(9_223_372_036_854_775_807.0) == .max)
        #expect(SafeNumber.secondsText(60) == "60")
        #expect(SafeNumber.secondsText(1.5) == "1.5")
        #expect(SafeNumber.secondsText(1e300) == "1e+300")
    }
}
