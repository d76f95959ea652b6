import FoundationEssentials

/// Numbers in JSON text are at most ``maximumLength`` characters long.
///
/// FoundationEssentials' `JSONDecoder` stops the process (a precondition, which no `try` catches)
/// on some longer numbers decoded as integers: `1` followed by 200 zeros and `e-184` is 16 digits'
/// worth of `Int`, but its reading as a `Decimal` overflows. The shortest found is 135 characters
/// long (`bgbench`-free: `JSONNumberLimitTests` keeps the two known ones). No file, command or
/// message of the project needs a number longer than 25 characters, so every reader refuses the
/// text before decoding it: a hostile file is quarantined, a hostile command or push refused.
public enum JSONNumberLimit {
    public static let maximumLength = 64

    /// The byte offset of the first number in `data` (outside strings) longer than
    /// ``maximumLength``, or `nil` when there is none.
    public static func firstTooLong<Bytes: Collection>(in data: Bytes) -> Int? where Bytes.Element == UInt8 {
        var inString = false
        var escaped = false
        var numberStart: Int?
        var offset = 0
        for byte in data {
            defer { offset += 1 }
            if inString {
                if escaped { escaped = false } else if byte == 0x5C { escaped = true } else if byte == 0x22 { inString = false }
                continue
            }
            let partOfNumber = (byte >= 0x30 && byte <= 0x39) || byte == 0x2D || byte == 0x2B || byte == 0x2E
                || byte == 0x65 || byte == 0x45
            if partOfNumber {
                if numberStart == nil { numberStart = offset }
                if let start = numberStart, offset - start + 1 > maximumLength { return start }
            } else {
                numberStart = nil
                if byte == 0x22 { inString = true }
            }
        }
        return nil
    }

    /// The reason to give for `data`, or `nil` when its numbers are all short enough.
    public static func problem<Bytes: Collection>(in data: Bytes) -> String? where Bytes.Element == UInt8 {
        firstTooLong(in: data).map { "a number longer than \(maximumLength) characters at byte offset \($0)" }
    }
}
