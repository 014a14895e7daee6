#!/usr/bin/env bash
# load-host-demo.sh: the Arm guide's two machines on one Linux host, as one
# command. Makes a server network namespace and CLIENTS client namespaces
# (1 or 2), each joined to the server by its own veth with 8 rx and 8 tx
# queues; runs Debian's sshd (openssh-server) in each client namespace with
# keys, known_hosts and an ssh_config made here; copies Debian's tomcat10
# CATALINA_BASE (tomcat10 + tomcat10-examples) to a temporary folder; and
# runs the study inside the server namespace:
#
#   go run ./examples/tomcat-tuning -apply -cpu-method affinity \
#       -url http://10.213.13.1:PORT/examples/servlets/servlet/HelloWorldExample \
#       -load-host root@10.213.13.2[,root@10.213.14.2] -ssh-config FILE ...
#
# Everything it made (sshd by PID, the namespaces, the folders) is removed
# at the end, also on failure or Ctrl-C. Run as root.
#
#   sudo bash scripts/load-host-demo.sh                 # one client
#   sudo CLIENTS=2 bash scripts/load-host-demo.sh -steps cpus,access-log,threads,nic-queues
#
# Extra arguments go to the study (after the defaults: DURATION, REPEAT,
# WARMUP and CONNECTIONS set those).
set -euo pipefail
cd "$(dirname "$0")/.."

CLIENTS=${CLIENTS:-1}
DURATION=${DURATION:-2s}
REPEAT=${REPEAT:-3}
WARMUP=${WARMUP:-10s}
CONNECTIONS=${CONNECTIONS:-16}
TOMCAT_BASE=${TOMCAT_BASE:-/var/lib/tomcat10}
case "$CLIENTS" in 1|2) ;; *) echo "load-host-demo: CLIENTS=$CLIENTS: want 1 or 2" >&2; exit 2 ;; esac
[ "$(id -u)" = 0 ] || { echo "load-host-demo: run as root (namespaces, sshd, Tomcat as user tomcat)" >&2; exit 1; }
for tool in ip go ssh ssh-keygen ethtool; do
  command -v "$tool" >/dev/null || { echo "load-host-demo: $tool not found (iproute2, golang, openssh-client, ethtool)" >&2; exit 1; }
done
SSHD=$(command -v sshd || echo /usr/sbin/sshd)
[ -x "$SSHD" ] || { echo "load-host-demo: sshd not found (apt-get install openssh-server)" >&2; exit 1; }
[ -f "$TOMCAT_BASE/conf/server.xml" ] && [ -d /usr/share/tomcat10-examples/examples ] ||
  { echo "load-host-demo: Debian's tomcat10 not found (apt-get install tomcat10 tomcat10-examples)" >&2; exit 1; }

tag=$$
srv=nettune-demo-srv-$tag
work=$(mktemp -d /tmp/load-host-demo.XXXXXX)
chmod 755 "$work"
sshd_pids=()
made_run_sshd=""
namespaces=()
cleanup() {
  for pid in "${sshd_pids[@]}"; do
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  done
  for ns in "${namespaces[@]}"; do ip netns del "$ns" 2>/dev/null || true; done
  [ -n "$made_run_sshd" ] && rmdir /run/sshd 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT INT TERM

ip netns add "$srv"; namespaces+=("$srv")
ip -n "$srv" link set lo up
ssh_ids=""; ssh_known=""; hosts=""
for i in $(seq "$CLIENTS"); do
  cli=nettune-demo-cli$i-$tag
  net=10.213.$((12 + i))
  ip netns add "$cli"; namespaces+=("$cli")
  ip -n "$srv" link add "ntsrv$i" numtxqueues 8 numrxqueues 8 type veth peer name "ntcli$i" numtxqueues 8 numrxqueues 8
  ip -n "$srv" link set "ntcli$i" netns "$cli"
  ip -n "$srv" addr add "$net.1/24" dev "ntsrv$i"
  ip -n "$cli" addr add "$net.2/24" dev "ntcli$i"
  ip -n "$srv" link set "ntsrv$i" up
  ip -n "$cli" link set lo up
  ip -n "$cli" link set "ntcli$i" up
  [ "$i" = 1 ] || ip -n "$cli" route add 10.213.13.1/32 via "$net.1"

  d=$work/client$i
  mkdir -m 700 "$d"
  ssh-keygen -q -t ed25519 -N "" -C nettune-demo -f "$d/host_key"
  ssh-keygen -q -t ed25519 -N "" -C nettune-demo -f "$d/id"
  cp "$d/id.pub" "$d/authorized_keys"
  echo "$net.2 $(cat "$d/host_key.pub")" > "$d/known_hosts"
  cat > "$d/sshd_config" <<EOF
ListenAddress $net.2
Port 22
HostKey $d/host_key
AuthorizedKeysFile $d/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
PubkeyAuthentication yes
UsePAM no
StrictModes no
PidFile $d/sshd.pid
EOF
  if [ ! -d /run/sshd ]; then mkdir -m 755 /run/sshd; made_run_sshd=1; fi
  ip netns exec "$cli" "$SSHD" -D -e -f "$d/sshd_config" 2>"$d/sshd.log" &
  sshd_pids+=($!)
  for _ in $(seq 200); do grep -q "Server listening" "$d/sshd.log" && break; sleep 0.1; done
  grep -q "Server listening" "$d/sshd.log" || { cat "$d/sshd.log" >&2; echo "load-host-demo: sshd did not start" >&2; exit 1; }
  ssh_ids+="  IdentityFile $d/id"$'\n'
  ssh_known+=" $d/known_hosts"
  hosts+="${hosts:+,}root@$net.2"
done
cat > "$work/ssh_config" <<EOF
Host *
$ssh_ids  IdentitiesOnly yes
  UserKnownHostsFile$ssh_known
  GlobalKnownHostsFile /dev/null
  LogLevel ERROR
EOF

# A copy of Debian's CATALINA_BASE (as the tests make it), its HTTP
# Connector on a free port, owned as Debian's instance is.
base=$work/base
mkdir -p "$base"/{logs,temp,work,webapps}
cp -rL "$TOMCAT_BASE/conf/." "$base/conf"
cp -rL /usr/share/tomcat10/etc/. "$base/conf"
cp -rL "$TOMCAT_BASE/webapps/ROOT" "$base/webapps"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
sed -i "s/port=\"8080\"/port=\"$port\"/" "$base/conf/server.xml"
chgrp -R tomcat "$base/conf"
chown -R tomcat:tomcat "$base/logs" "$base/temp" "$base/work" "$base/webapps"

go build -o "$work/tomcat-tuning" ./examples/tomcat-tuning
echo "load-host-demo: Tomcat copy $base on port $port in namespace $srv; clients $hosts; load average $(cut -d' ' -f1-3 /proc/loadavg)"
set +e
ip netns exec "$srv" "$work/tomcat-tuning" -apply -cpu-method affinity \
  -catalina-home /usr/share/tomcat10 -catalina-base "$base" -port "$port" \
  -url "http://10.213.13.1:$port/examples/servlets/servlet/HelloWorldExample" \
  -load-host "$hosts" -ssh-config "$work/ssh_config" -journal "$work/study.journal" \
  -duration "$DURATION" -repeat "$REPEAT" -warmup "$WARMUP" -connections "$CONNECTIONS" "$@"
rc=$?
set -e
echo "load-host-demo: study exited $rc; load average $(cut -d' ' -f1-3 /proc/loadavg)"
exit $rc
