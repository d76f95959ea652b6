import Foundation
import TaskState

/// `bgctl` in a shell loop, one process per command, as scripts use it (issue #20, goal 1: 1 000
/// commands a second), beside peers in loops of the same shape: the sqlite3 shell making one
/// durable insert per process, and `htop --version`, a process that only starts and exits; and the
/// same loop printing its commands into one `bgctl batch`, beside one sqlite3 shell.
enum ShellLoop {
    /// The app whose one request the loop submits again and again: its date is a day away, so
    /// nothing launches while the loop runs.
    static let app = BenchApp(id: try! Identifier(validating: "bench.loop"), identifiers: [try! Identifier(validating: "bench.loop.refresh")],
                              modes: ["processing"], executable: "/bin/true")

    /// Runs `sh` loops of `commands` commands for each program, `rounds` times, alternately, and
    /// answers each loop's wall times (spawn of `sh` to its exit).
    static func compare(bgctl: String, session: SchedulerSession, commands: Int, rounds: Int,
                        root: String) throws -> [(name: String, samples: Samples)] {
        let database = root + "/shell-loop.sqlite"
        let created = try Subprocess.run("sqlite3", [database, "PRAGMA journal_mode=WAL; CREATE TABLE requests(app TEXT, id TEXT, earliest REAL, PRIMARY KEY(app, id));"],
                                     scratch: root)
        guard created.succeeded else { throw BenchError("sqlite3 could not create \(database): \(created.stderr)") }
        let sqlite = try StartToExit.which("sqlite3", scratch: root)
        let htop = try StartToExit.which("htop", scratch: root)
        let loops: [(String, [String])] = [
            // A processing request: the scheduler refuses app refreshes in low power mode, and the
            // bench reads the machine's real conditions.
            ("bgctl submit", [bgctl, "submit", "--app", app.id.rawValue, "--id", app.identifiers[0].rawValue, "--kind", "processing",
                              "--earliest", "+86400", "--state", session.paths.root, "--config", session.config]),
            ("sqlite3 insert", [sqlite, database, "PRAGMA synchronous=FULL; INSERT OR REPLACE INTO requests VALUES('bench.loop', 'bench.loop.refresh', 86400);"]),
            ("htop --version", [htop, "--version"]),
        ]
        // `sh -c SCRIPT sh N ERRORS PROGRAM ARGS...`: the program runs N times; the loop stops at
        // the first failure, whose standard error is left in ERRORS.
        let script = #"n=$1; errors=$2; shift 2; i=0; while [ "$i" -lt "$n" ]; do "$@" >/dev/null 2>"$errors" || exit 1; i=$((i + 1)); done"#
        // The same loop printing N lines into one process: `bgctl batch` (one command line a line,
        // many in flight on one connection) beside the sqlite3 shell taking N inserts, each its
        // own durable transaction.
        let piped = #"n=$1; errors=$2; line=$3; shift 3; i=0; while [ "$i" -lt "$n" ]; do printf '%s\n' "$line"; i=$((i + 1)); done | "$@" >/dev/null 2>"$errors""#
        let batchLine = "submit --app \(app.id.rawValue) --id \(app.identifiers[0].rawValue) --kind processing --earliest +86400"
        let pipes: [(String, String, [String])] = [
            ("sh loop | bgctl batch", batchLine, [bgctl, "batch", "--state", session.paths.root, "--config", session.config]),
            ("sh loop | sqlite3", "INSERT OR REPLACE INTO requests VALUES('bench.loop', 'bench.loop.refresh', 86400);",
             [sqlite, "-cmd", "PRAGMA synchronous=FULL;", database]),
        ]
        let errors = root + "/shell-loop.err"
        do {
            return try StartToExit.compare(
                loops.map { name, command in (name, "/bin/sh", ["-c", script, "sh", String(commands), errors] + command) }
                    + pipes.map { name, line, command in (name, "/bin/sh", ["-c", piped, "sh", String(commands), errors, line] + command) },
                runs: rounds, scratch: root)
        } catch let error as BenchError {
            let said = (try? String(contentsOfFile: errors, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
            throw said.isEmpty ? error : BenchError("\(error.description): \(said)")
        }
    }
}
