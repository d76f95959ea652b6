/// A parsed `Content-Range` response header: `bytes 100-199/1000`, `bytes 100-199/*` or `bytes */1000`.
struct ContentRange: Hashable, Sendable {
    /// The first and last byte sent; `nil` for the unsatisfied form (`bytes */1000`).
    var first: Int64?
    var last: Int64?
    /// The whole entity's size, when the server says.
    var total: Int64?

    init?(_ header: String?) {
        guard let header else { return nil }
        let text = header.trimmingCharacters(in: " \t")
        guard text.lowercased().hasPrefix("bytes ") else { return nil }
        let spec = text.dropFirst(6).trimmingCharacters(in: " \t")
        let parts = spec.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        if parts[1] == "*" {
            total = nil
        } else {
            guard let value = Int64(parts[1]), value >= 0 else { return nil }
            total = value
        }
        if parts[0] == "*" {
            guard total != nil else { return nil }
            first = nil
            last = nil
            return
        }
        let bounds = parts[0].split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard bounds.count == 2, let first = Int64(bounds[0]), let last = Int64(bounds[1]),
              first >= 0, last >= first else { return nil }
        if let total, last >= total { return nil }
        self.first = first
        self.last = last
    }
}

private extension StringProtocol {
    func trimmingCharacters(in set: String) -> String {
        var slice = Substring(self)
        while let character = slice.first, set.contains(character) { slice.removeFirst() }
        while let character = slice.last, set.contains(character) { slice.removeLast() }
        return String(slice)
    }
}
