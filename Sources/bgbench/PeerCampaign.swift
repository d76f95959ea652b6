import Dispatch
import Foundation
import LoopbackServer
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A downloader `transfer-faults` compares bgtaskd with, run the way a careful user runs it to
/// resume and follow redirects, on the same trials.
struct PeerTool: Sendable {
    enum Kind: String, Sendable, CaseIterable {
        case curl, wget
    }

    var kind: Kind
    /// The first line of `--version`.
    var version: String

    /// The tool, when it is on `PATH`.
    static func find(_ kind: Kind, scratch: String) -> PeerTool? {
        guard let text = Subprocess.output(kind.rawValue, ["--version"], scratch: scratch),
              let first = text.split(separator: "\n").first else { return nil }
        return PeerTool(kind: kind, version: String(first))
    }

    /// How many times curl is started (a script's retry loop), and wget's `--tries`.
    static let attempts = 8
    /// The pause between two curl runs, as bgtaskd's first retry waits (`transferRetryInitialSeconds`).
    static let pauseBetweenAttempts = 0.2

    /// The command, for the report.
    var commandLine: String {
        switch kind {
        case .curl: "curl -sS -L --fail -C - -o FILE URL, run again while it exits non-zero, up to \(Self.attempts) runs, \(Self.pauseBetweenAttempts) s apart"
        case .wget: "wget -q -c --tries=\(Self.attempts) -O FILE URL (wget's own retries and waits)"
        }
    }

    /// Downloads `url` into `file` within `timeout` seconds; the ending of the last run.
    func download(_ url: String, to file: String, timeout: Double, scratch: String) throws -> TimedProcess.Ending {
        let deadline = ContinuousClock.now + .milliseconds(Int64(timeout * 1000))
        switch kind {
        case .wget:
            return try TimedProcess.run("wget", ["-q", "-c", "--tries=\(Self.attempts)", "-O", file, url],
                                        timeout: timeout, scratch: scratch)
        case .curl:
            var ending = TimedProcess.Ending(status: 0, timedOut: false, lastError: "")
            for attempt in 1...Self.attempts {
                let remaining = (deadline - ContinuousClock.now).seconds
                guard remaining > 0 else { return TimedProcess.Ending(status: ending.status, timedOut: true, lastError: ending.lastError) }
                ending = try TimedProcess.run("curl", ["-sS", "-L", "--fail", "-C", "-", "-o", file, url],
                                              timeout: remaining, scratch: scratch)
                if ending.timedOut || ending.status == 0 { return ending }
                if attempt < Self.attempts { usleep(useconds_t(Self.pauseBetweenAttempts * 1_000_000)) }
            }
            return ending
        }
    }
}

/// Plays every trial to one peer, `concurrency` downloads at a time (each on a thread of its own,
/// blocked in its process), at paths of the peer's own, into a folder of the peer's own.
struct PeerCampaign: Sendable {
    let tool: PeerTool
    let server: LoopbackServer
    let trials: [FaultTrial]
    let concurrency: Int
    let stuckAfter: Double
    /// The workspace folder; the peer's files go in `<root>/<tool>/`.
    let root: String

    func run() throws -> [TrialResult] {
        let folder = "\(root)/\(tool.kind.rawValue)"
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        } catch {
            throw BenchError("cannot create \(folder): \(error.localizedDescription)")
        }
        let shared = SharedQueue(count: trials.count)
        let finished = DispatchGroup()
        for _ in 0..<min(concurrency, trials.count) {
            finished.enter()
            let worker = Thread {
                defer { finished.leave() }
                while let index = shared.take() {
                    do {
                        shared.store(try play(trials[index], folder: folder), at: index)
                    } catch {
                        shared.fail("\(error)")
                    }
                }
            }
            worker.start()
        }
        finished.wait()
        if let failure = shared.failure { throw BenchError(failure) }
        return shared.results
    }

    /// One download, classified, and its file removed.
    private func play(_ trial: FaultTrial, folder: String) throws -> TrialResult {
        let file = "\(folder)/t\(trial.number).bin"
        let url = trial.serve(on: server, runner: tool.kind.rawValue)
        let start = ContinuousClock.now
        let ending = try tool.download(url, to: file, timeout: stuckAfter, scratch: folder)
        let seconds = (ContinuousClock.now - start).seconds
        defer { unlink(file) }
        let outcome: TrialOutcome
        let detail: String
        if ending.timedOut {
            (outcome, detail) = (.stuck, "killed after \(Int(stuckAfter)) s")
        } else if ending.status != 0 {
            (outcome, detail) = (.failedClearly, "exit \(ending.status): \(ending.lastError)")
        } else {
            switch RepresentationCheck.verdict(file, size: trial.size, seeds: trial.acceptableSeeds) {
            case .matches:
                (outcome, detail) = (.exact, "")
            case .missing:
                (outcome, detail) = (.wrong, "exit 0, and no file")
            case .differs(let how):
                (outcome, detail) = (.wrong, "exit 0 with wrong bytes: \(how)")
            }
        }
        return TrialResult(trial: trial, outcome: outcome, detail: detail, seconds: seconds)
    }
}

/// The trials the workers take one by one, and what they found.
private final class SharedQueue: Sendable {
    private let state: Mutex<(next: Int, results: [TrialResult?], failure: String?)>
    private let count: Int

    init(count: Int) {
        self.count = count
        state = Mutex((0, Array(repeating: nil, count: count), nil))
    }

    /// The next trial's index; `nil` when all are taken or a worker has failed.
    func take() -> Int? {
        state.withLock { state in
            guard state.failure == nil, state.next < count else { return nil }
            defer { state.next += 1 }
            return state.next
        }
    }

    func store(_ result: TrialResult, at index: Int) {
        state.withLock { $0.results[index] = result }
    }

    /// Stops the other workers after their current download.
    func fail(_ reason: String) {
        state.withLock { $0.failure = $0.failure ?? reason }
    }

    var failure: String? { state.withLock { $0.failure } }
    var results: [TrialResult] { state.withLock { $0.results.compactMap { $0 } } }
}
