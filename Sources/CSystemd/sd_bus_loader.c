// The sd-bus calls the scheduler makes, each forwarded to libsystemd, which is loaded with
// dlopen on the first of them. A program that never calls one (bgtop outside its demo) never
// maps libsystemd and the six libraries it brings (libcap, libgcrypt, libgpg-error, liblz4,
// libzstd, liblzma): 1.1 MiB resident in an idle bgtaskd. Where libsystemd is missing the calls
// fail with -ENOSYS, as for a machine without a system bus, instead of the program not starting.
// The definitions are hidden: a program that exports its symbols (bgbench) must not become the
// target of libsystemd's own calls to these functions.
#include "shim.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>

static void *library;
static pthread_once_t loading = PTHREAD_ONCE_INIT;
static char failure[256];

static void load(void) {
    library = dlopen("libsystemd.so.0", RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        const char *reason = dlerror();
        snprintf(failure, sizeof failure, "%s", reason ? reason : "libsystemd.so.0 could not be loaded");
    }
}

static void *resolve(const char *name) {
    pthread_once(&loading, load);
    return library ? dlsym(library, name) : NULL;
}

const char *bg_sd_bus_load_failure(void) {
    pthread_once(&loading, load);
    return library ? NULL : failure;
}

// Each call looks its function up once; a missing library or function answers `failed`.
#define HIDDEN __attribute__((visibility("hidden")))
#define FORWARD(type, name, failed, params, args)                                   \
    HIDDEN type name params {                                                       \
        static type (*_Atomic real) params;                                         \
        type (*function) params = real;                                             \
        if (!function) {                                                            \
            function = (type (*) params)resolve(#name);                             \
            if (!function) return failed;                                           \
            real = function;                                                        \
        }                                                                           \
        return function args;                                                       \
    }

FORWARD(int, sd_bus_open_system, -ENOSYS, (sd_bus **ret), (ret))
FORWARD(sd_bus *, sd_bus_flush_close_unref, NULL, (sd_bus *bus), (bus))
FORWARD(int, sd_bus_call, -ENOSYS,
        (sd_bus *bus, sd_bus_message *m, uint64_t usec, sd_bus_error *ret_error, sd_bus_message **reply),
        (bus, m, usec, ret_error, reply))
FORWARD(int, sd_bus_get_fd, -ENOSYS, (sd_bus *bus), (bus))
FORWARD(int, sd_bus_get_events, -ENOSYS, (sd_bus *bus), (bus))
FORWARD(int, sd_bus_get_timeout, -ENOSYS, (sd_bus *bus, uint64_t *timeout_usec), (bus, timeout_usec))
FORWARD(int, sd_bus_process, -ENOSYS, (sd_bus *bus, sd_bus_message **r), (bus, r))
FORWARD(int, sd_bus_set_method_call_timeout, -ENOSYS, (sd_bus *bus, uint64_t usec), (bus, usec))
FORWARD(int, sd_bus_add_match, -ENOSYS,
        (sd_bus *bus, sd_bus_slot **slot, const char *match, sd_bus_message_handler_t callback, void *userdata),
        (bus, slot, match, callback, userdata))
FORWARD(sd_bus_slot *, sd_bus_slot_unref, NULL, (sd_bus_slot *slot), (slot))
FORWARD(int, sd_bus_message_new_method_call, -ENOSYS,
        (sd_bus *bus, sd_bus_message **m, const char *destination, const char *path, const char *interface,
         const char *member),
        (bus, m, destination, path, interface, member))
FORWARD(sd_bus_message *, sd_bus_message_unref, NULL, (sd_bus_message *m), (m))
FORWARD(const char *, sd_bus_message_get_member, NULL, (sd_bus_message *m), (m))
FORWARD(int, sd_bus_message_append_basic, -ENOSYS, (sd_bus_message *m, char type, const void *p), (m, type, p))
FORWARD(int, sd_bus_message_read_basic, -ENOSYS, (sd_bus_message *m, char type, void *p), (m, type, p))
FORWARD(int, sd_bus_message_enter_container, -ENOSYS, (sd_bus_message *m, char type, const char *contents),
        (m, type, contents))
FORWARD(int, sd_bus_message_exit_container, -ENOSYS, (sd_bus_message *m), (m))
FORWARD(int, sd_bus_get_property_trivial, -ENOSYS,
        (sd_bus *bus, const char *destination, const char *path, const char *interface, const char *member,
         sd_bus_error *ret_error, char type, void *ret_ptr),
        (bus, destination, path, interface, member, ret_error, type, ret_ptr))
FORWARD(int, sd_bus_get_property_string, -ENOSYS,
        (sd_bus *bus, const char *destination, const char *path, const char *interface, const char *member,
         sd_bus_error *ret_error, char **ret),
        (bus, destination, path, interface, member, ret_error, ret))

HIDDEN void sd_bus_error_free(sd_bus_error *e) {
    static void (*_Atomic real)(sd_bus_error *);
    void (*function)(sd_bus_error *) = real;
    if (!function) {
        function = (void (*)(sd_bus_error *))resolve("sd_bus_error_free");
        if (!function) return;
        real = function;
    }
    function(e);
}
