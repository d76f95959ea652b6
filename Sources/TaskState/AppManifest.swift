import FoundationEssentials

/// An app's manifest, the Info.plist of this world: `<config>/apps/<app-id>.json`.
public struct AppManifest: Codable, Hashable, Sendable {
    public var id: Identifier
    /// Absolute path of the program to run.
    public var executable: String
    public var arguments: [String]
    /// `BGTaskSchedulerPermittedIdentifiers`.
    public var permittedIdentifiers: [Identifier]
    /// `fetch` allows app refresh, `processing` allows processing.
    public var backgroundModes: [BackgroundMode]
    /// The signal sent when a task expires (default `SIGUSR1`).
    public var expirationSignal: String
    /// Push servers whose messages become background pushes for the app.
    public var push: [PushSubscription]

    public init(id: Identifier, executable: String, arguments: [String] = [],
                permittedIdentifiers: [Identifier], backgroundModes: [BackgroundMode],
                expirationSignal: String = "SIGUSR1", push: [PushSubscription] = []) {
        self.id = id
        self.executable = executable
        self.arguments = arguments
        self.permittedIdentifiers = permittedIdentifiers
        self.backgroundModes = backgroundModes
        self.expirationSignal = expirationSignal
        self.push = push
    }

    enum CodingKeys: String, CodingKey {
        case id, executable, arguments, permittedIdentifiers, backgroundModes, expirationSignal, push
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(Identifier.self, forKey: .id)
        executable = try container.decode(String.self, forKey: .executable)
        arguments = try container.decodeIfPresent([String].self, forKey: .arguments) ?? []
        permittedIdentifiers = try container.decode([Identifier].self, forKey: .permittedIdentifiers)
        backgroundModes = try container.decode([BackgroundMode].self, forKey: .backgroundModes)
        expirationSignal = try container.decodeIfPresent(String.self, forKey: .expirationSignal) ?? "SIGUSR1"
        push = try container.decodeIfPresent([PushSubscription].self, forKey: .push) ?? []
    }

    /// Whether the app may submit `identifier` as `kind`.
    public func permits(_ identifier: Identifier, kind: TaskKind) -> Bool {
        refusal(toUse: identifier, as: kind) == nil
    }
}

/// A manifest file that could not be used, and why.
public struct ManifestProblem: Error, Codable, Hashable, Sendable {
    /// The file name in `<config>/apps/`.
    public var file: String
    public var reason: String

    public init(file: String, reason: String) {
        self.file = file
        self.reason = reason
    }
}

/// All manifests in a config directory, read and checked together.
public struct ManifestCatalog: Sendable, Equatable {
    public var manifests: [Identifier: AppManifest]
    public var problems: [ManifestProblem]

    public init(manifests: [Identifier: AppManifest] = [:], problems: [ManifestProblem] = []) {
        self.manifests = manifests
        self.problems = problems
    }

    /// Reads every `*.json` in `directory`; a bad file becomes a ``ManifestProblem``, never an error.
    /// A `directory` others could write to (``ConfigTrust``) gives one problem and no manifests:
    /// any of them could have been put there by someone else.
    public static func load(from directory: String) -> ManifestCatalog {
        var catalog = ManifestCatalog()
        let names: [String]
        do {
            try ConfigTrust.checkDirectory(directory, named: "apps directory")
            names = try StateFiles.names(in: directory, followingLinks: true)
        } catch {
            catalog.problems.append(ManifestProblem(file: directory, reason: error.description))
            return catalog
        }
        for name in names where name.hasSuffix(".json") {
            let path = "\(directory)/\(name)"
            switch check(file: path, name: name) {
            case .success(let manifest):
                catalog.manifests[manifest.id] = manifest
            case .failure(let problem):
                // Removed between the listing and the read: gone, as if listed a moment later (a
                // dangling link is still there, and still a problem).
                if !StateFiles.exists(path) { continue }
                catalog.problems.append(problem)
            }
        }
        return catalog
    }

    private static func check(file path: String, name: String) -> Result<AppManifest, ManifestProblem> {
        func problem(_ reason: String) -> Result<AppManifest, ManifestProblem> {
            .failure(ManifestProblem(file: name, reason: reason))
        }
        let manifest: AppManifest
        do {
            let data = try StateFiles.read(path, maximumSize: 1 << 20, followingLinks: true, vetting: ConfigTrust.vetFile(path))
            manifest = try JSONFormat.decode(AppManifest.self, from: data)
        } catch {
            return problem(error.description)
        }
        let stem = String(name.dropLast(".json".count))
        guard stem == manifest.id.rawValue else {
            return problem("file is named '\(name)' but its id is '\(manifest.id)'; name it '\(manifest.id).json'")
        }
        if let reason = ExecutableCheck.problem(manifest.executable) {
            return problem(reason)
        }
        guard SignalName.number(of: manifest.expirationSignal) != nil else {
            return problem("expirationSignal '\(manifest.expirationSignal)' is not a signal name")
        }
        if let reason = manifest.push.lazy.compactMap(\.problem).first {
            return problem(reason)
        }
        if !manifest.push.isEmpty, !manifest.backgroundModes.contains(.remoteNotification) {
            return problem("push subscriptions need the 'remote-notification' background mode")
        }
        if manifest.push.count > 16 { return problem("at most 16 push subscriptions are allowed, not \(manifest.push.count)") }
        return .success(manifest)
    }
}

/// Signal names as written in manifests (`SIGUSR1`, `USR1`, `SIGTERM`, ...).
public enum SignalName {
    private static let table: [String: Int32] = [
        "HUP": SIGHUP, "INT": SIGINT, "QUIT": SIGQUIT, "USR1": SIGUSR1, "USR2": SIGUSR2,
        "TERM": SIGTERM, "ALRM": SIGALRM, "CONT": SIGCONT, "WINCH": SIGWINCH,
    ]

    /// The signal number for a name, with or without the `SIG` prefix.
    public static func number(of name: String) -> Int32? {
        let upper = name.uppercased()
        return table[upper.hasPrefix("SIG") ? String(upper.dropFirst(3)) : upper]
    }
}

#if canImport(Glibc)
import Glibc
#endif

extension AppManifest {
    /// Why the manifest does not let its app use `identifier` as `kind`, or `nil` when it does:
    /// the one rule (and wording) for the library, before it writes a command, and for the
    /// scheduler, when it applies one.
    public func refusal(toUse identifier: Identifier, as kind: TaskKind) -> String? {
        guard permittedIdentifiers.contains(identifier) else {
            return "\(identifier) is not in \(id)'s permittedIdentifiers"
        }
        if let mode = kind.requiredBackgroundMode, !backgroundModes.contains(mode) {
            return "\(id)'s manifest does not declare the '\(mode.rawValue)' background mode needed for \(kind.rawValue)"
        }
        return nil
    }
}
