/// The `Retry-After` field (RFC 9110 §10.2.3): how long a client ought to wait before trying again.
public enum RetryAfter {
    /// The longest wait taken from a server: a day. A larger value (or a date further ahead) is cut
    /// to this; the transfer's resource timeout still bounds the whole.
    public static let maximumSeconds: Double = 86_400

    /// Seconds to wait from `now` (seconds since the epoch), from delta-seconds or an HTTP-date;
    /// `nil` when the value is neither. A date in the past means "now" (0).
    public static func seconds(_ value: String, now: Double) -> Double? {
        let text = value.trimmingHTTPWhitespace
        if let delta = parseDigits(text) {
            return min(Double(delta), maximumSeconds)
        }
        // A huge digit string overflows Int64 but is still delta-seconds (§10.2.3: 1*DIGIT).
        if !text.isEmpty, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) { return maximumSeconds }
        guard let date = HTTPDate.parse(text), now.isFinite else { return nil }
        return min(max(0, Double(date) - now), maximumSeconds)
    }
}
