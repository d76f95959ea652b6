#ifndef BGTOP_CLINUXSUPPORT_H
#define BGTOP_CLINUXSUPPORT_H

// Thin wrappers over Linux calls that Swift's Glibc module does not export,
// or exports only as variadic functions Swift cannot call.

#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

/// signalfd(2) for the given signals, non-blocking and close-on-exec.
int bg_signalfd(const sigset_t *mask);
/// Reads one signalfd_siginfo; returns the signal number, 0 when nothing is queued, -1 on error.
int bg_signalfd_read(int fd);

/// A CLOCK_REALTIME timerfd (so wall-clock jumps are honoured), non-blocking and close-on-exec.
int bg_timerfd_create(void);
/// Arms the timer for an absolute wall-clock time; seconds <= 0 disarms it.
int bg_timerfd_set_absolute(int fd, int64_t seconds, int64_t nanoseconds);
/// Drains the expiration count so the fd stops being readable.
void bg_timerfd_drain(int fd);

/// memmem(3) (a GNU extension Glibc's module hides): the first occurrence of `needle` in
/// `haystack`, or NULL. The log reader's searches use it on each chunk.
const void *bg_memmem(const void *haystack, size_t haystack_length, const void *needle, size_t needle_length);

/// syncfs(2): flushes the whole file system holding fd.
int bg_syncfs(int fd);

/// A listening AF_UNIX SOCK_SEQPACKET socket bound to `path` (which must not exist), non-blocking
/// and close-on-exec, mode 0600. Returns the descriptor, or -1 with errno set (ENAMETOOLONG for
/// a path longer than sockaddr_un holds).
int bg_seqpacket_listen(const char *path, int backlog);
/// accept4(2) on such a socket: the connection, non-blocking and close-on-exec; -1 with errno set.
int bg_seqpacket_accept(int listener);
/// A non-blocking, close-on-exec connection to the SOCK_SEQPACKET socket at `path`; -1 with errno
/// set (EAGAIN when the listener's backlog is full, ECONNREFUSED when no one listens).
int bg_seqpacket_connect(const char *path);
/// The user id of a connected AF_UNIX peer (SO_PEERCRED), or -1.
int64_t bg_peer_uid(int fd);
/// recv(2) of one message with MSG_TRUNC: the message's full length, even when larger than
/// `capacity` (the excess is discarded); 0 at the peer's end; -1 with errno set.
ssize_t bg_recv_message(int fd, void *buffer, size_t capacity);
/// Whether the peer of a connected socket has closed or shut down its end (POLLRDHUP), without
/// waiting: what it sent may still be queued, but it no longer waits for an answer.
int bg_peer_hung_up(int fd);
/// RLIMIT_NOFILE's soft limit (INT64_MAX for no limit), or -1. Read, not raised: launched apps
/// inherit the limit, and programs that use select(2) break above 1024.
int64_t bg_open_files_limit(void);
/// send(2) with MSG_NOSIGNAL (a peer that has gone raises EPIPE, not SIGPIPE).
ssize_t bg_send_message(int fd, const void *buffer, size_t length);

/// pidfd_open(2): a descriptor that becomes readable when the process exits.
int bg_pidfd_open(pid_t pid);
/// pidfd_send_signal(2): signals the process the pidfd refers to, never a later holder of its pid.
/// Returns 0, or -1 with errno set (ESRCH once the process has ended).
int bg_pidfd_send_signal(int pidfd, int signal);
/// Whether the process a pidfd refers to still runs (the pidfd is not yet readable).
int bg_pidfd_is_running(int pidfd);

/// posix_spawn in a new process group, with an empty signal mask, default signal handlers and
/// stdin from /dev/null and no descriptors beyond 0-2. Returns 0 or an errno value.
int bg_spawn(pid_t *pid, const char *path, char *const argv[], char *const envp[],
             int stdout_fd, int stderr_fd);

/// posix_spawn in a new session (no controlling terminal, so a program such as ssh cannot read
/// the terminal a dashboard owns), with an empty signal mask and default signal handlers,
/// stdin, stdout and stderr on the given descriptors and no descriptors beyond 0-2.
/// Returns 0 or an errno value.
int bg_spawn_session(pid_t *pid, const char *path, char *const argv[], char *const envp[],
                     int stdin_fd, int stdout_fd, int stderr_fd);

/// On SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT and SIGTRAP: runs `cleanup` once, then hands the
/// signal to the handler that was installed before (the Swift runtime's backtracer, or the default).
void bg_install_crash_cleanup(void (*cleanup)(void));

/// On the same fatal signals: appends `crashed signal N` to `fd` (async-signal-safe write(2)),
/// then hands the signal on to the handler installed before. For the scheduler's poison-command
/// guard; once per process.
void bg_install_crash_note(int fd);

/// Installs a handler for `signal` that writes the signal number as one byte to `fd` (the write
/// end of a non-blocking pipe), so a thread waiting on the read end learns of it at once whatever
/// the thread that took the signal was doing. SA_RESTART, so interrupted calls carry on.
/// Returns 0, or -1 with errno set.
int bg_signal_to_pipe(int signal, int fd);

/// A CLOCK_MONOTONIC timerfd, non-blocking and close-on-exec: for intervals that a wall-clock
/// jump must not stretch or shrink (the resource monitor's sampling).
int bg_timerfd_create_monotonic(void);
/// Arms a timer for `nanoseconds` from now; 0 disarms it.
int bg_timerfd_set_relative(int fd, int64_t nanoseconds);
/// CLOCK_BOOTTIME in seconds: time since boot, suspend included.
double bg_boottime_seconds(void);
/// CLOCK_MONOTONIC now, in seconds.
double bg_monotonic_seconds(void);
/// prctl(PR_SET_CHILD_SUBREAPER, 1): orphaned descendants are reparented to this process (so it
/// can reap them) instead of to init. Returns 0, or -1 with errno set.
int bg_set_child_subreaper(void);
/// prctl(PR_SET_PARENT_DEATHSIG, signal): the kernel sends `signal` to this process when the
/// thread that started it exits. Returns 0, or -1 with errno set.
int bg_set_parent_death_signal(int signal);

/// The address of the Swift concurrency runtime's `swift_task_enqueueGlobal_hook` (a function
/// pointer, null until someone installs one), or null when the runtime has none. A program linked
/// with the runtime in (`--static-swift-stdlib`) does not export the runtime's symbols (the
/// toolchain links it with `--exclude-libs ALL`), so `dlsym` cannot find it there; a reference
/// resolved by the linker works with either runtime.
void **bg_swift_task_enqueue_global_hook(void);

/// Names the calling thread (what `top -H` shows); the kernel keeps the first 15 bytes.
int bg_set_thread_name(const char *name);

#endif
