import Foundation
import TaskState

/// Who this app is to the scheduler: its id, its manifest, and the state and config directories,
/// found the way `bgctl` finds them.
struct AppContext: Sendable {
    let app: Identifier
    let manifest: AppManifest
    let paths: StatePaths
    let configDirectory: String
    /// `BGTASK_LAUNCH_TOKEN` when the scheduler launched this process (or its parent): every
    /// command carries it, so the scheduler lets it act on its own app only.
    let launchToken: LaunchToken?

    /// `BGTASK_APP_ID` when set (the scheduler sets it for processes it launches), else the
    /// manifest in `<config>/apps` whose `executable` is this program.
    static func resolve(environment: [String: String] = ProcessInfo.processInfo.environment)
        -> Result<AppContext, BGTaskScheduler.Error> {
        let paths = StatePaths(root: Locations.stateDirectory(flag: nil, environment: environment))
        let configDirectory = Locations.configDirectory(flag: nil, environment: environment)
        let appsDirectory = "\(configDirectory)/apps"
        let launchToken: LaunchToken?
        switch LaunchToken.from(environment: environment) {
        case .success(let token): launchToken = token
        case .failure(let error): return .failure(.init(.unavailable, "\(LaunchToken.environmentVariable) is not usable: \(error)"))
        }
        let catalog = ManifestCatalog.load(from: appsDirectory)
        if let named = environment["BGTASK_APP_ID"], !named.isEmpty {
            guard let id = try? Identifier(validating: named) else {
                return .failure(.init(.unavailable, "BGTASK_APP_ID '\(named)' is not a valid app id"))
            }
            guard let manifest = catalog.manifests[id] else {
                let problem = catalog.problems.first { $0.file == "\(named).json" }.map { ": \($0.reason)" } ?? ""
                return .failure(.init(.unavailable, "app \(named) has no usable manifest in \(appsDirectory)\(problem)"))
            }
            return .success(AppContext(app: id, manifest: manifest, paths: paths, configDirectory: configDirectory, launchToken: launchToken))
        }
        let me = realPath("/proc/self/exe")
        let mine = catalog.manifests.values.filter { realPath($0.executable) == me }.sorted { $0.id < $1.id }
        guard let manifest = mine.first else {
            return .failure(.init(.unavailable,
                "no manifest in \(appsDirectory) names this program (\(me ?? CommandLine.arguments.first ?? "?")) as its executable; add one, or set BGTASK_APP_ID"))
        }
        return .success(AppContext(app: manifest.id, manifest: manifest, paths: paths, configDirectory: configDirectory, launchToken: launchToken))
    }

    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// The folder of this app's running tasks.
    var tasksDirectory: String { "\(paths.tasks)/\(app)" }

    /// Whether the manifest lets the app use `identifier` as `kind`, and if not, why.
    func permission(for identifier: String, kind: TaskKind) -> BGTaskScheduler.Error? {
        if kind == .urlSession {
            // A session's identifier needs no permission, only to be usable as a file name.
            return Identifier.isValid(identifier) ? nil : .init(.notPermitted, "'\(identifier)' is not a valid session identifier")
        }
        guard let id = try? Identifier(validating: identifier) else {
            return .init(.notPermitted, "\(identifier) is not in \(app)'s permittedIdentifiers")
        }
        return manifest.refusal(toUse: id, as: kind).map { .init(.notPermitted, $0) }
    }
}

#if canImport(Glibc)
import Glibc
#endif
