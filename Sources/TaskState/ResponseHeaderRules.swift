/// What the scheduler keeps of the response that completed a transfer, so that an app awaiting
/// it (`BGURLSession.download(for:)`) gets the real status and header fields.
///
/// The record is mode 0600, yet it is read by `bgctl list --json` and the watch feed: a cookie a
/// server sets is a secret the app never asked to be stored, so `Set-Cookie` is never kept.
public enum ResponseHeaderRules {
    /// Fields never kept (compared without regard to case).
    public static let neverKept: Set<String> = ["set-cookie", "set-cookie2"]
    /// At most this many fields are kept; a server that sends more loses the rest.
    public static let fieldLimit = 64
    /// A field whose value is longer than this many bytes is not kept.
    public static let valueLimit = 8192
    /// An upload's response body is kept up to this many bytes (1 MiB); the rest is dropped.
    public static let bodyLimit = 1 << 20

    /// The fields of a response that may be kept, in order.
    public static func kept(_ fields: [TransferHeader]) -> [TransferHeader] {
        let allowed = fields.filter { field in
            !neverKept.contains(field.name.lowercased()) && field.value.utf8.count <= valueLimit
                && !field.name.isEmpty && field.name.utf8.count <= 256
        }
        return Array(allowed.prefix(fieldLimit))
    }
}
