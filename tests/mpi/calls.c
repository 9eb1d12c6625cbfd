/* Every call FTMW's MPI layer provides, in a plain MPI master-worker
 * program (no FTMW in it): run under plain MPI and under the layer
 * (ftmwrun --transparent), with workers killed or not, the master must
 * print the same lines (tests/integration/ported.sh, ctest -R layer_calls). Workers print nothing
 * (a restored worker runs again from the start): what they compute comes
 * back to the master, which prints it. Any rank count from 2 up. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size, W;

#define CHECK(c)                                                               \
  do {                                                                         \
    if (!(c)) {                                                                \
      fprintf(stderr, "rank %d: check failed line %d: %s\n", rank, __LINE__,   \
              #c);                                                             \
      MPI_Abort(MPI_COMM_WORLD, 9);                                            \
    }                                                                          \
  } while (0)

/* A worker's value, to the master for printing (tag 99). */
static void report(const char *what, const double *v, int n) {
  if (rank != 0) {
    MPI_Send(v, n, MPI_DOUBLE, 0, 99, MPI_COMM_WORLD);
    return;
  }
  (void)what;
}

/* The master prints what root (a worker) reported. */
static void print_from(const char *what, int root, int n) {
  double v[16];
  MPI_Status s;
  MPI_Recv(v, n, MPI_DOUBLE, root, 99, MPI_COMM_WORLD, &s);
  printf("%s (at %d):", what, root);
  for (int i = 0; i < n; i++)
    printf(" %g", v[i]);
  printf("\n");
}

static void print_ints(const char *what, const int *v, int n) {
  printf("%s:", what);
  for (int i = 0; i < n; i++)
    printf(" %d", v[i]);
  printf("\n");
}

static void job_calls(void) {
  int flag, version, subversion, len;
  char name[MPI_MAX_PROCESSOR_NAME], err[MPI_MAX_ERROR_STRING];
  MPI_Initialized(&flag);
  CHECK(flag);
  MPI_Get_version(&version, &subversion);
  MPI_Get_processor_name(name, &len);
  MPI_Error_string(MPI_ERR_TRUNCATE, err, &len);
  double t0 = MPI_Wtime(), tick = MPI_Wtick();
  if (rank == 0)
    printf("size %d, version >= 3 %d, name set %d, tick > 0 %d, time >= 0 "
           "%d, truncate: %s\n", size, version >= 3, name[0] != 0, tick > 0,
           t0 >= 0, err);
}

/* Send, Ssend, Recv with MPI_ANY_SOURCE and MPI_ANY_TAG, Get_count,
 * Get_elements. */
static void p2p(void) {
  if (rank != 0) {
    int v[3] = {rank, rank * 10, rank * 100};
    MPI_Send(v, 3, MPI_INT, 0, 10 + rank, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD); /* no MPI_ANY_TAG receive may take it */
    MPI_Ssend(v, rank, MPI_INT, 0, 50, MPI_COMM_WORLD);
    return;
  }
  int got[64][3] = {{0}}, counts[64] = {0}, tags[64] = {0};
  for (int i = 0; i < W; i++) {
    int v[3];
    MPI_Status s;
    MPI_Recv(v, 3, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &s);
    CHECK(s.MPI_SOURCE >= 1 && s.MPI_SOURCE <= W);
    memcpy(got[s.MPI_SOURCE], v, sizeof(v));
    MPI_Get_count(&s, MPI_INT, &counts[s.MPI_SOURCE]);
    tags[s.MPI_SOURCE] = s.MPI_TAG;
  }
  for (int r = 1; r <= W; r++)
    printf("send from %d: %d %d %d, tag %d, count %d\n", r, got[r][0],
           got[r][1], got[r][2], tags[r], counts[r]);
  MPI_Barrier(MPI_COMM_WORLD);
  for (int r = W; r >= 1; r--) { /* by source, in another order */
    int v[64], n, e;
    MPI_Status s;
    MPI_Recv(v, 64, MPI_INT, r, 50, MPI_COMM_WORLD, &s);
    MPI_Get_count(&s, MPI_INT, &n);
    MPI_Get_elements(&s, MPI_INT, &e);
    printf("ssend from %d: count %d elements %d first %d\n", r, n, e,
           n ? v[0] : -1);
  }
}

