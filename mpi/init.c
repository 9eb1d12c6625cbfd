/* The MPI layer's start and end, the calls about the job, and how the
 * layer reports errors and stops the job. */
#include "layer.h"
#include "leave.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct layer_state layer;

static void say(const char *call, const char *fmt, va_list ap) {
  char line[512];
  int n = snprintf(line, sizeof(line), "ftmw-mpi: %s: ", call);
  if (n < 0 || (size_t)n >= sizeof(line))
    n = 0;
  vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
  fprintf(stderr, "%s\n", line);
  fflush(stderr);
}

static void output_at_exit(void);

void layer_stop(int status, const char *call, const char *fmt, ...) {
  output_at_exit(); /* ft_abort ends the process without exit handlers */
  va_list ap;
  va_start(ap, fmt);
  say(call, fmt, ap);
  va_end(ap);
  ft_abort(status);
}

int layer_error(int code, const char *call, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  say(call, fmt, ap);
  va_end(ap);
  if (!layer.errors_return)
    layer_stop(LAYER_EXIT_MISUSE, call,
               "the job stops (MPI_ERRORS_ARE_FATAL; MPI_ERRORS_RETURN on "
               "MPI_COMM_WORLD would return the error)");
  return code;
}

void ftmw_mpi_unsupported(const char *call) {
  layer_stop(LAYER_EXIT_UNSUPPORTED, call,
             "not supported by FTMW's MPI layer, which provides what "
             "master-worker programs use on MPI_COMM_WORLD "
             "(docs/mpi-layer.md): the job stops");
}

int layer_check(const char *call, MPI_Comm comm, int self_ok) {
  layer_output();
  if (!layer.up || layer.done)
    return layer_error(MPI_ERR_OTHER, call,
                       layer.done ? "called after MPI_Finalize"
                                  : "called before MPI_Init");
  if (comm == MPI_COMM_WORLD || (self_ok && comm == MPI_COMM_SELF))
    return MPI_SUCCESS;
  if (comm == MPI_COMM_NULL)
    return layer_error(MPI_ERR_COMM, call, "MPI_COMM_NULL");
  layer_stop(LAYER_EXIT_UNSUPPORTED, call,
             "communicators other than MPI_COMM_WORLD%s are not supported "
             "by FTMW's MPI layer: the job stops",
             self_ok ? " and MPI_COMM_SELF" : "");
}

/* --- the MPI this layer was built for ------------------------------------ */

/* A program built for the other MPI (its constants mean nothing to this
 * one), or a Fortran program, is refused before main: both MPIs named. */
#ifdef OPEN_MPI
#define BUILT_FOR "Open MPI"
#define OTHER_MPI "MPICH"
#define OTHER_LIB "libmpich.so"
#define FORTRAN_LIBS {"libmpi_mpifh.so", "libmpi_usempi", NULL}
#else
#define BUILT_FOR "MPICH"
#define OTHER_MPI "Open MPI"
#define OTHER_LIB "libmpi.so.40"
#define FORTRAN_LIBS {"libmpifort.so", NULL}
#endif

/* The path of the first library loaded in this process whose name starts
 * with one of want, or NULL. */
static const char *loaded(const char *const *want) {
  static char line[4096];
  FILE *f = fopen("/proc/self/maps", "r");
  const char *found = NULL;
  while (f && !found && fgets(line, sizeof(line), f)) {
    char *path = strchr(line, '/'), *base;
    if (path == NULL)
      continue;
    path[strcspn(path, "\n")] = '\0';
    base = strrchr(path, '/') + 1;
    for (int i = 0; want[i] && !found; i++)
      if (strncmp(base, want[i], strlen(want[i])) == 0)
        found = path;
  }
  if (f)
    fclose(f);
  return found;
}

__attribute__((constructor)) static void refuse_foreign(void) {
  const char *const other[] = {OTHER_LIB, NULL};
  const char *const fortran[] = FORTRAN_LIBS;
  const char *lib = loaded(other);
  if (lib) {
    fprintf(stderr,
            "ftmw-mpi: this program is built for %s (it loads %s), but this "
            "FTMW MPI layer is built for %s: rebuild the program with %s's "
            "mpicc, or use an FTMW built with -DFTMW_MPI=%s\n",
            OTHER_MPI, lib, BUILT_FOR, BUILT_FOR,
#ifdef OPEN_MPI
            "mpich"
#else
            "openmpi"
#endif
    );
    ftmw_leave(FTMW_LEAVE_REFUSED, 0, NULL);
  }
  if ((lib = loaded(fortran)) != NULL) {
    fprintf(stderr, "ftmw-mpi: Fortran programs (%s) are not supported by "
                    "FTMW's MPI layer: C programs only\n",
            lib);
    ftmw_leave(FTMW_LEAVE_REFUSED, 0, NULL);
  }
}

