#ifndef BGTOP_CSYSTEMD_SHIM_H
#define BGTOP_CSYSTEMD_SHIM_H

// libsystemd's sd-bus: the scheduler's client of the system bus (UPower, power-profiles-daemon,
// logind, NetworkManager). Swift imports the non-variadic calls directly. libsystemd itself is
// loaded on the first call (sd_bus_loader.c), not at every start of every program linked with
// SchedulerRuntime: bgtop carries the scheduler for its demo and never opens the bus otherwise.
#include <systemd/sd-bus.h>

/// Why libsystemd could not be loaded (the loader's message), or NULL when it was; the calls
/// answer -ENOSYS (or NULL) when it could not.
const char *bg_sd_bus_load_failure(void);

#endif
