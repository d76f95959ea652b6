import ArgumentParser
import FoundationEssentials
import Glibc
import TaskState

/// The kinds as typed on the command line.
enum KindArgument: String, ExpressibleByArgument, CaseIterable {
    case refresh, processing

    var kind: TaskKind { self == .refresh ? .appRefresh : .processing }
}

struct Submit: BatchableCommand {
    static let configuration = CommandConfiguration(
        commandName: "submit",
        abstract: "Submit a task request (BGTaskScheduler.submit). Replaces a pending request with the same identifier.")

    @OptionGroup var locations: LocationOptions
    @Option(help: "The app's identifier.") var app: String
    @Option(help: "The task identifier (one of the app's permittedIdentifiers).") var id: String
    @Option(help: "refresh (BGAppRefreshTaskRequest) or processing (BGProcessingTaskRequest).") var kind: KindArgument
    @Option(help: "earliestBeginDate: an ISO 8601 date (2026-11-22T12:00:00Z) or +SECONDS from now.") var earliest: String?
    @Flag(help: "Processing only: wait for a network connection.") var requiresNetwork = false
    @Flag(help: "Processing only: wait for external power.") var requiresPower = false
    @Flag(inversion: .prefixedNo, help: ArgumentHelp(
        "Whether it may run while the network is metered (allowsExpensiveNetworkAccess); default: yes."))
    var allowsExpensiveNetwork: Bool?

    func validate() throws {
        if kind == .refresh && (requiresNetwork || requiresPower) {
            throw ValidationError("--requires-network and --requires-power apply to processing requests only")
        }
    }

    func action(now: Date) throws -> CommandAction {
        .submit(SubmitRequest(
            app: try identifier(app, "app"), identifier: try identifier(id, "identifier"), kind: kind.kind,
            earliestBeginDate: try earliest.map { try parseEarliest($0, now: now) },
            requiresNetworkConnectivity: requiresNetwork, requiresExternalPower: requiresPower,
            allowsExpensiveNetworkAccess: allowsExpensiveNetwork))
    }

    func run() throws {
        let now = Date()
        let action = try action(now: now)
        try CommandSender(locations: locations).send(action)
        // Accepted (a refusal threw above), so the one line is advice, not an error.
        if case .submit(let request) = action,
           let warning = DistantBeginDate.warning(identifier: request.identifier.rawValue, earliest: request.earliestBeginDate, now: now) {
            printError("warning: " + warning)
        }
    }
}

/// `+SECONDS` from now, or an ISO 8601 date, within ten years of now (``NumberArgument/earliest(_:now:)``).
func parseEarliest(_ text: String, now: Date) throws -> Date {
    try NumberArgument.earliest(text, now: now)
}

struct Cancel: BatchableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cancel",
        abstract: "Cancel a pending request (cancel(taskRequestWithIdentifier:)) or all of an app's (--all).")

    @OptionGroup var locations: LocationOptions
    @Option(help: "The app's identifier.") var app: String
    @Option(help: "The task identifier to cancel.") var id: String?
    @Flag(help: "Cancel every pending request of the app.") var all = false

    func validate() throws {
        if (id == nil) == (!all) { throw ValidationError("give either --id ID or --all") }
    }

    func action(now: Date) throws -> CommandAction {
        let appID = try identifier(app, "app")
        if all { return .cancelAll(app: appID) }
        guard let id else { throw ValidationError("give either --id ID or --all") }
        return .cancel(app: appID, identifier: try identifier(id, "identifier"))
    }

    func run() throws {
        try CommandSender(locations: locations).send(try action(now: Date()))
    }
}

struct SimulateLaunch: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "simulate-launch",
        abstract: "Launch a pending request now, ignoring its date and constraints (_simulateLaunchForTaskWithIdentifier:).")

    @OptionGroup var locations: LocationOptions
    @Argument(help: "The task identifier.") var id: String
    @Option(help: "The app, when several apps use the identifier.") var app: String?

    func run() throws {
        try CommandSender(locations: locations).send(
            .simulateLaunch(identifier: try identifier(id, "identifier"), app: try app.map { try identifier($0, "app") }),
            needsScheduler: true)
    }
}

struct SimulateExpiration: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "simulate-expiration",
        abstract: "Make a running task expire now, through the real expiry path (_simulateExpirationForTaskWithIdentifier:).")

    @OptionGroup var locations: LocationOptions
    @Argument(help: "The task identifier.") var id: String
    @Option(help: "The app, when several apps use the identifier.") var app: String?

    func run() throws {
        try CommandSender(locations: locations).send(
            .simulateExpiration(identifier: try identifier(id, "identifier"), app: try app.map { try identifier($0, "app") }),
            needsScheduler: true)
    }
}

/// The app a task command is for: `--app`, else `$BGTASK_APP_ID` (set for launched apps).
func appFromEnvironment(_ flag: String?) throws -> Identifier {
    guard let text = flag ?? EnvironmentVariables.process["BGTASK_APP_ID"] else {
        throw ValidationError("give --app, or run inside a launched app where BGTASK_APP_ID is set")
    }
    return try identifier(text, "app")
}

struct Complete: BatchableCommand {
    static let configuration = CommandConfiguration(
        commandName: "complete",
        abstract: "Finish a running task (setTaskCompleted(success:)); a push's task may answer --new-data or --no-data (UIBackgroundFetchResult).")

    @OptionGroup var locations: LocationOptions
    @Argument(help: "The task identifier.") var id: String
    @Option(help: "The app (default: $BGTASK_APP_ID).") var app: String?
    @Flag(help: "Whether the work succeeded; for a push's task, also whether it found new data.") var outcome: CompletionFlag

    enum CompletionFlag: EnumerableFlag {
        case success, failure
        /// A push's answer (`answerPush`).
        case newData, noData
    }

    func action(now: Date) throws -> CommandAction {
        let app = try appFromEnvironment(app)
        let task = try identifier(id, "identifier")
        switch outcome {
        case .success, .failure: return .complete(app: app, identifier: task, success: outcome == .success)
        case .newData: return .answerPush(app: app, identifier: task, result: .newData)
        case .noData: return .answerPush(app: app, identifier: task, result: .noData)
        }
    }

    func run() throws {
        try CommandSender(locations: locations).send(try action(now: Date()))
    }
}

struct BeginFinishing: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "begin-finishing",
        abstract: "Ask for time to finish user work (beginBackgroundTask); prints the task identifier to complete.")

    @OptionGroup var locations: LocationOptions
    @Option(help: "The app (default: $BGTASK_APP_ID).") var app: String?
    @Option(help: "A name for the work, shown in listings.") var name: String?
    @Option(help: "The process doing the work, 1 to 4194304 (default: the process that runs bgctl).") var pid: String?

    func run() throws {
        let process = try pid.map { Int32(try NumberArgument.whole($0, option: "--pid", in: NumericBounds.pid)) } ?? getppid()
        let outcome = try CommandSender(locations: locations).send(
            .beginFinishing(app: try appFromEnvironment(app), name: name, pid: process), quiet: true)
        if let identifier = outcome?.identifier { printLine(identifier.description) }
    }
}