/* --- a master's standard output, with replicas ----------------------------- */

/* Every master runs the program and prints; the line must appear once.
 * Each master's stdout goes to a memory file, and at each MPI call that
 * follows some output the masters ask who is primary (ft_is_primary, a
 * decision every master follows at the same call): the primary copies
 * what was written since the previous such call to the real stdout, the
 * others drop it. A line thus appears once, or twice when the primary
 * dies after copying it and before its next call: never lost (the rule
 * of docs/replicas.md for ft_is_primary). Whether output came is the
 * same in every master, whose programs make the same calls. */
static int real_stdout = -1, captured = -1, last_primary;

static void capture_start(void) {
  fflush(stdout);
  int fd = memfd_create("ftmw-mpi-stdout", MFD_CLOEXEC);
  int out = fd < 0 ? -1 : dup(STDOUT_FILENO);
  if (out < 0 || dup2(fd, STDOUT_FILENO) < 0) {
    fprintf(stderr, "ftmw-mpi: cannot capture this master's output: each "
                    "master replica prints it\n");
    if (fd >= 0)
      close(fd);
    if (out >= 0)
      close(out);
    return;
  }
  real_stdout = out;
  captured = fd;
}

/* Copies or drops what was written since the last call (primary: the
 * last word of the masters on who is primary). */
static void pass_on(int primary) {
  off_t n = lseek(captured, 0, SEEK_CUR), at = 0;
  char buf[65536];
  while (primary && at < n) {
    ssize_t got = pread(captured, buf, sizeof(buf), at);
    if (got <= 0)
      break;
    for (ssize_t done = 0; done < got;) {
      ssize_t w = write(real_stdout, buf + done, (size_t)(got - done));
      if (w < 0 && errno == EINTR)
        continue;
      if (w <= 0)
        break;
      done += w;
    }
    at += got;
  }
  if (ftruncate(captured, 0) != 0 || lseek(captured, 0, SEEK_SET) != 0)
    fprintf(stderr, "ftmw-mpi: cannot reset this master's output file\n");
}

void layer_output(void) {
  if (captured < 0)
    return;
  fflush(stdout);
  if (lseek(captured, 0, SEEK_CUR) <= 0)
    return;
  last_primary = ft_is_primary();
  pass_on(last_primary);
}

/* What the program prints after MPI_Finalize: the master that was
 * primary there prints it. */
static void output_at_exit(void) {
  if (captured < 0)
    return;
  fflush(stdout);
  pass_on(last_primary);
}

/* --- start and end -------------------------------------------------------- */

/* MPI_Init(NULL, NULL) is allowed, but a spawned worker is given the
 * master's arguments: read them from /proc. */
static void own_args(int *argc, char ***argv) {
  static char buf[65536];
  static char *v[1024];
  int fd = open("/proc/self/cmdline", O_RDONLY);
  ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
  if (fd >= 0)
    close(fd);
  int c = 0;
  for (ssize_t i = 0; n > 0 && i < n && c < 1023; i += (ssize_t)strlen(buf + i) + 1)
    v[c++] = buf + i;
  v[c] = NULL;
  *argc = c;
  *argv = v;
}

static int start(int *argc, char ***argv, const char *call) {
  if (layer.up)
    return layer_error(MPI_ERR_OTHER, call, "MPI is already initialized");
  int ac, rank, W;
  char **av;
  if (argc == NULL || argv == NULL) {
    own_args(&ac, &av);
    argc = &ac;
    argv = &av;
  }
  if (ft_init(argc, argv, &rank, &W) < 0) {
    fprintf(stderr, "ftmw-mpi: %s: FTMW could not start the job (the reason "
                    "is above): this process exits\n", call);
    ftmw_leave(FTMW_LEAVE_INIT_FAILED, 1, NULL);
  }
  layer.rank = rank;
  layer.W = W;
  const char *m = getenv("FT_NUM_MASTERS"); /* checked by ft_init */
  layer.replicas = m && atoi(m) > 0;
  if (rank == 0 && llog_init(W) != 0) {
    fprintf(stderr, "ftmw-mpi: %s: out of memory\n", call);
    ft_abort(1);
  }
  if (rank == 0 && layer.replicas) {
    capture_start();
    atexit(output_at_exit);
  }
  layer.up = 1;
  return MPI_SUCCESS;
}

LAYER_API int MPI_Init(int *argc, char ***argv) {
  return start(argc, argv, "MPI_Init");
}

