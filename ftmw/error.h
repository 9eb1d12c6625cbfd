/* The per-thread result of the last call (error.c): what ft_error()
 * reads. Also the door through which a layer above the API (the farm)
 * sets it. */
#ifndef FTMW_ERROR_H
#define FTMW_ERROR_H

/* Sets the result to code (an FT_ERR_*); returns 0, a failed call's
 * value. */
int ftmw_fail(int code);
/* ft_init failed: from now on a call that needs the job ends the process
 * (error.c). */
void ftmw_init_failed(void);
void ftmw_ok(void);
/* ft_error() for the library's own use: not a read by the program. */
int ftmw_last_error(void);
/* A peer's failure is being reported to the program: returns its number.
 * ftmw_report_read: the program has read a failure (ft_error) since
 * report n was made (calls.h, FT_ERRORS). */
unsigned long ftmw_note_report(void);
int ftmw_report_read(unsigned long n);

#endif
