#define _GNU_SOURCE
#include "CLinuxSupport.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <poll.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

const void *bg_memmem(const void *haystack, size_t haystack_length, const void *needle, size_t needle_length) {
    return memmem(haystack, haystack_length, needle, needle_length);
}

int bg_signalfd(const sigset_t *mask) {
    return signalfd(-1, mask, SFD_NONBLOCK | SFD_CLOEXEC);
}

int bg_signalfd_read(int fd) {
    struct signalfd_siginfo info;
    ssize_t n = read(fd, &info, sizeof info);
    if (n == (ssize_t)sizeof info) return (int)info.ssi_signo;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 0;
    return -1;
}

int bg_timerfd_create(void) {
    return timerfd_create(CLOCK_REALTIME, TFD_NONBLOCK | TFD_CLOEXEC);
}

int bg_timerfd_set_absolute(int fd, int64_t seconds, int64_t nanoseconds) {
    struct itimerspec spec;
    memset(&spec, 0, sizeof spec);
    if (seconds > 0 || nanoseconds > 0) {
        spec.it_value.tv_sec = (time_t)seconds;
        spec.it_value.tv_nsec = (long)nanoseconds;
    }
    // TFD_TIMER_CANCEL_ON_SET: a wall-clock change (date -s, NTP stepping it) wakes the waiter
    // at once (read fails with ECANCELED), so the scheduler moves running deadlines with it and
    // re-plans from the new time, instead of waking early or late.
    return timerfd_settime(fd, TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET, &spec, NULL);
}

void bg_timerfd_drain(int fd) {
    uint64_t expirations;
    while (read(fd, &expirations, sizeof expirations) == (ssize_t)sizeof expirations) {}
}

static void (*crash_cleanup)(void);
static const int crash_signals[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP };
static struct sigaction previous_actions[sizeof crash_signals / sizeof crash_signals[0]];

/// Restores the action `previous` held for `signal` and runs it (or re-raises the signal).
static void chain_crash(int signal, siginfo_t *info, void *context, struct sigaction *previous) {
    for (size_t i = 0; i < sizeof crash_signals / sizeof crash_signals[0]; i++) {
        if (crash_signals[i] != signal) continue;
        struct sigaction *old = &previous[i];
        sigaction(signal, old, NULL);
        if ((old->sa_flags & SA_SIGINFO) && old->sa_sigaction) {
            old->sa_sigaction(signal, info, context);
        } else if (old->sa_handler != SIG_DFL && old->sa_handler != SIG_IGN && old->sa_handler) {
            old->sa_handler(signal);
        } else {
            break;
        }
        // A fault comes back by itself when the handler returns; a signal sent with kill(2) does
        // not, and the handler before (the Swift backtracer) returns from it: end the process
        // the way the default action would.
        if (info && info->si_code <= 0) {
            struct sigaction fallback;
            memset(&fallback, 0, sizeof fallback);
            fallback.sa_handler = SIG_DFL;
            sigemptyset(&fallback.sa_mask);
            sigaction(signal, &fallback, NULL);
            raise(signal);
        }
        return;
    }
    raise(signal);
}

static void crash_handler(int signal, siginfo_t *info, void *context) {
    void (*cleanup)(void) = crash_cleanup;
    crash_cleanup = NULL;
    if (cleanup) cleanup();
    chain_crash(signal, info, context, previous_actions);
}

static int crash_note_fd = -1;
static struct sigaction note_previous_actions[sizeof crash_signals / sizeof crash_signals[0]];

static void crash_note_handler(int signal, siginfo_t *info, void *context) {
    int fd = crash_note_fd;
    crash_note_fd = -1;
    if (fd >= 0) {
        char line[32] = "crashed signal ";
        size_t n = 15;
        if (signal >= 10) line[n++] = (char)('0' + signal / 10);
        line[n++] = (char)('0' + signal % 10);
        line[n++] = '\n';
        ssize_t ignored = write(fd, line, n);
        (void)ignored;
    }
    chain_crash(signal, info, context, note_previous_actions);
}

/* Installs `handler` for every crash signal, keeping the actions it replaces in `previous` so the
   handler can chain to them. */
