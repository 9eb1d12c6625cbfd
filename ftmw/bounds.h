/* The largest job FTMW runs: its workers, master replicas and spares.
 * The settings (config.h) are checked against them, and a fault rule's
 * process (fault.c), which needs nothing else of the settings. */
#ifndef FTMW_BOUNDS_H
#define FTMW_BOUNDS_H

#define FTMW_MAX_WORKERS 4096
#define FTMW_MAX_MASTERS 8
#define FTMW_MAX_SPARES 4096

#endif
