import FoundationEssentials
import TaskState

/// Moving through the log and searching it: in the window when the lines are there, else by
/// asking for the chunk beyond it.
extension LogPager {
    /// Runs `command` with `rows` lines on screen; returns what must be read.
    mutating func perform(_ command: LogPagerCommand, rows: Int) -> [DashboardEffect] {
        pageRows = rows
        let first = firstVisible(rows: rows)
        switch command {
        case .lines(let delta): return scroll(from: first, by: delta, rows: rows)
        case .pageUp: return scroll(from: first, by: -max(1, rows - 1), rows: rows)
        case .pageDown: return scroll(from: first, by: max(1, rows - 1), rows: rows)
        case .start:
            follow = false
            top = 0
            return reachesStart && !lines.isEmpty ? [] : [ask(.after(offset: 0))]
        case .end:
            follow = true
            return reachesEnd && awaited == nil ? [] : [ask(.end)]
        case .toggleFollow:
            follow.toggle()
            message = follow ? "following new output" : "not following: the view stays where it is"
            if !follow { top = first }
            return follow && !reachesEnd ? [ask(.end)] : []
        case .search:
            searchDraft = ""
            return []
        case .nextMatch(let older):
            return find(older: older, rows: rows)
        case .close:
            return []
        }
    }

    /// Moves the view; near the window's edge, asks for the chunk beyond it. Reaching the end of
    /// the log turns following on, as scrolling up turns it off.
    private mutating func scroll(from first: Int, by delta: Int, rows: Int) -> [DashboardEffect] {
        let bottom = max(0, lines.count - rows)
        let target = first + delta
        follow = false
        if delta > 0, target >= bottom, reachesEnd {
            follow = true
            return []
        }
        top = min(max(0, target), bottom)
        guard awaited == nil, let firstLine = lines.first else { return [] }
        if delta < 0, top < rows, !reachesStart { return [ask(.before(offset: firstLine.offset))] }
        if delta > 0, top + 2 * rows > lines.count, !reachesEnd { return [ask(.after(offset: resumeOffset))] }
        return []
    }

    /// Runs the typed search from the view: the newest match above its bottom line.
    mutating func startSearch(_ text: String, rows: Int) -> [DashboardEffect] {
        searchDraft = nil
        guard !text.isEmpty else { return [] }
        search = text
        searchResume = nil
        match = nil
        return find(older: true, rows: rows)
    }

    /// The next match of the last search, older or newer than the highlighted line (or the view):
    /// in the window if it is there, else asked of the log beyond the window.
    private mutating func find(older: Bool, rows: Int) -> [DashboardEffect] {
        guard !search.isEmpty else {
            message = "no search yet: / starts one"
            return []
        }
        pageRows = rows
        let needle = search.lowercased()
        let first = firstVisible(rows: rows)
        let from = match.flatMap { offset in lines.firstIndex { $0.offset == offset } }
            ?? (older ? min(lines.count, first + rows) : first - 1)
        let candidates = older ? Array(stride(from: from - 1, through: 0, by: -1)) : Array(max(0, from + 1)..<lines.count)
        if let found = candidates.first(where: { lines[$0].text.lowercased().contains(needle) }) {
            match = lines[found].offset
            follow = false
            top = max(0, found - rows / 3)
            message = nil
            return []
        }
        let offset: Int64
        if let resume = searchResume, resume.backwards == older {
            offset = resume.offset
        } else if older {
            guard !reachesStart, let firstLine = lines.first else {
                message = "no match for \"\(search)\" above"
                return []
            }
            offset = firstLine.offset
        } else {
            guard !reachesEnd, let last = lines.last else {
                message = "no match for \"\(search)\" below"
                return []
            }
            offset = last.end
        }
        message = "searching for \"\(search)\" \(older ? "above" : "below")…"
        return [ask(.search(text: search, offset: offset, backwards: older))]
    }

    /// A key while the search is typed: text, Backspace, Enter runs it, Esc abandons it.
    mutating func editSearch(_ key: Key, rows: Int) -> [DashboardEffect] {
        switch key {
        case .enter: return startSearch(searchDraft ?? "", rows: rows)
        case .escape: searchDraft = nil
        case .backspace: if searchDraft?.isEmpty == false { searchDraft?.removeLast() }
        case .character(let character): searchDraft?.append(character)
        default: break
        }
        return []
    }
}
