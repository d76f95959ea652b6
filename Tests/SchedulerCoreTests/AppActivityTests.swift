import Foundation
import Testing
import SchedulerCore
import TaskState

@Suite("App activity: the last day's launches, expiries and kills")
struct AppActivityTests {
    @Test func aLaunchAnExpiryAndAKillAreCountedInTheAppRecordWithTheThrottlesCause() throws {
        var state = makeState()
        state.submitRequest(Tasks.refresh, kind: .appRefresh, at: t0)
        state.launchDue(at: t0, firstPID: 500)
        var record = try #require(state.apps[Apps.news])
        #expect(record.lastLaunchReason == "appRefresh")
        #expect(record.activity?.lastDay(at: t0) == AppActivity.Totals(launches: 1))
        _ = state.takeChanges()

        _ = state.expire(at: at(30))
        #expect(state.takeChanges().apps.contains(Apps.news), "an expiry is written to the app record")
        #expect(state.apps[Apps.news]?.activity?.lastDay(at: at(30)) == AppActivity.Totals(launches: 1, expiries: 1))

        _ = state.expire(at: at(35))
        record = try #require(state.apps[Apps.news])
        #expect(record.activity?.lastDay(at: at(35)) == AppActivity.Totals(launches: 1, expiries: 1, kills: 1))
        #expect(record.throttleCause == "com.example.news.refresh overran")
    }

    @Test func countsFallOutOfTheDayHourByHour() {
        let start = Date(timeIntervalSince1970: 1_795_348_800) // 12:00 UTC
        var activity = AppActivity()
        activity.count(.launch, at: start.addingTimeInterval(60))
        activity.count(.launch, at: start.addingTimeInterval(120))
        activity.count(.kill, at: start.addingTimeInterval(3 * 3600))
        #expect(activity.hours.count == 2)
        #expect(activity.lastDay(at: start.addingTimeInterval(3 * 3600)) == AppActivity.Totals(launches: 2, kills: 1))
        // 23 h 59 m after 12:00 the noon hour still counts; at the next day's noon it does not.
        #expect(activity.lastDay(at: start.addingTimeInterval(24 * 3600 - 60)).launches == 2)
        #expect(activity.lastDay(at: start.addingTimeInterval(24 * 3600)) == AppActivity.Totals(kills: 1))
        // A new count drops the hours that fell out, so the record never holds more than a day.
        activity.count(.expiry, at: start.addingTimeInterval(26 * 3600))
        #expect(activity.hours.count == 2)
        #expect(activity.hours.first?.kills == 1)
        #expect(activity.lastDay(at: start.addingTimeInterval(26 * 3600)) == AppActivity.Totals(expiries: 1, kills: 1))
    }

    @Test func countsWrittenAsIntMaxByAnotherHandNeitherTrapNorWrap() {
        let now = Date(timeIntervalSince1970: 1_795_348_800)
        var activity = AppActivity(hours: [AppActivity.Hour(hour: now, launches: .max, expiries: .max, kills: .min),
                                           AppActivity.Hour(hour: now.addingTimeInterval(-3600), launches: .max, kills: .min)])
        #expect(activity.lastDay(at: now) == AppActivity.Totals(launches: .max, expiries: .max, kills: .min))
        activity.count(.launch, at: now)
        #expect(activity.hours.count == 2)
        #expect(activity.hours.first?.launches == .max)
    }

    @Test func aRecordWithoutTheNewFieldsStillDecodes() throws {
        let json = #"{"enabled":true,"id":"com.example.old","killCount":0,"launchCount":2,"throttleLevel":0}"#
        let record = try JSONFormat.decode(AppRecord.self, from: Data(json.utf8))
        #expect(record.activity == nil)
        #expect(record.lastLaunchReason == nil)
        #expect(record.throttleCause == nil)
    }
}
