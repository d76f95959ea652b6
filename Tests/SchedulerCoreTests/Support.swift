import Foundation
import Testing
import SchedulerCore
import TaskState

/// A validated identifier, for literals known to be valid.
func ident(_ text: String) -> Identifier {
    do {
        return try Identifier(validating: text)
    } catch {
        fatalError("test identifier '\(text)' is invalid: \(error)")
    }
}

/// The start of every simulated timeline: 2026-11-22T10:00:00Z. The clock is just this date plus
/// the seconds a test advances it by.
let t0 = Date(timeIntervalSince1970: 1_795_341_600)

/// Seconds after `t0`.
func at(_ seconds: TimeInterval) -> Date { t0.addingTimeInterval(seconds) }

let hour: TimeInterval = 3600
let day: TimeInterval = 86_400

/// The apps of the test catalog.
enum Apps {
    /// Both background modes; refresh identifiers and plenty of processing identifiers.
    static let news = ident("com.example.news")
    /// Another app with both modes, sharing the identifier `shared.task` with `news`.
    static let mail = ident("com.example.mail")
    /// Declares only `fetch`.
    static let fetchOnly = ident("com.example.fetchonly")
    /// Declares only `processing`.
    static let processingOnly = ident("com.example.processingonly")
    /// Declares `fetch` and `remote-notification`: it takes background pushes.
    static let pusher = ident("com.example.pusher")
    /// Not in the catalog at all.
    static let ghost = ident("com.example.ghost")
}

enum Tasks {
    static let refresh = ident("com.example.news.refresh")
    static let refresh2 = ident("com.example.news.refresh2")
    static let cleanup = ident("com.example.news.cleanup")
    static let backup = ident("com.example.news.backup")
    static let shared = ident("shared.task")
    static func processing(_ number: Int) -> Identifier { ident("com.example.news.p\(number)") }
}

func makeCatalog() -> ManifestCatalog {
    let newsIdentifiers = [Tasks.refresh, Tasks.refresh2, Tasks.cleanup, Tasks.backup, Tasks.shared]
        + (0..<12).map(Tasks.processing)
    let manifests = [
        AppManifest(id: Apps.news, executable: "/bin/true", permittedIdentifiers: newsIdentifiers,
                    backgroundModes: [.fetch, .processing]),
        AppManifest(id: Apps.mail, executable: "/bin/true", permittedIdentifiers: [ident("com.example.mail.refresh"), Tasks.shared],
                    backgroundModes: [.fetch, .processing], expirationSignal: "SIGTERM"),
        AppManifest(id: Apps.fetchOnly, executable: "/bin/true", permittedIdentifiers: [ident("sync")],
                    backgroundModes: [.fetch]),
        AppManifest(id: Apps.pusher, executable: "/bin/true", permittedIdentifiers: [ident("com.example.pusher.refresh")],
                    backgroundModes: [.fetch, .remoteNotification]),
        AppManifest(id: Apps.processingOnly, executable: "/bin/true", permittedIdentifiers: [ident("refresh")],
                    backgroundModes: [.processing]),
    ]
    return ManifestCatalog(manifests: Dictionary(uniqueKeysWithValues: manifests.map { ($0.id, $0) }))
}

func makeState(settings: SchedulerSettings = SchedulerSettings(), probed: Conditions = Conditions()) -> SchedulerState {
    SchedulerState(settings: settings, catalog: makeCatalog(),
                   conditions: ConditionsRecord(probed: probed, probedAt: t0))
}

extension SchedulerState {
    /// Applies `action` as a command issued at `now`, through the public command path.
    @discardableResult
    mutating func run(_ action: CommandAction, at now: Date, id: String? = nil) -> CommandResult {
        let command = Command(id: id ?? Command.newID(at: now), issuedAt: now, issuerPID: 1, action: action)
        return apply(command, now: now)
    }

    @discardableResult
    mutating func submitRequest(_ identifier: Identifier, app: Identifier = Apps.news, kind: TaskKind,
                                earliest: Date? = nil, network: Bool = false, power: Bool = false,
                                at now: Date) -> CommandResult {
        run(.submit(SubmitRequest(app: app, identifier: identifier, kind: kind, earliestBeginDate: earliest,
                                  requiresNetworkConnectivity: network, requiresExternalPower: power)), at: now)
    }

    /// Launches everything due at `now` as the runtime would, with made-up pids from `firstPID` on.
    @discardableResult
    mutating func launchDue(at now: Date, firstPID: Int32 = 1000) -> [LaunchPlan] {
        let plans = dueLaunches(at: now)
        for (offset, plan) in plans.enumerated() {
            let pid = firstPID + Int32(offset)
            recordLaunch(plan, pid: pid, processGroup: pid, processStartTicks: 1, now: now)
        }
        return plans
    }

    func key(_ identifier: Identifier, app: Identifier = Apps.news) -> TaskKey {
        TaskKey(app: app, identifier: identifier)
    }

    func request(_ identifier: Identifier, app: Identifier = Apps.news) -> PendingRequest? {
        requests[key(identifier, app: app)]
    }

    func task(_ identifier: Identifier, app: Identifier = Apps.news) -> LaunchedTask? {
        tasks[key(identifier, app: app)]
    }
}

extension CommandResult {
    /// The transfer attempts to start, pause or cancel among ``effects``.
    var transferActions: [TransferAction] {
        effects.compactMap { effect -> TransferAction? in
            if case .transfer(let action) = effect { return action }
            return nil
        }
    }
    var errorName: String? { outcome.error?.name }
    var errorMessage: String? { outcome.error?.message }
}

extension ChangeSet {
    var eventTypes: [Event.Kind] { events.map(\.type) }
}