/* Rsend to posted receives, Irecv, Waitall, MPI_STATUSES_IGNORE, Barrier. */
static void ready(void) {
  int v[64] = {0};
  MPI_Request req[64];
  if (rank == 0)
    for (int r = 1; r <= W; r++)
      MPI_Irecv(&v[r], 1, MPI_INT, r, 20, MPI_COMM_WORLD, &req[r - 1]);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank != 0) {
    int x = rank * rank;
    MPI_Rsend(&x, 1, MPI_INT, 0, 20, MPI_COMM_WORLD);
    return;
  }
  MPI_Waitall(W, req, MPI_STATUSES_IGNORE);
  print_ints("rsend", v + 1, W);
}

/* Isend, Issend, Request_free; worker: Probe, Iprobe, Sendrecv,
 * Sendrecv_replace; master: Waitany, Waitsome, Test, Testany, Testall. */
static void requests(void) {
  if (rank != 0) {
    MPI_Status s;
    int n, flag = 0;
    MPI_Probe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &s);
    MPI_Get_count(&s, MPI_DOUBLE, &n);
    double in[8], out = 0;
    MPI_Recv(in, n, MPI_DOUBLE, 0, s.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int i = 0; i < n; i++)
      out += in[i];
    /* The next task comes as the answer to this one. */
    double next;
    MPI_Sendrecv(&out, 1, MPI_DOUBLE, 0, 31, &next, 1, MPI_DOUBLE, 0, 32,
                 MPI_COMM_WORLD, &s);
    while (!flag)
      MPI_Iprobe(0, 33, MPI_COMM_WORLD, &flag, &s);
    double r = next * 2;
    MPI_Sendrecv_replace(&r, 1, MPI_DOUBLE, 0, 34, 0, 33, MPI_COMM_WORLD, &s);
    r += 1;
    MPI_Send(&r, 1, MPI_DOUBLE, 0, 35, MPI_COMM_WORLD);
    return;
  }
  MPI_Request sreq[64], rreq[64];
  double task[64][8], res[64], second[64], third[64];
  for (int r = 1; r <= W; r++) {
    for (int i = 0; i < 8; i++)
      task[r][i] = r + i * 0.5;
    if (r % 2)
      MPI_Isend(task[r], r % 8 + 1, MPI_DOUBLE, r, 30, MPI_COMM_WORLD, &sreq[r - 1]);
    else
      MPI_Issend(task[r], r % 8 + 1, MPI_DOUBLE, r, 30, MPI_COMM_WORLD, &sreq[r - 1]);
    MPI_Irecv(&res[r], 1, MPI_DOUBLE, r, 31, MPI_COMM_WORLD, &rreq[r - 1]);
  }
  MPI_Request_free(&sreq[0]);
  CHECK(sreq[0] == MPI_REQUEST_NULL);
  MPI_Waitall(W - 1, sreq + 1, MPI_STATUSES_IGNORE);
  int order[64], k = 0;
  for (int i = 0; i < W; i++) {
    int idx;
    MPI_Status s;
    MPI_Waitany(W, rreq, &idx, &s);
    CHECK(idx >= 0 && s.MPI_SOURCE == idx + 1 && s.MPI_TAG == 31);
    order[k++] = idx;
  }
  int idx;
  MPI_Waitany(W, rreq, &idx, MPI_STATUS_IGNORE);
  CHECK(idx == MPI_UNDEFINED);
  (void)order;
  printf("sums:");
  for (int r = 1; r <= W; r++)
    printf(" %g", res[r]);
  printf("\n");
  for (int r = 1; r <= W; r++)
    MPI_Send(&res[r], 1, MPI_DOUBLE, r, 32, MPI_COMM_WORLD);
  /* Waitsome until all came, then Test, Testany and Testall. */
  for (int r = 1; r <= W; r++)
    MPI_Irecv(&second[r], 1, MPI_DOUBLE, r, 34, MPI_COMM_WORLD, &rreq[r - 1]);
  for (int r = 1; r <= W; r++) {
    double x = 0.25 * r;
    MPI_Send(&x, 1, MPI_DOUBLE, r, 33, MPI_COMM_WORLD);
  }
  int left = W;
  while (left > 0) {
    int out, ind[64];
    MPI_Waitsome(W, rreq, &out, ind, MPI_STATUSES_IGNORE);
    CHECK(out >= 1);
    left -= out;
  }
  int out;
  int none[64];
  MPI_Waitsome(W, rreq, &out, none, MPI_STATUSES_IGNORE);
  CHECK(out == MPI_UNDEFINED);
  print_ints("waitsome done", &left, 1);
  for (int r = 1; r <= W; r++)
    MPI_Irecv(&third[r], 1, MPI_DOUBLE, r, 35, MPI_COMM_WORLD, &rreq[r - 1]);
  int flag = 0;
  while (!flag)
    MPI_Test(&rreq[0], &flag, MPI_STATUS_IGNORE);
  CHECK(rreq[0] == MPI_REQUEST_NULL);
  if (W > 1) {
    flag = 0;
    while (!flag)
      MPI_Testany(W, rreq, &idx, &flag, MPI_STATUS_IGNORE);
    CHECK(idx >= 1);
  }
  flag = 0;
  while (!flag)
    MPI_Testall(W, rreq, &flag, MPI_STATUSES_IGNORE);
  printf("second:");
  for (int r = 1; r <= W; r++)
    printf(" %g/%g", second[r], third[r]);
  printf("\n");
}

