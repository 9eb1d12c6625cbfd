#!/bin/sh
# tools/modgraph on tiny objects laid out like a build directory (a calls
# b, b calls c, c calls a: one cycle; d reads a's data), on the same
# without the cycle, on a tiny source tree (--include), and on bad
# arguments: its output and exit status.
# Usage: tests/modgraph_test.sh SOURCE_DIR
set -u
src=$1
mg=$src/tools/modgraph
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM
fails=0

# check NAME WANT_STATUS WANT_OUTPUT CMD...: stdout and status of CMD.
check() {
  name=$1 want_rc=$2 want=$3; shift 3
  out=$("$@" 2>"$tmp/err"); rc=$?
  if [ "$rc" != "$want_rc" ] || [ "$out" != "$want" ]; then
    echo "FAIL $name: status $rc (want $want_rc), output:"; echo "$out"
    echo "wanted:"; echo "$want"; echo "stderr:"; cat "$tmp/err"
    fails=$((fails + 1))
  else
    echo "ok   $name"
  fi
}

objs=$tmp/build/CMakeFiles/ftmw_static.dir/ftmw
mkdir -p "$objs"
build() { # c.c's body
  cat >"$tmp/a.c" <<'EOF'
int b(void);
int a_data = 1;
int a(void) { return b() + 1; }
EOF
  cat >"$tmp/b.c" <<'EOF'
int c(void);
int b(void) { return c() + 1; }
EOF
  printf 'int a(void);\nint c(void) { %s }\n' "$1" >"$tmp/c.c"
  cat >"$tmp/d.c" <<'EOF'
#include <stdio.h>
extern int a_data;
int d(void) { return printf("%d\n", a_data); }
EOF
  for m in a b c d; do
    ${CC:-cc} -c -O0 -o "$objs/$m.c.o" "$tmp/$m.c" || exit 1
  done
}

build 'return a() + 1;'
check cycle 1 "a -> b
b -> c
c -> a
d -> a
cycle: a b c
modgraph: 4 modules, 4 edges, 1 cycles" "$mg" "$tmp/build"

out=$("$mg" --dot "$tmp/build"); rc=$?
case $out in
  "digraph modgraph {"*'"c" -> "a" [color=red];'*'"d" -> "a";'*"// cycle: a b c"*"}")
    if [ $rc = 1 ]; then echo "ok   dot"; else echo "FAIL dot: status $rc"; fails=$((fails + 1)); fi ;;
  *) echo "FAIL dot:"; echo "$out"; fails=$((fails + 1)) ;;
esac

build 'return 1;'
check no_cycle 0 "a -> b
b -> c
c ->
d -> a
modgraph: 4 modules, 3 edges, 0 cycles" "$mg" "$tmp/build"

# --include reads the ftmw/ beside the script: a copy in a tiny tree.
# x.c includes y.h, x.h includes z.h (no z.c: a node of its own), y.h
# includes x.h; system headers and headers not in ftmw/ are ignored.
mkdir -p "$tmp/tree/tools" "$tmp/tree/ftmw"
cp "$mg" "$tmp/tree/tools/modgraph"
printf '#include "x.h"\n#include "y.h"\n#include <stdio.h>\n' >"$tmp/tree/ftmw/x.c"
printf '#include "z.h"\n#include "ftmw.h"\n' >"$tmp/tree/ftmw/x.h"
printf '#include "y.h"\n' >"$tmp/tree/ftmw/y.c"
printf '  # include "x.h" /* indented */\n' >"$tmp/tree/ftmw/y.h"
: >"$tmp/tree/ftmw/z.h"
check include 1 "x -> y z.h
y -> x
z.h ->
cycle: x y
modgraph: 3 modules, 3 edges, 1 cycles" "$tmp/tree/tools/modgraph" --include

mkdir "$tmp/empty"
check missing_dir 2 "" "$mg" "$tmp/nonexistent"
check no_objects 2 "" "$mg" "$tmp/empty"
check no_args 2 "" "$mg"
check bad_option 2 "" "$mg" --bogus "$tmp/build"
check include_with_dir 2 "" "$mg" --include "$tmp/build"
"$mg" "$tmp/empty" 2>"$tmp/err"
if grep -q "no library objects" "$tmp/err"; then echo "ok   no_objects message"
else echo "FAIL no_objects message:"; cat "$tmp/err"; fails=$((fails + 1)); fi

echo "modgraph_test: $fails failed"
[ $fails = 0 ]
