import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// The environment variables a program reads: its own, looked up one name at a time, or a given
/// set (tests, a launched child's).
///
/// FoundationEssentials' `ProcessInfo.environment` copies every variable into a new dictionary
/// at each use: `bgctl status`'s three uses cost 1.4 million of its 19 million instructions
/// (docs/performance.md, footprint). `getenv` reads only the name asked for.
public struct EnvironmentVariables: Sendable {
    private let given: [String: String]?

    /// This process's own variables, read when asked for.
    public static let process = EnvironmentVariables(given: nil)

    /// A given set of variables.
    public init(_ variables: [String: String]) { given = variables }

    private init(given: [String: String]?) { self.given = given }

    /// The variable's value, or nil when it is not set.
    public subscript(name: String) -> String? {
        if let given { return given[name] }
        return getenv(name).map { String(cString: $0) }
    }
}
