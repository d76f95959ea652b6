import FoundationEssentials
import TaskState

/// One request line read by `bgctl watch --json`: `{"type": ..., "id": ..., ...}`. The `type`
/// says what is asked: `command` (send a command through the inbox as `bgctl` would), `log` (read
/// a part of an app's log, for a pager) or `follow` (say when an app's log changes).
/// Other kinds are added as new cases, answered by lines of their own, so the framing stays.
///
/// Everything here is input from another machine: the line is checked before anything is done
/// with it, and a bad one becomes a ``FeedError`` (never a crash, never a half-done command).
public enum FeedRequest: Sendable, Equatable {
    /// `{"type":"command","id":"r1","command":{"type":"simulateLaunch","identifier":"...","app":"..."}}`:
    /// `command` has the fields of an inbox command (`docs/state-format.md#commands`) without
    /// `id`, `issuedAt`, `issuerPID` and `launchToken`, which the watch fills in as `bgctl` does.
    case command(id: String?, action: CommandAction)
    /// `{"type":"log","id":"r2","request":{"app":"...","position":{"end":{}},"maximumLines":400,"serial":1}}`:
    /// a part of `logs/<app>.log`, answered by a ``FeedLog`` line (the same read `bgtop` makes locally).
    case log(id: String?, request: LogRequest)
    /// `{"type":"follow","app":"..."}` (or `"app": null` to stop): a ``FeedLogChanged`` line each
    /// time that app's log is written, truncated or replaced.
    case follow(app: Identifier?)

    /// The actions `bgctl` itself has a verb for: the app library's own (`attach`, `detach`) are
    /// refused, since they speak for a process on the watched machine.
    public static let commandNames: Set<CommandAction.Name> = Set(CommandAction.Name.allCases).subtracting([.attach, .detach])

    /// Fields of `command` the watch sets itself; a request that sets them is refused rather than
    /// half obeyed.
    static let reservedCommandFields: Set<String> = ["id", "issuedAt", "issuerPID", "launchToken", "format"]

    /// Parses one line (without its newline).
    public static func parse(_ line: Data) -> Result<FeedRequest, FeedError> {
        guard line.count < WatchFeed.maximumRequestLine else {
            return .failure(FeedError(code: .tooLong, message: "request line longer than \(WatchFeed.maximumRequestLine) bytes"))
        }
        guard String(data: line, encoding: .utf8) != nil else {
            return .failure(FeedError(code: .malformed, message: "request line is not UTF-8"))
        }
        guard nestingDepth(line) <= maximumDepth else {
            return .failure(FeedError(code: .malformed, message: "request nested deeper than \(maximumDepth) levels"))
        }
        guard let parsed = JSONValue(parsing: line) else {
            return .failure(FeedError(code: .malformed, message: "request line is not JSON"))
        }
        guard let object = parsed.object else {
            return .failure(FeedError(code: .malformed, message: "request line is not a JSON object"))
        }
        var id: String?
        if let value = object["id"] {
            guard let text = value.string, Command.isValidID(text) else {
                return .failure(FeedError(code: .malformed, message: "'id' must be 1-64 letters, digits, '.', '-' or '_'"))
            }
            id = text
        }
        guard let type = object["type"]?.string else {
            return .failure(FeedError(id: id, code: .malformed, message: "request has no 'type'"))
        }
        switch type {
        case "command":
            return parseCommand(object["command"], id: id)
        case "log":
            guard let fields = object["request"], fields.object != nil, let data = try? JSONEncoder().encode(fields),
                  let request = try? JSONFormat.decode(LogRequest.self, from: data) else {
                return .failure(FeedError(id: id, code: .malformed, message: "'request' must be a log request (app, position, maximumLines, serial)"))
            }
            return .success(.log(id: id, request: request))
        case "follow":
            guard let value = object["app"], value != .null else { return .success(.follow(app: nil)) }
            guard let text = value.string, let app = try? Identifier(validating: text) else {
                return .failure(FeedError(id: id, code: .malformed, message: "'app' must be an app identifier or null"))
            }
            return .success(.follow(app: app))
        default:
            return .failure(FeedError(id: id, code: .unknownType, message: "unknown request type '\(printable(type))'; known: command, log, follow"))
        }
    }

    private static func parseCommand(_ value: JSONValue?, id: String?) -> Result<FeedRequest, FeedError> {
        guard var fields = value?.object else {
            return .failure(FeedError(id: id, code: .malformed, message: "'command' must be an object"))
        }
        if let reserved = reservedCommandFields.sorted().first(where: { fields[$0] != nil }) {
            return .failure(FeedError(id: id, code: .refused, message: "'command' may not set '\(reserved)': the watch sets it"))
        }
        if let name = fields["type"]?.string, let known = CommandAction.Name(rawValue: name), !commandNames.contains(known) {
            return .failure(FeedError(id: id, code: .refused, message: "'\(name)' is sent by the app library, not by bgctl"))
        }
        // The inbox format's own decoder does every check an inbox command gets.
        fields["id"] = .string(Command.newID())
        fields["issuedAt"] = .string(JSONFormat.string(from: Date()))
        do {
            let data = try JSONEncoder().encode(fields)
            let command = try JSONFormat.decode(Command.self, from: data)
            return .success(.command(id: id, action: command.action))
        } catch let error as StateError {
            return .failure(FeedError(id: id, code: .malformed, message: "bad command: \(firstLine(error.description))"))
        } catch {
            return .failure(FeedError(id: id, code: .malformed, message: "bad command"))
        }
    }

    /// No request needs more; a parser given thousands of levels could exhaust its stack.
    static let maximumDepth = 32

    /// The deepest nesting of arrays and objects in `line`, strings skipped.
    static func nestingDepth(_ line: Data) -> Int {
        var depth = 0, deepest = 0
        var inString = false, escaped = false
        for byte in line {
            if inString {
                if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inString = false }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                depth += 1
                deepest = max(deepest, depth)
            case UInt8(ascii: "]"), UInt8(ascii: "}"): depth -= 1
            default: break
            }
        }
        return deepest
    }

    /// At most 64 characters of `text`, control characters replaced, for echoing input in a message.
    static func printable(_ text: String) -> String {
        String(text.prefix(64).map { $0.isASCII && ($0.isLetter || $0.isNumber || $0.isPunctuation || $0 == " ") ? $0 : "?" })
    }

    private static func firstLine(_ text: String) -> String {
        String(text.split(separator: "\n", omittingEmptySubsequences: false).first ?? "").prefix(300).description
    }
}
