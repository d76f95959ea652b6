import FoundationEssentials

/// Why some bytes are not the JSON object a reader expected, in one line that says where (byte
/// offset, line, field) and what was expected: what quarantine reasons and refused commands say.
///
/// Foundation's own text ("The given data was not valid JSON.") names neither, and a person
/// looking at a quarantined file needs both.
public enum DecodeFailure {
    /// The reason `data` could not be decoded, given the error the decoder threw.
    public static func describe(_ error: any Error, data: Data) -> String {
        guard let error = error as? DecodingError else { return "\(error)" }
        switch error {
        case .dataCorrupted(let context) where context.codingPath.isEmpty:
            return describeText(data, decoderMessage: underlyingMessage(context))
        case .dataCorrupted(let context):
            return "\(field(context)): \(context.debugDescription)"
        case .keyNotFound(let key, let context):
            let inside = context.codingPath.isEmpty ? "" : " in \(field(context))"
            return "missing key '\(key.stringValue)'\(inside)"
        case .typeMismatch(let type, let context):
            return "\(field(context)): expected \(typeName(type))"
        case .valueNotFound(let type, let context):
            return "\(field(context)): expected \(typeName(type)), found null"
        @unknown default:
            return "\(error)"
        }
    }

    /// Bytes that are not JSON at all: empty, NUL, cut short, or broken at some place.
    static func describeText(_ data: Data, decoderMessage: String?) -> String {
        let bytes = [UInt8](data)
        if bytes.isEmpty { return "not valid JSON: the file is empty (0 bytes); expected a JSON object" }
        if let nul = bytes.firstIndex(of: 0) {
            return "not valid JSON: NUL byte at byte offset \(nul) (\(position(of: nul, in: bytes))); expected JSON text"
        }
        if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) {
            return "not valid JSON: only whitespace (\(bytes.count) bytes); expected a JSON object"
        }
        if let open = unfinished(bytes) {
            return "not valid JSON: it ends at byte offset \(bytes.count) (\(position(of: bytes.count, in: bytes))) inside an unfinished \(open); "
                + "expected the rest of the JSON text (cut short?)"
        }
        let detail = decoderMessage.map { ": \($0)" } ?? ""
        return "not valid JSON (\(bytes.count) bytes)\(detail); expected a JSON object"
    }

    /// `line L, column C` of a byte offset (both from 1).
    static func position(of offset: Int, in bytes: [UInt8]) -> String {
        var line = 1
        var lineStart = 0
        for index in 0..<min(offset, bytes.count) where bytes[index] == 0x0A {
            line += 1
            lineStart = index + 1
        }
        return "line \(line), column \(offset - lineStart + 1)"
    }

    /// The innermost object, array or string still open at the end, or `nil` when all are closed.
    static func unfinished(_ bytes: [UInt8]) -> String? {
        var stack: [UInt8] = []
        var inString = false
        var escaped = false
        for byte in bytes {
            if inString {
                if escaped { escaped = false } else if byte == 0x5C { escaped = true } else if byte == 0x22 { inString = false }
                continue
            }
            switch byte {
            case 0x22: inString = true
            case 0x7B, 0x5B: stack.append(byte)
            case 0x7D, 0x5D: if !stack.isEmpty { stack.removeLast() }
            default: break
            }
        }
        if inString { return "string" }
        guard let last = stack.last else { return nil }
        return last == 0x7B ? "object" : "array"
    }

    private static func underlyingMessage(_ context: DecodingError.Context) -> String? {
        guard let underlying = context.underlyingError else { return nil }
        return "\(underlying)".trimmed(of: [".", " ", "\n"])
    }

    private static func field(_ context: DecodingError.Context) -> String {
        var text = ""
        for key in context.codingPath {
            if let index = key.intValue { text += "[\(index)]" } else { text += (text.isEmpty ? "" : ".") + key.stringValue }
        }
        return text.isEmpty ? "the top level" : "field '\(text)'"
    }

    private static func typeName(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: return "a string"
        case is Bool.Type: return "true or false"
        case is Int.Type, is Int32.Type, is Int64.Type, is UInt64.Type: return "an integer"
        case is Double.Type: return "a number"
        default:
            let name = "\(type)"
            if name.hasPrefix("Dictionary") { return "a JSON object" }
            if name.hasPrefix("Array") { return "an array" }
            return name == "Date" ? "an ISO 8601 date string" : "a JSON value of type \(name)"
        }
    }
}
