# SPDX-License-Identifier: MIT
# Helpers of the shell tests of the `pagealloc` program (tests/test_*.sh):
#   source "$(dirname "${BASH_SOURCE[0]}")/cli_helpers.bash" "$@"
# sets $PA (the program, from $1 or $PAGEALLOC) and $TMP (removed at exit), and
# gives run, rc_of, expect_ok, expect_refused, json_check, text_check, check,
# pass, fail and finish.
# (Not a test itself: ctest runs tests/*.sh only.)
PA="${1:-${PAGEALLOC:-}}"
if [ -z "$PA" ] || [ ! -x "$PA" ]; then
	echo "usage: $0 PATH-TO-pagealloc" >&2
	exit 2
fi
command -v python3 >/dev/null || { echo "python3 is needed" >&2; exit 2; }

TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
passed=0
failed=0

pass() { passed=$((passed + 1)); echo "[  OK  ] $1"; }
fail() { failed=$((failed + 1)); echo "[ FAIL ] $1"; shift; for l in "$@"; do echo "    $l"; done; }

# run NAME ARGS...: run the program, keep stdout/stderr/status in $TMP/NAME.*
run() {
	local name="$1"; shift
	"$PA" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err"
	echo $? >"$TMP/$name.rc"
}
rc_of() { cat "$TMP/$1.rc"; }

# expect_ok NAME DESC ARGS...: exit status 0
expect_ok() {
	local name="$1" desc="$2"; shift 2
	run "$name" "$@"
	if [ "$(rc_of "$name")" = 0 ]; then
		pass "$desc"
	else
		fail "$desc" "pagealloc $* exited $(rc_of "$name")" "stderr: $(head -c 400 "$TMP/$name.err")"
	fi
}

# py_check NAME DESC PRELUDE PYTHON: PRELUDE binds the stdout of NAME (file
# sys.argv[1]); PYTHON, a series of assert statements, then runs.
py_check() {
	local name="$1" desc="$2" prelude="$3" code="$4"
	if python3 -c "$prelude
exec(sys.argv[2])" "$TMP/$name.out" "$code" >"$TMP/$name.py" 2>&1; then
		pass "$desc"
	else
		fail "$desc" "$(tail -n 3 "$TMP/$name.py")" "output: $(head -c 300 "$TMP/$name.out")"
	fi
}

# json_check NAME DESC PYTHON: the stdout of NAME parses as JSON (bound to j).
json_check() {
	py_check "$1" "$2" 'import json, sys
with open(sys.argv[1]) as f:
    j = json.load(f)' "$3"
}

# text_check NAME DESC PYTHON: the stdout of NAME as text in t (re imported).
text_check() {
	py_check "$1" "$2" 'import re, sys
with open(sys.argv[1]) as f:
    t = f.read()' "$3"
}

# expect_refused NAME DESC PATTERN ARGS...: exits non-zero with PATTERN on stderr
expect_refused() {
	local name="$1" desc="$2" pat="$3"; shift 3
	run "$name" "$@"
	if [ "$(rc_of "$name")" != 0 ] && grep -q -- "$pat" "$TMP/$name.err"; then
		pass "$desc"
	else
		fail "$desc" "pagealloc $* exited $(rc_of "$name")" "stderr: $(head -c 300 "$TMP/$name.err")"
	fi
}

# check DESC COMMAND...: passes when COMMAND exits 0; a failure shows its stderr.
check() {
	local desc="$1"; shift
	if "$@" 2>"$TMP/check.err"; then
		pass "$desc"
	else
		local lines
		mapfile -t lines < <(head -n 8 "$TMP/check.err")
		fail "$desc" "${lines[@]}"
	fi
}

# finish: the summary line; the script's status is 0 only if nothing failed.
finish() {
	echo "$passed passed, $failed failed"
	[ "$failed" = 0 ]
}
