#!/bin/sh
#  test_tools_keygen.sh - jace-keygen makes CURVE certificates (TAP)
set -u

keygen="${JACE_BUILDDIR:-.}/jace-keygen"
work=$(mktemp -d "${TMPDIR:-/tmp}/jace-keygen-test.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
trap 'exit 1' INT TERM HUP

count=0
failed=0
ok () {
    count=$((count + 1))
    if [ "$1" -eq 0 ]; then
        echo "ok $count - $2"
    else
        echo "not ok $count - $2"
        failed=$((failed + 1))
    fi
}
mode () {
    stat -c %a "$1" 2>/dev/null
}

keys="$work/keys"
echo "1..12"

timeout 10 "$keygen" --help > "$work/out" 2>&1
ok $? "--help exits 0"
timeout 10 "$keygen" "$keys" > "$work/out" 2>"$work/err"
ok $? "jace-keygen DIR exits 0"
all=0
for name in supernode daemon spawner; do
    [ -s "$keys/$name.cert" ] && [ -s "$keys/$name.cert_secret" ] || all=1
done
ok $all "it makes the default supernode, daemon and spawner certificates"
[ "$(mode "$keys")" = 700 ]
ok $? "the folder is private (0700)"
[ "$(mode "$keys/daemon.cert_secret")" = 600 ] &&
    [ "$(mode "$keys/daemon.cert")" = 644 ]
ok $? "secrets are 0600 and public certificates 0644"
grep -q 'public-key = "' "$keys/daemon.cert" &&
    ! grep -q 'secret-key' "$keys/daemon.cert" &&
    grep -q 'secret-key = "' "$keys/daemon.cert_secret"
ok $? "the public file holds no secret key"
grep -q 'name = "spawner"' "$keys/spawner.cert"
ok $? "the certificate carries its name in its metadata"
[ "$(grep -c "$keys/.*\.cert " "$work/out")" -eq 3 ]
ok $? "it prints each public certificate path with its key"

cp "$keys/daemon.cert_secret" "$work/saved"
timeout 10 "$keygen" "$keys" daemon > /dev/null 2>"$work/err"
[ $? -ne 0 ] && grep -q "exists; use --force" "$work/err" &&
    cmp -s "$keys/daemon.cert_secret" "$work/saved"
ok $? "an existing certificate is not overwritten"
timeout 10 "$keygen" --force "$keys" daemon alice > /dev/null 2>&1 &&
    ! cmp -s "$keys/daemon.cert_secret" "$work/saved" &&
    [ -s "$keys/alice.cert" ]
ok $? "--force replaces it, and extra names are made"
timeout 10 "$keygen" "$keys" ../evil > /dev/null 2>"$work/err"
[ $? -eq 2 ] && [ ! -e "$work/evil.cert" ]
ok $? "a name that is not a plain file name is refused"
timeout 10 "$keygen" > /dev/null 2>&1
[ $? -eq 2 ]
ok $? "no DIR is a usage error"
exit $((failed > 0))
