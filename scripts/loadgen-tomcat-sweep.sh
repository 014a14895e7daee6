#!/usr/bin/env bash
# loadgen-tomcat-sweep.sh: the IBM tuning-variations study's load
# sweep (20 to 80 users) on this machine. Starts
# Debian's Tomcat 10 (tomcat10 + tomcat10-examples) with its own
# CATALINA_BASE on a free 127.0.0.1 port, runs
#   loadgen sweep -c LEVELS --pid <Tomcat's JVM> -plot OUT/sweep.svg URL
# against its HelloWorldExample servlet, sampling the JVM's CPU from
# /proc/PID/stat, and stops Tomcat by PID (Debian ships <Server port="-1">,
# so catalina.sh stop cannot).
#
#   bash scripts/loadgen-tomcat-sweep.sh                  # -c 2,8,32,128,512, 5 s each
#   LEVELS=20,40,60,80 DURATION=10 OUT=/tmp/sw bash scripts/loadgen-tomcat-sweep.sh
set -euo pipefail
cd "$(dirname "$0")/.."

LEVELS=${LEVELS:-2,8,32,128,512}
DURATION=${DURATION:-5}
WARMUP=${WARMUP:-3}
THREADS=${THREADS:-2}
OUT=${OUT:-$(pwd)/loadgen/testdata/sweep}
CATALINA_HOME=${CATALINA_HOME:-/usr/share/tomcat10}

for tool in java go curl python3; do
  command -v "$tool" >/dev/null || { echo "loadgen-tomcat-sweep: $tool not found" >&2; exit 1; }
done
[ -x "$CATALINA_HOME/bin/catalina.sh" ] || { echo "loadgen-tomcat-sweep: no Tomcat at $CATALINA_HOME (apt-get install tomcat10 tomcat10-examples)" >&2; exit 1; }

work=$(mktemp -d /tmp/loadgen-tomcat.XXXXXX)
tomcat_pid=""
cleanup() {
  if [ -n "$tomcat_pid" ] && kill -0 "$tomcat_pid" 2>/dev/null; then
    kill -TERM "$tomcat_pid" 2>/dev/null || true
    for _ in $(seq 100); do kill -0 "$tomcat_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$tomcat_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT INT TERM

go build -o "$work/loadgen" ./examples/loadgen

# A free port on 127.0.0.1: bind to 0 and read what the kernel chose.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')

base="$work/base"
mkdir -p "$base"/{conf,logs,temp,webapps,work}
cp -r /etc/tomcat10/. "$base/conf/"
# The default HTTP Connector, moved to the free port on 127.0.0.1.
sed -i "s|<Connector port=\"8080\" protocol=\"HTTP/1.1\"|<Connector port=\"$port\" address=\"127.0.0.1\" protocol=\"HTTP/1.1\"|" "$base/conf/server.xml"
grep -q "port=\"$port\"" "$base/conf/server.xml" || { echo "loadgen-tomcat-sweep: could not set the port in server.xml" >&2; exit 1; }

CATALINA_BASE="$base" CATALINA_PID="$base/tomcat.pid" CATALINA_OUT="$base/logs/catalina.out" \
  "$CATALINA_HOME/bin/catalina.sh" start >/dev/null
for _ in $(seq 100); do [ -s "$base/tomcat.pid" ] && break; sleep 0.1; done
tomcat_pid=$(cat "$base/tomcat.pid")
url="http://127.0.0.1:$port/examples/servlets/servlet/HelloWorldExample"
for _ in $(seq 300); do
  curl -fs -o /dev/null "$url" 2>/dev/null && break
  kill -0 "$tomcat_pid" || { cat "$base/logs/catalina.out" >&2; exit 1; }
  sleep 0.1
done

mkdir -p "$OUT"
echo "Tomcat $("$CATALINA_HOME/bin/version.sh" 2>/dev/null | sed -n 's/^Server number: *//p') (JVM pid $tomcat_pid) at $url" >&2
"$work/loadgen" sweep -c "$LEVELS" -t "$THREADS" -d "$DURATION" --warmup "$WARMUP" --pid "$tomcat_pid" \
  -plot "$OUT/sweep.svg" "$url" | tee "$OUT/sweep.txt"
