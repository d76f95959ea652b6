import Foundation
#if canImport(TaskState) && !FUZZING
// In the test target; `Scripts/fuzz` compiles this file into one module with TaskState's sources
// (and defines FUZZING, since the debug build's TaskState module is on its import path too).
import TaskState
#endif
#if canImport(Glibc)
import Glibc
#endif

/// The bodies of TaskState's libFuzzer targets (`Scripts/fuzz`), shared with the test that
/// replays their seed corpus (`FuzzCorpusTests`): the decoders of what crosses a trust boundary,
/// the inbox commands any program may write, the state files the scheduler reads back at start,
/// and the app manifests in the config directory.
///
/// What must always hold: decoding any bytes returns a value or an error (never a trap, never a
/// hang); what decodes is written out again and reads back; and what this build writes is a fixed
/// point (writing what it read of its own text gives the same text). Dates are written rounded to
/// milliseconds and clamped to years 1900...9999, so a value read from foreign text may differ
/// from what it writes in its dates; its text, once written, does not change again.
/// A `precondition` failure is a crash the fuzzer reports.
enum StateFuzzTargets {
    /// Every target, by the name of its corpus folder under `Fuzz/corpus/`.
    static let all: [String: @Sendable ([UInt8]) -> Void] = [
        "command": command,
        "state-file": stateFile,
        "manifest": manifest,
    ]

    /// A fixed "now" for the bounds checks, so a replay judges an input as the fuzzer did.
    static let now = Date(timeIntervalSince1970: 1_795_341_600)

    /// An inbox command: what `Inbox.read` decodes and the scheduler's bounds check that follows.
    @Sendable static func command(_ bytes: [UInt8]) {
        let data = Data(bytes)
        guard let command = settled(Command.self, from: data) else { return }
        _ = Command.isValidID(command.id)
        if let token = command.launchToken {
            precondition((try? LaunchToken(validating: token.text)) == token, "a launch token survives being written out")
            precondition(token.app.rawValue.utf8.count + token.launchID.utf8.count + token.mac.utf8.count + 2 <= LaunchToken.maximumLength,
                         "a launch token is never longer than its bound")
        }
        let bounds = command.outOfBounds(now: now)
        if let bounds { precondition(!bounds.description.isEmpty, "a refusal says why") }
        _ = command.action.name
    }

    /// Every state file `StateSnapshot.load` decodes (with `processes.json`), plus outcomes and
    /// event log lines: the same
    /// bytes as each type, each with the derived values readers compute from it.
    @Sendable static func stateFile(_ bytes: [UInt8]) {
        let data = Data(bytes)
        if let request = settled(PendingRequest.self, from: data) {
            precondition(request.readyDate >= request.submittedAt, "a request is never ready before it was submitted")
        }
        if let task = settled(LaunchedTask.self, from: data) {
            precondition(task.remaining(at: now) >= 0, "remaining budget is never negative")
        }
        if let app = settled(AppRecord.self, from: data) {
            _ = app.isThrottled(at: now)
            _ = app.attachedProcess?.handles(app.attachedProcess?.identifiers ?? [])
        }
        if let transfer = settled(TransferRecord.self, from: data) {
            _ = transfer.resourceDeadline
            _ = transfer.state.isActive
        }
        if let conditions = settled(ConditionsRecord.self, from: data) {
            let applied = conditions.overrides.applied(to: conditions.probed)
            precondition(conditions.overrides.merging(ConditionOverrides()) == conditions.overrides, "merging nothing changes nothing")
            for name in Conditions.Name.allCases where conditions.overrides[name] != nil {
                precondition(applied[name] == conditions.overrides[name], "an override wins")
            }
        }
        if let ledger = settled(ProcessLedger.self, from: data) {
            _ = ledger.processes.filter { $0.killDecidedAt != nil }.map(\.pid)
        }
        if let push = settled(HeldPush.self, from: data) {
            precondition((try? PushPayload(validating: push.payload.text)) == push.payload, "a held push's payload is a valid one")
            _ = push.collapseGroup
        }
        if let history = settled(UsageHistory.self, from: data) {
            _ = history.adding([now], now: now)
        }
        if let status = settled(SubscriptionStatus.self, from: data) {
            _ = status.streams.map(\.state)
        }
        _ = settled(DaemonHeartbeat.self, from: data)
        _ = settled(CommandOutcome.self, from: data)
        _ = settled(Event.self, from: data)
        // The event log is JSON Lines: each line on its own.
        for line in bytes.split(separator: 0x0A).prefix(16) where line.count < bytes.count {
            _ = settled(Event.self, from: Data(line))
        }
    }

