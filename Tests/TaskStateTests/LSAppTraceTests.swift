import Foundation
import Testing
import TaskState

/// The LSApp trace reader that `bgctl usage import` and `bgbench prediction --trace` share.
@Suite("LSApp traces")
struct LSAppTraceTests {
    static let utc = WallClockZone.utc

    @Test func onlyOpenedRowsCountAndTheHeaderIsSkipped() throws {
        let text = """
        user_id\tsession_id\ttimestamp\tapp_name\tevent_type
        7\t1\t2017-03-06 08:05:00\tGoogle Maps\tOpened
        7\t1\t2017-03-06 08:07:30\tGoogle Maps\tClosed
        8\t2\t2017-03-07 21:00:59\tFacebook\tOpened

        """
        let opens = try LSAppTrace.opens(in: text, zone: Self.utc)
        #expect(opens.map(\.app) == ["Google Maps", "Facebook"])
        #expect(opens.map(\.user) == ["7", "8"])
        #expect(opens.map(\.line) == [2, 4])
        // 2017-03-06T08:05:00Z and 2017-03-07T21:00:59Z.
        #expect(opens.map(\.date.timeIntervalSince1970) == [1_488_787_500, 1_488_920_459])
    }

    @Test func aBadTimestampNamesItsLine() {
        let text = "7\t1\t2017-03-06 08:05:00\tMaps\tOpened\n7\t1\t2017-03-06 8:05:00\tMaps\tOpened\n"
        do {
            _ = try LSAppTrace.opens(in: text, zone: Self.utc)
            Issue.record("an hour of one digit was read")
        } catch {
            #expect(error.line == 2)
            #expect(error.description.hasPrefix("line 2: bad timestamp '2017-03-06 8:05:00'"), "\(error.description)")
        }
    }

    @Test func aLineWithoutFiveFieldsNamesItsLine() {
        let text = "7\t1\t2017-03-06 08:05:00\tMaps\tOpened\n\n7 1 2017-03-06 08:06:00 Maps Opened\n"
        do {
            _ = try LSAppTrace.opens(in: text, zone: Self.utc)
            Issue.record("a line of spaces was read as a row")
        } catch {
            #expect(error.line == 3)
            #expect(error.reason.contains("expected 5 tab-separated fields"), "\(error.reason)")
        }
    }
}
