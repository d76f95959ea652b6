import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// The one line `bgtaskd --demo` prints on its standard output once its demo is ready: the
/// temporary directory it made, the state and config directories in it, and the URL that
/// follow-up downloads fetch. `bgtop --demo` reads it from the scheduler it started.
public struct DemoReadiness: Codable, Sendable, Equatable {
    /// The temporary directory; everything of the demo is in it.
    public var root: String
    public var state: String
    public var config: String
    /// Where the downloads that follow completed ones come from (the demo's loopback server).
    public var refillURL: String

    /// The name every demo directory starts with, in the temporary directory.
    public static let directoryPrefix = "bgtop-demo-"

    /// The variable `bgtop --demo` sets to its own pid for the `bgtaskd --demo` it starts: a demo
    /// whose parent is no longer that process (it died before the demo could ask to be told) does
    /// not start.
    public static let parentVariable = "BGTASK_DEMO_PARENT"

    public init(root: String, refillURL: String) {
        self.root = root
        state = root + "/state"
        config = root + "/config"
        self.refillURL = refillURL
    }

    /// A fresh demo directory's path: `<temporary directory>/bgtop-demo-<pid>-<random>`.
    public static func newRoot() -> String {
        "\(FileManager.default.temporaryDirectory.path)/\(directoryPrefix)\(getpid())-\(UUID().uuidString.prefix(6))"
    }

    /// Decodes the line and checks that it names what a demo makes: a directory of this prefix
    /// right in the temporary directory (nothing else is ever removed on its word), its state and
    /// config folders, and a loopback URL.
    public static func parse(_ line: some StringProtocol) -> DemoReadiness? {
        guard let decoded = try? JSONFormat.decode(DemoReadiness.self, from: Data(line.utf8)) else { return nil }
        let expected = DemoReadiness(root: decoded.root, refillURL: decoded.refillURL)
        let folder = FileManager.default.temporaryDirectory.path + "/"
        guard decoded == expected, decoded.root.hasPrefix(folder + directoryPrefix),
              !decoded.root.dropFirst(folder.count).contains("/"), !PathText.climbs(decoded.root),
              decoded.refillURL.hasPrefix("http://127.0.0.1:") else { return nil }
        return decoded
    }
}
