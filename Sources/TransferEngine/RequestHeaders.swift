import AsyncHTTPClient
import FoundationEssentials
import TaskState
import TransferCore

extension TransferJob {
    /// The app's headers for a request to `url`: all of them at the transfer's own origin; without
    /// the secret ones after a redirect to another origin (RFC 9110 §15.4; curl since CVE-2018-1000007).
    public func requestHeaders(for url: String) -> [TransferHeader] {
        if RequestOrigin.mayCarrySecrets(to: url, givenFor: self.url) { return headers }
        return headers.filter { !TransferHeaderRules.isSecret($0.name, secretNames: secretHeaderNames) }
    }

    /// Adds ``requestHeaders(for:)`` for the request's URL to `request`.
    func addHeaders(to request: inout HTTPClientRequest) {
        for header in requestHeaders(for: request.url) {
            request.headers.add(name: header.name, value: header.value)
        }
    }
}
