#!/usr/bin/env bash
# The wheel is complete and the core is light (issue 28). Builds referee's wheel, then:
#   1. a fresh venv with the core only (`pip install referee-*.whl`): install time and size;
#      there `referee doctor`, `exec`, HumanEval imported and verified, a task of every core
#      domain (code, shell, tool world, Verilog, SQL on SQLite) generated and verified, and a
#      command that needs an extra refused in one line;
#   2. a fresh venv with every extra (`referee-*.whl[all]`, what `pip install referee` pulled
#      before the split): install time and size; there `referee serve` answers /health on
#      127.0.0.1, and a task of every domain (sql, dataframe, numeric, shell, toolworld,
#      verilog) is generated and verified: the runners the sandbox loads by path are in the wheel.
# Both installs are constrained to requirements.lock (the versions tested here) and run from the
# same package indexes and pip cache. Prints one line per step, the numbers last.
#   bench/wheel_check.sh [WORKDIR]        (default: a fresh temporary folder, removed after)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PYTHON=${PYTHON:-python3.11}
WORK=${1:-$(mktemp -d /tmp/referee-wheel-check.XXXXXX)}
[ -n "${1:-}" ] || trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK"
say() { printf '%s\n' "$*"; }
fail() { printf 'wheel_check: FAILED: %s\n' "$*" >&2; exit 1; }

say "wheel_check: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -srm), $(nproc) CPUs, $("$PYTHON" --version)"
say "wheel_check: command: bench/wheel_check.sh${1:+ $1}"
say "wheel_check: commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- src pyproject.toml || echo '+changes')"

# The wheel, with the build backend pyproject names (from the project's venv: no download).
rm -rf "$WORK/whl" && mkdir -p "$WORK/whl"
.venv/bin/python -m pip wheel -q --disable-pip-version-check --no-deps --no-build-isolation \
  -w "$WORK/whl" "$ROOT" >/dev/null
WHEEL=$(ls "$WORK"/whl/referee-*.whl)
say "wheel: $(basename "$WHEEL"), $(du -h "$WHEEL" | cut -f1), $(unzip -l "$WHEEL" | tail -1 | awk '{print $2}') files"

install() {  # install VENV SPEC -> seconds on stdout
  local venv=$1 spec=$2 t0 t1
  rm -rf "$venv"
  "$PYTHON" -m venv "$venv"
  t0=$(date +%s)
  "$venv/bin/python" -m pip install -q --disable-pip-version-check -c "$ROOT/requirements.lock" \
    "$spec" 2>&1 | { grep -v "is ignored: it is neither a file nor a directory" || true; } >&2
  t1=$(date +%s)
  echo $((t1 - t0))
}

gen_verify() {  # gen_verify VENV FAMILY [SEED]: generate one task, verify its reference
  local venv=$1 family=$2 seed=${3:-0} dir="$WORK/tasks-$(basename "$1")"
  mkdir -p "$dir"
  (cd "$dir" && "$venv/bin/referee" tasks generate "$family" --count 1 --seed "$seed" \
      --out "$family.jsonl" >/dev/null 2>&1 \
    && "$venv/bin/referee" tasks gold "$family.jsonl" >"$family.gold.jsonl" \
    && "$venv/bin/referee" verify --tasks "$family.jsonl" --samples "$family.gold.jsonl" 2>/dev/null) \
    | grep -q "1 samples: 1 passed" || fail "$(basename "$venv"): $family"
  say "  $(basename "$venv"): $family generated and its reference verified"
}

# 1. The core only.
CORE="$WORK/core"
core_s=$(install "$CORE" "$WHEEL")
core_size=$(du -sh "$CORE" | cut -f1)
say "core venv: installed in ${core_s}s, $core_size"
for m in torch transformers ray duckdb pandas scipy fastapi uvicorn jinja2 libcst pyarrow; do
  ! "$CORE/bin/python" -c "import $m" 2>/dev/null || fail "core venv has $m"
done
say "  core: none of torch transformers ray duckdb pandas scipy fastapi uvicorn jinja2 libcst pyarrow installed"
"$CORE/bin/referee" doctor >/dev/null || fail "core: referee doctor"
say "  core: referee doctor exits 0"
echo 'print(6 * 7)' >"$WORK/p.py"
[ "$("$CORE/bin/referee" exec --python "$WORK/p.py" 2>/dev/null)" = 42 ] || fail "core: exec"
say "  core: referee exec --python p.py prints 42"
(cd "$WORK" && "$CORE/bin/referee" tasks import humaneval --out he.jsonl >/dev/null 2>&1 \
  && "$CORE/bin/referee" tasks gold he.jsonl | head -5 >he.gold.jsonl \
  && "$CORE/bin/referee" verify --tasks he.jsonl --samples he.gold.jsonl 2>/dev/null) \
  | grep -q "5 samples: 5 passed" || fail "core: humaneval"
say "  core: HumanEval imported, 5 references verified"
for family in list-ops ops-permissions shop-refund v-comb sql-filter; do
  gen_verify "$CORE" "$family" 0
done
set +e
refused=$(cd "$WORK" && "$CORE/bin/referee" tasks generate num-linear --count 1 --out n.jsonl 2>&1)
rc=$?
set -e
[ "$rc" = 2 ] && [ "$(printf '%s\n' "$refused" | wc -l)" = 1 ] || fail "core: num-linear ($rc): $refused"
say "  core: exit $rc, one line: $refused"

# 2. Every extra.
ALL="$WORK/all"
all_s=$(install "$ALL" "$WHEEL[all]")
all_size=$(du -sh "$ALL" | cut -f1)
say "all venv: installed in ${all_s}s, $all_size"
port=$("$ALL/bin/python" -c "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])")
(cd "$WORK" && exec "$ALL/bin/referee" serve --tasks tasks-core/list-ops.jsonl --no-auth \
  --host 127.0.0.1 --port "$port" >"$WORK/serve.log" 2>&1) &
serve_pid=$!
ok=""
for _ in $(seq 60); do
  if "$ALL/bin/python" -c "import httpx, sys; sys.exit(httpx.get('http://127.0.0.1:$port/health').status_code != 200)" 2>/dev/null; then
    ok=1; break
  fi
  sleep 1
done
kill -TERM "$serve_pid" 2>/dev/null || true
wait "$serve_pid" 2>/dev/null || true
[ -n "$ok" ] || fail "all: referee serve: $(tail -3 "$WORK/serve.log")"
say "  all: referee serve answered GET /health on 127.0.0.1:$port, stopped by SIGTERM"
for family in sql-join:1 df-clean num-linear ops-logrotate shop-refund v-arith; do
  gen_verify "$ALL" "${family%%:*}" "$( [ "${family#*:}" != "$family" ] && echo "${family#*:}" || echo 0)"
done

say ""
say "install (pip install, constrained to requirements.lock, warm pip cache):"
say "  core   referee-*.whl        ${core_s}s  $core_size"
say "  all    referee-*.whl[all]   ${all_s}s  $all_size"
