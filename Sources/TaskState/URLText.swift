import FoundationEssentials

/// URLs as the programs show them. Credentials in a URL's user information are secrets like a
/// secret header's value, and the whole of it is shown as `redacted`
/// (`https://redacted@host/f`): a user name is often the token itself (`https://TOKEN@host/`,
/// `https://TOKEN:x-oauth-basic@host/`). The record keeps the URL whole; only what is printed,
/// drawn or logged hides them.
public enum URLText {
    /// `url` with its user information hidden; any other text unchanged.
    public static func hidingCredentials(_ url: String) -> String {
        guard let separator = url.firstRange(of: "://") else { return url }
        let start = separator.upperBound
        let end = url[start...].firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? url.endIndex
        guard let at = url[start..<end].lastIndex(of: "@") else { return url }
        return String(url[..<start]) + TransferHeader.redactedValue + String(url[at...])
    }
}
