import Foundation
import Testing
@testable import TaskState

/// What replaced Foundation-only calls in the modules that import FoundationEssentials alone:
/// each gives what the Foundation call gave, checked against Foundation itself where it exists.
@Suite struct EssentialsTextTests {
    @Test func printfFormatsAsFoundationDoes() {
        for value in [0.0, 0.05, 0.15, 2.5, 999.95, 1234.5678, -3.25] {
            #expect(String(printf: "%.1f", value) == String(format: "%.1f", value))
            #expect(String(printf: "%.0f%%", value) == String(format: "%.0f%%", value))
        }
        #expect(String(printf: "%02ld:%02ld", 7, 5) == "07:05")
        #expect(String(printf: "%04o", UInt32(0o755)) == "0755")
        #expect(String(printf: "byte 0x%02X", UInt32(0xAB)) == "byte 0xAB")
        // Longer than the first buffer: the second pass must give the whole text.
        let long = String(printf: "%0200ld", 42)
        #expect(long.count == 200 && long.hasSuffix("42") && long.hasPrefix("000"))
    }

    @Test func trimmingAndPaddingMatchFoundation() {
        for text in ["", "   ", " a b ", "\t x\n", "..x. \n", "é  "] {
            #expect(text.trimmed(of: [".", " ", "\n"]) == text.trimmingCharacters(in: CharacterSet(charactersIn: ". \n")))
            #expect(text.trimmedWhitespace() == text.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        for (text, width) in [("abc", 5), ("abcdef", 3), ("", 2), ("xy", 2)] {
            #expect(text.padded(toWidth: width) == text.padding(toLength: width, withPad: " ", startingAt: 0))
        }
    }

