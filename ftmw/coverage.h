/* Coverage builds (cmake -DFTMW_COVERAGE=ON, for tools/cover-select):
 * gcc's coverage counters are written by exit handlers, which a process
 * that leaves by _exit or kills itself never runs. Those ways out call
 * ftmw_coverage_dump first, so what such a process ran is counted too.
 * In any other build it does nothing. */
#ifndef FTMW_COVERAGE_H
#define FTMW_COVERAGE_H

#ifdef FTMW_COVERAGE
void __gcov_dump(void);
static inline void ftmw_coverage_dump(void) { __gcov_dump(); }
#else
static inline void ftmw_coverage_dump(void) {}
#endif

#endif
