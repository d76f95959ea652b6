import Foundation
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A real terminal for end-to-end dashboard tests: a detached tmux session on a private socket,
/// driven with send-keys and read with capture-pane.
final class TmuxSession: @unchecked Sendable {
    let socket: String

    init(command: String, width: Int = 100, height: Int = 30) throws {
        socket = "bgtop-test-\(UUID().uuidString.prefix(8))"
        let result = try tmux(["new-session", "-d", "-x", "\(width)", "-y", "\(height)", "-e", "TERM=xterm-256color", command])
        guard result.status == 0 else { throw TestFailure("tmux new-session failed: \(result.output)") }
    }

    deinit { _ = try? tmux(["kill-server"]) }

    /// The visible screen, one line per row; with `escapes`, including the SGR sequences of colours
    /// and attributes.
    func screen(escapes: Bool = false) -> String {
        (try? tmux(["capture-pane", "-p"] + (escapes ? ["-e"] : [])).output) ?? ""
    }

    func send(_ keys: String...) {
        _ = try? tmux(["send-keys"] + keys)
    }

    /// Types text literally.
    func type(_ text: String) {
        _ = try? tmux(["send-keys", "-l", text])
    }

    func resize(width: Int, height: Int) {
        _ = try? tmux(["resize-window", "-x", "\(width)", "-y", "\(height)"])
    }

    /// Waits until the screen satisfies `condition` (checked every 20 ms) and returns it.
    @discardableResult
    func waitForScreen(_ what: String, timeout: TimeInterval = 5, _ condition: (String) -> Bool) throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        var last = ""
        while Date() < deadline {
            last = screen()
            if condition(last) { return last }
            usleep(20_000)
        }
        throw TestFailure("timed out after \(timeout) s waiting for \(what); screen:\n\(last)")
    }

    /// The pane's title: what a program set with an OSC 0 or 2 sequence, else tmux's default.
    func paneTitle() -> String {
        ((try? tmux(["display-message", "-p", "#{pane_title}"]).output) ?? "").trimmingCharacters(in: .newlines)
    }

    @discardableResult
    func waitFor(_ text: String, timeout: TimeInterval = 5) throws -> String {
        try waitForScreen("'\(text)'", timeout: timeout) { $0.contains(text) }
    }

    private func tmux(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let (status, out, err) = try Spawn.run("/usr/bin/tmux", ["-L", socket] + arguments,
                                               environment: ProcessInfo.processInfo.environment)
        return (status, out + err)
    }
}