    @Test func jsonValueKeepsWholeNumbersAndKinds() throws {
        let value = try #require(JSONValue(parsing: Data(#"{"a":1,"b":1.5,"c":true,"d":"1","e":null,"f":[1,{"g":[]}]}"#.utf8)))
        let members = try #require(value.object)
        #expect(members["a"] == .integer(1))
        #expect(members["b"] == .number(1.5))
        #expect(members["c"] == .bool(true), "true is not taken for 1")
        #expect(members["d"] == .string("1"), "a string is not taken for a number")
        #expect(members["e"] == .null)
        #expect(members["f"] == .array([.integer(1), .object(["g": .array([])])]))
        let again = try JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(value))
        #expect(again == value, "written and read again, the same value")
        #expect(JSONValue(parsing: Data("7".utf8)) == .integer(7), "a bare value is JSON text")
        #expect(JSONValue(parsing: Data("{".utf8)) == nil)
        #expect(JSONValue(parsing: Data("".utf8)) == nil)
    }

    /// The results Foundation's `deletingLastPathComponent` and `lastPathComponent` document
    /// (compared with literals: Foundation's own traps on some of these paths on Linux).
    @Test func pathParts() {
        let cases: [(path: String, parent: String, last: String)] = [
            ("/a/b", "/a", "b"), ("/a", "/", "a"), ("/", "/", ""), ("a", "", "a"), ("a/b", "a", "b"),
            ("/a/b/", "/a", "b"), ("/a/b.theme", "/a", "b.theme"), ("", "", ""),
        ]
        for (path, parent, last) in cases {
            #expect(PathText.parent(path) == parent, "parent of '\(path)'")
            #expect(PathText.lastComponent(path) == last, "last component of '\(path)'")
        }
    }

    @Test func aPushStreamResumesWithItsIdPercentEncoded() {
        let subscription = PushSubscription(ntfy: "https://ntfy.example/topic/")
        #expect(subscription.streamURL(since: nil) == "https://ntfy.example/topic/json")
        #expect(subscription.streamURL(since: "Ab9z") == "https://ntfy.example/topic/json?since=Ab9z")
        #expect(subscription.streamURL(since: "a&b=c d/é") == "https://ntfy.example/topic/json?since=a%26b%3Dc%20d%2F%C3%A9")
    }

    @Test func aDetachedThreadRuns() async {
        let ran = await withCheckedContinuation { (done: CheckedContinuation<Bool, Never>) in
            DetachedThread.start { done.resume(returning: true) }
        }
        #expect(ran)
    }

    /// The name is the thread's own (`/proc/thread-self/comm`), cut to the kernel's 15 bytes.
    @Test func aSpawnedThreadCarriesItsName() async {
        let names = await withCheckedContinuation { (done: CheckedContinuation<[String], Never>) in
            let started = DetachedThread.spawn(name: "expiry alarm of a long name") {
                let own = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
                let main = (try? String(contentsOfFile: "/proc/self/comm", encoding: .utf8)) ?? ""
                done.resume(returning: [own, main])
            }
            if started != 0 { done.resume(returning: ["pthread_create failed: \(started)"]) }
        }
        #expect(names.first == "expiry alarm of\n")
        #expect(names.last != "expiry alarm of\n", "the caller's thread keeps its name")
    }

    /// Paths as the kernel reads them: split at `/` bytes, compared byte for byte.
    @Test func pathsAreBytes() {
        #expect(PathText.components("../\u{301}x") == ["..", "\u{301}x"])
        #expect("../\u{301}x".split(separator: "/").count == 1, "as text it is one name")
        #expect(PathText.components("/a//b/") == ["a", "b"])
        for climbing in ["..", "../x", "a/..", "a//../b", "/../", "../\u{301}x"] { #expect(PathText.climbs(climbing), "\(climbing)") }
        for staying in ["a", "a/b", "..x/b", "a/x..", "...", "a/.\u{2024}", "..\u{301}/x", ""] { #expect(!PathText.climbs(staying), "\(staying)") }
        #expect(PathText.hasSeparator("a/\u{301}") && !PathText.hasSeparator("a\u{301}"))
        #expect(PathText.hasNUL("a\0\u{301}") && !PathText.hasNUL("a"))
        #expect(PathText.isDotOrDotDot("..") && PathText.isDotOrDotDot(".") && !PathText.isDotOrDotDot("..\u{301}"))
        #expect(PathText.isInside("/a/b", "/a") && PathText.isInside("/a", "/a") && PathText.isInside("/x", "/"))
        #expect(!PathText.isInside("/ab", "/a"))
        // The same text to String, two different folders on disk.
        #expect("/data/caf\u{E9}/x".hasPrefix("/data/cafe\u{301}/"))
        #expect(!PathText.isInside("/data/caf\u{E9}/x", "/data/cafe\u{301}"))
        #expect(StateFiles.directoryName(of: "/a/../\u{301}x") == "/a/..")
        #expect(StateFiles.directoryName(of: "/x") == "/" && StateFiles.directoryName(of: "x") == "." && StateFiles.directoryName(of: "/a/b") == "/a")
    }

    /// Matched byte for byte in UTF-8. Foundation's `replacingOccurrences(of:with:)` gives the same
    /// where no combining mark follows a match; where one does, Foundation (like the standard
    /// library's `replacing`) matches whole characters and leaves a `/` in a path that is to have
    /// none.
    @Test func replacingMatchesLiterally() {
        let cases: [(String, String, String)] = [
            ("a/b/c", "/", "__"), ("2026-11-25T10:11:12Z", ":", ""), ("line\nnext\n", "\n", " "),
            ("/state/x/state/y", "/state/", ""), ("ééé", "é", "e"), ("", "/", "x"), ("abc", "", "x"), ("aaa", "aa", "b"),
        ]
        for (text, target, replacement) in cases {
            #expect(text.replacingLiterally(target, with: replacement) == text.replacingOccurrences(of: target, with: replacement),
                    "'\(text)' with '\(target)' replaced")
        }
        #expect("a/\u{301}x".replacingLiterally("/", with: "__") == "a__\u{301}x")
        #expect("a/\u{301}x".replacingOccurrences(of: "/", with: "__") == "a/\u{301}x", "Foundation keeps the /")
        #expect("e\u{301}".replacingLiterally("e", with: "E") == "E\u{301}")
    }
}
