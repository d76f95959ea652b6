/// How a process ended, from `waitpid`'s status: known only for the scheduler's own children.
enum WaitStatus: Equatable, CustomStringConvertible {
    case exited(code: Int32)
    case killed(signal: Int32)
    /// Learnt through a pidfd (a process that is not the scheduler's child): ended, no more known.
    case unknown

    /// Decodes a `waitpid` status (`WIFEXITED`/`WTERMSIG` by hand: the macros are not imported).
    init(_ status: Int32) {
        let signal = status & 0x7f
        self = signal == 0 ? .exited(code: (status >> 8) & 0xff) : .killed(signal: signal)
    }

    /// The signal that ended it, if one did.
    var signal: Int32? {
        if case .killed(let signal) = self { return signal }
        return nil
    }

    /// The wording of `exited` events (docs/state-format.md).
    var description: String {
        switch self {
        case .exited(let code): return "exited with status \(code)"
        case .killed(let signal): return "was killed by signal \(signal)"
        case .unknown: return "exited"
        }
    }
}

/// A watched process that ended.
struct ProcessExit {
    var pid: Int32
    var status: WaitStatus
}
