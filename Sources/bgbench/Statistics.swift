import Foundation

/// A set of timing samples (seconds) and the figures a benchmark reports from them.
struct Samples: Sendable {
    /// The samples, in seconds, in no particular order.
    var values: [Double]

    init(_ values: [Double]) {
        self.values = values
    }

    var count: Int { values.count }

    /// The `fraction` quantile by the nearest-rank method: the smallest sample with at least
    /// `fraction` of all samples at or below it. With 40 samples, p99 is the largest.
    func quantile(_ fraction: Double) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let rank = max(1, Int((fraction * Double(sorted.count)).rounded(.up)))
        return sorted[min(rank, sorted.count) - 1]
    }

    /// The middle value (the mean of the two middle values for an even count); 0 when empty.
    var median: Double {
        guard !values.isEmpty else { return 0 }
        let sorted = values.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }

    var p50: Double? { quantile(0.50) }
    var p99: Double? { quantile(0.99) }
    var minimum: Double? { values.min() }
    var maximum: Double? { values.max() }
}

/// Timings seen from both sides: by the app, and by the scheduler's event log (phases 2 and 3).
struct ObservedTimings: Sendable {
    var appObserved: Samples
    var daemonObserved: Samples
    /// Requests the scheduler accepted only after they were already due (see DueRequests).
    var lateSubmits: Int
}

/// Work done in a measured time.
struct Throughput: Sendable {
    var operations: Int
    var seconds: Double

    var perSecond: Double { seconds > 0 ? Double(operations) / seconds : 0 }
}

/// Number formatting shared by the report.
enum Format {
    /// Seconds shown as milliseconds with one decimal, or `-` when absent.
    static func milliseconds(_ seconds: Double?) -> String {
        guard let seconds else { return "-" }
        // Round first, so that a rounding error of -1e-12 s prints as 0.0, not -0.0.
        let tenths = (seconds * 10_000).rounded()
        return String(format: "%.1f", tenths == 0 ? 0 : tenths / 10)
    }

    /// A rate with no decimals and thousands grouped by a thin comma: `12,345`.
    static func rate(_ value: Double) -> String {
        let whole = Int(value.rounded())
        var digits = String(abs(whole))
        var groups: [String] = []
        while digits.count > 3 {
            groups.insert(String(digits.suffix(3)), at: 0)
            digits.removeLast(3)
        }
        groups.insert(digits, at: 0)
        return (whole < 0 ? "-" : "") + groups.joined(separator: ",")
    }

    /// A ratio such as `2.35x`.
    static func ratio(_ value: Double) -> String {
        value.isFinite ? String(format: "%.2fx", value) : "-"
    }

    /// Seconds with two decimals.
    static func seconds(_ value: Double) -> String { String(format: "%.2f", value) }
}
