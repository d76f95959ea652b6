import CLinuxSupport
import Glibc

/// A thread of its own for work that blocks (a read of a slow file, a wait on a descriptor),
/// so that it holds neither the caller's loop nor a thread of a shared pool.
/// Foundation's `Thread.detachNewThread` does the same but needs the whole of Foundation.
public enum DetachedThread {
    /// Runs `body` on a new detached thread; if no thread can be made, runs it on the caller's.
    /// `name` is what `top -H` and `ps -L` show for the thread (the kernel keeps 15 bytes).
    public static func start(name: String? = nil, _ body: @escaping @Sendable () -> Void) {
        if spawn(name: name, body) != 0 { body() }
    }

    /// Runs `body` on a new detached thread, for a thread that lives as long as its owner (a loop
    /// the caller cannot run itself). Returns 0, or pthread_create's error when no thread could be
    /// made (then `body` is not run).
    public static func spawn(name: String? = nil, _ body: @escaping @Sendable () -> Void) -> Int32 {
        let named: @Sendable () -> Void = {
            if let name { _ = bg_set_thread_name(name) }
            body()
        }
        let box = Unmanaged.passRetained(Body(named)).toOpaque()
        var thread = pthread_t()
        let started = pthread_create(&thread, nil, { pointer in
            guard let pointer else { return nil }
            let body = Unmanaged<Body>.fromOpaque(pointer).takeRetainedValue()
            body.run()
            return nil
        }, box)
        if started == 0 {
            pthread_detach(thread)
        } else {
            Unmanaged<Body>.fromOpaque(box).release()
        }
        return started
    }

    private final class Body: Sendable {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }
}
