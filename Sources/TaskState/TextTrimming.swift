extension StringProtocol {
    /// The text without any of `characters` at either end; what Foundation's
    /// `trimmingCharacters(in:)` does, without Foundation.
    public func trimmed(of characters: Set<Character>) -> String {
        guard let first = firstIndex(where: { !characters.contains($0) }),
              let last = lastIndex(where: { !characters.contains($0) }) else { return "" }
        return String(self[first...last])
    }

    /// The text without spaces, tabs and line breaks at either end.
    public func trimmedWhitespace() -> String {
        guard let first = firstIndex(where: { !$0.isWhitespace }),
              let last = lastIndex(where: { !$0.isWhitespace }) else { return "" }
        return String(self[first...last])
    }

    /// The text padded with spaces on the right to `width` characters, or cut to it.
    public func padded(toWidth width: Int) -> String {
        count >= width ? String(prefix(width)) : String(self) + String(repeating: " ", count: width - count)
    }
}
