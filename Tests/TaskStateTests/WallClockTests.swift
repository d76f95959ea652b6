import Foundation
import Testing
@testable import TaskState

/// Dates on a clock without Foundation's Calendar (``WallClockTime``, ``WallClockZone``), checked
/// against Foundation's Calendar itself.
@Suite struct WallClockTests {
    static func calendar(_ zone: TimeZone) -> Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        return calendar
    }

    @Test func civilDatesAndWeekdaysMatchFoundationsCalendarOverEightCenturies() {
        let utc = Self.calendar(TimeZone(identifier: "UTC")!)
        // 1600 to 2400, every 997th day: leap centuries, negative days, both eras of the algorithm.
        for day in stride(from: Int64(-135_140), through: Int64(157_000), by: 997) {
            let seconds = day * 86_400 + 45_296  // 12:34:56
            let time = WallClockTime(secondsSince1970: seconds)
            let parts = utc.dateComponents([.year, .month, .day, .hour, .minute, .second, .weekday],
                                           from: Date(timeIntervalSince1970: Double(seconds)))
            #expect([time.year, time.month, time.day, time.hour, time.minute, time.second, time.weekday]
                    == [parts.year, parts.month, parts.day, parts.hour, parts.minute, parts.second, parts.weekday].map { $0! },
                    "day \(day)")
            #expect(time.secondsSince1970 == seconds)
        }
    }

    @Test func aFixedZoneReadsAndWritesItsOwnClock() throws {
        let zone = WallClockZone.fixed(secondsFromGMT: 19_800, identifier: "IST")
        let foundation = Self.calendar(TimeZone(secondsFromGMT: 19_800)!)
        let date = Date(timeIntervalSince1970: 1_795_000_000)
        let parts = foundation.dateComponents([.year, .month, .day, .hour, .minute, .weekday], from: date)
        let time = zone.time(of: date)
        #expect([time.year, time.month, time.day, time.hour, time.minute, time.weekday]
                == [parts.year, parts.month, parts.day, parts.hour, parts.minute, parts.weekday].map { $0! })
        #expect(zone.date(of: time) == date)
        #expect(zone.secondsFromGMT(for: date) == 19_800)
        #expect(WallClockZone.utc.date(of: WallClockTime(year: 1970, month: 1, day: 1)) == Date(timeIntervalSince1970: 0))
    }

    @Test func datesThatDoNotExistAreRefusedNotRolledOver() {
        let utc = WallClockZone.utc
        #expect(utc.date(of: WallClockTime(year: 2025, month: 2, day: 29)) == nil)
        #expect(utc.date(of: WallClockTime(year: 2024, month: 2, day: 29)) != nil)
        #expect(utc.date(of: WallClockTime(year: 2100, month: 2, day: 29)) == nil, "2100 is not a leap year")
        #expect(utc.date(of: WallClockTime(year: 2000, month: 2, day: 29)) != nil, "2000 is")
        #expect(utc.date(of: WallClockTime(year: 2026, month: 4, day: 31)) == nil)
        #expect(utc.date(of: WallClockTime(year: 2026, month: 13, day: 1)) == nil)
        #expect(utc.date(of: WallClockTime(year: 2026, month: 1, day: 1, hour: 24)) == nil)
    }

    @Test func addingDaysCrossesMonthsAndYearsAndKeepsTheClock() {
        let start = WallClockTime(year: 2026, month: 12, day: 25, hour: 8, minute: 10)
        let later = start.addingDays(7 * 27)
        #expect([later.year, later.month, later.day, later.hour, later.minute] == [2027, 7, 2, 8, 10] as [Int])
        #expect(later.weekday == start.weekday, "whole weeks keep the weekday")
        let earlier = start.addingDays(-366)
        #expect([earlier.year, earlier.month, earlier.day] == [2025, 12, 24] as [Int])
        #expect("\(later)" == "2027-07-02 08:10:00")
    }

    @Test func farAndBrokenDatesDoNotTrap() {
        for value in [Double.infinity, -.infinity, .nan, 1e300, -1e300] {
            _ = WallClockZone.utc.time(of: Date(timeIntervalSince1970: value))
            _ = WallClockZone.system.time(of: Date(timeIntervalSince1970: value))
        }
        #expect(WallClockZone.utc.time(of: Date(timeIntervalSince1970: 1e300)).year == 9999)
    }
}
