import CLinuxSupport
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

extension CommandChannel {
    /// The most commands ``sendAll(_:inFlight:timeout:)`` keeps unanswered on its connection.
    public static let maximumInFlight = 64

    /// Hands `commands` to the running scheduler over one connection of its command socket, up to
    /// `inFlight` (1 to ``maximumInFlight``) sent and not yet answered at a time, and returns what
    /// became of each, in their order.
    ///
    /// Each is answered only once committed, exactly as by ``send(_:timeout:)``: a delivery that
    /// says `applied` survives `kill -9` and power loss. What changes is the cost: the scheduler
    /// reads the commands in flight together and makes them durable with one journal sync, as a
    /// database's group commit does, instead of one sync per round trip.
    ///
    /// The scheduler applies one connection's commands in the order sent. Whatever the socket does
    /// not answer goes the way ``send(_:timeout:)`` sends it: a command the socket cannot take (too
    /// large, the same id twice) and all after it are sent one by one; when the connection ends
    /// (the scheduler stopped), each command sent and unanswered is looked up by its id and
    /// otherwise sent again; when no answer comes within `timeout` seconds, each is written into
    /// the inbox (`noAnswer`), and so is every command after it, unsent. A command id is applied
    /// at most once on every path. A command that cannot be sent at all (the inbox cannot be
    /// written: a full disk) is a failure, and those after it are failures unsent, so that none
    /// overtakes it; what came before it stands.
    public func sendAll(_ commands: [Command], inFlight: Int = 16,
                        timeout: TimeInterval = 10) throws(StateError) -> [Result<Delivery, StateError>] {
        guard (1...Self.maximumInFlight).contains(inFlight) else {
            throw .malformed("inFlight must be from 1 to \(Self.maximumInFlight), not \(inFlight)")
        }
        try StateDirectoryCheck.prepare(paths.root)
        let run = CommandSocketClient.pipeline(commands, paths: paths, inFlight: inFlight, timeout: timeout)
        var results: [Result<Delivery, StateError>] = []
        results.reserveCapacity(commands.count)
        // Once the scheduler has let one wait out its time, the rest are not offered to it again
        // (each would wait as long): they are made durable in the inbox, in order.
        var slow = run.timedOut
        for (index, command) in commands.enumerated() {
            if let outcome = run.outcomes[index] {
                results.append(.success(.applied(outcome)))
                continue
            }
            do throws(StateError) {
                if index < run.sent, let outcome = CommandOutcome.stored(command.id, in: paths) {
                    results.append(.success(.applied(outcome)))
                } else if slow {
                    try Inbox(paths: paths).enqueue(command)
                    results.append(.success(.noAnswer))
                } else {
                    let delivery = try send(command, timeout: timeout)
                    if delivery == .noAnswer { slow = true }
                    results.append(.success(delivery))
                }
            } catch {
                // The ones after it are not sent: sending them would put them before it.
                results.append(.failure(error))
                let reason = StateError.malformed("not sent: the command before it failed (\(error.description))")
                results += Array(repeating: .failure(reason), count: commands.count - index - 1)
                break
            }
        }
        return results
    }
}

extension CommandSocketClient {
    /// What one pipelined connection achieved: the answers by position, how many commands were
    /// sent on it (a prefix of them), and whether it ended by waiting too long for an answer.
    struct PipelineRun {
        var outcomes: [CommandOutcome?]
        var sent = 0
        var timedOut = false
    }

    /// Sends `commands` in order on one connection, keeping up to `inFlight` unanswered, until all
    /// are answered or the connection fails them.
    static func pipeline(_ commands: [Command], paths: StatePaths, inFlight: Int, timeout: TimeInterval) -> PipelineRun {
        var run = PipelineRun(outcomes: [CommandOutcome?](repeating: nil, count: commands.count))
        guard !commands.isEmpty, let connection = connect(paths) else { return run }
        defer { close(connection) }
        var waiting: [String: Int] = [:]
        var sending = true
        var buffer = [UInt8](repeating: 0, count: maximumAnswerBytes)
        while true {
            while sending && run.sent < commands.count && waiting.count < inFlight {
                let command = commands[run.sent]
                // One the socket cannot take (or a second copy of an id in flight) ends the sending:
                // it and those after it go one by one, so the order holds.
                guard waiting[command.id] == nil, let data = encoded(command) else {
                    sending = false
                    break
                }
                let offered = offer(data, on: connection)
                if offered == .full { break }
                guard offered == .sent else {
                    sending = false
                    break
                }
                waiting[command.id] = run.sent
                run.sent += 1
            }
            // Nothing in flight: all answered, or the socket would take nothing.
            guard !waiting.isEmpty else { return run }
            switch receive(on: connection, into: &buffer, deadline: bg_monotonic_seconds() + max(0, timeout)) {
            case .outcome(let outcome):
                // An answer to nothing sent here is not the scheduler's protocol: trust no more of it.
                guard let index = waiting.removeValue(forKey: outcome.command) else { return run }
                run.outcomes[index] = outcome
            case .ended:
                return run
            case .timedOut:
                run.timedOut = true
                return run
            }
        }
    }
}
