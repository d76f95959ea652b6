import Foundation

/// Phase 1, the peer: SQLite doing the same durable single-row writes, in the same run and on the
/// same file system.
///
/// Driven through Python 3's built-in `sqlite3` module (python3 is on every machine this project
/// targets), so the project takes on no C or Swift SQLite dependency. Each writer is its own
/// process with its own connection (`synchronous=FULL`, a generous busy timeout); each row is one
/// `BEGIN IMMEDIATE; INSERT OR REPLACE ...; COMMIT` carrying the same fields as a submit. The
/// writers are released together, like bgtop's.
struct SQLitePeer {
    /// One measured row.
    struct Result: Sendable {
        var writers: Int
        /// The journal mode SQLite reports after being asked for it (`wal`, `delete`).
        var journalMode: String
        var throughput: Throughput
    }

    var workspace: Workspace
    var rows: Int

    /// The SQLite library version Python links against.
    func version() throws -> String {
        let probe = "import sqlite3, sys; print(sqlite3.sqlite_version, sys.version.split()[0])"
        let result = try Subprocess.run("python3", ["-c", probe], scratch: workspace.root)
        guard result.succeeded else { throw BenchError("python3 cannot import sqlite3: \(result.stderr)") }
        let words = result.text.split(separator: " ")
        return words.count == 2 ? "SQLite \(words[0]) (Python \(words[1]) sqlite3 module)" : result.text
    }

    /// Inserts `rows` rows with `writers` processes into a fresh database in `journalMode`.
    func run(writers: Int, journalMode: String) throws -> Result {
        let script = "\(workspace.root)/sqlite_peer.py"
        if !FileManager.default.fileExists(atPath: script) { try workspace.writeFile(script, Self.script) }
        let folder = try workspace.folder(workspace.freshName("sqlite-\(journalMode.lowercased())-\(writers)w"))
        let database = "\(folder)/requests.db"
        let result = try Subprocess.run("python3", [script, database, journalMode, String(writers), String(rows)],
                                        scratch: workspace.root)
        guard result.succeeded,
              let object = try? JSONSerialization.jsonObject(with: Data(result.text.utf8)) as? [String: Any],
              let seconds = object["seconds"] as? Double, let mode = object["journal_mode"] as? String,
              let stored = object["rows"] as? Int
        else {
            throw BenchError("the SQLite peer failed (exit \(result.status)): \(result.stderr.trimmingCharacters(in: .whitespacesAndNewlines))")
        }
        guard stored == rows else { throw BenchError("the SQLite peer stored \(stored) rows, not \(rows)") }
        return Result(writers: writers, journalMode: mode, throughput: Throughput(operations: rows, seconds: seconds))
    }

    /// The peer program. Arguments: database path, journal mode, writers, rows. Prints one JSON
    /// object: seconds (release of the writers to the last commit), journal_mode, rows.
    static let script = #"""
    import json, multiprocessing, os, sqlite3, sys, time

    SCHEMA = """CREATE TABLE requests (
        app TEXT NOT NULL, identifier TEXT NOT NULL, kind TEXT NOT NULL,
        earliest_begin_date TEXT, submitted_at TEXT NOT NULL, command_id TEXT NOT NULL,
        PRIMARY KEY (app, identifier))"""
    INSERT = "INSERT OR REPLACE INTO requests VALUES (?, ?, ?, ?, ?, ?)"

    def writer(path, index, writers, rows, ready, go, finished):
        con = sqlite3.connect(path, timeout=120, isolation_level=None)
        con.execute("PRAGMA synchronous=FULL")
        con.execute("PRAGMA busy_timeout=120000")
        earliest = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(time.time() + 30 * 86400))
        ready.put(index)
        go.wait()
        for i in range(index, rows, writers):
            app = "bench.submit.a%04d" % (i // 10)
            now = time.time()
            submitted = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + ".%03dZ" % int(now % 1 * 1000)
            command = "%016x-%08x%08x" % (time.time_ns(), os.getpid(), i)
            con.execute("BEGIN IMMEDIATE")
            con.execute(INSERT, (app, "%s.t%d" % (app, i % 10), "processing", earliest, submitted, command))
            con.execute("COMMIT")
        finished.put(time.monotonic())
        con.close()

    def main():
        path, mode, writers, rows = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
        con = sqlite3.connect(path, isolation_level=None)
        actual = con.execute("PRAGMA journal_mode=%s" % mode).fetchone()[0]
        con.execute(SCHEMA)
        con.close()
        context = multiprocessing.get_context("fork")
        ready, finished, go = context.Queue(), context.Queue(), context.Event()
        workers = [context.Process(target=writer, args=(path, w, writers, rows, ready, go, finished))
                   for w in range(writers)]
        for worker in workers:
            worker.start()
        for _ in workers:
            ready.get(timeout=60)
        start = time.monotonic()
        go.set()
        ends = [finished.get(timeout=600) for _ in workers]
        for worker in workers:
            worker.join()
            if worker.exitcode != 0:
                sys.exit("a writer failed with exit code %d" % worker.exitcode)
        con = sqlite3.connect(path)
        stored = con.execute("SELECT count(*) FROM requests").fetchone()[0]
        con.close()
        print(json.dumps({"seconds": max(ends) - start, "journal_mode": actual, "rows": stored}))

    if __name__ == "__main__":
        main()
    """#
}
