import TaskState
import TransferCore

/// The response that completed an attempt, as far as the scheduler keeps it: its status, its
/// header fields by ``TaskState/ResponseHeaderRules`` (no `Set-Cookie`), and for an upload the
/// file holding the start of its body.
public struct FinalResponse: Hashable, Sendable {
    public var statusCode: Int
    public var headers: [TransferHeader]
    /// Uploads: the body's file name in the app's downloads folder; `nil` when the body was empty.
    public var bodyFile: String?

    public init(statusCode: Int, headers: [TransferHeader], bodyFile: String? = nil) {
        self.statusCode = statusCode
        self.headers = headers
        self.bodyFile = bodyFile
    }

    /// The response of a download whose file now holds the whole entity, `length` bytes: a `206`
    /// that ended a resumed download is told as the `200` a single request would have got
    /// (without `Content-Range`, with the whole `Content-Length`), as the file is the whole entity.
    static func whole(_ head: ResponseHead, length: Int64) -> FinalResponse {
        guard head.status == 206 else { return FinalResponse(head) }
        var whole = ResponseHead(status: 200, fields: head.fields.filter {
            !["content-range", "content-length"].contains($0.name.lowercased())
        })
        whole.fields.append(ResponseHead.Field("Content-Length", String(length)))
        return FinalResponse(whole)
    }

    /// The response of a download completed without a body (a `416`, or a probe's answer, when
    /// the held bytes were already the whole entity): a `200` with the entity's length and the
    /// validators it was held under; the answer's own fields describe no entity.
    static func held(length: Int64, validator: ResumeValidator?) -> FinalResponse {
        var headers = [TransferHeader(name: "Content-Length", value: String(length))]
        if let etag = validator?.etag { headers.append(TransferHeader(name: "ETag", value: etag)) }
        if let modified = validator?.lastModified { headers.append(TransferHeader(name: "Last-Modified", value: modified)) }
        return FinalResponse(statusCode: 200, headers: ResponseHeaderRules.kept(headers))
    }

    init(_ head: ResponseHead, status: Int? = nil, bodyFile: String? = nil) {
        self.init(statusCode: status ?? head.status,
                  headers: ResponseHeaderRules.kept(head.fields.map { TransferHeader(name: $0.name, value: $0.value) }),
                  bodyFile: bodyFile)
    }
}
