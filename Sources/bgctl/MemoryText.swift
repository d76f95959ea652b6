import FoundationEssentials

/// Memory for tables the way htop shows it: `812K`, `45.3M`, `1.20G` (powers of 1024).
enum MemoryText {
    static func compact(_ bytes: Int64) -> String {
        let value = Double(max(bytes, 0))
        let mebi = 1_048_576.0, gibi = 1_073_741_824.0
        if value < mebi { return String(printf: "%.0fK", value / 1024) }
        if value < gibi { return String(printf: "%.1fM", value / mebi) }
        return String(printf: "%.2fG", value / gibi)
    }
}
