import ArgumentParser
import FoundationEssentials
import TaskState

extension TransferCommand {
    /// `bgctl transfer answer ID continue|cancel|new`: `willBeginDelayedRequest` for programs
    /// that do not link the library.
    struct AnswerTransfer: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "answer",
            abstract: "Answer the scheduler's question before a delayed transfer begins: continue, cancel, or new.",
            discussion: """
                The scheduler asks (event transferAsked, 'asking app' in bgctl list) when a transfer with an \
                earliestBeginDate whose app wants to be asked is ready to begin. 'new' begins with --url and/or \
                the --header fields instead (given headers replace all of the transfer's). No answer within \
                delayedRequestAnswerSeconds means it begins as made.
                """)

        @OptionGroup var locations: LocationOptions
        @Argument(help: "The transfer's identifier.") var id: String
        @Argument(help: "continue, cancel or new.") var disposition: String
        @Option(help: "The app's identifier (needed only when two apps have a transfer with this identifier).") var app: String?
        @Option(help: "new: the http or https URL to use instead.") var url: String?
        @Option(name: .customLong("header"), help: ArgumentHelp(
            "new: a header field of the new request (repeatable); together they replace the transfer's.", valueName: "Name: value"))
        var headers: [String] = []
        @Option(name: .customLong("secret-header"), help: ArgumentHelp(
            "new: also treat this header as a secret (repeatable).", valueName: "name"))
        var secretHeaders: [String] = []

        func run() throws {
            let transfer = try identifier(id, "identifier")
            guard let kind = DelayedRequestAnswer.Disposition(rawValue: disposition) else {
                throw ValidationError("bad answer '\(disposition)': expected continue, cancel or new")
            }
            guard kind == .new || (url == nil && headers.isEmpty && secretHeaders.isEmpty) else {
                throw ValidationError("--url, --header and --secret-header go with 'new' only")
            }
            guard kind != .new || url != nil || !headers.isEmpty else {
                throw ValidationError("'new' needs --url, --header, or both")
            }
            let owner = try app.map { try identifier($0, "app") } ?? findApp(of: transfer)
            var fields: [TransferHeader]?
            if !headers.isEmpty {
                // The method is the transfer's; a download's GET is checked here, the scheduler checks again.
                fields = try TransferHeaderArguments.parse(headers, secretNames: secretHeaders, method: nil, direction: .download)
            }
            let answer = DelayedRequestAnswer(app: owner, identifier: transfer, disposition: kind, url: url, headers: fields,
                                              secretHeaderNames: secretHeaders.isEmpty ? nil : secretHeaders)
            try CommandSender(locations: locations).send(.transferAnswer(answer))
        }

        /// The app whose transfer `transfer` is, when exactly one app has one by that name.
        private func findApp(of transfer: Identifier) throws -> Identifier {
            let folder = locations.paths.transfers
            let apps = ((try? StateFiles.names(in: folder)) ?? []).sorted().compactMap { name -> Identifier? in
                guard let app = try? Identifier(validating: name),
                      (try? StateFiles.read("\(folder)/\(name)/\(transfer.rawValue).json")) != nil else { return nil }
                return app
            }
            guard apps.count == 1, let app = apps.first else {
                throw ValidationError(apps.isEmpty ? "no transfer with identifier \(transfer); give --app if it is new"
                                                   : "transfers of \(apps.map(\.rawValue).joined(separator: ", ")) have identifier \(transfer): give --app")
            }
            return app
        }
    }
}
