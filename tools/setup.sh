#!/bin/sh
#  setup.sh - from a fresh Debian machine to a built Jace, then a demo or
#  the test suite.
#
#  Usage: tools/setup.sh demo|check|build
#
#  Installs only the Debian packages that are missing (apt-get), bootstraps
#  autotools, configures and builds in place, then runs the demo (a local
#  virtual grid, a real solve with crashed nodes, a verified answer) or the
#  whole test suite (make check).
set -eu

action=${1:-build}
case "$action" in
    demo|check|build) ;;
    -h|--help)
        sed -n '2,10p' "$0" | sed 's/^#  \{0,1\}//'
        exit 0 ;;
    *)
        echo "setup.sh: unknown action '$action' (use demo, check or build)" >&2
        exit 2 ;;
esac

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

#  Build tools and the libraries configure looks for, with the Debian
#  package that provides each one.
packages="build-essential autoconf automake libtool pkg-config
          libczmq-dev libzmq3-dev libsodium-dev libmsgpack-dev libcjson-dev
          libxxhash-dev
          libopenblas-dev libglpk-dev clang gnuplot-nox procps psmisc jq"

missing=""
for p in $packages; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null \
            | grep -q "install ok installed"; then
        missing="$missing $p"
    fi
done
if [ -n "$missing" ]; then
    echo "setup.sh: installing missing Debian packages:$missing"
    sudo=""
    if [ "$(id -u)" -ne 0 ]; then
        if ! command -v sudo >/dev/null 2>&1; then
            echo "setup.sh: not root and no sudo; as root, run:" >&2
            echo "  apt-get install$missing" >&2
            exit 1
        fi
        sudo="sudo"
    fi
    $sudo apt-get update -qq
    #  Through env, as sudo's env_reset would drop a plain assignment
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
        --no-install-recommends $missing
fi

[ -x configure ] || autoreconf -fi
[ -f Makefile ] || ./configure --quiet
make -j"$(nproc)" --no-print-directory

case "$action" in
    demo)  exec make --no-print-directory demo ;;
    check)
        #  A failing test's own log (its diagnostics) is in test-suite.log:
        #  print it, so that a CI run that shows only the output says why.
        make -j"$(nproc)" --no-print-directory check && exit 0
        [ -f test-suite.log ] && sed -n '/^FAIL: \|^ERROR: /,$p' test-suite.log
        exit 1 ;;
esac
