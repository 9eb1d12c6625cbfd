/* docs/architecture.md's table "Where the library ends the process",
 * generated from the library's own table of reasons (ftmw/leave.h).
 *   exit_table               prints the table (markdown)
 *   exit_table --check DOC   exits 1 if DOC's table, between the lines
 *                            BEGIN and END below, is not that one
 *   exit_table --update DOC  writes it there */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "leave.h"

#define BEGIN "<!-- exit table: generated from ftmw/leave.c by tests/exit_table.c --update -->"
#define END "<!-- end of the exit table -->"

static char *table(void) {
  size_t cap = 1 << 16, n = 0;
  char *t = malloc(cap);
  if (t == NULL)
    exit(2);
  n += (size_t)snprintf(t + n, cap - n,
                        "| reason (trace `exit`) | status | where | who | why "
                        "| status recorded for ftmwrun | output flushed "
                        "| MPI ended first |\n"
                        "|---|---|---|---|---|---|---|---|\n");
  for (int i = 0; i < FTMW_LEAVE_REASONS; i++) {
    const ftmw_leave_info *r = &ftmw_leave_reasons[i];
    char status[32];
    if (r->status >= 0)
      snprintf(status, sizeof(status), "%d", r->status);
    else
      snprintf(status, sizeof(status), "the caller's");
    n += (size_t)snprintf(t + n, cap - n,
                          "| `%s` | %s%s | %s | %s | %s | %s | %s | %s |\n",
                          r->name, status,
                          r->handlers ? " (`exit`: a normal end)" : "",
                          r->where, r->who, r->why,
                          r->record ? "yes" : "no", r->flush ? "yes" : "no",
                          r->end_mpi ? "yes" : "no");
    if (n >= cap) {
      fprintf(stderr, "exit_table: the table passes %zu bytes\n", cap);
      exit(2);
    }
  }
  return t;
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "r");
  if (f == NULL) {
    perror(path);
    exit(2);
  }
  fseek(f, 0, SEEK_END);
  long len = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = malloc((size_t)len + 1);
  if (s == NULL || fread(s, 1, (size_t)len, f) != (size_t)len)
    exit(2);
  s[len] = '\0';
  fclose(f);
  return s;
}

/* 0 when doc's table is t (check), or was made t (update); 1 when it is
 * not; 2 on a bad file. */
static int check_or_update(const char *what, const char *path, const char *t) {
  char *doc = slurp(path);
  char *b = strstr(doc, BEGIN "\n"), *e = b ? strstr(b, END) : NULL;
  int rc = 0;
  if (e != NULL)
    b += strlen(BEGIN "\n");
  if (e == NULL) {
    fprintf(stderr, "%s: no lines '%s' and '%s'\n", path, BEGIN, END);
    rc = 2;
  } else if (strcmp(what, "--check") == 0) {
    if ((size_t)(e - b) != strlen(t) || memcmp(b, t, strlen(t)) != 0) {
      fprintf(stderr, "%s: its exit table is not ftmw/leave.c's: run "
                      "tests/exit_table --update %s (in a build)\n",
              path, path);
      rc = 1;
    }
  } else {
    FILE *f = fopen(path, "w");
    if (f == NULL || fwrite(doc, 1, (size_t)(b - doc), f) != (size_t)(b - doc) ||
        fputs(t, f) < 0 || fputs(e, f) < 0) {
      perror(path);
      rc = 2;
    }
    if (f != NULL && fclose(f) != 0)
      rc = 2;
  }
  free(doc);
  return rc;
}

int main(int argc, char **argv) {
  char *t = table();
  int rc = 0;
  if (argc == 1)
    fputs(t, stdout);
  else if (argc == 3 && (!strcmp(argv[1], "--check") || !strcmp(argv[1], "--update")))
    rc = check_or_update(argv[1], argv[2], t);
  else {
    fprintf(stderr, "usage: exit_table [--check|--update DOC]\n");
    rc = 2;
  }
  free(t);
  return rc;
}
