#!/bin/sh
# Every C block in docs/*.md and README.md is taken from a file that the
# build compiles: its lines (split at lines holding only "...") must appear,
# in order and contiguous, in a file of docs/examples/, examples/ or
# include/. So the documentation cannot drift from code that compiles.
# Usage: tests/docs_snippets.sh SOURCE_DIR
set -u
src=$1
cd "$src" || exit 1
files=$(find docs/examples examples include -name '*.[ch]' | sort)
awk -v files="$files" '
BEGIN {
  n = split(files, F, "\n")
  for (i = 1; i <= n; i++) {            # every source line, per file
    k = 0
    while ((getline line < F[i]) > 0) { sub(/[ \t]+$/, "", line); SRC[i, ++k] = line }
    LEN[i] = k; close(F[i])
  }
  nf = n
}
function found(   i, s, j, ok) {        # chunk C[1..nc] contiguous in a file?
  if (nc == 0) return 1
  for (i = 1; i <= nf; i++)
    for (s = 1; s + nc - 1 <= LEN[i]; s++) {
      ok = 1
      for (j = 1; j <= nc && ok; j++) if (SRC[i, s + j - 1] != C[j]) ok = 0
      if (ok) return 1
    }
  return 0
}
function check() {
  if (!found()) { printf "%s:%d: C block not found in any compiled file:\n", FILENAME, start; for (j = 1; j <= nc; j++) print "    " C[j]; bad++ }
  nc = 0
}
FNR == 1 { inblock = 0 }
/^[ \t]*```c[ \t]*$/ && !inblock {   # a block inside a list is indented
  inblock = 1; nc = 0; start = FNR; blocks++; match($0, /^[ \t]*/); indent = RLENGTH; next
}
/^[ \t]*```/ && inblock { check(); inblock = 0; next }
inblock {
  line = $0; sub(/[ \t]+$/, "", line)
  if (substr(line, 1, indent) ~ /^[ \t]*$/) line = substr(line, indent + 1)
  if (line ~ /^[ \t]*\.\.\.$/) { check(); next }
  C[++nc] = line
}
END { printf "docs: %d C blocks checked, %d not found\n", blocks, bad; exit bad > 0 }
' docs/*.md README.md
