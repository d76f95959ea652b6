import Dashboard
import FoundationEssentials
import SchedulerCore
import TaskState

/// The apps panel's rows: every app that has a manifest, a manifest file that could not be
/// used, or a record in the state directory, with what the scheduler's own policy says of it.
public enum AppRows {
    /// The rows of every app known at `now`.
    public static func build(state: SchedulerState, records: [AppRecord], catalog: ManifestCatalog, now: Date) -> [DashboardSnapshot.AppRow] {
        var problems: [Identifier: [String]] = [:]
        for problem in catalog.problems where problem.file.hasSuffix(".json") {
            // A problem names its file; one whose name is an identifier belongs to that app.
            guard let app = try? Identifier(validating: String(problem.file.dropLast(".json".count))) else { continue }
            problems[app, default: []].append(problem.reason)
        }
        let known = Set(catalog.manifests.keys).union(records.map(\.id)).union(problems.keys)
        return known.sorted().map { app in
            let record = state.apps[app] ?? AppRecord(id: app)
            let manifest = catalog.manifests[app]
            let pushes = manifest?.backgroundModes.contains(.remoteNotification) == true
            let model = state.usageModels[app]
            return DashboardSnapshot.AppRow(
                app: app, record: record, manifest: manifest, manifestProblems: problems[app] ?? [],
                lastDay: record.activity?.lastDay(at: now) ?? AppActivity.Totals(),
                pushesThisHour: pushes ? state.pushesDelivered(to: app, inHourBefore: now).count : nil,
                pushBudgetPerHour: pushes ? state.pushBudget(of: app) : nil,
                usageWeek: model.map { model in (0..<UsageModel.hoursPerWeek).map(model.likelihood(hourOfWeek:)) })
        }
    }
}
