import Foundation

/// URLs as the programs show them. Credentials in a URL's user information are secrets like a
/// secret header's value: the password is shown as `redacted` (`https://ana:redacted@host/f`), and
/// a user name alone, which is often a token (`https://TOKEN@host/`), is shown as `redacted` too.
/// The record keeps the URL whole; only what is printed, drawn or logged hides them.
public enum URLText {
    /// `url` with the credentials of its user information hidden; any other text unchanged.
    public static func hidingCredentials(_ url: String) -> String {
        guard let separator = url.range(of: "://") else { return url }
        let start = separator.upperBound
        let end = url[start...].firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? url.endIndex
        guard let at = url[start..<end].lastIndex(of: "@") else { return url }
        let userinfo = url[start..<at]
        let shown = userinfo.firstIndex(of: ":").map { userinfo[..<$0] + ":" + TransferHeader.redactedValue }
            ?? Substring(TransferHeader.redactedValue)
        return String(url[..<start]) + shown + String(url[at...])
    }
}
