#!/usr/bin/env bash
# Fuzzes every fuzz target of the module (each FuzzX in a *_test.go), one
# after the other, with a budget per target, and prints per target the
# executions and seconds, then a summary.
#
#   bash scripts/fuzz.sh                  # 20000 executions per target
#   bash scripts/fuzz.sh 500000x          # a longer campaign
#   bash scripts/fuzz.sh 60s FuzzReadHlog # a duration; only targets matching
#                                         # the regular expression (grep -E)
#
# This is a search, not a gate: two runs of one tree explore different
# inputs. `.ci/test` runs only each target's seed corpus (go test runs the
# files in testdata/fuzz/FuzzX/ as ordinary tests). A failing input that
# go test -fuzz finds is written to PKG/testdata/fuzz/FuzzX/ and left
# there: fix the code, keep the file, and it becomes a seed the gate runs.
# Such files are listed at the end, and the script exits 1.
#
# Prefer a count (NNNx) to a duration: with a duration, Go 1.26's fuzz
# coordinator can end a clean run with a bare "context deadline exceeded"
# (golang/go#75804, fixed in Go 1.27). Shrinking a failing input is bounded
# by FUZZMINIMIZE (default 10s), so a slow target cannot stall the run.
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"

budget=${1:-20000x}
filter=${2:-.}
minimize=${FUZZMINIMIZE:-10s}
duration_re='^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$'
if [[ $budget =~ ^[1-9][0-9]*x$ ]]; then
  timeout=1h # a count ends by itself; this only catches a hung target
elif [[ $budget =~ $duration_re ]]; then
  timeout=0 # the duration bounds the run
else
  echo "fuzz.sh: budget \"$budget\": expected a count of executions (20000x) or a duration (60s, 5m)" >&2
  exit 2
fi
echo | grep -Eq -- "$filter" 2>/dev/null
if [ $? = 2 ]; then
  echo "fuzz.sh: filter \"$filter\": not an extended regular expression" >&2
  exit 2
fi

log=$(mktemp "${TMPDIR:-/tmp}/nettune-fuzz.XXXXXX")
trap 'rm -f "$log"' EXIT

now_ms() { date +%s%3N; }
secs() { printf '%d.%01d' $(($1 / 1000)) $(($1 % 1000 / 100)); }

targets=0 passed=0 total_execs=0
failed=() inputs=()
run_start=$(now_ms)
echo "== fuzzing every target matching \"$filter\": $budget each (minimize at most $minimize)"
for f in $(grep -rl --include='*_test.go' '^func Fuzz' . | sort); do
  dir=$(dirname "$f")
  for target in $(grep -o '^func Fuzz[A-Za-z0-9_]*' "$f" | cut -d' ' -f2); do
    grep -Eq -- "$filter" <<<"$target" || continue
    targets=$((targets + 1))
    start=$(now_ms)
    go test -run='^$' -fuzz="^${target}\$" -fuzztime="$budget" -fuzzminimizetime="$minimize" \
      -timeout="$timeout" "$dir" >"$log" 2>&1
    rc=$?
    ms=$(($(now_ms) - start))
    execs=$(grep -o 'execs: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
    total_execs=$((total_execs + ${execs:-0}))
    if [ "$rc" = 0 ]; then
      passed=$((passed + 1))
      printf -- '-- %-24s %-24s ok    %8s execs in %6s s\n' "${dir#./}" "$target" "${execs:--}" "$(secs "$ms")"
      continue
    fi
    printf -- '-- %-24s %-24s FAIL  %8s execs in %6s s\n' "${dir#./}" "$target" "${execs:--}" "$(secs "$ms")"
    sed 's/^/   | /' "$log"
    failed+=("${dir#./} $target")
    # go test: "Failing input written to testdata/fuzz/FuzzX/0123abcd"
    for p in $(grep -o 'Failing input written to [^ ]*' "$log" | cut -d' ' -f5); do
      inputs+=("${dir#./}/$p")
    done
  done
done

echo "== fuzz summary: $targets targets, $budget each: $passed passed, ${#failed[@]} failed; $total_execs execs in $(secs $(($(now_ms) - run_start))) s"
if [ "$targets" = 0 ]; then
  echo "no fuzz target matches \"$filter\""
  exit 1
fi
if ((${#failed[@]})); then
  printf 'failed: %s\n' "${failed[@]}"
  if ((${#inputs[@]})); then
    echo "failing inputs, kept as seeds (fix the code, then commit them; go test runs them):"
    printf '  %s\n' "${inputs[@]}"
  else
    echo "no failing input was written (see the output above: a build error, a failing seed, a timeout)"
  fi
  exit 1
fi
