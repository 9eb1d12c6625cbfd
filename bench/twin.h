/* The few calls a benchmark program makes, over FTMW or, when built with
 * -DBENCH_PLAIN_MPI, over plain MPI: one source gives a program and its
 * plain-MPI twin that differ only in how messages move. Rank 0 is the
 * master, ranks 1..workers the workers, as in FTMW. */
#ifndef FTMW_BENCH_TWIN_H
#define FTMW_BENCH_TWIN_H

#define TWIN_ANY (-1) /* any source, any tag */

#ifdef BENCH_PLAIN_MPI
#include <mpi.h>

static inline int twin_init(int *argc, char ***argv, int *rank, int *workers) {
  int size;
  if (MPI_Init(argc, argv) != MPI_SUCCESS)
    return -1;
  MPI_Comm_rank(MPI_COMM_WORLD, rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  *workers = size - 1;
  return 0;
}
/* Sends n bytes; returns 1 on success. */
static inline int twin_send(const void *buf, int n, int dest, int tag) {
  return MPI_Send(buf, n, MPI_BYTE, dest, tag, MPI_COMM_WORLD) == MPI_SUCCESS;
}
/* Sends n bytes without waiting for the receiver: a small MPI_Send
 * already returns at once (the eager protocol). Returns 1 on success. */
static inline int twin_post(const void *buf, int n, int dest, int tag) {
  return twin_send(buf, n, dest, tag);
}
/* Receives exactly n bytes from source with tag (either TWIN_ANY); sets
 * *from and *tag_out. Returns 1 on success. */
static inline int twin_recv(void *buf, int n, int source, int tag, int *from, int *tag_out) {
  MPI_Status st;
  int got;
  if (MPI_Recv(buf, n, MPI_BYTE, source == TWIN_ANY ? MPI_ANY_SOURCE : source,
               tag == TWIN_ANY ? MPI_ANY_TAG : tag, MPI_COMM_WORLD, &st) != MPI_SUCCESS ||
      MPI_Get_count(&st, MPI_BYTE, &got) != MPI_SUCCESS || got != n)
    return 0;
  *from = st.MPI_SOURCE;
  *tag_out = st.MPI_TAG;
  return 1;
}
static inline const char *twin_failure(void) { return "an MPI call failed"; }
static inline void twin_finalize(void) { MPI_Finalize(); }
#else
#include <ftmw.h>

static inline int twin_init(int *argc, char ***argv, int *rank, int *workers) {
  return ft_init(argc, argv, rank, workers);
}
static inline int twin_send(const void *buf, int n, int dest, int tag) {
  return ft_send(buf, n, FT_BYTE, dest, tag) == n;
}
static inline int twin_post(const void *buf, int n, int dest, int tag) {
  return ft_isend(buf, n, FT_BYTE, dest, tag, NULL) == n;
}
static inline int twin_recv(void *buf, int n, int source, int tag, int *from, int *tag_out) {
  FT_Status st;
  if (ft_recv(buf, n, FT_BYTE, source == TWIN_ANY ? FT_ANY_SOURCE : source,
              tag == TWIN_ANY ? FT_ANY_TAG : tag, &st) != n)
    return 0;
  *from = st.source;
  *tag_out = st.tag;
  return 1;
}
static inline const char *twin_failure(void) { return ft_strerror(ft_error()); }
static inline void twin_finalize(void) { ft_finalize(); }
#endif

#endif
