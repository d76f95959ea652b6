import CSystemd
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// A connection to the system bus through libsystemd's sd-bus, driven by the scheduler's own
/// `poll`: it never blocks the loop except for the short property reads it is asked for.
final class DesktopBus {
    /// Why a call did not give a value.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// The sd-bus connection; `nil` once it was lost.
    private var bus: OpaquePointer?
    /// The match slots, kept so that the matches live as long as the connection.
    private var slots: [OpaquePointer?] = []

    /// Opens the system bus (`DBUS_SYSTEM_BUS_ADDRESS`, else the well-known socket).
    init() throws(Failure) {
        var opened: OpaquePointer?
        let result = sd_bus_open_system(&opened)
        if result == -ENOSYS, let failure = bg_sd_bus_load_failure() {
            throw Failure(description: "libsystemd could not be loaded: \(String(cString: failure))")
        }
        guard result >= 0, let opened else { throw Failure(description: Self.text(errno: -result)) }
        bus = opened
        // A service that hangs must not hold the scheduler's loop for sd-bus's default 25 s.
        _ = sd_bus_set_method_call_timeout(opened, 2_000_000)
    }

    deinit { close() }

    /// Whether the connection is still there.
    var isOpen: Bool { bus != nil }

    /// Drops the connection (it failed, or the scheduler stops).
    func close() {
        for slot in slots { sd_bus_slot_unref(slot) }
        slots.removeAll()
        if let bus { sd_bus_flush_close_unref(bus) }
        bus = nil
    }

    /// What `poll` must watch: the descriptor, the events sd-bus wants, and how long it may
    /// sleep (milliseconds, -1 for no limit: sd-bus has nothing timed pending).
    var pollRequest: (descriptor: Int32, events: Int16, milliseconds: Int32)? {
        guard let bus else { return nil }
        let descriptor = sd_bus_get_fd(bus)
        let events = sd_bus_get_events(bus)
        guard descriptor >= 0, events >= 0 else { return nil }
        var until: UInt64 = 0
        guard sd_bus_get_timeout(bus, &until) >= 0, until != UInt64.max else {
            return (descriptor, Int16(events), -1)
        }
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let nowMicroseconds = UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1000
        let wait = until > nowMicroseconds ? (until - nowMicroseconds + 999) / 1000 : 0
        return (descriptor, Int16(events), Int32(min(wait, UInt64(Int32.max))))
    }

    /// Handles every message that has arrived (the match handlers run here). Throws when the
    /// connection is lost; the caller closes it.
    func processAll() throws(Failure) {
        guard let bus else { return }
        while true {
            let result = sd_bus_process(bus, nil)
            if result < 0 { throw Failure(description: Self.text(errno: -result)) }
            if result == 0 { return }
        }
    }

    /// Subscribes to the messages `rule` describes; `handler` runs with `context` from
    /// ``processAll()``.
    func addMatch(_ rule: String, handler: sd_bus_message_handler_t, context: UnsafeMutableRawPointer) throws(Failure) {
        guard let bus else { throw Failure(description: "not connected") }
        var slot: OpaquePointer?
        let result = sd_bus_add_match(bus, &slot, rule, handler, context)
        guard result >= 0 else { throw Failure(description: Self.text(errno: -result)) }
        slots.append(slot)
    }

    // MARK: - Property reads

    /// A boolean property (`b`).
    func bool(_ destination: String, _ path: String, _ interface: String, _ member: String) -> Result<Bool, Failure> {
        var value: Int32 = 0
        return trivial(destination, path, interface, member, type: "b", into: &value).map { value != 0 }
    }

    /// A double property (`d`).
    func double(_ destination: String, _ path: String, _ interface: String, _ member: String) -> Result<Double, Failure> {
        var value: Double = 0
        return trivial(destination, path, interface, member, type: "d", into: &value).map { value }
    }

    /// An unsigned 32-bit property (`u`).
    func uint32(_ destination: String, _ path: String, _ interface: String, _ member: String) -> Result<UInt32, Failure> {
        var value: UInt32 = 0
        return trivial(destination, path, interface, member, type: "u", into: &value).map { value }
    }

    /// A string property (`s`).
    func string(_ destination: String, _ path: String, _ interface: String, _ member: String) -> Result<String, Failure> {
        guard let bus else { return .failure(Failure(description: "not connected")) }
        var error = sd_bus_error(name: nil, message: nil, _need_free: 0)
        defer { sd_bus_error_free(&error) }
        var value: UnsafeMutablePointer<CChar>?
        let result = sd_bus_get_property_string(bus, destination, path, interface, member, &error, &value)
        guard result >= 0, let value else { return .failure(Self.failure(error, result)) }
        defer { free(value) }
        return .success(String(cString: value))
    }

