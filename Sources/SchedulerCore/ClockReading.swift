import FoundationEssentials
import TaskState

/// The three clocks the scheduler reads at each turn: the wall clock (dates in the state), the
/// monotonic clock (time the machine was awake; it stops during suspend) and the boot-time clock
/// (time since boot, suspend included). Comparing how far each moved tells a suspend from a
/// wall-clock change (`date -s`, NTP stepping the clock, a time-zone-less RTC fix).
public struct ClockReading: Sendable, Equatable {
    public var wall: Date
    /// `CLOCK_MONOTONIC`, seconds.
    public var awake: Double
    /// `CLOCK_BOOTTIME`, seconds.
    public var sinceBoot: Double

    public init(wall: Date, awake: Double, sinceBoot: Double) {
        self.wall = wall
        self.awake = awake
        self.sinceBoot = sinceBoot
    }
}

/// What changed between two readings, beyond the time that simply passed.
public struct ClockChange: Sendable, Equatable {
    /// Seconds the machine was suspended.
    public var asleep: Double
    /// Seconds the wall clock was set forward (negative: back), apart from the time that passed.
    public var jump: Double
    /// How far running tasks' deadlines were moved: awake time is what a budget counts.
    public var shift: Double { asleep + jump }
}

extension SchedulerState {
    /// Moves below this are the clocks' own jitter, not a suspend or a jump.
    static let clockChangeThreshold: Double = 1

    /// Notes the clocks at a turn, before anything is decided from them. After a suspend or a
    /// wall-clock change, the deadlines of running tasks (`deadline`, `killDeadline`) move with the
    /// wall clock, so a budget counts only time the machine was awake and a clock set forward
    /// expires nothing; `earliestBeginDate`s stay wall-clock dates (noon is noon), and what came due
    /// meanwhile runs in the turn that follows, together. Returns the change, if there was one.
    @discardableResult
    public mutating func noteClocks(_ reading: ClockReading) -> ClockChange? {
        defer { lastClockReading = reading }
        guard let last = lastClockReading else { return nil }
        let awake = reading.awake - last.awake
        let elapsed = reading.sinceBoot - last.sinceBoot
        let change = ClockChange(asleep: max(0, elapsed - awake), jump: reading.wall.timeIntervalSince(last.wall) - elapsed)
        guard abs(change.shift) >= Self.clockChangeThreshold else { return nil }
        var moved = 0
        for var task in tasks.values.sorted(by: { $0.key < $1.key }) {
            task.deadline = task.deadline.addingTimeInterval(change.shift)
            task.killDeadline = task.killDeadline?.addingTimeInterval(change.shift)
            setTask(task)
            moved += 1
        }
        // A question's answer time counts awake time too: the app answering it slept as well.
        for var record in transfers.values.sorted(by: { $0.key < $1.key }) where Self.isAwaitingAnswer(record) {
            record.delayedRequestAnswerBy = record.delayedRequestAnswerBy?.addingTimeInterval(change.shift)
            setTransfer(record)
        }
        let cameDue = requests.values.filter { request in
            guard let earliest = request.earliestBeginDate else { return false }
            return earliest > last.wall && earliest <= reading.wall
        }.count
        let what: String
        if change.asleep >= Self.clockChangeThreshold && abs(change.jump) < Self.clockChangeThreshold {
            what = "the machine was asleep for \(Self.seconds(change.asleep))"
        } else if change.asleep < Self.clockChangeThreshold {
            what = "the wall clock was set \(change.jump > 0 ? "forward" : "back") \(Self.seconds(abs(change.jump)))"
        } else {
            what = "the machine was asleep for \(Self.seconds(change.asleep)) and the wall clock was set \(change.jump > 0 ? "forward" : "back") \(Self.seconds(abs(change.jump)))"
        }
        let budgets = moved == 0 ? "" : "; the deadlines of \(moved) running task\(moved == 1 ? "" : "s") moved \(Self.seconds(change.shift)) with it"
        let due = cameDue == 0 ? "" : "; \(cameDue) request\(cameDue == 1 ? "" : "s") came due meanwhile and run together"
        record(Event(time: reading.wall, type: .clockChanged,
                     reason: change.asleep >= Self.clockChangeThreshold ? "suspend" : "clockJump",
                     message: what + budgets + due))
        return change
    }
}
