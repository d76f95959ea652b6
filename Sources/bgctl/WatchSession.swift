import CLinuxSupport
import FoundationEssentials
import SchedulerCore
import StateFeed
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// The loop of `bgctl watch`: one `poll` over inotify on the state directory, stdout (when it has
/// something to write), stdin's request lines, command results, the scheduler's pidfd and the
/// terminating signals. Nothing wakes it but the kernel.
///
/// Bounded: a state line is made only when the previous output has been written, so while the
/// reader is slow the changes gather in the mirror (one line carries them all later); answers
/// wait in a short queue, and while it is full stdin is not read.
final class WatchSession {
    private enum Source: Hashable {
        case stateChanges, input, output, commandResults, schedulerExit, signals, logAnswers, logChanges
    }

    /// Log reads answered at once; beyond this a `log` request is refused as busy (each is read
    /// on a thread of its own).
    static let maximumLogReads = 4

    /// Answers waiting to be written; while this many wait, no request is read.
    static let maximumQueuedAnswers = 64

    private let locations: LocationOptions
    private let json: Bool
    private let mirror: StateMirror
    private let watch: StateWatch
    private let runner: WatchCommandRunner?
    private let output: WatchOutput
    private var publisher = FeedPublisher()
    private var settings = SchedulerSettings()
    private var catalog = ManifestCatalog()
    private var pending = StateChangeSet()
    private var pacing = ReloadPacing(interval: 0.2)
    private var input = BoundedLineReader(limit: WatchFeed.maximumRequestLine)
    private var answers: [Data] = []
    private var scheduler: (pid: Int32, descriptor: Int32)?
    private let signalDescriptor: Int32
    private let readable: WatchText
    /// A pager's reads of app logs, and the log it follows (`--json` only).
    private let logReads: LogReads?
    private let logWatch: LogWatch
    private var logReadsInFlight = 0

    init(locations: LocationOptions, json: Bool, launchToken: LaunchToken?) throws {
        self.locations = locations
        self.json = json
        let paths = locations.paths
        watch = try StateWatch(paths: paths, appsDirectory: locations.appsDirectory)
        mirror = StateMirror(paths: paths)
        runner = json ? try WatchCommandRunner(locations: locations, launchToken: launchToken) : nil
        logReads = json ? try LogReads(paths: paths) : nil
        logWatch = LogWatch(paths: paths)
        output = WatchOutput(descriptor: STDOUT_FILENO)
        readable = WatchText()
        var mask = sigset_t()
        sigemptyset(&mask)
        for signal in [SIGINT, SIGTERM, SIGHUP] { sigaddset(&mask, signal) }
        pthread_sigmask(SIG_BLOCK, &mask, nil)
        signalDescriptor = bg_signalfd(&mask)
        // A reader that goes away is an EPIPE from write, handled like the end of stdin.
        signal(SIGPIPE, SIG_IGN)
        loadConfiguration()
    }

    deinit {
        if signalDescriptor >= 0 { close(signalDescriptor) }
        if let scheduler { close(scheduler.descriptor) }
        output.restore()
    }