    /// An app manifest: decoded on its own, then (when it decodes) through `ManifestCatalog.load`
    /// from a private config folder, which must agree with the decoder and turn anything else
    /// wrong (its executable, its signal) into a problem.
    @Sendable static func manifest(_ bytes: [UInt8]) {
        let data = Data(bytes)
        // Through the catalog only what decodes: for the rest it runs the same decoder, and a
        // file written and read per input would cost most of the run.
        guard let decoded = settled(AppManifest.self, from: data) else { return }
        // No dates in a manifest: the value itself survives being written out.
        let again = try? JSONFormat.decode(AppManifest.self, from: JSONFormat.encode(decoded))
        precondition(again == decoded, "a manifest survives being written out")
        for identifier in decoded.permittedIdentifiers {
            for kind in TaskKind.allCases { _ = decoded.permits(identifier, kind: kind) }
        }
        _ = SignalName.number(of: decoded.expirationSignal)
        let folder = ManifestFolder.shared
        let name = "\(decoded.id.rawValue).json"
        guard folder.write(data, named: name) else { return }
        defer { folder.remove(name) }
        let catalog = ManifestCatalog.load(from: folder.path)
        precondition(catalog.manifests.count + catalog.problems.count == 1, "one file gives one manifest or one problem")
        if let loaded = catalog.manifests.values.first {
            precondition(loaded == decoded, "the catalog loads what the decoder reads")
        }
        for problem in catalog.problems { precondition(!problem.reason.isEmpty, "a problem says why") }
    }

    /// Decodes `type`, and for what decodes checks that it is written out and reads back, and
    /// that the text written is a fixed point. Returns what was decoded first.
    static func settled<T: Codable & Equatable>(_ type: T.Type, from data: Data) -> T? {
        guard let first = try? JSONFormat.decode(type, from: data) else { return nil }
        guard let written = try? JSONFormat.encode(first) else { preconditionFailure("what was read can be written: \(T.self)") }
        guard let second = try? JSONFormat.decode(type, from: written) else {
            preconditionFailure("what was written reads back: \(T.self): \(String(decoding: written, as: UTF8.self))")
        }
        guard let rewritten = try? JSONFormat.encode(second) else { preconditionFailure("what was read back can be written: \(T.self)") }
        precondition(rewritten == written, "written text is a fixed point: \(T.self)")
        precondition((try? JSONFormat.decode(type, from: rewritten)) == second, "a written value reads back equal: \(T.self)")
        return first
    }
}

/// A private config `apps` folder (mode 0700, made once per process, removed at exit) for the
/// manifest target.
final class ManifestFolder: Sendable {
    static let shared = ManifestFolder()
    let path: String

    private init() {
        var template = Array("\(NSTemporaryDirectory())/bgtop-fuzz-apps-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(made != nil, "cannot create a folder for the manifest target")
        path = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        // The fuzzer ends by exit(); the folder is empty between inputs.
        atexit { ManifestFolder.shared.removeFolder() }
    }

    func write(_ data: Data, named name: String) -> Bool {
        FileManager.default.createFile(atPath: "\(path)/\(name)", contents: data, attributes: [.posixPermissions: 0o600])
    }

    func remove(_ name: String) {
        unlink("\(path)/\(name)")
    }

    /// Removes the (by then empty) folder, at exit.
    func removeFolder() {
        rmdir(path)
    }
}
