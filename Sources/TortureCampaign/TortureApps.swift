import Foundation
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// The apps the campaign submits for, and the config folder they live in.
///
/// Each app is one bash script. A launch logs `start PID TICKS IDS` to the shared app log, then
/// mostly completes each task with `bgctl complete` after a short random time and logs `complete
/// PID TICKS ID STATUS OUTPUT` (status 0: the completion was applied or queued, so it must take effect);
/// sometimes it overruns instead, ignoring the expiration signal, so the scheduler expires it and
/// kills its group. An overrunning app ends itself once its task record is gone (a `complete`
/// from the campaign), so that only a process the scheduler lost track of runs on.
struct TortureApps {
    struct App {
        var id: Identifier
        var tasks: [(identifier: Identifier, kind: TaskKind)]
    }

    let apps: [App]
    let log: String

    /// The settings the scheduler runs with: short budgets so overruns end within a round, a
    /// short throttle so they do not keep an app down, outcomes and events kept for the audit.
    static var settings: [String: Any] {
        [
            "appRefreshBudgetSeconds": 2, "processingBudgetSeconds": 2, "expirationGraceSeconds": 0.5,
            "throttleInitialSeconds": 0.2, "throttleMaximumSeconds": 1,
            "outcomeRetentionSeconds": 86_400, "eventLogMaximumBytes": 1 << 30, "eventLogKeptFiles": 10,
            "maximumPendingProcessing": 10,
        ]
    }

    /// Writes `settings.json`, the script and one manifest per app under `config`.
    init(root: String, config: String, binaries: String) throws(TortureError) {
        log = "\(root)/apps.log"
        var apps: [App] = []
        for name in ["torture.alpha", "torture.beta"] {
            guard let id = try? Identifier(validating: name),
                  let refresh = try? Identifier(validating: "\(name).refresh"),
                  let first = try? Identifier(validating: "\(name).p1"),
                  let second = try? Identifier(validating: "\(name).p2") else { throw TortureError("bad app name \(name)") }
            apps.append(App(id: id, tasks: [(refresh, .appRefresh), (first, .processing), (second, .processing)]))
        }
        self.apps = apps
        let script = "\(root)/torture-app.sh"
        try Self.write(Self.script(log: log, bgctl: "\(binaries)/bgctl"), to: script, mode: 0o755)
        try Self.write(Self.json(Self.settings), to: "\(config)/settings.json", mode: 0o644)
        for app in apps {
            let manifest: [String: Any] = [
                "id": app.id.rawValue, "executable": script,
                "permittedIdentifiers": app.tasks.map(\.identifier.rawValue), "backgroundModes": ["fetch", "processing"],
            ]
            try Self.write(Self.json(manifest), to: "\(config)/apps/\(app.id.rawValue).json", mode: 0o644)
        }
    }

    /// The app's script: `$RANDOM` picks its behaviour per launch.
    ///
    /// It does nothing before the scheduler has recorded its launch (a `launched` or `adopted`
    /// event names its pid): a process the scheduler never recorded waits there for a minute,
    /// unsupervised, where the campaign sees it, instead of completing another launch's task.
    static func script(log: String, bgctl: String) -> String {
        """
        #!/bin/bash
        LOG='\(log)'
        BGCTL='\(bgctl)'
        EVENTS="$BGTASK_STATE_DIR/events.jsonl"
        ticks=$(sed 's/.*) //' /proc/$$/stat | cut -d' ' -f20)
        echo "start $$ $ticks $BGTASK_TASK_IDS" >> "$LOG"
        overrun=$(( RANDOM % 8 == 0 ))
        if [ $overrun -eq 1 ]; then trap '' USR1; else trap 'echo "expired $$ $ticks" >> "$LOG"; exit 0' USR1; fi
        recorded() { grep -F '"pid":'"$$," "$EVENTS" 2>/dev/null | grep -Eq '"type":"(launched|adopted)"'; }
        for _ in $(seq 1200); do recorded && break; sleep 0.05 & wait $!; done
        recorded || { echo "unrecorded $$ $ticks" >> "$LOG"; exit 0; }
        if [ $overrun -eq 1 ]; then
          # Ignore the expiration signal and wait to be killed, or for the tasks to end.
          for _ in $(seq 240); do
            sleep 0.25
            alive=0
            for id in $BGTASK_TASK_IDS; do
              [ -e "$BGTASK_STATE_DIR/tasks/$BGTASK_APP_ID/$id.json" ] && alive=1
            done
            [ $alive -eq 1 ] || exit 0
          done
          exit 0
        fi
        sleep "0.$(( RANDOM % 9 ))$(( RANDOM % 10 ))" &
        wait $!
        for id in $BGTASK_TASK_IDS; do
          out=$("$BGCTL" complete "$id" --success 2>&1)
          status=$?
          echo "complete $$ $ticks $id $status ${out//$'\\n'/ }" >> "$LOG"
        done
        exit 0

        """
    }

    private static func json(_ object: [String: Any]) throws(TortureError) -> String {
        do {
            let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .prettyPrinted])
            return String(decoding: data, as: UTF8.self)
        } catch {
            throw TortureError("cannot write JSON: \(error)")
        }
    }

    private static func write(_ text: String, to path: String, mode: mode_t) throws(TortureError) {
        guard FileManager.default.createFile(atPath: path, contents: Data(text.utf8)), chmod(path, mode) == 0 else {
            throw TortureError("cannot write \(path)")
        }
    }
}

/// One line of the app log.
enum AppLogLine {
    case start(ProcessName, identifiers: [String])
    case complete(ProcessName, identifier: String, status: Int32, output: String)
    case expired(ProcessName)
    /// The process gave up waiting for the scheduler to record its launch.
    case unrecorded(ProcessName)

    /// Every line of the log that parses, in order.
    static func read(_ path: String) -> [AppLogLine] {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
            guard fields.count >= 3, let pid = Int32(fields[1]), let ticks = UInt64(fields[2]) else { return nil }
            let name = ProcessName(pid: pid, startTicks: ticks)
            switch fields[0] {
            case "start":
                return .start(name, identifiers: fields.dropFirst(3).filter { !$0.isEmpty })
            case "complete" where fields.count >= 5:
                guard let status = Int32(fields[4]) else { return nil }
                return .complete(name, identifier: fields[3], status: status, output: fields.dropFirst(5).joined(separator: " "))
            case "expired":
                return .expired(name)
            case "unrecorded":
                return .unrecorded(name)
            default:
                return nil
            }
        }
    }
}
