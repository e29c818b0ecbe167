#!/usr/bin/env bash
# Installs the Debian packages the test suite runs for real: PostgreSQL's server binaries,
# Chromium (for the dashboard's browser tests), Redis (for the shared rate limiter) and wrk (the
# benchmarks' load generator, smoke-tested by the suite) and Node.js with npm (to generate the
# TypeScript client and run its smoke test: clients/typescript). Installs only what is missing,
# so it is quick on a prepared machine.
set -euo pipefail

missing=()
compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || missing+=(postgresql)
[ -x /usr/bin/chromium ] || missing+=(chromium)
command -v redis-server >/dev/null || missing+=(redis-server)
command -v wrk >/dev/null || missing+=(wrk)
command -v node >/dev/null || missing+=(nodejs)
command -v npm >/dev/null || missing+=(npm)
command -v ss >/dev/null || missing+=(iproute2)  # bench.scale counts each process's connections

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "installing Debian packages: ${missing[*]}" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
# Debian starts a cluster and a redis service on install; the tests start their own.
$SUDO service postgresql stop >/dev/null 2>&1 || true
$SUDO service redis-server stop >/dev/null 2>&1 || true
