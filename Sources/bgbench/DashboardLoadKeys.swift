import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Key-to-screen latency of a program in a ``TerminalSession``: a key that toggles something on
/// its screen (bgtop's help overlay with `?`, htop's help screen with `h`) is sent again and
/// again, and each time the clock runs from writing the key until the bytes that show its effect
/// arrive from the program's terminal.
///
/// After the key, every `%output` report triggers a look at the screen (capture-pane) until the
/// screen shows the key's effect; the latency is the arrival of the last output report before
/// that look was answered. The screen is only read while a key waits for its effect.
final class KeyLatencyProbe {
    let session: TerminalSession
    let key: String
    /// Text on the screen while the toggled view is shown, and only then.
    let marker: String
    /// How long a key may take before it counts as lost.
    let timeout: Double

    private(set) var latencies: [Double] = []
    private(set) var timeouts = 0
    /// Whether the marker is on screen, as last seen.
    private var shown = false
    /// The key in flight: when it was sent and what the screen should then say.
    private var sentAt: Double?
    private var lastOutput: Double?
    private var screenRequested = false
    private var outputSinceRequest = false

    init(session: TerminalSession, key: String, marker: String, timeout: Double = 5) {
        self.session = session
        self.key = key
        self.marker = marker
        self.timeout = timeout
    }

    var isWaiting: Bool { sentAt != nil }

    /// Sends the key; its effect is looked for in what the session reports next.
    func press() {
        let now = Monotonic.now()
        sentAt = now
        lastOutput = nil
        session.press(key)
    }

    /// Reads what the session reported and takes a sample when the key's effect is on screen.
    func handleMessages() {
        for message in session.read() {
            switch message {
            case .output(let at):
                lastOutput = at
                guard sentAt != nil else { continue }
                if screenRequested {
                    outputSinceRequest = true
                } else {
                    requestScreen()
                }
            case .reply(.screen, let lines, _):
                screenRequested = false
                let showing = lines.contains { $0.contains(marker) }
                if let sent = sentAt {
                    if showing != shown, let arrived = lastOutput {
                        latencies.append(arrived - sent)
                        shown = showing
                        sentAt = nil
                    } else if outputSinceRequest {
                        requestScreen()
                    }
                } else {
                    shown = showing
                }
            case .reply:
                continue
            }
        }
    }

    /// Gives up on a key that has waited longer than `timeout`; the screen is read again to learn
    /// where the toggle stands.
    func expireIfLate(now: Double) {
        guard let sent = sentAt, now - sent > timeout else { return }
        timeouts += 1
        sentAt = nil
        if !screenRequested { requestScreen() }
    }

    private func requestScreen() {
        screenRequested = true
        outputSinceRequest = false
        session.requestScreen()
    }
}

/// Sends keys to several probes on one schedule: each gets a key every `interval`, the probes
/// offset from each other so their keys do not coincide; a probe still waiting skips its turn.
enum KeySchedule {
    /// Reads what the probes' sessions report for `seconds`, sending no key (their first screens,
    /// the setup's answers): a control client that is not read falls behind.
    static func settle(_ probes: [KeyLatencyProbe], seconds: Double) {
        let end = Monotonic.now() + seconds
        while Monotonic.now() < end {
            var entries = probes.map { pollfd(fd: $0.session.descriptor, events: Int16(POLLIN), revents: 0) }
            let timeout = Int32(max(1, (end - Monotonic.now()) * 1000))
            if poll(&entries, nfds_t(entries.count), timeout) > 0 {
                for (index, entry) in entries.enumerated() where entry.revents != 0 { probes[index].handleMessages() }
            }
        }
    }

    static func run(_ probes: [KeyLatencyProbe], interval: Double, seconds: Double) {
        let start = Monotonic.now()
        let end = start + seconds
        var next = probes.indices.map { start + interval * Double($0) / Double(probes.count) }
        while true {
            let now = Monotonic.now()
            if now >= end && !probes.contains(where: \.isWaiting) { break }
            // Past the end, only the keys in flight are waited for (at most their timeout).
            if now >= end + (probes.map(\.timeout).max() ?? 0) { break }
            for (index, probe) in probes.enumerated() {
                probe.expireIfLate(now: now)
                if now < end, now >= next[index] {
                    if !probe.isWaiting { probe.press() }
                    while next[index] <= now { next[index] += interval }
                }
            }
            var entries = probes.map { pollfd(fd: $0.session.descriptor, events: Int16(POLLIN), revents: 0) }
            let wake = min(next.min() ?? end, end) - Monotonic.now()
            let timeout = Int32(max(1, min(wake, 0.05) * 1000))
            if poll(&entries, nfds_t(entries.count), timeout) > 0 {
                for (index, entry) in entries.enumerated() where entry.revents != 0 { probes[index].handleMessages() }
            }
        }
    }
}
