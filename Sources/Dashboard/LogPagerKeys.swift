/// What a key does in the log pager.
public enum LogPagerCommand: Hashable, Sendable {
    /// This many lines down (negative: up).
    case lines(Int)
    case pageUp
    case pageDown
    /// The log's first line.
    case start
    /// The log's end, following it.
    case end
    /// Starts typing a search.
    case search
    /// The next match of the last search towards older output (`true`, `n`: searches go up from
    /// the end, where a log is read) or newer (`N`).
    case nextMatch(older: Bool)
    case toggleFollow
    case close
}

/// One row of the pager's key table: its keys, what they do, and its hint.
public struct LogPagerBinding: Sendable {
    /// How the hint line names the keys (the main ones: `Esc` for Esc, `q` and `o`).
    public let keys: String
    /// The keys where borders are ASCII, when they differ.
    public let asciiKeys: String?
    /// One or two words for what the keys do.
    public let label: String
    public let triggers: [(trigger: KeyTrigger, command: LogPagerCommand)]

    /// The keys as the hint line shows them with `glyphs`.
    public func keys(for glyphs: Glyphs) -> String { glyphs == .ascii ? asciiKeys ?? keys : keys }
}

/// The log pager's keys, each declared once: the pager dispatches through this table, and its
/// hint line and the documentation are drawn from it. While the pager is open it takes every key.
public enum LogPagerKeys {
    public static let table: [LogPagerBinding] = [
        LogPagerBinding(keys: "↑↓", asciiKeys: "Up/Dn", label: "scroll",
                        triggers: [(.key(.up), .lines(-1)), (.key(.down), .lines(1)), (.key(.character("k")), .lines(-1)),
                                   (.key(.character("j")), .lines(1)), (.wheelUp, .lines(-3)), (.wheelDown, .lines(3))]),
        LogPagerBinding(keys: "PgUp/PgDn", asciiKeys: nil, label: "page",
                        triggers: [(.key(.pageUp), .pageUp), (.key(.pageDown), .pageDown), (.key(.character(" ")), .pageDown)]),
        LogPagerBinding(keys: "g/G", asciiKeys: nil, label: "top/end",
                        triggers: [(.key(.character("g")), .start), (.key(.home), .start),
                                   (.key(.character("G")), .end), (.key(.end), .end)]),
        LogPagerBinding(keys: "/", asciiKeys: nil, label: "search", triggers: [(.key(.character("/")), .search)]),
        LogPagerBinding(keys: "n/N", asciiKeys: nil, label: "next/prev",
                        triggers: [(.key(.character("n")), .nextMatch(older: true)), (.key(.character("N")), .nextMatch(older: false))]),
        LogPagerBinding(keys: "f", asciiKeys: nil, label: "follow", triggers: [(.key(.character("f")), .toggleFollow)]),
        LogPagerBinding(keys: "Esc", asciiKeys: nil, label: "close",
                        triggers: [(.key(.escape), .close), (.key(.character("q")), .close), (.key(.character("o")), .close)]),
    ]

    /// The pager's part of `bgtop --help`: one line per binding, as the hint line names them.
    public static var commandLineHelp: String {
        let width = table.map(\.keys.count).max() ?? 0
        let lines = table.map { "  " + $0.keys + String(repeating: " ", count: width + 3 - $0.keys.count) + $0.label }
        return (["Keys in the log pager (o; Esc, q or o close it):"] + lines).joined(separator: "\n")
    }

    /// The command `key` runs in the pager, if it is bound there.
    public static func lookup(_ key: Key) -> LogPagerCommand? {
        let trigger = KeyTrigger(key)
        for binding in table {
            if let found = binding.triggers.first(where: { $0.trigger == trigger }) { return found.command }
        }
        return nil
    }
}