static void install_crash_handler(void (*handler)(int, siginfo_t *, void *), struct sigaction *previous) {
    for (size_t i = 0; i < sizeof crash_signals / sizeof crash_signals[0]; i++) {
        struct sigaction action;
        memset(&action, 0, sizeof action);
        action.sa_sigaction = handler;
        action.sa_flags = SA_SIGINFO | SA_ONSTACK;
        sigemptyset(&action.sa_mask);
        sigaction(crash_signals[i], &action, &previous[i]);
    }
}

void bg_install_crash_note(int fd) {
    crash_note_fd = fd;
    install_crash_handler(crash_note_handler, note_previous_actions);
}

void bg_install_crash_cleanup(void (*cleanup)(void)) {
    crash_cleanup = cleanup;
    install_crash_handler(crash_handler, previous_actions);
}

int bg_syncfs(int fd) {
    return syncfs(fd);
}

int bg_pidfd_open(pid_t pid) {
    return (int)syscall(SYS_pidfd_open, pid, 0);
}

int bg_pidfd_send_signal(int pidfd, int signal) {
    return (int)syscall(SYS_pidfd_send_signal, pidfd, signal, NULL, 0);
}

int bg_pidfd_is_running(int pidfd) {
    struct pollfd entry = { .fd = pidfd, .events = POLLIN, .revents = 0 };
    int ready = poll(&entry, 1, 0);
    return ready == 0;
}

// Both spawns: an empty signal mask (the parents block the signals they read through
// signalfd) and default handlers; either a process group of its own (so a whole app can be
// killed at once) or a session of its own (ssh, kept off the dashboard's terminal); stdin from
// `stdin_fd`, or /dev/null when it is -1; nothing else the parent has open leaks in (an inherited
// pipe would keep a reader of that pipe waiting for as long as the child lives).
static int spawn_child(pid_t *pid, const char *path, char *const argv[], char *const envp[],
                       int stdin_fd, int stdout_fd, int stderr_fd, int new_session) {
    posix_spawnattr_t attr;
    posix_spawn_file_actions_t actions;
    int rc = posix_spawnattr_init(&attr);
    if (rc != 0) return rc;
    rc = posix_spawn_file_actions_init(&actions);
    if (rc != 0) { posix_spawnattr_destroy(&attr); return rc; }

    sigset_t empty, all;
    sigemptyset(&empty);
    sigfillset(&all);
    if (!new_session) posix_spawnattr_setpgroup(&attr, 0);
    posix_spawnattr_setsigmask(&attr, &empty);
    posix_spawnattr_setsigdefault(&attr, &all);
    posix_spawnattr_setflags(&attr, (new_session ? POSIX_SPAWN_SETSID : POSIX_SPAWN_SETPGROUP)
                                    | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

    if (stdin_fd >= 0) posix_spawn_file_actions_adddup2(&actions, stdin_fd, 0);
    else posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    if (stdout_fd >= 0) posix_spawn_file_actions_adddup2(&actions, stdout_fd, 1);
    if (stderr_fd >= 0) posix_spawn_file_actions_adddup2(&actions, stderr_fd, 2);
    posix_spawn_file_actions_addclosefrom_np(&actions, 3);

    rc = posix_spawn(pid, path, &actions, &attr, argv, envp);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    return rc;
}

int bg_spawn(pid_t *pid, const char *path, char *const argv[], char *const envp[],
             int stdout_fd, int stderr_fd) {
    return spawn_child(pid, path, argv, envp, -1, stdout_fd, stderr_fd, 0);
}

int bg_spawn_session(pid_t *pid, const char *path, char *const argv[], char *const envp[],
                     int stdin_fd, int stdout_fd, int stderr_fd) {
    return spawn_child(pid, path, argv, envp, stdin_fd, stdout_fd, stderr_fd, 1);
}

static volatile sig_atomic_t signal_pipe_fds[65];

static void signal_to_pipe_handler(int signal) {
    int saved = errno;
    if (signal > 0 && signal < 65) {
        unsigned char byte = (unsigned char)signal;
        ssize_t ignored = write(signal_pipe_fds[signal], &byte, 1);
        (void)ignored;
    }
    errno = saved;
}

int bg_signal_to_pipe(int signal, int fd) {
    if (signal <= 0 || signal >= 65) { errno = EINVAL; return -1; }
    signal_pipe_fds[signal] = fd;
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = signal_to_pipe_handler;
    action.sa_flags = SA_RESTART;
    sigemptyset(&action.sa_mask);
    return sigaction(signal, &action, NULL);
}

int bg_timerfd_create_monotonic(void) {
    return timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
}

int bg_timerfd_set_relative(int fd, int64_t nanoseconds) {
    struct itimerspec spec;
    memset(&spec, 0, sizeof spec);
    if (nanoseconds > 0) {
        spec.it_value.tv_sec = (time_t)(nanoseconds / 1000000000);
        spec.it_value.tv_nsec = (long)(nanoseconds % 1000000000);
    }
    return timerfd_settime(fd, 0, &spec, NULL);
}

double bg_boottime_seconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_BOOTTIME, &now);
    return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

