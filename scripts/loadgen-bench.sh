#!/usr/bin/env bash
# loadgen-bench.sh: runs examples/loadgen and Debian's wrk against the same
# target, in one go, and prints ratios. The target is nginx (Debian's
# nginx-light) serving a ~400-byte page on 127.0.0.1, started here on a free
# port with its own temporary prefix and config, and stopped by PID.
#
# Figures are ratios measured on a shared machine; they are reported, never
# asserted. Needs: go, wrk, nginx, GNU time (/usr/bin/time, Debian package
# "time"), python3 (to read loadgen's --json), ss (iproute2).
#
#   bash scripts/loadgen-bench.sh            # all scenarios, 10 s each
#   DURATION=5 bash scripts/loadgen-bench.sh
set -euo pipefail
cd "$(dirname "$0")/.."

DURATION=${DURATION:-10}
CONNS=${CONNS:-64}
RATE=${RATE:-15000}
THREADS=${THREADS:-2}
IDLE_CONNS=${IDLE_CONNS:-10000}

for tool in wrk nginx /usr/bin/time python3 ss go; do
  command -v "$tool" >/dev/null || { echo "loadgen-bench: $tool not found" >&2; exit 1; }
done

work=$(mktemp -d /tmp/loadgen-bench.XXXXXX)
nginx_pid=""
cleanup() {
  if [ -n "$nginx_pid" ] && kill -0 "$nginx_pid" 2>/dev/null; then
    kill -QUIT "$nginx_pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$nginx_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$nginx_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT INT TERM

go build -o "$work/loadgen" ./examples/loadgen

# A free port on 127.0.0.1, below the ephemeral range (a client socket of an
# earlier run, in TIME_WAIT or not, made nginx's bind fail with EADDRINUSE),
# and not used by any socket in any state.
port=""
eph_lo=$(awk '{print $1}' /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
span=$(( eph_lo > 21024 ? eph_lo - 20000 : 1024 ))
for _ in $(seq 100); do
  p=$((20000 + RANDOM % span))
  if ! ss -Htan "sport = :$p" | grep -q .; then port=$p; break; fi
done
[ -n "$port" ] || { echo "loadgen-bench: no free port" >&2; exit 1; }

mkdir -p "$work/nginx/logs" "$work/nginx/html"
head -c 400 /dev/zero | tr '\0' 'x' | fold -w 79 > "$work/nginx/html/index.html"
cat > "$work/nginx/nginx.conf" <<CONF
worker_processes 1;
worker_rlimit_nofile 30000;
pid $work/nginx/nginx.pid;
error_log $work/nginx/logs/error.log warn;
daemon off;
events { worker_connections 25000; }
http {
  access_log off;
  keepalive_requests 1000000;
  keepalive_timeout 120s;
  client_body_temp_path $work/nginx/tmp;
  proxy_temp_path $work/nginx/tmp;
  fastcgi_temp_path $work/nginx/tmp;
  uwsgi_temp_path $work/nginx/tmp;
  scgi_temp_path $work/nginx/tmp;
  server {
    listen 127.0.0.1:$port;
    root $work/nginx/html;
    location / { index index.html; }
  }
}
CONF
mkdir -p "$work/nginx/tmp"
nginx -p "$work/nginx" -c "$work/nginx/nginx.conf" 2>"$work/nginx/logs/stderr" &
nginx_pid=$!
url="http://127.0.0.1:$port/index.html"
for _ in $(seq 50); do
  if curl_ok=$( (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null && echo ok); then break; fi
  sleep 0.1
done
[ "${curl_ok:-}" = ok ] || { echo "loadgen-bench: nginx did not start:"; cat "$work/nginx/logs/stderr" "$work/nginx/logs/error.log"; exit 1; } >&2
echo "target: nginx $(nginx -v 2>&1 | sed 's/.*\///') pid $nginx_pid at $url ($(wc -c < "$work/nginx/html/index.html")-byte page)"
echo "machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo

# timed OUT CMD...: runs CMD with GNU time; leaves "user sys maxrss_kb" in OUT.time.
timed() {
  local out=$1; shift
  /usr/bin/time -f "%U %S %M" -o "$out.time" "$@" >"$out" 2>"$out.err"
}
cpu_s() { awk '{print $1 + $2}' "$1.time"; }
rss_mb() { awk '{printf "%.1f", $3 / 1024}' "$1.time"; }
wrk_reqs() { awk '/requests in/ {print $1}' "$1"; }
wrk_rps() { awk '/^Requests\/sec:/ {print $2}' "$1"; }
json() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$1" "$2"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) print "n/a"; else printf "%.2f", a / b }'; }
per_req_us() { awk -v c="$1" -v n="$2" 'BEGIN { if (n == 0) print "n/a"; else printf "%.2f", c * 1e6 / n }'; }

echo "== 1. closed loop, $CONNS connections, ${DURATION}s, $THREADS threads"
timed "$work/wrk.closed" wrk -t"$THREADS" -c"$CONNS" -d"$DURATION" "$url"
timed "$work/lg.closed" "$work/loadgen" -t"$THREADS" -c"$CONNS" -d"$DURATION" --json "$url"
w_rps=$(wrk_rps "$work/wrk.closed"); w_n=$(wrk_reqs "$work/wrk.closed")
l_rps=$(json "$work/lg.closed" 'r["achieved_rate"]'); l_n=$(json "$work/lg.closed" 'r["requests"]')
w_us=$(per_req_us "$(cpu_s "$work/wrk.closed")" "$w_n"); l_us=$(per_req_us "$(cpu_s "$work/lg.closed")" "$l_n")
printf "  wrk:     %10.0f req/s  %6s CPU-us/req  (%s requests, errors: %s)\n" "$w_rps" "$w_us" "$w_n" "$(grep -c 'Socket errors' "$work/wrk.closed" || true)"
printf "  loadgen: %10.0f req/s  %6s CPU-us/req  (%s requests, socket errors %s)\n" "$l_rps" "$l_us" "$l_n" "$(json "$work/lg.closed" 'sum(r["errors"][k] for k in ("connect","read","write","timeout"))')"
echo "  ratio loadgen/wrk: req/s $(ratio "$l_rps" "$w_rps")  CPU-us/req $(ratio "$l_us" "$w_us")   (targets: >= 1.00 and <= 1.00)"
echo

echo "== 2. fixed rate $RATE req/s, $CONNS connections, ${DURATION}s"
timed "$work/lg.rate" "$work/loadgen" -t"$THREADS" -c"$CONNS" -R"$RATE" -d"$DURATION" --json "$url"
r_rps=$(json "$work/lg.rate" 'r["achieved_rate"]'); r_n=$(json "$work/lg.rate" 'r["requests"]')
r_us=$(per_req_us "$(cpu_s "$work/lg.rate")" "$r_n")
printf "  loadgen: achieved %.1f req/s of %s (%s%%), %s CPU-us/req\n" "$r_rps" "$RATE" "$(awk -v a="$r_rps" -v b="$RATE" 'BEGIN{printf "%+.2f", (a-b)*100/b}')" "$r_us"
echo "  ratio CPU-us/req loadgen at ${RATE}/s / wrk closed loop: $(ratio "$r_us" "$w_us")  (Debian's wrk 4.1 has no -R; DESIGN.md's wrk2 at 15k/s: ~20 CPU-us/req)"
timed "$work/lg.slack" "$work/loadgen" -t"$THREADS" -c"$CONNS" -R"$RATE" -d"$DURATION" --slack 1ms --json "$url"
s_rps=$(json "$work/lg.slack" 'r["achieved_rate"]'); s_us=$(per_req_us "$(cpu_s "$work/lg.slack")" "$(json "$work/lg.slack" 'r["requests"]')")
printf "  loadgen --slack 1ms (batches sends as wrk2's 1 ms timers do): achieved %.1f req/s, %s CPU-us/req, send lag p50 %s us; ratio to wrk closed loop %s\n" "$s_rps" "$s_us" "$(json "$work/lg.slack" 'r["histograms"]["lag"]["percentiles_us"]["50"]')" "$(ratio "$s_us" "$w_us")"
echo "== 4. pacing precision (same run, --slack 0)"
echo "  send lag (actual - intended): p50 $(json "$work/lg.rate" 'r["histograms"]["lag"]["percentiles_us"]["50"]') us, p99 $(json "$work/lg.rate" 'r["histograms"]["lag"]["percentiles_us"]["99"]') us, p99.9 $(json "$work/lg.rate" 'r["histograms"]["lag"]["percentiles_us"]["99.9"]') us"
echo "  corrected p50 $(json "$work/lg.rate" 'r["histograms"]["latency"]["percentiles_us"]["50"]') us vs service-time p50 $(json "$work/lg.rate" 'r["histograms"]["service"]["percentiles_us"]["50"]') us; corrected p99 $(json "$work/lg.rate" 'r["histograms"]["latency"]["percentiles_us"]["99"]') us vs service p99 $(json "$work/lg.rate" 'r["histograms"]["service"]["percentiles_us"]["99"]') us"
echo "  (wrk2's 1 ms timers add ~0.8 ms to every corrected percentile: p50 0.97 ms against nginx answering in 0.12 ms)"
echo

echo "== 5. why not net/http: go test -bench ClosedLoop (64 connections, closed loop, 100000 requests each)"
LOADGEN_BENCH_URL="$url" go test -run '^$' -bench 'ClosedLoop' -benchtime 100000x ./loadgen/ | awk '/^Benchmark/ {printf "  %-32s %10s req/s %8s CPU-us/req\n", $1, $7, $5}'
echo

echo "== 3. $IDLE_CONNS keep-alive connections, idle then active (open model, $((IDLE_CONNS)) req/s, 5 s)"
timed "$work/lg.idle" "$work/loadgen" -t"$THREADS" -c"$IDLE_CONNS" -R"$IDLE_CONNS" -d5 --timeout 10 --json "$url" || true
if [ -s "$work/lg.idle" ]; then
  echo "  loadgen: connects $(json "$work/lg.idle" 'r["connects"]') of $IDLE_CONNS, requests $(json "$work/lg.idle" 'r["requests"]'), socket errors $(json "$work/lg.idle" 'sum(r["errors"][k] for k in ("connect","read","write","timeout"))'), open-files limit $(json "$work/lg.idle" 'r["open_files"]["before"]') -> $(json "$work/lg.idle" 'r["open_files"]["after"]'), peak RSS $(rss_mb "$work/lg.idle") MiB (target <= 150)"
else
  echo "  loadgen failed:"; cat "$work/lg.idle.err"
fi
timed "$work/wrk.idle" wrk -t"$THREADS" -c"$IDLE_CONNS" -d5 --timeout 10 "$url" || true
werr=$(awk '/Socket errors/' "$work/wrk.idle" | sed 's/^ *//')
echo "  wrk (closed loop, same connections): peak RSS $(rss_mb "$work/wrk.idle") MiB, ${werr:-no socket errors}"
