/* FT_TRACE event log: one JSON object a line, appended with one write(2)
 * each so that the processes of a job can share a file. Safe from both
 * threads; a no-op when FT_TRACE is unset. */
#ifndef FTMW_TRACE_H
#define FTMW_TRACE_H

/* Opens path for appending; identity fields come from identity.h. */
void ftmw_trace_open(const char *path);
void ftmw_trace_close(void);
int ftmw_trace_enabled(void);

/* Writes {"wall":..,"mono":..,"role":..,"rank":..,"epoch":..,"host":..,
 * "pid":..,"event":event<, fields>}; fields is a printf format producing
 * JSON members ("\"peer\":%d") or NULL. */
void ftmw_trace(const char *event, const char *fields, ...)
    __attribute__((format(printf, 2, 3)));

/* One readable line on stderr, prefixed "ftmw: ". */
void ftmw_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
