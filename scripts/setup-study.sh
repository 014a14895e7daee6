#!/usr/bin/env bash
# The main job's set-up: installs what `go run ./examples/tomcat-tuning`
# measures and nothing else: Tomcat as Debian ships it (tomcat10, and
# tomcat10-examples for the HelloWorldExample page), without recommends.
# It starts, enables and configures nothing itself and applies no tuning
# profile. Debian's tomcat10 package enables and starts tomcat10.service on
# a systemd host (Tomcat on port 8080): that is the server the study tunes.
# The tests' set-up, which installs much more (nginx, sshd, tuned, qemu,
# debootstrap), is .ci/setup.
#
# Idempotent: with both packages present it changes nothing, and says so.
# Installing needs root and Debian's apt.
set -euo pipefail

pkgs=(tomcat10 tomcat10-examples)

installed() { # the packages dpkg has installed, one per line, sorted
  dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' 2>/dev/null | awk '$1 == "ii" { print $2 }' | sort
}

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  echo "setup-study: ${pkgs[*]} already installed; nothing to do"
else
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "setup-study: missing ${missing[*]} and no apt-get here: install Tomcat 10 by hand, or run the study without it (it measures a built-in page instead)" >&2
    exit 1
  fi
  if [ "$(id -u)" != 0 ]; then
    echo "setup-study: missing packages: ${missing[*]}; run as root: sudo bash scripts/setup-study.sh" >&2
    exit 1
  fi
  before=$(installed)
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  deps=$(comm -13 <(echo "$before") <(installed) | grep -vxF -f <(printf '%s\n' "${missing[@]}") | tr '\n' ' ' || true)
  echo "setup-study: installed ${missing[*]}"
  if [ -n "$deps" ]; then
    echo "setup-study: and their dependencies: ${deps% }"
  fi
fi

# Say how Tomcat stands; change nothing.
if [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then
  echo "setup-study: tomcat10.service is $(systemctl is-enabled tomcat10.service 2>/dev/null || true)," \
    "$(systemctl is-active tomcat10.service 2>/dev/null || true)"
fi
if ! command -v go >/dev/null 2>&1; then
  if [ -x /usr/local/go/bin/go ]; then
    echo "setup-study: go is at /usr/local/go/bin; add it to PATH" >&2
  else
    echo "setup-study: no go found: the study needs a Go toolchain (go.mod's version)" >&2
  fi
fi
