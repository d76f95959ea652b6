import FoundationEssentials
import TaskState

/// CPU and memory figures the way htop prints them, for the running panel and its details.
enum ResourceText {
    /// `12.3`: percent of one core, one decimal; whole from 1000 (ten cores busy) on, so it
    /// stays within the column's five cells.
    static func percent(_ value: Double) -> String {
        guard value.isFinite else { return "-" }
        let clamped = min(max(0, value), LaunchResources.cpuPercentRange.upperBound)
        return String(printf: clamped >= 999.95 ? "%.0f" : "%.1f", clamped)
    }

    /// `512K`, `9.5M`, `123M`, `1.2G`: binary units like htop's RES, at most four characters.
    static func memory(_ bytes: Int64) -> String {
        let units = ["K", "M", "G", "T", "P"]
        var amount = Double(max(0, bytes)) / 1024
        var unit = 0
        while amount >= 1000 && unit < units.count - 1 {
            amount /= 1024
            unit += 1
        }
        if unit == 0 { return "\(SafeNumber.int64(amount, .down))K" }
        return (amount < 10 ? String(printf: "%.1f", amount) : String(printf: "%.0f", amount)) + units[unit]
    }

    /// `1.23 s` of CPU time, `2 min 5 s` past a minute. Clamped to the range a file may hold
    /// (``LaunchResources/cpuSecondsRange``), so a figure that slipped past the decoder cannot trap.
    static func cpuTime(_ seconds: Double) -> String {
        guard seconds.isFinite else { return "-" }
        if seconds < 60 { return String(printf: "%.2f s", max(0, seconds)) }
        let whole = SafeNumber.int64(min(seconds, LaunchResources.cpuSecondsRange.upperBound), .down)
        return "\(whole / 60) min \(whole % 60) s"
    }
}