/* FTMW's calls are made from one thread (docs/mpi-layer.md). */
LAYER_API int MPI_Init_thread(int *argc, char ***argv, int required,
                              int *provided) {
  int rc = start(argc, argv, "MPI_Init_thread");
  if (provided)
    *provided = required < MPI_THREAD_FUNNELED ? required : MPI_THREAD_FUNNELED;
  return rc;
}

LAYER_API int MPI_Initialized(int *flag) {
  *flag = layer.up;
  return MPI_SUCCESS;
}

LAYER_API int MPI_Finalized(int *flag) {
  *flag = layer.done;
  return MPI_SUCCESS;
}

LAYER_API int MPI_Finalize(void) {
  int rc = layer_check("MPI_Finalize", MPI_COMM_WORLD, 0);
  if (rc != MPI_SUCCESS)
    return rc;
  if (captured >= 0) /* every master asks: the last word before the end */
    last_primary = ft_is_primary();
  layer_output();
  /* As MPI_Finalize waits for every process, the master waits for every
   * worker's: a worker that dies before it finished is restored, and
   * does the rest of its work (what it prints, the files it writes). */
  if (layer_master())
    for (int w = 1; w <= layer.W; w++)
      ftmw_msg_free(lmatch_take(w, LAYER_TAG_FIN));
  else
    lmatch_send("MPI_Finalize", 0, LAYER_TAG_FIN, NULL, 0, 0);
  ft_finalize();
  lmatch_free();
  llog_free();
  layer.done = 1;
  return MPI_SUCCESS;
}

LAYER_API int MPI_Abort(MPI_Comm comm, int code) {
  (void)comm; /* whatever the communicator, MPI may end the whole job */
  layer_output(); /* every master calls it here: what came before is out */
  ft_abort(code);
}

/* --- the job -------------------------------------------------------------- */

LAYER_API int MPI_Comm_rank(MPI_Comm comm, int *rank) {
  int rc = layer_check("MPI_Comm_rank", comm, 1);
  if (rc == MPI_SUCCESS)
    *rank = comm == MPI_COMM_SELF ? 0 : layer.rank;
  return rc;
}

LAYER_API int MPI_Comm_size(MPI_Comm comm, int *size) {
  int rc = layer_check("MPI_Comm_size", comm, 1);
  if (rc == MPI_SUCCESS)
    *size = comm == MPI_COMM_SELF ? 1 : layer.W + 1;
  return rc;
}

/* The masters' clock with replicas (ft_wtime), so that a program that
 * decides on time decides alike in each. */
LAYER_API double MPI_Wtime(void) { return ft_wtime(); }

/* The error handler is the layer's: FTMW itself runs MPI with
 * MPI_ERRORS_RETURN. Only the two predefined ones are known. */
static int set_errhandler(const char *call, MPI_Comm comm, MPI_Errhandler e) {
  int rc = layer_check(call, comm, 1);
  if (rc != MPI_SUCCESS)
    return rc;
  if (e != MPI_ERRORS_RETURN && e != MPI_ERRORS_ARE_FATAL)
    ftmw_mpi_unsupported("an error handler of the program's own");
  if (comm == MPI_COMM_WORLD)
    layer.errors_return = e == MPI_ERRORS_RETURN;
  return MPI_SUCCESS;
}

LAYER_API int MPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler e) {
  return set_errhandler("MPI_Comm_set_errhandler", comm, e);
}

LAYER_API int MPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler *e) {
  int rc = layer_check("MPI_Comm_get_errhandler", comm, 1);
  if (rc == MPI_SUCCESS)
    *e = comm == MPI_COMM_WORLD && layer.errors_return ? MPI_ERRORS_RETURN
                                                       : MPI_ERRORS_ARE_FATAL;
  return rc;
}

/* MPI_TAG_UB is the layer's; the other attributes of MPI_COMM_WORLD are
 * MPI's own. */
LAYER_API int MPI_Comm_get_attr(MPI_Comm comm, int key, void *value,
                                int *flag) {
  int rc = layer_check("MPI_Comm_get_attr", comm, 0);
  if (rc != MPI_SUCCESS)
    return rc;
  static int tag_ub = LAYER_TAG_UB;
  if (key == MPI_TAG_UB) {
    *(int **)value = &tag_ub;
    *flag = 1;
    return MPI_SUCCESS;
  }
  if (key == MPI_UNIVERSE_SIZE) {
    static int size;
    size = layer.W + 1;
    *(int **)value = &size;
    *flag = 1;
    return MPI_SUCCESS;
  }
  return PMPI_Comm_get_attr(MPI_COMM_WORLD, key, value, flag);
}
