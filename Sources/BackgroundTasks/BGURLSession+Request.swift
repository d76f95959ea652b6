import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import TaskState

extension BGURLSession {
    /// A download of `request`'s URL with its method (`GET` or `POST`) and header fields, sent on
    /// every attempt and every resume. Call `resume()` to start it.
    ///
    /// `Authorization`, `Proxy-Authorization`, `Cookie` and the configuration's
    /// ``BGURLSessionConfiguration/secretHTTPHeaderNames`` are secrets: the scheduler keeps them in
    /// the transfer's private record, shows them as `redacted`, and does not send them after a
    /// redirect to another origin. A bad name or value (RFC 9110 §5.1, §5.5: no CR, LF or NUL; at
    /// most 8192 bytes) is refused at `resume()` (``BGURLSessionError/Code/refused``, naming the
    /// header, never its value). On Linux, `URLRequest.setValue(_:forHTTPHeaderField:)` itself
    /// drops a value containing CR, LF or NUL, so such a header never gets this far. The request's
    /// body, cache policy and timeout are not used.
    ///
    /// Made while an async call (``download(for:)``) of this session awaits the same request
    /// (method, URL, header fields), the task is that transfer: `resume()` promotes it, so it
    /// outlives the call instead of being cancelled with it (see ``download(for:)``).
    public func downloadTask(with request: URLRequest) -> BGURLSessionTask {
        promotingIfAwaited(BGURLSessionTask(identifier: nextTaskIdentifier(), url: Self.url(of: request), sourceFile: nil, direction: .download,
                                            session: self, requestMethod: request.httpMethod, requestHeaders: Self.headers(of: request)))
    }

    /// An upload of `fileURL` as the body of `request` (its method must be `PUT`, `POST` or
    /// `PATCH`; `URLRequest`'s default `GET` is refused at `resume()`), with its header fields. An
    /// upload's `Content-Type` is `application/octet-stream` unless the request sets one.
    /// Made while ``upload(for:fromFile:)`` awaits the same request and file, the task is that
    /// transfer, as for ``downloadTask(with:)-(URLRequest)``.
    public func uploadTask(with request: URLRequest, fromFile fileURL: URL) -> BGURLSessionTask {
        promotingIfAwaited(BGURLSessionTask(identifier: nextTaskIdentifier(), url: Self.url(of: request), sourceFile: fileURL, direction: .upload,
                                            session: self, requestMethod: request.httpMethod, requestHeaders: Self.headers(of: request)))
    }

    /// A request without a URL gets one the scheduler refuses as not http(s).
    static func url(of request: URLRequest) -> URL {
        request.url ?? URL(fileURLWithPath: "/")
    }

    /// The request's fields, sorted by name: `URLRequest` keeps them in a dictionary, without order.
    static func headers(of request: URLRequest) -> [TransferHeader]? {
        let fields = (request.allHTTPHeaderFields ?? [:]).map { TransferHeader(name: $0.key, value: $0.value) }
        return fields.isEmpty ? nil : fields.sorted { $0.name < $1.name }
    }
}