/* MPI_PROC_NULL, and derived datatypes. */
static void odd_data(void) {
  MPI_Status s;
  int x = 5;
  MPI_Send(&x, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD);
  MPI_Recv(&x, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &s);
  int n;
  MPI_Get_count(&s, MPI_INT, &n);
  CHECK(s.MPI_SOURCE == MPI_PROC_NULL && n == 0 && x == 5);
  MPI_Datatype every_other, triple;
  MPI_Type_vector(5, 1, 2, MPI_INT, &every_other);
  MPI_Type_commit(&every_other);
  MPI_Type_contiguous(3, MPI_DOUBLE, &triple);
  MPI_Type_commit(&triple);
  if (rank == 0) {
    int v[10];
    for (int i = 0; i < 10; i++)
      v[i] = i * i;
    double d[6] = {1.5, 2.5, 3.5, 4.5, 5.5, 6.5};
    for (int r = 1; r <= W; r++) {
      MPI_Send(v, 1, every_other, r, 40, MPI_COMM_WORLD);
      MPI_Send(d, 2, triple, r, 41, MPI_COMM_WORLD);
    }
    for (int r = 1; r <= W; r++) {
      int back[10] = {0};
      MPI_Recv(back, 1, every_other, r, 42, MPI_COMM_WORLD, &s);
      MPI_Get_count(&s, every_other, &n);
      printf("vector back from %d (count %d):", r, n);
      print_ints("", back, 10);
    }
  } else {
    int v[5];
    double d[6];
    MPI_Recv(v, 5, MPI_INT, 0, 40, MPI_COMM_WORLD, &s);
    MPI_Get_count(&s, MPI_INT, &n);
    CHECK(n == 5);
    MPI_Get_count(&s, MPI_DOUBLE, &n); /* 20 bytes: no whole number */
    CHECK(n == MPI_UNDEFINED);
    MPI_Get_count(&s, MPI_SHORT, &n);
    CHECK(n == 10);
    MPI_Recv(d, 2, triple, 0, 41, MPI_COMM_WORLD, &s);
    MPI_Get_count(&s, MPI_DOUBLE, &n);
    CHECK(n == 6 && d[5] == 6.5);
    MPI_Get_count(&s, triple, &n);
    CHECK(n == 2);
    int spread[10];
    for (int i = 0; i < 10; i++)
      spread[i] = -1;
    for (int i = 0; i < 5; i++)
      spread[2 * i] = v[i] + rank;
    MPI_Send(spread, 1, every_other, 0, 42, MPI_COMM_WORLD);
  }
  MPI_Type_free(&every_other);
  MPI_Type_free(&triple);
  CHECK(every_other == MPI_DATATYPE_NULL);
}

/* Broadcasts of every predefined type, from the master and a worker. */
static void broadcasts(void) {
  for (int root = 0; root <= W; root += (W > 1 ? W - 1 : 1)) {
    char c[3] = "ab";
    short sh = 0;
    long l = 0;
    unsigned u = 0;
    float f = 0;
    long long ll = 0;
    unsigned long ul = 0;
    unsigned char uc = 0;
    double d[2] = {0, 0};
    if (rank == root) {
      c[0] = 'x', c[1] = (char)('0' + root), sh = -7, l = 123456789L,
      u = 4000000000u, f = 1.25f, ll = -1234567890123LL, ul = 77, uc = 200,
      d[0] = 3.25, d[1] = -root;
    }
    MPI_Bcast(c, 2, MPI_CHAR, root, MPI_COMM_WORLD);
    MPI_Bcast(&sh, 1, MPI_SHORT, root, MPI_COMM_WORLD);
    MPI_Bcast(&l, 1, MPI_LONG, root, MPI_COMM_WORLD);
    MPI_Bcast(&u, 1, MPI_UNSIGNED, root, MPI_COMM_WORLD);
    MPI_Bcast(&f, 1, MPI_FLOAT, root, MPI_COMM_WORLD);
    MPI_Bcast(&ll, 1, MPI_LONG_LONG, root, MPI_COMM_WORLD);
    MPI_Bcast(&ul, 1, MPI_UNSIGNED_LONG, root, MPI_COMM_WORLD);
    MPI_Bcast(&uc, 1, MPI_UNSIGNED_CHAR, root, MPI_COMM_WORLD);
    MPI_Bcast(d, 2, MPI_DOUBLE, root, MPI_COMM_WORLD);
    double mine[10] = {c[0], c[1], sh, (double)l, u, f, (double)ll, (double)ul,
                       uc, d[0] + d[1]};
    int last = W; /* a worker reports what it got */
    if (rank == last && last != root)
      report("bcast", mine, 10);
    if (rank == 0 && last != root)
      print_from("bcast from root", last, 10);
  }
}

