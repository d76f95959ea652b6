/// The token the scheduler gives each process it launches (`BGTASK_LAUNCH_TOKEN`): it says which
/// app the launch was for, and the scheduler can check that it made it. See `docs/security.md`.
///
/// On the wire it is `<app>:<launchID>:<mac>`, where `mac` is 64 lowercase hexadecimal digits
/// (an HMAC-SHA256 the scheduler computes with a key only it keeps; ``init(validating:)`` checks
/// only the shape). `:` is in neither an identifier nor a launch id, so the parts split cleanly.
/// The shape is checked here, beside the wire format, so that `bgctl`, the app library and the
/// scheduler refuse the same values with the same words.
public struct LaunchToken: Hashable, Sendable {
    /// The environment variable that carries it into a launched process and its children.
    public static let environmentVariable = "BGTASK_LAUNCH_TOKEN"
    /// Hexadecimal digits of the MAC (32 bytes).
    public static let macLength = 64
    /// The longest launch id accepted: an app id of 128 characters, a time and `-simulated`.
    public static let maximumLaunchIDLength = 192
    /// The longest token accepted, whole.
    public static let maximumLength = Identifier.maximumLength + 1 + maximumLaunchIDLength + 1 + macLength

    /// The app the launch was for, as the token claims it.
    public let app: Identifier
    /// The launch (`BGTASK_LAUNCH_ID`).
    public let launchID: String
    /// The MAC as 64 lowercase hexadecimal digits.
    public let mac: String

    /// A token from its parts. `mac` must be 64 lowercase hexadecimal digits.
    public init(app: Identifier, launchID: String, mac: String) throws(LaunchTokenError) {
        try self.init(validating: "\(app.rawValue):\(launchID):\(mac)")
    }

    /// Validates `text`, throwing ``LaunchTokenError`` with the reason when it is not a token.
    public init(validating text: String) throws(LaunchTokenError) {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty else { throw .empty }
        guard bytes.count <= Self.maximumLength else { throw .tooLong(bytes.count) }
        let parts = bytes.split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw .wrongParts(parts.count) }
        let appText = String(decoding: parts[0], as: UTF8.self)
        guard let app = try? Identifier(validating: appText) else { throw .badApp }
        let launchID = String(decoding: parts[1], as: UTF8.self)
        guard !parts[1].isEmpty, parts[1].count <= Self.maximumLaunchIDLength, parts[1].first != UInt8(ascii: "."),
              Self.isIdentifierAlphabet(parts[1]) else { throw .badLaunchID }
        guard parts[2].count == Self.macLength else { throw .badMAC }
        for byte in parts[2] {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"): continue
            default: throw .badMAC
            }
        }
        self.app = app
        self.launchID = launchID
        self.mac = String(decoding: parts[2], as: UTF8.self)
    }

    /// The token as written in the environment and in a command.
    public var text: String { "\(app.rawValue):\(launchID):\(mac)" }

    /// ``from(environment:)`` with the variables as a dictionary.
    public static func from(environment: [String: String]) -> Result<LaunchToken?, LaunchTokenError> {
        from(environment: EnvironmentVariables(environment))
    }

    /// The token in `environment`, `nil` when there is none (unset or empty: a program run by a
    /// person, who acts as the user), or the reason it is not a token.
    public static func from(environment: EnvironmentVariables) -> Result<LaunchToken?, LaunchTokenError> {
        guard let text = environment[environmentVariable], !text.isEmpty else { return .success(nil) }
        do {
            return .success(try LaunchToken(validating: text))
        } catch {
            return .failure(error)
        }
    }

    private static func isIdentifierAlphabet(_ bytes: ArraySlice<UInt8>) -> Bool {
        bytes.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "-"), UInt8(ascii: "_"):
                return true
            default:
                return false
            }
        }
    }
}

/// Why a string is not a ``LaunchToken``. The value itself is never repeated: it is a credential
/// of sorts, and it may come from a hostile inbox entry.
public enum LaunchTokenError: Error, Equatable, Sendable, CustomStringConvertible {
    case empty
    /// Longer than ``LaunchToken/maximumLength`` (counted in UTF-8 bytes).
    case tooLong(Int)
    /// Not three parts separated by `:`.
    case wrongParts(Int)
    case badApp
    case badLaunchID
    case badMAC

    public var description: String {
        let shape = "a launch token is <app>:<launch id>:<\(LaunchToken.macLength) lowercase hex digits>"
        switch self {
        case .empty: return "\(shape); this one is empty"
        case .tooLong(let count): return "\(shape), at most \(LaunchToken.maximumLength) characters; this one has \(count)"
        case .wrongParts(let count): return "\(shape); this one has \(count) part\(count == 1 ? "" : "s")"
        case .badApp: return "\(shape); its app is not a valid identifier"
        case .badLaunchID:
            return "\(shape); its launch id is not 1 to \(LaunchToken.maximumLaunchIDLength) letters, digits, '.', '-' or '_' with no leading '.'"
        case .badMAC: return "\(shape); its last part is not \(LaunchToken.macLength) lowercase hex digits"
        }
    }
}
