import Dashboard
import FoundationEssentials
import TaskState

/// Where the dashboard's state comes from and where its commands go: the local state directory
/// and its inbox (``LocalStateSource``), or machines watched over ssh and their connections
/// (``RemoteHosts``). ``DashboardLoop`` sleeps on the source's descriptors in its one `poll`.
protocol DashboardSource: AnyObject {
    /// The descriptors to wait on, in a fixed order (-1: nothing now); `output` waits for room
    /// to write rather than for input.
    var descriptors: [(descriptor: Int32, output: Bool)] { get }
    /// Handles the descriptors that are ready (indices into ``descriptors``; none after a
    /// timeout). Returns whether ``snapshot(now:)`` changed.
    func service(ready: Set<Int>) -> Bool
    /// How long `poll` may sleep before ``service(ready:)`` is due anyway, in milliseconds; -1: no limit.
    func pollTimeout() -> Int32
    /// What the screen shows.
    func snapshot(now: Date) -> DashboardSnapshot
    /// Sends a command of a key; its outcome comes back through ``takeReports()``.
    func send(_ action: CommandAction, summary: String)
    /// Outcomes of commands and news of connections, for the status line.
    func takeReports() -> [CommandDispatch.StatusReport]
    /// `H`: shows the next host; the status line's words.
    func switchHost() -> DashboardState.Status
    /// Reads a part of an app's log for the pager; the answer comes back through ``takeLogNews()``.
    func readLog(_ request: LogRequest)
    /// Follows `app`'s log while the pager shows it (`nil`: none), so a change is told by
    /// ``takeLogNews()``.
    func followLog(_ app: Identifier?)
    /// Answers to log reads that arrived, and whether the followed log changed, since the last call.
    func takeLogNews() -> (excerpts: [LogExcerpt], changed: Bool)
    /// Ends and reaps whatever the source started.
    func close()
}
