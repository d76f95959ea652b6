/// What a status that is neither success nor a redirect means for a transfer.
public enum StatusRules {
    /// The failure for `head`, with the server's `Retry-After` (RFC 9110 §10.2.3) when it sent
    /// one; `now` is seconds since the epoch.
    public static func failure(for head: ResponseHead, now: Double) -> TransferFailure {
        let retryAfter = head.first("Retry-After").flatMap { RetryAfter.seconds($0, now: now) }
        return .httpStatus(head.status, retryAfter: retryAfter)
    }

    /// Whether trying again later may help: `408` and `429` (the client was too early or too
    /// fast), and `5xx` but for `501` and `505`, which say what the server will never do.
    public static func isTransient(_ status: Int) -> Bool {
        switch status {
        case 408, 429: return true
        case 501, 505: return false
        case 500...599: return true
        default: return false
        }
    }
}