    /// Runs until the reader goes away (EPIPE, stdin closed) or a terminating signal.
    func run() {
        followScheduler()
        let first = publisher.snapshot(mirror, surroundings())
        emit(json ? encode(first) : readable.describe(first))
        while true {
            var poll = KernelPoll<Source>()
            poll.watch(.stateChanges, watch.descriptor)
            poll.watch(.signals, signalDescriptor)
            poll.watch(.schedulerExit, scheduler?.descriptor ?? -1)
            if let logReads {
                poll.watch(.logAnswers, logReads.descriptor)
                poll.watch(.logChanges, logWatch.descriptor)
            }
            if let runner {
                poll.watch(.commandResults, runner.descriptor)
                // While answers pile up (a reader that sends but does not read), requests wait.
                if !input.ended && answers.count < Self.maximumQueuedAnswers { poll.watch(.input, STDIN_FILENO) }
            }
            if output.hasPending { poll.watchOutput(.output, STDOUT_FILENO) }
            let timeout = output.hasPending ? -1 : pacing.pollTimeout(at: Self.monotonicNow())
            guard let ready = poll.wait(milliseconds: timeout) else { return }
            if ready.contains(.signals) { return }
            if ready.contains(.output) {
                guard output.flush() else { return }
            }
            if ready.contains(.stateChanges) {
                let changes = watch.drain()
                if !changes.isEmpty {
                    pending.add(changes, paths: mirror.paths, configApps: watch.appsDirectory)
                    if !pending.isEmpty { pacing.changed(at: Self.monotonicNow()) }
                }
            }
            if ready.contains(.schedulerExit) {
                // Closed at once: an ended process's pidfd stays readable.
                followScheduler()
                pacing.changed(at: Self.monotonicNow())
            }
            if ready.contains(.input) {
                for line in input.read(from: STDIN_FILENO) { answer(line) }
            }
            if let runner, ready.contains(.commandResults) {
                for result in runner.take() { answers.append(encode(result)) }
            }
            if let logReads, ready.contains(.logAnswers) {
                for answer in logReads.take() {
                    logReadsInFlight = max(0, logReadsInFlight - 1)
                    answers.append(encode(FeedLog(id: answer.id, excerpt: answer.excerpt)))
                }
            }
            if ready.contains(.logChanges), logWatch.drain(), let app = logWatch.app {
                answers.append(encode(FeedLogChanged(app: app)))
            }
            guard !output.hasPending else { continue }
            if !answers.isEmpty {
                emit(answers.reduce(into: Data()) { $0.append($1) })
                answers.removeAll()
            }
            if !output.hasPending && pacing.isDue(at: Self.monotonicNow()) {
                if pending.configuration { loadConfiguration() }
                mirror.apply(pending)
                pending = StateChangeSet()
                followScheduler()
                let change = publisher.change(mirror, surroundings())
                if !change.isEmpty { emit(json ? encode(change) : readable.describe(change)) }
                pacing.reloaded(at: Self.monotonicNow())
            }
            if output.failed { return }
            // stdin closed: once the commands it asked for are answered and written, the watch
            // is done (`echo REQUEST | bgctl watch --json` gets its answer; ssh's end is an EOF).
            if input.ended && (runner?.inFlight ?? 0) == 0 && logReadsInFlight == 0 && answers.isEmpty && !output.hasPending { return }
        }
    }

    /// One request line: refused at once with an error line, or handed to the runner.
    private func answer(_ line: BoundedLineReader.Line) {
        guard let runner else { return }
        switch line {
        case .tooLong:
            answers.append(encode(FeedError(code: .tooLong, message: "request line longer than \(WatchFeed.maximumRequestLine) bytes")))
        case .text(let data):
            // Blank lines are a keep-alive at most.
            if data.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { return }
            switch FeedRequest.parse(data) {
            case .failure(let error):
                answers.append(encode(error))
            case .success(.command(let id, let action)):
                if !runner.submit(id: id, action: action) {
                    answers.append(encode(FeedError(id: id, code: .busy,
                                                    message: "\(WatchCommandRunner.maximumInFlight) commands already wait for the scheduler")))
                }
            case .success(.log(let id, let request)):
                guard let logReads, logReadsInFlight < Self.maximumLogReads else {
                    answers.append(encode(FeedError(id: id, code: .busy, message: "\(Self.maximumLogReads) log reads already under way")))
                    return
                }
                logReadsInFlight += 1
                logReads.read(request, id: id)
            case .success(.follow(let app)):
                logWatch.follow(app)
            }
        }
    }

    private func emit(_ data: Data) {
        guard !data.isEmpty else { return }
        output.write(data)
    }

    private func encode<T: Encodable>(_ value: T) -> Data {
        (try? JSONFormat.encodeLine(value)) ?? Data()
    }

    private func loadConfiguration() {
        settings = (try? SchedulerSettings.load(configDirectory: locations.configDirectory)) ?? SchedulerSettings()
        catalog = ManifestCatalog.load(from: locations.appsDirectory)
    }

    private func surroundings() -> FeedPublisher.Surroundings {
        FeedPublisher.Surroundings(
            stateDirectory: mirror.paths.root, configDirectory: locations.configDirectory,
            schedulerPID: scheduler?.pid, directoryProblem: DirectoryProblem.describe(mirror.paths.root),
            settings: settings, catalog: catalog)
    }

    /// Follows the lock's holder with a pidfd, so a scheduler that dies is reported at once.
    private func followScheduler() {
        let holder = StateLock.holder(mirror.paths)
        if let scheduler, scheduler.pid == holder, bg_pidfd_is_running(scheduler.descriptor) != 0 { return }
        if let scheduler { close(scheduler.descriptor) }
        scheduler = nil
        if let holder {
            let descriptor = bg_pidfd_open(holder)
            if descriptor >= 0 { scheduler = (holder, descriptor) }
        }
    }

    private static func monotonicNow() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
