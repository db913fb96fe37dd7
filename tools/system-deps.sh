#!/usr/bin/env bash
# Install the Debian packages the test suite needs, only those missing.
# bubblewrap: the grading sandbox; chromium + chromium-driver: browser tests;
# wrk: the server load benchmark's load generator; postgresql: the server's
# PostgreSQL test (a throwaway cluster on loopback); openssl: the TLS Dask
# cluster test's certificates; python3-tk: tkinter, which Debian ships
# apart from its python3 (the sandbox copies the whole standard library, and
# a student's stray `from tkinter import NO` must import there).
set -euo pipefail
need=()
if [ -x /usr/bin/python3 ] && command -v dpkg >/dev/null && ! /usr/bin/python3 -c "import tkinter" 2>/dev/null; then
    need+=(python3-tk)
fi
command -v bwrap >/dev/null || need+=(bubblewrap)
command -v chromium >/dev/null || need+=(chromium)
command -v chromedriver >/dev/null || need+=(chromium-driver)
command -v wrk >/dev/null || need+=(wrk)
command -v openssl >/dev/null || need+=(openssl)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need+=(postgresql)
# runuser starts the test PostgreSQL as its own user; it lives in /usr/sbin
PATH="$PATH:/usr/sbin:/sbin" command -v runuser >/dev/null || need+=(util-linux)
[ ${#need[@]} -eq 0 ] && exit 0
if [ "$(id -u)" != 0 ]; then
    echo "system-deps: missing ${need[*]}; install them (sudo apt-get install -y ${need[*]}) and run again" >&2
    exit 1
fi
echo "system-deps: installing ${need[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq "${need[@]}" >/dev/null
