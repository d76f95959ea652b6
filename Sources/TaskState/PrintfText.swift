import Glibc

extension String {
    /// Numbers formatted as C's `printf` formats them (`%.1f`, `%02d`, `%04o`, `%02X`).
    ///
    /// Foundation's `String(format:)` lives outside FoundationEssentials and pulls the whole of
    /// Foundation (and ICU) into every program that calls it; C's `vsnprintf` is already linked.
    /// Pass `Int` to `%ld`/`%lu`, `Int32` to `%d`, `Double` to `%f`; `%@` has no meaning here:
    /// interpolate strings instead.
    public init(printf format: String, _ arguments: CVarArg...) {
        var buffer = [CChar](repeating: 0, count: 64)
        let needed = withVaList(arguments) { vsnprintf(&buffer, buffer.count, format, $0) }
        if needed >= Int32(buffer.count) {
            // A va_list is spent once read, so the longer pass takes a fresh one.
            buffer = [CChar](repeating: 0, count: Int(needed) + 1)
            _ = withVaList(arguments) { vsnprintf(&buffer, buffer.count, format, $0) }
        }
        self = needed < 0 ? "" : String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
