import FoundationEssentials
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// Runs one of the programs being installed to ask it something (its help, its completion scripts).
enum ToolRun {
    /// Its standard output; a non-zero exit is a failure with the first line it printed on stderr.
    static func output(of executable: String, _ arguments: [String]) throws -> Data {
        // stderr into an unlinked file, so that only one pipe is read and neither can fill up unread.
        let folder = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? "/tmp"
        var template = Array("\(folder)/bgctl-install-XXXXXX".utf8CString)
        let errorFile = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard errorFile >= 0 else { throw InstallFailure("cannot create a temporary file: \(String(cString: strerror(errno)))") }
        template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        defer { close(errorFile) }
        var pipeEnds: [Int32] = [-1, -1]
        guard pipe(&pipeEnds) == 0 else { throw InstallFailure("cannot make a pipe: \(String(cString: strerror(errno)))") }
        let started = ProcessSpawn.start(executable, arguments: arguments, environment: ProcessInfo.processInfo.environment,
                                         stdout: pipeEnds[1], stderr: errorFile)
        close(pipeEnds[1])
        defer { close(pipeEnds[0]) }
        let pid: pid_t
        switch started {
        case .success(let child): pid = child
        case .failure(let error): throw InstallFailure("cannot run \(executable): \(error)")
        }
        let data = StandardStreams.readToEnd(pipeEnds[0])
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        // WIFEXITED and WEXITSTATUS: the low 7 bits are the signal (0 for an exit), the next 8 the code.
        let signal = status & 0x7f, code = (status >> 8) & 0xff
        guard signal == 0, code == 0 else {
            lseek(errorFile, 0, SEEK_SET)
            let text = String(decoding: StandardStreams.readToEnd(errorFile), as: UTF8.self)
            let line = text.split(separator: "\n").first.map(String.init) ?? (signal == 0 ? "exit \(code)" : "signal \(signal)")
            throw InstallFailure("\(executable) \(arguments.joined(separator: " ")) failed: \(line)")
        }
        return data
    }
}
