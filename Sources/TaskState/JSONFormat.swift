import FoundationEssentials

/// The JSON conventions shared by every file, command and output: ISO 8601 dates in UTC with a `Z`
/// and millisecond precision, sorted keys so files diff cleanly.
public enum JSONFormat {
    /// The version of the on-disk format this build reads and writes.
    public static let version = 1

    private static let withFraction = Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: .gmt)
    private static let withoutFraction = Date.ISO8601FormatStyle(includingFractionalSeconds: false, timeZone: .gmt)

    /// `2026-11-22T10:00:00.250Z`, rounded to the nearest millisecond so that reading a date and
    /// writing it again gives the same text.
    ///
    /// Never traps: a date outside years 1 to 9999 (which commands and settings are checked to
    /// keep away from) is written as the nearest of those ends, and NaN as 1970.
    public static func string(from date: Date) -> String {
        let range = SafeNumber.writableDates
        let clamped = date.timeIntervalSince1970.isNaN ? 0 : min(max(date.timeIntervalSince1970, range.lowerBound), range.upperBound)
        let milliseconds = SafeNumber.int64(clamped * 1000)
        let seconds = milliseconds.quotientAndRemainder(dividingBy: 1000)
        let whole = seconds.remainder < 0 ? seconds.quotient - 1 : seconds.quotient
        let fraction = seconds.remainder < 0 ? seconds.remainder + 1000 : seconds.remainder
        return UTCText.format(seconds: whole, milliseconds: Int(fraction))
    }

    /// Parses an ISO 8601 date with or without fractional seconds; `nil` when it does not parse.
    public static func date(from text: String) -> Date? {
        // What the programs write, read with integer arithmetic; anything else by the format style.
        if let date = UTCText.parse(text) { return date }
        if let date = try? withFraction.parse(text) { return date }
        if let date = try? withoutFraction.parse(text) { return date }
        return nil
    }

    /// An encoder for state files and `--json` output.
    public static func encoder(pretty: Bool = true) -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = pretty ? [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
                                          : [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(string(from: date))
        }
        return encoder
    }

    /// A decoder matching ``encoder(pretty:)``.
    public static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            guard let date = date(from: text) else {
                throw DecodingError.dataCorruptedError(
                    in: container, debugDescription: "'\(text)' is not an ISO 8601 date")
            }
            return date
        }
        return decoder
    }

    /// Encodes `value` as pretty JSON followed by a newline.
    public static func encode<T: Encodable>(_ value: T) throws -> Data {
        var data = try encoder().encode(value)
        data.append(0x0A)
        return data
    }

    /// Encodes `value` as one line of JSON (for JSON Lines logs).
    public static func encodeLine<T: Encodable>(_ value: T) throws -> Data {
        var data = try encoder(pretty: false).encode(value)
        data.append(0x0A)
        return data
    }

    /// Decodes `type` from `data`, turning decoding errors into a short readable reason.
    public static func decode<T: Decodable>(_ type: T.Type, from data: Data) throws(StateError) -> T {
        try decode(type, from: data, using: decoder())
    }

    /// Decodes with `decoder` (one of ``decoder()``'s, kept across many lines). Every decode of the
    /// programs goes through here: text with a number the decoder would trap on is refused first
    /// (``JSONNumberLimit``).
    public static func decode<T: Decodable>(_ type: T.Type, from data: Data, using decoder: JSONDecoder) throws(StateError) -> T {
        if let problem = JSONNumberLimit.problem(in: data) { throw .malformed("not valid JSON here: \(problem)") }
        do {
            return try decoder.decode(type, from: data)
        } catch {
            throw .malformed(DecodeFailure.describe(error, data: data))
        }
    }
}
