import TaskState

extension BGTaskScheduler {
    /// Why the scheduler refused a request, with its message.
    ///
    /// As with Apple's framework, a code can be caught directly:
    /// `catch BGTaskScheduler.Error.tooManyPendingTaskRequests { ... }`.
    public struct Error: Swift.Error, Equatable, Sendable, CustomStringConvertible {
        public enum Code: Int, Sendable {
            /// Background work is unavailable: switched off for the app, low power mode, no usable
            /// manifest, or no scheduler running. (On Linux the last two also land here: Apple's
            /// system always has a scheduler and a bundle.)
            case unavailable = 1
            /// The app already has the maximum of pending requests of that kind (1 app refresh,
            /// 10 processing).
            case tooManyPendingTaskRequests = 2
            /// The identifier is not in the manifest's `permittedIdentifiers`, or the manifest does
            /// not declare the background mode the request needs.
            case notPermitted = 3
        }

        public let code: Code
        /// The scheduler's own words.
        public let message: String
        /// The scheduler's refusal code, when it refused (for callers that tell its names apart).
        var refusalCode: RefusalCode?

        public init(_ code: Code, _ message: String) {
            self.code = code
            self.message = message
        }

        public var description: String { "\(code.name): \(message)" }

        public static var unavailable: Code { .unavailable }
        public static var tooManyPendingTaskRequests: Code { .tooManyPendingTaskRequests }
        public static var notPermitted: Code { .notPermitted }

        /// Maps a refusal from the scheduler; names with no code of their own (an unknown app, a
        /// broken command) are `unavailable`.
        init(refusal: CommandOutcome.Refusal) {
            switch refusal.code {
            case .tooManyPendingTaskRequests?: self.init(.tooManyPendingTaskRequests, refusal.message)
            case .notPermitted?: self.init(.notPermitted, refusal.message)
            default: self.init(.unavailable, refusal.message)
            }
            refusalCode = refusal.code
        }
    }
}

extension BGTaskScheduler.Error.Code {
    /// The name as the scheduler and `bgctl` write it.
    public var name: String {
        switch self {
        case .unavailable: return RefusalCode.unavailable.rawValue
        case .tooManyPendingTaskRequests: return RefusalCode.tooManyPendingTaskRequests.rawValue
        case .notPermitted: return RefusalCode.notPermitted.rawValue
        }
    }

    /// Lets `catch BGTaskScheduler.Error.notPermitted` match an error of that code.
    public static func ~= (code: Self, error: any Swift.Error) -> Bool {
        (error as? BGTaskScheduler.Error)?.code == code
    }
}
