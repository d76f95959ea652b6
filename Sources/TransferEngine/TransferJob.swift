import TransferCore
import FoundationEssentials
import TaskState

/// One transfer for the engine to carry out: what to fetch or send, where the bytes live, and
/// the limits of the attempt. The daemon builds it from the transfer's record.
public struct TransferJob: Hashable, Sendable {
    /// The files of a download.
    public struct DownloadFiles: Hashable, Sendable {
        /// Where the bytes collect until the entity is whole (beside the state file; see
        /// ``TaskState/StatePaths/transferPartialData(_:)``).
        public var partialFile: String
        /// The app's own folder; the destination must resolve inside it.
        public var appFolder: String
        /// The finished file: relative to `appFolder`, or an absolute path inside it.
        public var destination: String

        public init(partialFile: String, appFolder: String, destination: String) {
            self.partialFile = partialFile
            self.appFolder = appFolder
            self.destination = destination
        }
    }

    /// The HTTP method of an upload.
    public enum UploadMethod: String, Hashable, Sendable, Codable {
        case put = "PUT"
        case post = "POST"
        case patch = "PATCH"
    }

    /// The file of an upload.
    public struct UploadFile: Hashable, Sendable {
        /// The file whose bytes are sent, as the request body with its length.
        public var sourceFile: String
        public var method: UploadMethod

        public init(sourceFile: String, method: UploadMethod = .put) {
            self.sourceFile = sourceFile
            self.method = method
        }
    }

    public enum Files: Hashable, Sendable {
        case download(DownloadFiles)
        case upload(UploadFile)
    }

    public var key: TaskKey
    /// An `http` or `https` URL.
    public var url: String
    public var files: Files
    /// Seconds without progress before the attempt fails with ``TransferFailure/requestTimedOut(seconds:)``.
    public var timeoutIntervalForRequest: Double
    /// The moment the transfer gives up for good (``TransferFailure/resourceTimedOut``); `nil` for never.
    public var resourceDeadline: Date?
    /// Downloads: the SHA-256 the finished file must have, 64 lowercase hexadecimal digits; the
    /// attempt fails with ``TransferFailure/checksumMismatch(expected:actual:)`` (permanent) when
    /// it does not. `nil`: not checked. Ignored for uploads.
    public var expectedSHA256: String?
    /// The app's header fields, sent with every request of every attempt (see ``requestHeaders(for:)``).
    public var headers: [TransferHeader] = []
    /// Names of headers that are secrets besides ``TaskState/TransferHeaderRules/alwaysSecret``.
    public var secretHeaderNames: [String] = []
    /// Downloads: the method of the first request (`GET` or `POST`); uploads use ``UploadFile/method``.
    public var downloadMethod: String = "GET"
    /// Uploads: where the start of a successful answer's body is written (an absolute path in the
    /// app's downloads folder; at most ``TaskState/ResponseHeaderRules/bodyLimit`` bytes). `nil`:
    /// the body is read and dropped.
    public var responseBodyFile: String?

    public init(key: TaskKey, url: String, files: Files,
                timeoutIntervalForRequest: Double = TransferRecord.defaultTimeoutIntervalForRequest,
                resourceDeadline: Date? = nil, expectedSHA256: String? = nil) {
        self.key = key
        self.url = url
        self.files = files
        self.timeoutIntervalForRequest = timeoutIntervalForRequest
        self.resourceDeadline = resourceDeadline
        self.expectedSHA256 = expectedSHA256
    }

    /// A download of `url` to `destination` inside `appFolder`; with `expectedSHA256`, only a
    /// file with that digest completes.
    public static func download(_ key: TaskKey, from url: String, partialFile: String, appFolder: String,
                                destination: String,
                                timeoutIntervalForRequest: Double = TransferRecord.defaultTimeoutIntervalForRequest,
                                resourceDeadline: Date? = nil, expectedSHA256: String? = nil) -> TransferJob {
        TransferJob(key: key, url: url,
                    files: .download(DownloadFiles(partialFile: partialFile, appFolder: appFolder, destination: destination)),
                    timeoutIntervalForRequest: timeoutIntervalForRequest,
                    resourceDeadline: resourceDeadline, expectedSHA256: expectedSHA256)
    }

    /// An upload of `sourceFile` to `url`.
    public static func upload(_ key: TaskKey, to url: String, sourceFile: String, method: UploadMethod = .put,
                              timeoutIntervalForRequest: Double = TransferRecord.defaultTimeoutIntervalForRequest,
                              resourceDeadline: Date? = nil) -> TransferJob {
        TransferJob(key: key, url: url, files: .upload(UploadFile(sourceFile: sourceFile, method: method)),
                    timeoutIntervalForRequest: timeoutIntervalForRequest, resourceDeadline: resourceDeadline)
    }

    public var direction: TransferRecord.Direction {
        switch files {
        case .download: return .download
        case .upload: return .upload
        }
    }

    /// Checks the job without any I/O beyond looking at paths: the URL's scheme and host, and that a download's destination stays inside the app folder.
    /// The engine runs the same check before each attempt; callers may run it early to refuse a
    /// transfer when it is submitted.
    public func validate() throws(TransferFailure) {
        try Self.checkURL(url)
        switch files {
        case .download(let download):
            _ = try ContainedDestination(destination: download.destination, appFolder: download.appFolder)
            guard download.partialFile.hasPrefix("/") else {
                throw .fileSystem(path: download.partialFile, reason: "the partial data path is not absolute")
            }
        case .upload:
            break
        }
    }

    /// Removes a download's partial data (for a transfer cancelled while it was not running).
    public func removePartialData() {
        if case .download(let download) = files { PartialData.remove(at: download.partialFile) }
    }

    /// Removes the partial data at `partialFile` and the validator recorded beside it.
    public static func removePartialData(at partialFile: String) {
        PartialData.remove(at: partialFile)
    }

    static func checkURL(_ text: String) throws(TransferFailure) {
        guard let components = URLComponents(string: text), let scheme = components.scheme else {
            throw .invalidURL(text)
        }
        guard ["http", "https"].contains(scheme.lowercased()) else { throw .unsupportedScheme(scheme) }
        guard let host = components.host, !host.isEmpty else { throw .invalidURL(text) }
    }
}
