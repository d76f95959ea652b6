import Foundation
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// When in a round the scheduler is killed.
enum KillMoment: CaseIterable {
    /// At the end of the round's commands: anywhere in the pause after the last one.
    case uniform
    /// 0 to 40 ms after a command that launches an app: mid-turn, between a launch and its
    /// commit, or mid-commit.
    case afterLaunchCommand
    /// Around the next budget or kill deadline of a running task: between a kill decision (or an
    /// expiry) and the signal, or its commit.
    case atDeadline
}

extension TortureRun {

    /// Waits for the round's kill moment. An idle scheduler is killed harmlessly, so besides
    /// moments uniform over the round, two kinds aim at the short windows where it is busy.
    mutating func waitForKill(_ moment: KillMoment, jitter: Double) throws(TortureError) {
        switch moment {
        case .uniform:
            return
        case .afterLaunchCommand:
            try issueLaunch()
            usleep(useconds_t(jitter * 40_000))
        case .atDeadline:
            // The next budget or kill deadline of a running task (an expiry, or the kill of an
            // overrun), give or take a few milliseconds; with none soon, as after a command.
            let now = Date()
            let soon = StateSnapshot.load(paths).tasks.flatMap { [$0.deadline, $0.killDeadline].compactMap { $0 } }
                .filter { $0 > now && $0.timeIntervalSince(now) < 3 }.min()
            guard let soon else {
                try issueLaunch()
                usleep(useconds_t(jitter * 40_000))
                return
            }
            let wait = soon.timeIntervalSince(now) - 0.01 + jitter * 0.04
            if wait > 0 { usleep(useconds_t(wait * 1_000_000)) }
        }
    }

    /// A command that makes the scheduler launch now: `simulate-launch` of a pending request,
    /// else a submit that is due at once.
    private mutating func issueLaunch() throws(TortureError) {
        let pending = StateSnapshot.load(paths).requests.sorted { $0.key < $1.key }
        if !pending.isEmpty {
            let request = pending[Int.random(in: 0..<pending.count, using: &choices)]
            try issue(.simulateLaunch(identifier: request.identifier, app: request.app))
        } else {
            let app = apps.apps[Int.random(in: 0..<apps.apps.count, using: &choices)]
            let task = app.tasks[Int.random(in: 0..<app.tasks.count, using: &choices)]
            try issue(.submit(SubmitRequest(app: app.id, identifier: task.identifier, kind: task.kind)))
        }
    }

    // MARK: - Commands

    /// Issues random commands at random intervals for `seconds`.
    mutating func issueCommands(for seconds: Double) throws(TortureError) {
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            try reviveIfNeeded()
            try issue(randomAction())
            let pause = min(Double.random(in: 0.01...0.25, using: &plan), max(0, end.timeIntervalSinceNow))
            usleep(useconds_t(pause * 1_000_000))
        }
    }

    /// Makes a command durable in the inbox, as any writer may, without waiting for its outcome.
    mutating func issue(_ action: CommandAction) throws(TortureError) {
        let whileDown = StateLock.holder(paths) == nil
        let command = Command(issuedAt: Date(), issuerPID: getpid(), action: action)
        do {
            try Inbox(paths: paths).enqueue(command)
        } catch {
            throw TortureError("cannot write a command into \(paths.inboxNew): \(error)")
        }
        issued.append(IssuedCommand(command: command, round: round, whileDown: whileDown))
        report.commands += 1
        if whileDown { report.commandsWhileDown += 1 }
    }

    mutating func randomAction() -> CommandAction {
        let app = apps.apps[Int.random(in: 0..<apps.apps.count, using: &choices)]
        let task = app.tasks[Int.random(in: 0..<app.tasks.count, using: &choices)]
        // A task that runs now, when there is one, for completions and expirations.
        let running = StateSnapshot.load(paths).tasks.sorted { $0.key < $1.key }
        let target = running.isEmpty ? nil : running[Int.random(in: 0..<running.count, using: &choices)]
        switch Int.random(in: 0..<12, using: &choices) {
        case 0..<5:
            let later = Bool.random(using: &choices) && Bool.random(using: &choices)
            let processing = task.kind == .processing
            return .submit(SubmitRequest(
                app: app.id, identifier: task.identifier, kind: task.kind,
                earliestBeginDate: later ? Date().addingTimeInterval(Double.random(in: 0...1.5, using: &choices)) : nil,
                requiresNetworkConnectivity: processing && Int.random(in: 0..<5, using: &choices) == 0,
                requiresExternalPower: processing && Int.random(in: 0..<5, using: &choices) == 0))
        case 5:
            return .cancel(app: app.id, identifier: task.identifier)
        case 6, 7:
            return .simulateLaunch(identifier: task.identifier, app: app.id)
        case 8:
            return .simulateExpiration(identifier: target?.identifier ?? task.identifier, app: target?.app ?? app.id)
        case 9, 10:
            return .complete(app: target?.app ?? app.id, identifier: target?.identifier ?? task.identifier, success: Bool.random(using: &choices))
        default:
            return .setConditions(ConditionOverrides(
                externalPower: Int.random(in: 0..<10, using: &choices) < 7, network: Int.random(in: 0..<10, using: &choices) < 7,
                idle: Int.random(in: 0..<10, using: &choices) < 9, lowPower: Int.random(in: 0..<10, using: &choices) == 0))
        }
    }
}
