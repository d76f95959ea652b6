/// Why a theme could not be had: one line for the user, naming the theme and, for a broken file,
/// the line.
public struct ThemeError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Reason: Hashable, Sendable {
        /// A `theme[key]` line for a known key whose value is not a colour.
        case notAColor(key: String, value: String)
        /// A line that is neither blank, a `#` comment, nor `theme[key]="value"` (optionally followed
        /// by a `#` comment).
        case malformedLine(String)
        /// A quoted value with no closing quote.
        case unterminatedQuote(String)
        /// The file could not be read (missing, not a file, too big, not UTF-8 text).
        case unreadable(String)
        /// No theme file or compiled-in theme has this name.
        case unknownTheme(available: [String])
    }

    /// The theme's name (a file's name without `.theme`, or the name asked for).
    public var theme: String
    /// The 1-based line of a parse error.
    public var line: Int?
    /// The file, when there is one.
    public var path: String?
    public var reason: Reason

    public init(theme: String, line: Int? = nil, path: String? = nil, reason: Reason) {
        self.theme = theme
        self.line = line
        self.path = path
        self.reason = reason
    }

    public var description: String {
        if case let .unknownTheme(available) = reason {
            return "unknown theme '\(theme)'; available: \(available.joined(separator: ", "))"
        }
        var text = "theme '\(theme)'"
        if let path { text += " (\(path))" }
        if let line { text += " line \(line)" }
        switch reason {
        case let .notAColor(key, value):
            text += ": '\(value)' is not a colour for \(key) (expected \"#rrggbb\", \"#gg\", \"r g b\" or \"\")"
        case let .malformedLine(line):
            text += ": expected theme[key]=\"value\", found '\(ThemeError.shortened(line))'"
        case let .unterminatedQuote(line):
            text += ": missing closing quote in '\(ThemeError.shortened(line))'"
        case let .unreadable(why):
            text += ": \(why)"
        case .unknownTheme:
            break
        }
        return text
    }

    private static func shortened(_ text: String) -> String {
        text.count > 60 ? String(text.prefix(57)) + "..." : text
    }
}

/// btop's theme file syntax.
///
/// ```
/// # a comment
/// theme[main_bg]="#1e1e2e"      six hex digits
/// theme[main_fg] = "#cc"        two hex digits: a grey (#cccccc)
/// theme[title]='255 255 255'    decimal red green blue, 0-255, single or double quotes
/// theme[temp_mid]=""            empty: the terminal's default colour (in a gradient: no middle)
/// ```
///
/// Blank lines and `#` comment lines are skipped; spaces around `=` and a `#` comment after the
/// closing quote are allowed; an unquoted value runs to the end of the line. Keys btop has that bgtop
/// does not know (and any other unknown key) are ignored without looking at the value, so newer btop
/// themes load. A later line for the same key wins. Anything else is an error naming the line.
public enum ThemeFile {
    public static func parse(_ text: String, name: String) -> Result<Theme, ThemeError> {
        parse(text, name: name, path: nil)
    }

    /// As `parse(_:name:)`, with the file's path in any error.
    public static func parse(_ text: String, name: String, path: String?) -> Result<Theme, ThemeError> {
        var colors: [String: TerminalColor] = [:]
        let known = Set(Theme.keys)
        var body = Substring(text)
        if body.first == "\u{FEFF}" { body = body.dropFirst() }
        for (index, rawLine) in body.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            let line = rawLine.trimmingWhitespace()
            if line.isEmpty || line.hasPrefix("#") { continue }
            func failure(_ reason: ThemeError.Reason) -> Result<Theme, ThemeError> {
                .failure(ThemeError(theme: name, line: index + 1, path: path, reason: reason))
            }
            guard let entry = splitEntry(line) else { return failure(.malformedLine(String(line))) }
            guard known.contains(entry.key) else { continue }
            let value: Substring
            switch unquote(entry.value) {
            case let .value(text): value = text
            case .unterminated: return failure(.unterminatedQuote(String(line)))
            case .trailingText: return failure(.malformedLine(String(line)))
            }
            guard let color = parseColor(value) else {
                return failure(.notAColor(key: entry.key, value: String(value)))
            }
            colors[entry.key] = color
        }
        return .success(Theme(name: name, colors: colors))
    }

    /// A colour value as btop writes it, without quotes: `#rrggbb`, `#gg`, `r g b` or empty.
    public static func parseColor<Text: StringProtocol>(_ text: Text) -> TerminalColor? {
        let value = Substring(text).trimmingWhitespace()
        if value.isEmpty { return .terminalDefault }
        if value.hasPrefix("#") {
            let digits = value.dropFirst()
            guard digits.allSatisfy(\.isHexDigit), digits.count == 2 || digits.count == 6 else { return nil }
            var bytes: [UInt8] = []
            var rest = digits
            while !rest.isEmpty {
                guard let byte = UInt8(rest.prefix(2), radix: 16) else { return nil }
                bytes.append(byte)
                rest = rest.dropFirst(2)
            }
            return bytes.count == 1 ? .rgb(bytes[0], bytes[0], bytes[0]) : .rgb(bytes[0], bytes[1], bytes[2])
        }
        let parts = value.split(whereSeparator: \.isWhitespace)
        guard parts.count == 3 else { return nil }
        var channels: [UInt8] = []
        for part in parts {
            guard part.allSatisfy(\.isASCII), part.allSatisfy(\.isNumber), let channel = UInt8(part) else { return nil }
            channels.append(channel)
        }
        return .rgb(channels[0], channels[1], channels[2])
    }

    /// `theme[key] = value` → (key, value), or nil when the line has another shape.
    private static func splitEntry(_ line: Substring) -> (key: String, value: Substring)? {
        guard line.hasPrefix("theme["), let close = line.firstIndex(of: "]") else { return nil }
        let key = line[line.index(line.startIndex, offsetBy: 6)..<close].trimmingWhitespace()
        let afterKey = line[line.index(after: close)...].trimmingWhitespace()
        guard afterKey.hasPrefix("=") else { return nil }
        return (String(key), afterKey.dropFirst().trimmingWhitespace())
    }

    private enum Unquoted {
        case value(Substring)
        case unterminated
        case trailingText
    }

    /// Strips one pair of matching quotes (and a trailing `# comment` after them); an unquoted value
    /// is taken as it is.
    private static func unquote(_ value: Substring) -> Unquoted {
        guard let quote = value.first, quote == "\"" || quote == "'" else { return .value(value) }
        let inner = value.dropFirst()
        guard let close = inner.firstIndex(of: quote) else { return .unterminated }
        let after = inner[inner.index(after: close)...].trimmingWhitespace()
        guard after.isEmpty || after.hasPrefix("#") else { return .trailingText }
        return .value(inner[..<close])
    }
}

extension Substring {
    fileprivate func trimmingWhitespace() -> Substring {
        var result = self
        while let first = result.first, first.isWhitespace { result = result.dropFirst() }
        while let last = result.last, last.isWhitespace { result = result.dropLast() }
        return result
    }
}
