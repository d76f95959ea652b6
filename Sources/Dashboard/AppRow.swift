import FoundationEssentials
import TaskState

extension DashboardSnapshot {
    /// One app of the apps panel: known from its manifest, from the scheduler's record of it, or
    /// from a manifest file that could not be used.
    public struct AppRow: Sendable, Hashable {
        public var app: Identifier
        /// What the scheduler remembers (a fresh record for an app it has not seen yet).
        public var record: AppRecord
        /// The usable manifest, if there is one.
        public var manifest: AppManifest?
        /// What is wrong with the app's manifest file (the manifest catalog's errors).
        public var manifestProblems: [String]
        /// Launches, expiries and kills in the day before the snapshot (from the record).
        public var lastDay: AppActivity.Totals
        /// Pushes delivered in the last hour, for an app that takes pushes.
        public var pushesThisHour: Int?
        /// The hourly push budget after cuts, for an app that takes pushes.
        public var pushBudgetPerHour: Int?
        /// The app's week of use (168 likelihoods, Monday 00:00 first), when it has a usage history.
        public var usageWeek: [Double]?

        public init(app: Identifier, record: AppRecord, manifest: AppManifest?, manifestProblems: [String] = [],
                    lastDay: AppActivity.Totals = AppActivity.Totals(), pushesThisHour: Int? = nil, pushBudgetPerHour: Int? = nil,
                    usageWeek: [Double]? = nil) {
            self.app = app
            self.record = record
            self.manifest = manifest
            self.manifestProblems = manifestProblems
            self.lastDay = lastDay
            self.pushesThisHour = pushesThisHour
            self.pushBudgetPerHour = pushBudgetPerHour
            self.usageWeek = usageWeek
        }

        /// Whether launches are held back at `now`.
        public func isThrottled(at now: Date) -> Bool { record.isThrottled(at: now) }

        /// What the problems column says: the manifest's problem, or that there is no manifest.
        public var problemText: String? {
            if let first = manifestProblems.first { return manifestProblems.count > 1 ? "\(first) (+\(manifestProblems.count - 1))" : first }
            return manifest == nil ? "no manifest" : nil
        }
    }
}
