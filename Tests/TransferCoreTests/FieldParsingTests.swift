import Testing
@testable import TransferCore

@Suite("Field parsers: Content-Range, ETag, HTTP dates, Retry-After")
struct FieldParsingTests {
    @Test("Content-Range: the three forms, and everything RFC 9110 §14.4 makes invalid")
    func contentRange() {
        #expect(ContentRange("bytes 100-199/1000") == ContentRange(first: 100, last: 199, total: 1000))
        #expect(ContentRange("BYTES 0-0/*")?.total == nil)
        #expect(ContentRange("bytes 0-0/*")?.length == 1)
        #expect(ContentRange("bytes */1000") == ContentRange(first: nil, last: nil, total: 1000))
        for bad in ["bytes */*", "bytes 5-4/10", "bytes 0-10/10", "bytes -1-5/10", "bytes +1-5/10", "bytes 1-5",
                    "items 1-5/10", "bytes 1 -5/10", "bytes 99999999999999999999-1/*", "bytes 0-5/10/2", "", "bytes ",
                    "bytes 1-5/-1"] {
            #expect(ContentRange(bad) == nil, "\(bad)")
        }
        #expect(ContentRange(nil) == nil)
    }

    @Test("ETag: strong and weak forms, and the strong comparison of §8.8.3.2")
    func entityTags() throws {
        let strong = try #require(EntityTag("\"abc\""))
        let weak = try #require(EntityTag("W/\"abc\""))
        #expect(!strong.isWeak && weak.isWeak)
        #expect(strong.strongMatch(EntityTag("\"abc\"")!))
        #expect(!strong.strongMatch(weak))
        #expect(!weak.strongMatch(weak))
        #expect(weak.description == "W/\"abc\"")
        #expect(EntityTag("\"\"")?.opaque == "")
        for bad in ["abc", "\"abc", "abc\"", "\"a\"b\"", "w/\"abc\"", "\"a b\"", "\"\u{7}\"", "W/abc", "\""] {
            #expect(EntityTag(bad) == nil, "\(bad)")
        }
    }

    @Test("HTTP dates: IMF-fixdate, RFC 850 and asctime all name the same second (§5.6.7)")
    func httpDates() throws {
        let expected: Int64 = 784_111_777
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT") == expected)
        #expect(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT") == expected)
        #expect(HTTPDate.parse("Sun Nov  6 08:49:37 1994") == expected)
        #expect(HTTPDate.format(expected) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPDate.parse("Thu, 29 Feb 2024 00:00:00 GMT") == 1_709_164_800)
        // Found by fuzzing: a year before 1000 was written with three digits and did not parse back.
        let early = try #require(HTTPDate.parse("Sun Nov  5 08:49:37 0996"))
        #expect(HTTPDate.format(early) == "Sat, 05 Nov 0996 08:49:37 GMT", "the weekday is computed; the one sent is not checked")
        #expect(HTTPDate.parse(HTTPDate.format(early)) == early)
        for bad in ["Fri, 29 Feb 2023 00:00:00 GMT", "Sun, 06 Nov 1994 24:00:00 GMT", "Sun, 6 Nov 1994 08:49:37 GMT",
                    "Sun, 06 Nov 1994 08:49:37 UTC", "yesterday", "", "Sun, 06 Foo 1994 08:49:37 GMT",
                    "Sun, 06 Nov 1994 08:49 GMT"] {
            #expect(HTTPDate.parse(bad) == nil, "\(bad)")
        }
    }

    @Test("Retry-After: delta-seconds or a date, never negative, at most a day (§10.2.3)")
    func retryAfter() {
        let now = 784_111_777.0
        #expect(RetryAfter.seconds("120", now: now) == 120)
        #expect(RetryAfter.seconds(" 0 ", now: now) == 0)
        #expect(RetryAfter.seconds("Sun, 06 Nov 1994 08:50:37 GMT", now: now) == 60)
        #expect(RetryAfter.seconds("Sun, 06 Nov 1994 08:48:37 GMT", now: now) == 0)
        #expect(RetryAfter.seconds("99999999999999999999999", now: now) == RetryAfter.maximumSeconds)
        #expect(RetryAfter.seconds("1000000", now: now) == RetryAfter.maximumSeconds)
        for bad in ["-5", "1.5", "soon", "", "0x10"] {
            #expect(RetryAfter.seconds(bad, now: now) == nil, "\(bad)")
        }
    }

    @Test("header fields: names without case, repeated singletons conflict, lengths are digits only")
    func fields() {
        let head = ResponseHead(status: 200, fields: [.init("etag", "\"a\""), .init("Content-Length", " 5 "),
                                                      .init("X", "1"), .init("x", "2")])
        #expect(head.first("ETag") == "\"a\"")
        #expect(head.first("content-length") == "5")
        #expect(head.single("X") == .conflicting)
        #expect(head.single("Missing") == .absent)
        #expect(parseDigits("0009") == 9)
        #expect(parseDigits("9223372036854775807") == Int64.max)
        #expect(parseDigits("9223372036854775808") == nil)
        #expect(parseDigits("-1") == nil)
        #expect(parseDigits("") == nil)
    }
}
