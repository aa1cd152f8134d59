#!/bin/sh
#  tests/test_tools_install.sh - what `make install` gives a user
#
#  Installs into a DESTDIR, then: every installed program answers
#  --version with its name and the package version and --help with help
#  (after a sub-command too), names no source file; every program has its
#  man page and the job and platform formats theirs (section 5), all
#  rendering without warnings; the docs and examples are installed, and
#  an installed example job maps on an installed platform.
. "$(dirname "$0")/lib.sh"
plan 10
DEST=$(mktemp -d "${TMPDIR:-/tmp}/jace-install.XXXXXX")
trap 'rm -rf "$DEST"' EXIT

#  What configure chose, from the Makefile that installs
value () { sed -n "s|^$1 = ||p" "$JACE_BUILDDIR/Makefile" | head -n 1; }
VERSION=$(value PACKAGE_VERSION)
expand () {     #  prefix-relative folders: ${prefix}/... to real paths
    echo "$1" | sed -e "s|\${datarootdir}|$(value datarootdir)|" \
        -e "s|\${exec_prefix}|$(value exec_prefix)|" \
        -e "s|\${PACKAGE_TARNAME}|$(value PACKAGE_TARNAME)|" \
        -e "s|\${prefix}|$(value prefix)|g" \
        -e "s|\${prefix}|$(value prefix)|g"
}
BINDIR=$DEST$(expand "$(expand "$(value bindir)")")
MANDIR=$DEST$(expand "$(expand "$(value mandir)")")
DOCDIR=$DEST$(expand "$(expand "$(value docdir)")")
#  jace-daemon, jace-spawner and jace-map link the shared libjace, which a
#  DESTDIR install puts where the loader does not look
LD_LIBRARY_PATH=$DEST$(expand "$(expand "$(value libdir)")")
export LD_LIBRARY_PATH

MAKEFLAGS= make -C "$JACE_BUILDDIR" install DESTDIR="$DEST" \
    >"$DEST/install.log" 2>&1
ok $? "make install DESTDIR=... succeeds"
PROGRAMS=$(ls "$BINDIR" 2>/dev/null)
[ "$(echo $PROGRAMS | wc -w)" -ge 9 ]
ok $? "the programs are installed ($(echo $PROGRAMS))"

failed=""
for program in $PROGRAMS; do
    [ "$("$BINDIR/$program" --version 2>&1)" = "$program $VERSION" ] \
        || failed="$failed $program"
done
[ -z "$failed" ] || diag "--version wrong:$failed"
[ -z "$failed" ]
ok $? "every installed program answers --version with its name and $VERSION"

failed=""
for program in $PROGRAMS; do
    "$BINDIR/$program" --help >"$DEST/help" 2>&1 \
        && grep -qi "usage" "$DEST/help" || failed="$failed $program"
    #  Help points to man pages and docs, never to a source file
    grep -qE '[a-z_]+/[a-z_]+\.[ch]\b' "$DEST/help" \
        && failed="$failed $program(source)"
done
[ -z "$failed" ] || diag "--help wrong:$failed"
[ -z "$failed" ]
ok $? "every installed program's --help is help and names no source file"

failed=""
for command in "jace-spawner submit" "jace-spawner status" \
               "jace-spawner kill" "jace-grid start" \
               "jace-ssh-launch start"; do
    $BINDIR/$command --help >"$DEST/help" 2>&1 \
        && grep -qi "usage" "$DEST/help" || failed="$failed '$command'"
done
[ -z "$failed" ] || diag "sub-command --help wrong:$failed"
[ -z "$failed" ]
ok $? "--help after a sub-command is help, not an error"

missing=""
for program in $PROGRAMS; do
    [ -s "$MANDIR/man1/$program.1" ] || missing="$missing $program.1"
done
for format in jace-job jace-platform; do
    [ -s "$MANDIR/man5/$format.5" ] || missing="$missing $format.5"
done
[ -z "$missing" ] || diag "no man page:$missing"
[ -z "$missing" ]
ok $? "every program has a man page, and so do the job and platform files"

if command -v groff >/dev/null 2>&1; then
    warned=$(for page in "$MANDIR"/man1/*.1 "$MANDIR"/man5/*.5; do
                 groff -man -ww -z -Tutf8 "$page" 2>&1
             done)
    [ -z "$warned" ] || diag "$warned"
    [ -z "$warned" ]
    ok $? "every man page renders without a warning"
else
    skip "groff is not installed"
fi
! grep -l "@[A-Z]*@" "$MANDIR"/man1/*.1 "$MANDIR"/man5/*.5
ok $? "the man pages have their version and folders filled in"

[ -s "$DOCDIR/README.md" ] && [ -s "$DOCDIR/docs/ARCHITECTURE.md" ] \
    && [ -s "$DOCDIR/examples/poisson3d.job" ] \
    && [ -s "$DOCDIR/examples/matrices/poisson2d_4x4.mtx" ] \
    && [ -s "$DOCDIR/examples/platforms/local8.platform" ]
ok $? "the docs and examples are installed under share"

#  The installed example runs from its installed folder (the matrix job
#  names its files relative to itself)
"$BINDIR/jace-map" --job "$DOCDIR/examples/matrix.job" \
    --platform "$DOCDIR/examples/platforms/local8.platform" \
    >"$DEST/map.out" 2>&1
ok $? "an installed example job maps on an installed platform"
