import Foundation
import Testing
@testable import SchedulerCore
import TaskState

// Requests and helpers shared by the transfer policy suites.

func download(_ name: String, app: Identifier = Apps.news, url: String? = nil, destination: String? = "file.bin",
              earliest: Date? = nil, discretionary: Bool = false, expects: Int64? = nil,
              resourceTimeout: Double? = nil) -> TransferRequest {
    TransferRequest(app: app, identifier: ident(name), direction: .download, url: url ?? "http://127.0.0.1:8080/\(name)",
                    destination: destination, earliestBeginDate: earliest, isDiscretionary: discretionary,
                    countOfBytesClientExpectsToReceive: expects, timeoutIntervalForResource: resourceTimeout)
}

func upload(_ name: String, source: String? = "/tmp/upload.bin", expects: Int64? = nil) -> TransferRequest {
    TransferRequest(app: Apps.news, identifier: ident(name), direction: .upload, url: "http://127.0.0.1:8080/put/\(name)",
                    sourceFile: source, countOfBytesClientExpectsToSend: expects)
}

func transferKey(_ name: String, app: Identifier = Apps.news) -> TaskKey {
    TaskKey(app: app, identifier: ident(name))
}

extension SchedulerState {
    /// Applies a `transferCreate` command as `issuerPID` would send it.
    @discardableResult
    mutating func createTransfer(_ request: TransferRequest, at now: Date, issuerPID: Int32? = 1) -> CommandResult {
        apply(Command(id: Command.newID(at: now), issuedAt: now, issuerPID: issuerPID, action: .transferCreate(request)),
              now: now)
    }

    func transfer(_ name: String, app: Identifier = Apps.news) -> TransferRecord? {
        transfers[transferKey(name, app: app)]
    }

    func blockers(of name: String, app: Identifier = Apps.news, at now: Date) -> [TransferBlocker] {
        guard let record = transfer(name, app: app) else {
            Issue.record("no transfer \(name)")
            return []
        }
        return transferBlockers(for: record, at: now)
    }

    /// Starts what is due at `now`, as the daemon does, and returns the keys started, in order.
    /// Any other action (a cancel after a resource timeout) is a test failure here.
    mutating func startDue(at now: Date) -> [TaskKey] {
        dueTransfers(at: now).map { action in
            guard case .start(let record) = action else {
                Issue.record("unexpected \(action)")
                return TaskKey(app: Apps.ghost, identifier: ident("unexpected"))
            }
            return record.key
        }
    }
}
