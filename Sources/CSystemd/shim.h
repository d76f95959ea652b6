#ifndef BGTOP_CSYSTEMD_SHIM_H
#define BGTOP_CSYSTEMD_SHIM_H

// libsystemd's sd-bus: the scheduler's client of the system bus (UPower, power-profiles-daemon,
// logind, NetworkManager). Swift imports the non-variadic calls directly; nothing here wraps them.
#include <systemd/sd-bus.h>

#endif
