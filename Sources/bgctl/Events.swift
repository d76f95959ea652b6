import ArgumentParser
import FoundationEssentials
import TaskState
#if canImport(Glibc)
import Glibc
#endif

struct Events: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "events",
        abstract: "The event log: launches, completions, expirations, kills, refusals, quarantines.")

    @OptionGroup var locations: LocationOptions
    @Flag(help: "Keep printing new events as they happen (like tail -F).") var follow = false
    @Flag(help: "Print the events as JSON Lines.") var json = false
    @Option(help: "How many recent events to print first, 0 to 1000000.") var limit = "20"

    func run() throws {
        let paths = locations.paths
        let count = Int(try NumberArgument.whole(limit, option: "--limit", in: NumericBounds.eventLimit))
        let recent = EventLog(paths: paths).recent(limit: count)
        for event in recent.events { try emit(event) }
        // A log that is not a regular file is skipped, never read (a FIFO would block); say so.
        if let kind = RegularFile.kind(at: paths.events) {
            printError("\(paths.events) is \(kind), not a regular file; its events are not shown")
        }
        guard follow else { return }
        // A parent may hand us a blocked or ignored SIGINT/SIGTERM; following forever must still end on them.
        var mask = sigset_t()
        sigemptyset(&mask)
        for signal in [SIGINT, SIGTERM, SIGHUP, SIGPIPE] {
            sigaddset(&mask, signal)
            Glibc.signal(signal, SIG_DFL)
        }
        pthread_sigmask(SIG_UNBLOCK, &mask, nil)
        do {
            try StateDirectoryCheck.prepare(paths.root)
            try followLog(paths)
        } catch let error as StateError {
            printError(error.description)
            throw BGCtl.Exit.localFailure
        }
    }

    private func emit(_ event: Event) throws {
        if json {
            StandardStreams.write(try JSONFormat.encodeLine(event))
        } else {
            let time = JSONFormat.string(from: event.time)
            let line = "\(time)  \(event.type.rawValue.padded(toWidth: 19))\(TerminalText.escaped(event.message))\n"
            StandardStreams.write(Data(line.utf8))
        }
    }

    /// Reads new lines as they are appended; on rotation, finishes the old file before opening
    /// the new one, so nothing is missed. Waits on inotify, never polls.
    private func followLog(_ paths: StatePaths) throws {
        try StateFiles.ensureDirectory(paths.root)
        let watcher = try ChangeWatcher()
        try watcher.watch(paths.root, mask: UInt32(IN_MODIFY | IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_ONLYDIR))
        var descriptor = (try? RegularFile.open(paths.events, O_RDONLY)) ?? -1
        if descriptor >= 0 { lseek(descriptor, 0, SEEK_END) }
        var pending = Data()
        func drain() throws {
            guard descriptor >= 0 else { return }
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let n = read(descriptor, &buffer, buffer.count)
                if n <= 0 { break }
                pending.append(contentsOf: buffer[0..<n])
            }
            guard let lastNewline = pending.lastIndex(of: 0x0A) else { return }
            let complete = pending[pending.startIndex...lastNewline]
            for event in EventLog.decodeLines(Data(complete)).events { try emit(event) }
            pending = Data(pending[pending.index(after: lastNewline)...])
        }
        while true {
            _ = watcher.wait(timeout: nil)
            let changes = watcher.drain()
            try drain()
            let rotated = changes.contains { $0.name == "events.jsonl" && $0.mask & UInt32(IN_CREATE | IN_MOVED_TO) != 0 }
            if rotated || descriptor < 0 {
                let fresh = (try? RegularFile.open(paths.events, O_RDONLY)) ?? -1
                if fresh >= 0 {
                    if descriptor >= 0 { close(descriptor) }
                    descriptor = fresh
                    pending = Data()
                    try drain()
                }
            }
        }
    }
}
