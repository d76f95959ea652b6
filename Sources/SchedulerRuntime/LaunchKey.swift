import Crypto
import FoundationEssentials
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// The scheduler's secret for launch tokens: 32 random bytes that make and check the MAC of each
/// ``LaunchToken``, as HMAC-SHA256 over `<app>\n<launchID>`.
///
/// It lives in `launch.key` in the state directory (mode 0600), so a token still verifies after
/// the scheduler restarts, while nothing in the state files a reader sees (tasks, events, launch
/// ids) is enough to make one. A key file that is missing or unusable is replaced by a new key,
/// with an event: tokens given out before then stop verifying.
public struct LaunchKey: Sendable {
    /// Bytes in a key.
    public static let byteCount = 32

    private let key: SymmetricKey

    /// A key from its bytes; `nil` unless there are exactly ``byteCount`` of them.
    public init?(bytes: some ContiguousBytes) {
        let key = SymmetricKey(data: bytes)
        guard key.bitCount == Self.byteCount * 8 else { return nil }
        self.key = key
    }

    /// A fresh key from the system's secure random source.
    public static func generate() -> LaunchKey {
        LaunchKey(key: SymmetricKey(size: .bits256))
    }

    private init(key: SymmetricKey) {
        self.key = key
    }

    /// The token for a launch of `app`.
    public func token(app: Identifier, launchID: String) throws(LaunchTokenError) -> LaunchToken {
        let code = HMAC<SHA256>.authenticationCode(for: Self.message(app: app, launchID: launchID), using: key)
        return try LaunchToken(app: app, launchID: launchID, mac: code.map { String(printf: "%02x", $0) }.joined())
    }

    /// Whether this key made `token`: its MAC matches its app and launch id, compared in
    /// constant time.
    public func verifies(_ token: LaunchToken) -> Bool {
        guard let mac = Self.bytes(fromHex: token.mac) else { return false }
        return HMAC<SHA256>.isValidAuthenticationCode(mac, authenticating: Self.message(app: token.app, launchID: token.launchID),
                                                      using: key)
    }

    private static func message(app: Identifier, launchID: String) -> Data {
        Data("\(app.rawValue)\n\(launchID)".utf8)
    }

    private static func bytes(fromHex text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = hexValue(digits[index]), let low = hexValue(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }

    private static func hexValue(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return digit - UInt8(ascii: "a") + 10
        default: return nil
        }
    }

    /// The key kept at `path`, written there at once when it is missing or unusable (anything
    /// but a regular file of ``byteCount`` bytes, of this user, closed to group and others; an
    /// unusable one is moved to `quarantine/` first). Returns the events to record: none when the
    /// kept key was used. Throws only when no new key could be written.
    static func load(paths: StatePaths, now: Date) throws(StateError) -> (key: LaunchKey, events: [Event]) {
        let path = paths.launchKey
        var info = stat()
        guard lstat(path, &info) == 0 else {
            // A state directory a scheduler has run on before had a key: tokens of then are void.
            let message = StateFiles.exists(paths.heartbeat)
                ? "there was no launch.key: made a new launch key; launch tokens given out before no longer verify"
                : "made the launch key (launch.key) for launch tokens"
            let (key, event) = try create(at: path, message: message, now: now)
            return (key, [event])
        }
        let problem: String
        do {
            let data = try StateFiles.read(path, maximumSize: 4096, vetting: vetKeyFile(path))
            if let key = LaunchKey(bytes: data) { return (key, []) }
            problem = "\(path) is \(data.count) bytes, not a \(byteCount)-byte launch key"
        } catch {
            problem = "\(error)"
        }
        let moved = quarantine(path, reason: problem, paths: paths, now: now)
        let (key, event) = try create(
            at: path, message: "launch.key was unusable: made a new launch key; launch tokens given out before no longer verify", now: now)
        return (key, [moved, event])
    }

    /// Writes a new key to `path` (atomically, durably, mode 0600).
    private static func create(at path: String, message: String, now: Date) throws(StateError) -> (LaunchKey, Event) {
        let key = SymmetricKey(size: .bits256)
        try StateFiles.write(key.withUnsafeBytes { Data($0) }, to: path, durable: true)
        return (LaunchKey(key: key), Event(time: now, type: .launchKeyCreated, reason: "launch.key", message: message))
    }

    /// Refuses a key file that another user owns or that group or others may read.
    private static func vetKeyFile(_ path: String) -> (stat) throws(StateError) -> Void {
        { (info: stat) throws(StateError) -> Void in
            guard info.st_uid == geteuid() else {
                throw .unsafeDirectory("\(path) is owned by uid \(info.st_uid), not by you (uid \(geteuid()))")
            }
            let mode = info.st_mode & 0o777
            guard mode & 0o077 == 0 else {
                throw .unsafeDirectory("\(path) is open to group or others (mode \(String(printf: "%04o", mode)))")
            }
        }
    }

    private static func quarantine(_ path: String, reason: String, paths: StatePaths, now: Date) -> Event {
        let quarantine = Quarantine(paths: paths)
        let line = quarantine.line(for: path, reason: reason)
        do {
            let target = try quarantine.isolate(path, reason: reason, now: now)
            return Event(time: now, type: .quarantined, reason: line, message: "\(line); moved to \(target)")
        } catch {
            // Not moved (it may be a directory someone made): the new key cannot take its place.
            return Event(time: now, type: .quarantined, reason: line, message: "\(line); could not move it: \(error)")
        }
    }
}
