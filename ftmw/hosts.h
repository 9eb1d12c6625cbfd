/* Hostfile parsing, initial placement and the blacklist of failed hosts.
 * Pure data: no MPI, no I/O except ftmw_hosts_load reading the file. */
#ifndef FTMW_HOSTS_H
#define FTMW_HOSTS_H

#include <stddef.h>

#define FTMW_HOSTNAME_MAX 64

typedef struct {
  char name[FTMW_HOSTNAME_MAX];
  int slots;  /* processes it takes at launch ("slots=N", default 1) */
  int load;   /* processes placed on it so far */
  int failed; /* blacklisted: a process on it failed */
} ftmw_host;

typedef struct {
  ftmw_host *v;
  int n;
} ftmw_hosts;

/* Parses hostfile text: one host a line, optional "slots=N", '#' starts a
 * comment, blank lines ignored. Returns 0, or -1 with "line N: why" in err. */
int ftmw_hosts_parse(const char *text, ftmw_hosts *out, char *err,
                     size_t errlen);
int ftmw_hosts_load(const char *path, ftmw_hosts *out, char *err,
                    size_t errlen);
void ftmw_hosts_free(ftmw_hosts *h);

/* Host index of the i-th process placed at launch (0-based, workers first,
 * then replicas): hosts in file order, each for its slots, wrapping round
 * when the processes outnumber the slots. Counts the load. -1 if no hosts. */
int ftmw_hosts_place(ftmw_hosts *h, int i);

/* Blacklists every entry named name. Returns how many were. */
int ftmw_hosts_fail(ftmw_hosts *h, const char *name);

/* Blacklists name even if the file does not list it (static mode knows a
 * host by the name MPI reports, which need not be the file's). Returns 0,
 * or -1 when out of memory. */
int ftmw_hosts_blacklist(ftmw_hosts *h, const char *name);

/* 1 if an entry named name is blacklisted. */
int ftmw_hosts_is_failed(const ftmw_hosts *h, const char *name);

/* For a restore: the non-failed host with the least load (first in file
 * order on a tie), its load counted; -1 when every host has failed. */
int ftmw_hosts_pick(ftmw_hosts *h);

#endif
