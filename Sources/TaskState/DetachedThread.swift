import Glibc

/// A thread of its own for work that blocks (a read of a slow file, a wait on a descriptor),
/// so that it holds neither the caller's loop nor a thread of a shared pool.
/// Foundation's `Thread.detachNewThread` does the same but needs the whole of Foundation.
public enum DetachedThread {
    /// Runs `body` on a new detached thread; if no thread can be made, runs it on the caller's.
    public static func start(_ body: @escaping @Sendable () -> Void) {
        let box = Unmanaged.passRetained(Body(body)).toOpaque()
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
            Unmanaged<Body>.fromOpaque(box).takeRetainedValue().run()
        }
    }

    private final class Body: Sendable {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }
}
