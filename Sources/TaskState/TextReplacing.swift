extension StringProtocol {
    /// The text with every occurrence of `target` replaced by `replacement`, matched byte for byte
    /// in UTF-8.
    ///
    /// Foundation's `replacingOccurrences(of:with:)` and the standard library's `replacing(_:with:)`
    /// match whole `Character`s, so a `/` followed by a combining mark is not a `/` to them; a
    /// file name made from a path, or one line made from several, must not keep such a `/` or line
    /// break.
    /// UTF-8 is self-synchronizing, so a match of whole encoded scalars never starts or ends inside
    /// one. An empty `target` matches nothing.
    public func replacingLiterally(_ target: String, with replacement: String) -> String {
        let source = Array(utf8)
        let pattern = Array(target.utf8)
        guard !pattern.isEmpty, source.count >= pattern.count else { return String(self) }
        var result: [UInt8] = []
        result.reserveCapacity(source.count)
        var index = 0
        while index < source.count {
            if index + pattern.count <= source.count, source[index] == pattern[0],
               source[index..<(index + pattern.count)].elementsEqual(pattern) {
                result.append(contentsOf: replacement.utf8)
                index += pattern.count
            } else {
                result.append(source[index])
                index += 1
            }
        }
        return String(decoding: result, as: UTF8.self)
    }
}
