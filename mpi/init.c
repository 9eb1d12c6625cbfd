/* The MPI layer's start and end, and the calls about the job (rank,
 * size, time, error handlers, attributes). */
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
  if (rank == 0 && layer.replicas)
    layer_output_capture();
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
  layer_output_final();
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
