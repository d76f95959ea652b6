import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A program in a real terminal that `bgbench dashboard-load` owns: one tmux session on a private
/// server, and a control-mode client attached to it (`tmux -C`), through which keys are sent and
/// the screen is read. The client also reports every chunk of bytes the program writes to its
/// terminal as it arrives (`%output`), so the time a key's effect reaches the screen is known
/// without polling the screen.
final class TerminalSession {
    /// What the control client said.
    enum Message {
        /// The program wrote to its terminal; `at` is when the report arrived (monotonic seconds).
        case output(at: Double)
        /// The answer to a command: the command's tag, the answer's lines, and whether it failed.
        case reply(tag: Tag, lines: [String], failed: Bool)
    }

    /// What a command was for, handed back with its answer.
    enum Tag {
        case setup, key, screen
    }

    let name: String
    /// The pid of the program in the pane (the pane runs it with `exec`).
    let pid: Int32
    private let socket: String
    private let scratch: String
    private let client = Process()
    private let commands: FileHandle
    private let replies: Int32
    private var unread = Data()
    /// Inside a `%begin` block: its number, whether it answers this client, and its lines so far.
    private var block: (number: String, ours: Bool, lines: [String])?
    /// Tags of the commands sent and not answered yet, oldest first (tmux answers in order).
    private var awaiting: [Tag] = []

    /// Starts `command` in a new session `name` (width × height, TERM=xterm-256color) on the tmux
    /// server `socket` (started if need be), and attaches a control client to it.
    init(name: String, command: String, socket: String, scratch: String, width: Int = 160, height: Int = 48) throws {
        self.name = name
        self.socket = socket
        self.scratch = scratch
        let started = IdleWakeups.tmux(socket, ["-f", "/dev/null", "new-session", "-d", "-s", name, "-x", "\(width)", "-y", "\(height)",
                                                "-e", "TERM=xterm-256color", command], root: scratch)
        guard started.status == 0 else { throw BenchError("tmux could not start \(name): \(started.output)") }
        let pane = IdleWakeups.tmux(socket, ["display", "-p", "-t", name, "#{pane_pid}"], root: scratch)
        guard let pid = Int32(pane.output.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw BenchError("tmux did not say which process runs \(name): \(pane.output)")
        }
        self.pid = pid
        let input = Pipe()
        let output = Pipe()
        client.executableURL = URL(fileURLWithPath: "/usr/bin/tmux")
        client.arguments = ["-L", socket, "-C", "attach", "-t", name]
        client.standardInput = input
        client.standardOutput = output
        client.standardError = FileHandle.nullDevice
        do {
            try client.run()
        } catch {
            throw BenchError("cannot start a tmux control client: \(error)")
        }
        commands = input.fileHandleForWriting
        replies = output.fileHandleForReading.fileDescriptor
        _ = fcntl(replies, F_SETFL, fcntl(replies, F_GETFL) | O_NONBLOCK)
        // A control client starts at 80x24; the session keeps the size it was made with only if
        // the client says it is that large too.
        send("refresh-client -C \(width)x\(height)", tag: .setup)
    }

    /// The descriptor to `poll` for the client's messages.
    var descriptor: Int32 { replies }

    /// Sends one tmux command; its answer comes back as a `.reply` with `tag`.
    func send(_ command: String, tag: Tag) {
        awaiting.append(tag)
        try? commands.write(contentsOf: Data((command + "\n").utf8))
    }

    /// Sends a key as tmux names it (`?`, `h`, `Escape`).
    func press(_ key: String) { send("send-keys -t \(name) '\(key)'", tag: .key) }

    /// Asks for the visible screen as text; the answer is a `.screen` reply with one line per row.
    func requestScreen() { send("capture-pane -p -t \(name)", tag: .screen) }

    /// Whatever the client has said since the last call, without waiting.
    func read() -> [Message] {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var arrived = false
        while true {
            let n = Glibc.read(replies, &buffer, buffer.count)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            unread.append(contentsOf: buffer[0..<n])
            arrived = true
        }
        guard arrived else { return [] }
        let now = Monotonic.now()
        var messages: [Message] = []
        while let newline = unread.firstIndex(of: 0x0A) {
            let line = String(decoding: unread[unread.startIndex..<newline], as: UTF8.self)
            unread.removeSubrange(unread.startIndex...newline)
            if var current = block {
                let fields = line.split(separator: " ")
                if fields.count >= 4, fields[0] == "%end" || fields[0] == "%error", String(fields[2]) == current.number {
                    if current.ours, !awaiting.isEmpty {
                        messages.append(.reply(tag: awaiting.removeFirst(), lines: current.lines, failed: fields[0] == "%error"))
                    }
                    block = nil
                } else {
                    current.lines.append(line)
                    block = current
                }
            } else if line.hasPrefix("%output ") {
                messages.append(.output(at: now))
            } else if line.hasPrefix("%begin ") {
                // `%begin time number flags`: flags 1 marks a command this client sent.
                let fields = line.split(separator: " ")
                if fields.count >= 4 { block = (String(fields[2]), fields[3] == "1", []) }
            }
        }
        return messages
    }

    /// Ends the program, then the control client.
    func stop() {
        kill(pid, SIGTERM)
        try? commands.close()
        if client.isRunning { kill(client.processIdentifier, SIGTERM) }
        client.waitUntilExit()
    }
}

/// Seconds on the monotonic clock.
enum Monotonic {
    static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}

/// CPU time a process has used, from `/proc/<pid>/stat` (user plus system), in seconds.
enum ProcessCPU {
    static func seconds(_ pid: Int32) -> Double? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = text.lastIndex(of: ")") else { return nil }
        // Fields resume after the command name; utime and stime are fields 14 and 15.
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }
}