double bg_monotonic_seconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

int bg_set_child_subreaper(void) {
    return prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
}

int bg_set_parent_death_signal(int signal) {
    return prctl(PR_SET_PDEATHSIG, (unsigned long)signal, 0, 0, 0);
}

// Declared in the runtime's Concurrency/ConcurrencyHooks.def as a function pointer; only its
// address is taken here. Weak: a runtime without it links, and the address is then null.
extern void *swift_task_enqueueGlobal_hook __attribute__((weak));

void **bg_swift_task_enqueue_global_hook(void) {
    return &swift_task_enqueueGlobal_hook;
}

int bg_set_thread_name(const char *name) {
    return prctl(PR_SET_NAME, (unsigned long)name, 0, 0, 0);
}

static int bg_unix_address(struct sockaddr_un *address, const char *path) {
    memset(address, 0, sizeof *address);
    address->sun_family = AF_UNIX;
    if (strlen(path) >= sizeof address->sun_path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    strcpy(address->sun_path, path);
    return 0;
}

int bg_seqpacket_listen(const char *path, int backlog) {
    struct sockaddr_un address;
    if (bg_unix_address(&address, path) != 0) return -1;
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    // The socket file is made with the umask's mode; none but the owner may connect.
    if (fchmod(fd, 0600) != 0 || bind(fd, (struct sockaddr *)&address, sizeof address) != 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    if (chmod(path, 0600) != 0 || listen(fd, backlog) != 0) {
        int saved = errno;
        close(fd);
        unlink(path);
        errno = saved;
        return -1;
    }
    return fd;
}

int bg_seqpacket_accept(int listener) {
    return accept4(listener, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
}

int bg_seqpacket_connect(const char *path) {
    struct sockaddr_un address;
    if (bg_unix_address(&address, path) != 0) return -1;
    // Non-blocking: with the listener's backlog full (a scheduler not accepting), a blocking
    // connect would wait for room with no time limit; this fails at once with EAGAIN instead.
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    if (connect(fd, (struct sockaddr *)&address, sizeof address) != 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

int64_t bg_peer_uid(int fd) {
    struct ucred credentials;
    socklen_t length = sizeof credentials;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0) return -1;
    return (int64_t)credentials.uid;
}

ssize_t bg_recv_message(int fd, void *buffer, size_t capacity) {
    return recv(fd, buffer, capacity, MSG_TRUNC);
}

ssize_t bg_send_message(int fd, const void *buffer, size_t length) {
    return send(fd, buffer, length, MSG_NOSIGNAL);
}

int bg_peer_hung_up(int fd) {
    struct pollfd entry = { .fd = fd, .events = POLLRDHUP, .revents = 0 };
    if (poll(&entry, 1, 0) < 0) return 0;
    return (entry.revents & (POLLRDHUP | POLLHUP)) != 0;
}

int64_t bg_open_files_limit(void) {
    struct rlimit limit;
    if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return -1;
    return limit.rlim_cur == RLIM_INFINITY ? INT64_MAX : (int64_t)limit.rlim_cur;
}