/* Reduce and Allreduce with every predefined operation, roots 0, 1 and W,
 * MPI_IN_PLACE. */
static void reductions(void) {
  MPI_Op iops[] = {MPI_SUM, MPI_PROD, MPI_MAX,  MPI_MIN, MPI_LAND,
                   MPI_LOR, MPI_LXOR, MPI_BAND, MPI_BOR, MPI_BXOR};
  const char *inames[] = {"sum", "prod", "max", "min", "land",
                          "lor", "lxor", "band", "bor", "bxor"};
  int roots[3] = {0, 1, W};
  for (int k = 0; k < 3; k++) {
    int root = roots[k];
    for (int o = 0; o < 10; o++) {
      int v[2] = {rank + 3, (rank % 2) ? 6 : 9}, res[2] = {-1, -1};
      if (rank == root && o % 3 == 0) { /* in place */
        res[0] = v[0], res[1] = v[1];
        MPI_Reduce(MPI_IN_PLACE, res, 2, MPI_INT, iops[o], root, MPI_COMM_WORLD);
      } else {
        MPI_Reduce(v, res, 2, MPI_INT, iops[o], root, MPI_COMM_WORLD);
      }
      double d[2] = {res[0], res[1]};
      if (root != 0 && rank == root)
        report("reduce", d, 2);
      if (rank == 0) {
        if (root == 0)
          printf("reduce %s at 0: %d %d\n", inames[o], res[0], res[1]);
        else
          print_from(inames[o], root, 2);
      }
    }
    struct { double v; int i; } dl = {rank % 3 - 0.5, rank}, dlr[2];
    struct { int v, i; } il = {(rank * 7) % 5, rank}, ilr;
    MPI_Reduce(&dl, &dlr[0], 1, MPI_DOUBLE_INT, MPI_MAXLOC, root, MPI_COMM_WORLD);
    MPI_Reduce(&dl, &dlr[1], 1, MPI_DOUBLE_INT, MPI_MINLOC, root, MPI_COMM_WORLD);
    MPI_Reduce(&il, &ilr, 1, MPI_2INT, MPI_MAXLOC, root, MPI_COMM_WORLD);
    double d[6] = {dlr[0].v, dlr[0].i, dlr[1].v, dlr[1].i, ilr.v, ilr.i};
    if (root != 0 && rank == root)
      report("loc", d, 6);
    if (rank == 0) {
      if (root == 0)
        printf("loc at 0: %g %g %g %g %g %g\n", d[0], d[1], d[2], d[3], d[4], d[5]);
      else
        print_from("loc", root, 6);
    }
  }
  double x[3] = {rank * 0.5, 1, -rank}, y[3];
  MPI_Allreduce(x, y, 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, x, 3, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  double both[6] = {y[0], y[1], y[2], x[0], x[1], x[2]};
  if (rank == W)
    report("allreduce", both, 6);
  if (rank == 0) {
    printf("allreduce at 0: %g %g %g %g %g %g\n", y[0], y[1], y[2], x[0], x[1], x[2]);
    print_from("allreduce", W, 6);
  }
}

/* Gather(v), Scatter(v), Allgather at roots 0 and 1, with MPI_IN_PLACE. */
static void gathers(void) {
  int n = size;
  int *all = calloc((size_t)n * 2, sizeof(int)), *counts = calloc((size_t)n, sizeof(int)),
      *displs = calloc((size_t)n, sizeof(int));
  CHECK(all && counts && displs);
  for (int i = 0; i < n; i++)
    counts[i] = i % 2 + 1, displs[i] = 2 * (n - 1 - i);
  for (int root = 0; root <= 1; root++) {
    int mine[2] = {rank * 11, rank * 11 + 1};
    for (int i = 0; i < 2 * n; i++)
      all[i] = -1;
    if (rank == root && root == 0) {
      all[2 * root] = mine[0], all[2 * root + 1] = mine[1];
      MPI_Gather(MPI_IN_PLACE, 2, MPI_INT, all, 2, MPI_INT, root, MPI_COMM_WORLD);
    } else {
      MPI_Gather(mine, 2, MPI_INT, all, 2, MPI_INT, root, MPI_COMM_WORLD);
    }
    double d[32];
    for (int i = 0; i < 2 * n && i < 32; i++)
      d[i] = all[i];
    int m = 2 * n < 32 ? 2 * n : 32;
    if (rank == root && root != 0)
      report("gather", d, m > 16 ? 16 : m);
    if (rank == 0) {
      if (root == 0)
        print_ints("gather at 0", all, 2 * n);
      else
        print_from("gather", root, m > 16 ? 16 : m);
    }
    for (int i = 0; i < 2 * n; i++)
      all[i] = -1;
    MPI_Gatherv(mine, counts[rank], MPI_INT, all, counts, displs, MPI_INT, root,
                MPI_COMM_WORLD);
    for (int i = 0; i < 2 * n && i < 32; i++)
      d[i] = all[i];
    if (rank == root && root != 0)
      report("gatherv", d, m > 16 ? 16 : m);
    if (rank == 0) {
      if (root == 0)
        print_ints("gatherv at 0", all, 2 * n);
      else
        print_from("gatherv", root, m > 16 ? 16 : m);
    }
    /* Scatter back what the root has, and Scatterv. */
    int part[2] = {-1, -1};
    for (int i = 0; i < 2 * n; i++)
      all[i] = 100 * root + i;
    if (rank == root && root == 0) {
      part[0] = all[0], part[1] = all[1];
      MPI_Scatter(all, 2, MPI_INT, MPI_IN_PLACE, 2, MPI_INT, root, MPI_COMM_WORLD);
    } else {
      MPI_Scatter(all, 2, MPI_INT, part, 2, MPI_INT, root, MPI_COMM_WORLD);
    }
    int vpart[2] = {-1, -1};
    MPI_Scatterv(all, counts, displs, MPI_INT, vpart, counts[rank], MPI_INT,
                 root, MPI_COMM_WORLD);
    double got[4] = {part[0], part[1], vpart[0], vpart[1]};
    if (rank == W)
      report("scatter", got, 4);
    if (rank == 0) {
      printf("scatter at 0 from %d: %g %g %g %g\n", root, got[0], got[1], got[2], got[3]);
      print_from("scatter", W, 4);
    }
  }
  int *ag = calloc((size_t)n, sizeof(int));
  CHECK(ag);
  int me = rank * rank + 1;
  MPI_Allgather(&me, 1, MPI_INT, ag, 1, MPI_INT, MPI_COMM_WORLD);
  int *ag2 = calloc((size_t)n, sizeof(int));
  CHECK(ag2);
  ag2[rank] = me * 2;
  MPI_Allgather(MPI_IN_PLACE, 1, MPI_INT, ag2, 1, MPI_INT, MPI_COMM_WORLD);
  double sum[2] = {0, 0};
  for (int i = 0; i < n; i++)
    sum[0] += ag[i], sum[1] += ag2[i];
  if (rank == W)
    report("allgather", sum, 2);
  if (rank == 0) {
    print_ints("allgather at 0", ag, n);
    print_from("allgather sums", W, 2);
  }
  free(ag);
  free(ag2);
  free(all);
  free(counts);
  free(displs);
}

int main(int argc, char **argv) {
  int provided;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  CHECK(provided >= MPI_THREAD_SINGLE);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  W = size - 1;
  CHECK(W >= 1 && W < 64);
  int self;
  MPI_Comm_size(MPI_COMM_SELF, &self);
  CHECK(self == 1);
  job_calls();
  p2p();
  ready();
  requests();
  odd_data();
  broadcasts();
  reductions();
  gathers();
  MPI_Barrier(MPI_COMM_WORLD);
  int fin;
  MPI_Finalized(&fin);
  CHECK(!fin);
  if (rank == 0)
    printf("done\n");
  MPI_Finalize();
  MPI_Finalized(&fin);
  CHECK(fin);
  return 0;
}
