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

    /// A hand-edited app record with every count at `Int.max`: a launch, an expiry and a kill
    /// leave them there instead of trapping the scheduler.
    @Test func anAppRecordWithCountsAtIntMaxIsLaunchedExpiredAndKilledWithoutATrap() throws {
        var snapshot = StateSnapshot()
        snapshot.apps = [AppRecord(id: Apps.news, throttleLevel: .max, launchCount: .max, killCount: .max)]
        var state = SchedulerState(settings: SchedulerSettings(), catalog: makeCatalog(), snapshot: snapshot,
                                   conditions: ConditionsRecord(probed: Conditions(), probedAt: t0))
        state.submitRequest(Tasks.refresh, kind: .appRefresh, at: t0)
        state.launchDue(at: t0, firstPID: 500)
        #expect(state.apps[Apps.news]?.launchCount == .max)
        _ = state.expire(at: at(30))
        _ = state.expire(at: at(35))
        let record = try #require(state.apps[Apps.news])
        #expect(record.killCount == .max)
        #expect(record.throttleLevel == .max)
        #expect(record.throttledUntil == at(35).addingTimeInterval(SchedulerSettings().throttleDelay(level: .max)))
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

    /// Review of issue 15, item 5: a clock stepped back keeps the counts written "in the future"
    /// (merged into the current hour), and duplicate hours are merged, not kept side by side.
    @Test func aClockSteppedBackKeepsTheCurrentHoursCountsAndDuplicatesAreMerged() {
        let noon = Date(timeIntervalSince1970: 1_795_348_800)
        var activity = AppActivity(hours: [AppActivity.Hour(hour: noon, launches: 3),
                                           AppActivity.Hour(hour: noon.addingTimeInterval(-3600), launches: 1),
                                           AppActivity.Hour(hour: noon.addingTimeInterval(-3600), kills: 2)])
        activity.count(.launch, at: noon.addingTimeInterval(-3000)) // the clock is back at 11:10
        #expect(activity.hours.count == 1, "\(activity.hours)")
        #expect(activity.lastDay(at: noon.addingTimeInterval(-3000)) == AppActivity.Totals(launches: 5, kills: 2))
    }

    @Test func theHoursAreCappedAtTheKeptOnesWhateverTheRecordHeld() {
        let noon = Date(timeIntervalSince1970: 1_795_348_800)
        let written = (-200...200).flatMap { offset in
            [AppActivity.Hour(hour: noon.addingTimeInterval(Double(offset) * 3600), launches: 1),
             AppActivity.Hour(hour: noon.addingTimeInterval(Double(offset) * 3600), expiries: 1)]
        }
        var activity = AppActivity(hours: written)
        activity.count(.kill, at: noon)
        #expect(activity.hours.count == AppActivity.keptHours)
        #expect(Set(activity.hours.map(\.hour)).count == AppActivity.keptHours)
        // 23 hours before noon, each once twice over; noon itself and the 200 after it, in noon.
        #expect(activity.lastDay(at: noon) == AppActivity.Totals(launches: 23 + 201, expiries: 23 + 201, kills: 1))
    }

    /// A malformed `activity` is statistics gone bad: the record (its switch, its counts) still
    /// decodes, with what could be read of the activity.
    @Test(arguments: [#""activity":"garbage""#, #""activity":{"hours":7}"#, #""activity":[1,2]"#,
                      #""activity":{"hours":[{"launches":2},"x",{"hour":"2026-11-22T10:00:00.000Z","kills":1},{"hour":"2026-11-22T10:00:00.000Z"}]}"#])
    func aMalformedActivityLeavesTheAppRecordReadable(_ field: String) throws {
        let json = #"{"enabled":false,"id":"com.example.old","killCount":0,"launchCount":2,"throttleLevel":0,"# + field + "}"
        let record = try JSONFormat.decode(AppRecord.self, from: Data(json.utf8))
        #expect(record.enabled == false)
        #expect(record.launchCount == 2)
        let hours = try #require(record.activity).hours
        if field.contains("kills") {
            #expect(hours == [AppActivity.Hour(hour: Date(timeIntervalSince1970: 1_795_341_600), kills: 1)])
        } else {
            #expect(hours.isEmpty)
        }
    }

    @Test func anActivityRoundTripsThroughItsFormat() throws {
        var record = AppRecord(id: Apps.news)
        record.activity = AppActivity(hours: [AppActivity.Hour(hour: t0, launches: 1, expiries: 2, kills: 3)])
        let decoded = try JSONFormat.decode(AppRecord.self, from: JSONFormat.encode(record))
        #expect(decoded == record)
    }
}
