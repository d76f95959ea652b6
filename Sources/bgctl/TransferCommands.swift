import ArgumentParser
import FoundationEssentials
import TaskState

/// `bgctl transfer download|upload|cancel|pause|resume`: background transfers for any program.
struct TransferCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "transfer",
        abstract: "Hand a download or upload to the scheduler, or cancel, pause, resume or answer about one.",
        subcommands: [Download.self, Upload.self, CancelTransfer.self, PauseTransfer.self, ResumeTransfer.self,
                      AnswerTransfer.self])

    /// What both directions take.
    struct Options: ParsableArguments {
        @Option(help: "The app's identifier.") var app: String
        @Option(help: "The transfer's identifier (unique among the app's active transfers).") var id: String
        @Option(help: "The background session it belongs to.") var session: String?
        @Option(help: "earliestBeginDate: an ISO 8601 date or +SECONDS from now.") var earliest: String?
        @Flag(help: "Wait for external power (and a network), like a discretionary URLSession.") var discretionary = false
        @Flag(help: "Launch the app (reason urlSession) when the transfer ends.") var launchEvents = false
        @Flag(inversion: .prefixedNo, help: ArgumentHelp(
            "Whether it may run on a metered network (allowsExpensiveNetworkAccess); default: yes unless --discretionary."))
        var allowsExpensiveNetwork: Bool?
        // The numbers are Strings: bgctl parses them itself against their documented ranges
        // (NumberArgument), so nan, inf and 1e300 are one line and exit 2.
        @Option(help: "Seconds without progress before an attempt fails, 1 to 2592000 (timeoutIntervalForRequest, default 60).")
        var requestTimeout: String?
        @Option(help: "Seconds before the transfer gives up, 1 to 31536000 (timeoutIntervalForResource, default 604800).")
        var resourceTimeout: String?
        @Option(help: "The size the app expects, in bytes, 0 to 2^50 (countOfBytesClientExpectsToReceive/Send).")
        var expectedBytes: String?
        @Option(name: .customLong("header"), help: ArgumentHelp(
            "A request header sent on every attempt and resume (repeatable). Authorization, Proxy-Authorization and Cookie are secrets.",
            valueName: "Name: value"))
        var headers: [String] = []
        @Option(name: .customLong("secret-header"), help: ArgumentHelp(
            "Also treat this header as a secret: shown as 'redacted', dropped on a redirect to another origin (repeatable).",
            valueName: "name"))
        var secretHeaders: [String] = []
        @Option(help: "The HTTP method: GET or POST for a download (default GET); PUT, POST or PATCH for an upload (default PUT).")
        var method: String?
        @Flag(help: "With --earliest: ask before it begins (willBeginDelayedRequest); answer with 'bgctl transfer answer'.")
        var askBeforeBegin = false

        func request(direction: TransferRecord.Direction, url: String, destination: String?, sourceFile: String?,
                     sha256: String? = nil) throws -> TransferRequest {
            let requestTimeout = try requestTimeout.map {
                try NumberArgument.seconds($0, option: "--request-timeout", in: NumericBounds.requestTimeout)
            }
            let resourceTimeout = try resourceTimeout.map {
                try NumberArgument.seconds($0, option: "--resource-timeout", in: NumericBounds.resourceTimeout)
            }
            let expectedBytes = try expectedBytes.map {
                try NumberArgument.whole($0, option: "--expected-bytes", in: NumericBounds.expectedBytes, unit: " of bytes")
            }
            guard !askBeforeBegin || earliest != nil else {
                throw ValidationError("--ask-before-begin needs --earliest: only a delayed transfer is asked about")
            }
            let fields = try TransferHeaderArguments.parse(headers, secretNames: secretHeaders, method: method, direction: direction)
            return TransferRequest(
                app: try identifier(app, "app"), identifier: try identifier(id, "identifier"), session: session,
                direction: direction, url: url, destination: destination, sourceFile: sourceFile,
                earliestBeginDate: try earliest.map { try parseEarliest($0, now: Date()) },
                isDiscretionary: discretionary, sessionSendsLaunchEvents: launchEvents,
                countOfBytesClientExpectsToSend: direction == .upload ? expectedBytes : nil,
                countOfBytesClientExpectsToReceive: direction == .download ? expectedBytes : nil,
                timeoutIntervalForRequest: requestTimeout, timeoutIntervalForResource: resourceTimeout,
                sha256: sha256, method: method, headers: fields.isEmpty ? nil : fields,
                secretHeaderNames: secretHeaders.isEmpty ? nil : secretHeaders, asksBeforeDelayedBegin: askBeforeBegin,
                allowsExpensiveNetworkAccess: allowsExpensiveNetwork)
        }
    }

    struct Download: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "download",
            abstract: "Download URL into the app's downloads folder (<state>/downloads/<app>/NAME).")

        @OptionGroup var locations: LocationOptions
        @OptionGroup var options: Options
        @Argument(help: "An http or https URL.") var url: String
        @Option(help: "The file name in the app's downloads folder (default: the transfer's identifier).") var to: String?
        @Option(help: ArgumentHelp("The SHA-256 the finished file must have (64 hex digits); a mismatch fails the transfer.",
                                   valueName: "hex"))
        var sha256: String?

        func run() throws {
            let request = try options.request(direction: .download, url: url, destination: to ?? options.id, sourceFile: nil,
                                              sha256: try sha256.map(sha256Digest))
            try CommandSender(locations: locations).send(.transferCreate(request))
        }
    }

    struct Upload: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "upload", abstract: "Upload FILE to URL (HTTP PUT, or --method).")

        @OptionGroup var locations: LocationOptions
        @OptionGroup var options: Options
        @Argument(help: "An http or https URL.") var url: String
        @Argument(help: "The file to send.") var file: String

        func run() throws {
            let path = file.hasPrefix("/") ? file : FileManager.default.currentDirectoryPath + "/" + file
            guard FileManager.default.isReadableFile(atPath: path) else {
                printError("cannot read \(path)")
                throw BGCtl.Exit.usage
            }
            let request = try options.request(direction: .upload, url: url, destination: nil, sourceFile: path)
            try CommandSender(locations: locations).send(.transferCreate(request))
        }
    }

    /// The options of the verbs that name one transfer.
    struct Target: ParsableArguments {
        @Option(help: "The app's identifier.") var app: String
        @Option(help: "The transfer's identifier.") var id: String

        /// Sends the command `make` builds for this transfer.
        func send(_ make: (Identifier, Identifier) -> CommandAction, locations: LocationOptions) throws {
            try CommandSender(locations: locations).send(make(try identifier(app, "app"), try identifier(id, "identifier")))
        }
    }

    struct CancelTransfer: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "cancel", abstract: "Cancel a transfer; its partial data is removed.")
        @OptionGroup var locations: LocationOptions
        @OptionGroup var target: Target

        func run() throws {
            try target.send(CommandAction.transferCancel, locations: locations)
        }
    }

    struct PauseTransfer: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "pause", abstract: "Pause a transfer, keeping its partial data.")
        @OptionGroup var locations: LocationOptions
        @OptionGroup var target: Target

        func run() throws {
            try target.send(CommandAction.transferPause, locations: locations)
        }
    }

    struct ResumeTransfer: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "resume", abstract: "Resume a paused transfer from its last byte.")
        @OptionGroup var locations: LocationOptions
        @OptionGroup var target: Target

        func run() throws {
            try target.send(CommandAction.transferResume, locations: locations)
        }
    }
}
