import Foundation
import TaskState

/// The opens of one person's apps that `bgbench prediction` replays, in time order, over whole
/// days in UTC.
struct UsageTrace: Sendable {
    struct Open: Sendable {
        var app: Identifier
        var date: Date
    }

    /// Oldest first.
    let opens: [Open]
    /// Every app opened at least once; each has one app refresh request for the whole replay.
    let apps: [Identifier]
    /// Midnight (UTC) before the first open.
    let start: Date
    /// Midnight (UTC) after the last open.
    let end: Date

    init(opens: [Open]) {
        self.opens = opens.sorted { $0.date < $1.date }
        apps = Set(opens.map(\.app)).sorted()
        let first = self.opens.first?.date.timeIntervalSince1970 ?? 0
        let last = self.opens.last?.date.timeIntervalSince1970 ?? 0
        start = Date(timeIntervalSince1970: (first / 86_400).rounded(.down) * 86_400)
        end = Date(timeIntervalSince1970: ((last / 86_400).rounded(.down) + 1) * 86_400)
    }

    var days: Double { end.timeIntervalSince(start) / 86_400 }

    /// The identifier an LSApp app name stands for: lowercased, every character other than a
    /// letter, digit, `.`, `-` or `_` replaced by `-`, prefixed `lsapp.` ("Google Maps" is
    /// `lsapp.google-maps`). Names that differ only in case or in replaced characters are one app.
    static func identifier(lsappName name: String) -> Identifier? {
        let mapped = String(String.UnicodeScalarView(name.lowercased().unicodeScalars.map { scalar in
            switch scalar {
            case "a"..."z", "0"..."9", ".", "-", "_": scalar
            default: "-"
            }
        }))
        return try? Identifier(validating: "lsapp." + mapped)
    }

    /// The traces of a file in LSApp's layout (tab-separated `user_id, session_id, timestamp,
    /// app_name, event_type`; `Opened` rows count; timestamps `YYYY-MM-DD HH:MM:SS` in UTC), one
    /// per user, or only `user`'s. A bad line is an ``LSAppTrace/Malformed``.
    static func lsapp(path: String, user: String?) throws -> [(user: String, trace: UsageTrace)] {
        // As `bgctl usage import` reads it: never blocking on a FIFO, never a directory.
        let text = String(decoding: try StateFiles.read(path, maximumSize: 1 << 30, followingLinks: true), as: UTF8.self)
        var byUser: [String: [Open]] = [:]
        let opens = try LSAppTrace.opens(in: text, zone: .utc)
        for open in opens where user == nil || open.user == user {
            guard let app = identifier(lsappName: open.app) else {
                throw LSAppTrace.Malformed(line: open.line, reason: "app_name '\(open.app.prefix(40))' makes no app identifier (at most 122 characters)")
            }
            byUser[open.user, default: []].append(Open(app: app, date: open.date))
        }
        return byUser.sorted { $0.key < $1.key }.map { ($0.key, UsageTrace(opens: $0.value)) }
    }
}