    /// logind's `ListSessions` (`a(susso)`): each session's user id and object path.
    func sessions() -> Result<[(uid: UInt32, path: String)], Failure> {
        callLogind("ListSessions", arguments: []) { reply in
            let nonsense = Failure(description: "ListSessions answered something other than a(susso)")
            guard sd_bus_message_enter_container(reply, Self.code("a"), "(susso)") > 0 else { return .failure(nonsense) }
            var sessions: [(uid: UInt32, path: String)] = []
            while true {
                let result = sd_bus_message_enter_container(reply, Self.code("r"), "susso")
                if result == 0 { break }
                guard result > 0 else { return .failure(nonsense) }
                var text: UnsafePointer<CChar>?
                var uid: UInt32 = 0
                guard sd_bus_message_read_basic(reply, Self.code("s"), &text) > 0,
                      sd_bus_message_read_basic(reply, Self.code("u"), &uid) > 0,
                      sd_bus_message_read_basic(reply, Self.code("s"), &text) > 0,
                      sd_bus_message_read_basic(reply, Self.code("s"), &text) > 0,
                      sd_bus_message_read_basic(reply, Self.code("o"), &text) > 0, let text,
                      sd_bus_message_exit_container(reply) >= 0 else { return .failure(nonsense) }
                sessions.append((uid, String(cString: text)))
            }
            return .success(sessions)
        }
    }

    /// logind's `Inhibit(what, who, why, mode)`: a descriptor that holds the inhibitor until it is
    /// closed, made close-on-exec so that no launched app inherits it (and holds off the sleep).
    func inhibit(what: String, who: String, why: String, mode: String) -> Result<Int32, Failure> {
        callLogind("Inhibit", arguments: [what, who, why, mode]) { reply in
            var descriptor: Int32 = -1
            guard sd_bus_message_read_basic(reply, Self.code("h"), &descriptor) > 0, descriptor >= 0 else {
                return .failure(Failure(description: "Inhibit answered something other than a file descriptor"))
            }
            // The reply owns its descriptor and closes it with the message.
            let kept = fcntl(descriptor, F_DUPFD_CLOEXEC, 3)
            guard kept >= 0 else { return .failure(Failure(description: Self.text(errno: errno))) }
            return .success(kept)
        }
    }

    /// Calls `member` of logind's manager with string `arguments` and reads the reply with `read`
    /// (the reply is freed after it).
    private func callLogind<Value>(_ member: String, arguments: [String],
                                   read: (OpaquePointer?) -> Result<Value, Failure>) -> Result<Value, Failure> {
        guard let bus else { return .failure(Failure(description: "not connected")) }
        var call: OpaquePointer?
        var reply: OpaquePointer?
        var error = sd_bus_error(name: nil, message: nil, _need_free: 0)
        defer {
            sd_bus_error_free(&error)
            sd_bus_message_unref(call)
            sd_bus_message_unref(reply)
        }
        var result = sd_bus_message_new_method_call(bus, &call, "org.freedesktop.login1", "/org/freedesktop/login1",
                                                    "org.freedesktop.login1.Manager", member)
        guard result >= 0 else { return .failure(Self.failure(error, result)) }
        for argument in arguments {
            result = argument.withCString { sd_bus_message_append_basic(call, Self.code("s"), $0) }
            guard result >= 0 else { return .failure(Self.failure(error, result)) }
        }
        result = sd_bus_call(bus, call, 0, &error, &reply)
        guard result >= 0 else { return .failure(Self.failure(error, result)) }
        return read(reply)
    }

    private func trivial<Value>(_ destination: String, _ path: String, _ interface: String, _ member: String,
                                type: Character, into value: inout Value) -> Result<Void, Failure> {
        guard let bus else { return .failure(Failure(description: "not connected")) }
        var error = sd_bus_error(name: nil, message: nil, _need_free: 0)
        defer { sd_bus_error_free(&error) }
        let result = withUnsafeMutablePointer(to: &value) { pointer in
            sd_bus_get_property_trivial(bus, destination, path, interface, member, &error, Self.code(type), pointer)
        }
        guard result >= 0 else { return .failure(Self.failure(error, result)) }
        return .success(())
    }

    // MARK: - Messages a match handler reads

    /// The member of a signal (`NameOwnerChanged`, `PropertiesChanged`).
    static func member(of message: OpaquePointer?) -> String? {
        sd_bus_message_get_member(message).map { String(cString: $0) }
    }

    /// The first argument of a message when it is a string (the name of `NameOwnerChanged`, the
    /// interface of `PropertiesChanged`).
    static func firstString(of message: OpaquePointer?) -> String? {
        var text: UnsafePointer<CChar>?
        guard sd_bus_message_read_basic(message, code("s"), &text) > 0, let text else { return nil }
        return String(cString: text)
    }

    /// The first argument of a message when it is a boolean (`PrepareForSleep`).
    static func firstBool(of message: OpaquePointer?) -> Bool? {
        var value: Int32 = 0
        guard sd_bus_message_read_basic(message, code("b"), &value) > 0 else { return nil }
        return value != 0
    }

    // MARK: - Errors

    private static func code(_ type: Character) -> CChar { CChar(type.asciiValue!) }

    /// The error's name and the first line of its message (a service's answer may carry a
    /// whole traceback), or the errno's text; -ENXIO is sd-bus's word for a value of another type.
    private static func failure(_ error: sd_bus_error, _ result: Int32) -> Failure {
        if result == -ENXIO { return Failure(description: "a value of another type than the property's") }
        if let name = error.name {
            let line = error.message.map { String(cString: $0).prefix { $0 != "\n" }.prefix(160) } ?? ""
            return Failure(description: String(cString: name) + (line.isEmpty ? "" : ": \(line)"))
        }
        return Failure(description: text(errno: -result))
    }

    private static func text(errno value: Int32) -> String {
        String(cString: strerror(value))
    }
}
