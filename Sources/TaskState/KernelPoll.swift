#if canImport(Glibc)
import Glibc
#endif

/// One `poll(2)` over named sources: what the programs' loops sleep in (the scheduler, its expiry
/// alarm, the dashboard, the library's threads, the command channel), so that no loop reads the
/// kernel's answer by position.
///
/// Inlinable, so that each loop gets a copy made for its own `Source`: through the generic entry
/// points, the scheduler's wait spent 68 thousand instructions a wake on witness-table calls
/// (equality, hashing, `zip`'s iterator), a tenth of what a lone socket command costs it.
public struct KernelPoll<Source: Hashable> {
    @usableFromInline var sources: [Source] = []
    @usableFromInline var entries: [pollfd] = []

    @inlinable public init() {}

    /// Watches `descriptor` for input as `source`, replacing what `source` watched before. A
    /// negative descriptor is kept but never ready (poll ignores it).
    @inlinable public mutating func watch(_ source: Source, _ descriptor: Int32) {
        if let index = sources.firstIndex(of: source) {
            entries[index].fd = descriptor
            entries[index].events = Int16(POLLIN)
        } else {
            sources.append(source)
            entries.append(pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0))
        }
    }

    /// Watches `descriptor` for input as `source`, which the caller knows is not watched yet: no
    /// search, for a loop that adds hundreds of sources (the scheduler's command connections).
    @inlinable public mutating func add(_ source: Source, _ descriptor: Int32) {
        sources.append(source)
        entries.append(pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0))
    }

    /// What `source` waits for (`POLLIN`, `POLLOUT`, or both).
    @inlinable public mutating func setEvents(of source: Source, _ events: Int16) {
        guard let index = sources.firstIndex(of: source) else { return }
        entries[index].events = events
    }

    /// Stops watching `source`.
    @inlinable public mutating func remove(_ source: Source) {
        guard let index = sources.firstIndex(of: source) else { return }
        sources.remove(at: index)
        entries.remove(at: index)
    }

    /// Sleeps until a source is ready (input, hang-up or error) or `milliseconds` pass (negative:
    /// no limit); a signal's interruption (`EINTR`) waits again. Returns the ready sources (none
    /// after a timeout), or `nil` when `poll` itself failed.
    @inlinable public mutating func wait(milliseconds: Int32 = -1) -> Set<Source>? {
        for index in entries.indices { entries[index].revents = 0 }
        while poll(&entries, nfds_t(entries.count), milliseconds) < 0 {
            if errno != EINTR { return nil }
        }
        var ready: Set<Source> = []
        for index in entries.indices where entries[index].revents != 0 { ready.insert(sources[index]) }
        return ready
    }
}

extension KernelPoll {
    /// Watches `descriptor` for room to write as `source` (a pipe to a slow reader): ready once a
    /// write would not block, or on hang-up or error.
    @inlinable public mutating func watchOutput(_ source: Source, _ descriptor: Int32) {
        watch(source, descriptor)
        setEvents(of: source, Int16(POLLOUT))
    }
}
