#!/bin/sh
#  test_tools_keygen.sh - jace-keygen makes CURVE certificates (TAP)
#
#  One certificate per host and role (ROLE[:NAME]), with role and name in
#  its metadata; private folder and secret files; nothing overwritten
#  without --force; unknown roles and bad names refused before anything is
#  written; and a process refuses a secret certificate others may read.
set -u

keygen="${JACE_BUILDDIR:-.}/jace-keygen"
supernode="${JACE_BUILDDIR:-.}/jace-supernode"
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
echo "1..20"

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
grep -q 'name = "spawner"' "$keys/spawner.cert" &&
    grep -q 'role = "spawner"' "$keys/spawner.cert"
ok $? "the certificate carries its role and name in its metadata"
[ "$(grep -c "$keys/.*\.cert .* \(supernode\|daemon\|spawner\)$" "$work/out")" -eq 3 ]
ok $? "it prints each public certificate path with its key and role"
grep -q "each .cert_secret only to its own host" "$work/err"
ok $? "it says how to distribute the files"

cp "$keys/daemon.cert_secret" "$work/saved"
timeout 10 "$keygen" "$keys" daemon > /dev/null 2>"$work/err"
[ $? -ne 0 ] && grep -q "exists; use --force" "$work/err" &&
    cmp -s "$keys/daemon.cert_secret" "$work/saved"
ok $? "an existing certificate is not overwritten"
timeout 10 "$keygen" --force "$keys" daemon spawner:alice > /dev/null 2>&1 &&
    ! cmp -s "$keys/daemon.cert_secret" "$work/saved" &&
    [ -s "$keys/alice.cert" ]
ok $? "--force replaces it, and ROLE:NAME makes a named one"

hosts="$work/hosts"
timeout 10 "$keygen" "$hosts" supernode:head1 daemon:node1 daemon:node2 \
    spawner:alice > "$work/out" 2>&1
ok $? "ROLE:NAME makes one certificate per host and role"
all=0
for pair in supernode:head1 daemon:node1 daemon:node2 spawner:alice; do
    role=${pair%%:*}
    name=${pair#*:}
    for file in "$hosts/$name.cert" "$hosts/$name.cert_secret"; do
        grep -q "role = \"$role\"" "$file" &&
            grep -q "name = \"$name\"" "$file" || all=1
    done
done
[ ! -e "$hosts/daemon.cert" ] || all=1
ok $all "each carries its own role and name, public and secret file alike"
[ "$(sed -n 's/^ *public-key = "\(.*\)"$/\1/p' "$hosts"/*.cert | sort -u |
     wc -l)" -eq 4 ]
ok $? "every host gets a key pair of its own"

timeout 10 "$keygen" "$work/new" daemon:d1 alice > /dev/null 2>"$work/err"
[ $? -eq 2 ] && grep -q "unknown role 'alice'" "$work/err" &&
    grep -q "supernode, daemon or spawner" "$work/err" && [ ! -e "$work/new" ]
ok $? "a bare name that is not a role is refused, naming the roles, and nothing is made"
timeout 10 "$keygen" "$work/new" admin:root > /dev/null 2>"$work/err"
[ $? -eq 2 ] && grep -q "unknown role 'admin'" "$work/err" && [ ! -e "$work/new" ]
ok $? "an unknown role is refused"
timeout 10 "$keygen" "$work/new" daemon:a daemon:a > /dev/null 2>"$work/err"
[ $? -eq 2 ] && grep -q "given twice" "$work/err" && [ ! -e "$work/new" ]
ok $? "a name given twice is refused"
timeout 10 "$keygen" "$keys" daemon:../evil > /dev/null 2>"$work/err"
[ $? -eq 2 ] && [ ! -e "$work/evil.cert" ]
ok $? "a name that is not a plain file name is refused"
timeout 10 "$keygen" > /dev/null 2>&1
[ $? -eq 2 ]
ok $? "no DIR is a usage error"

#  What the processes make of them: a secret others may read is refused.
chmod 644 "$hosts/head1.cert_secret"
timeout 10 "$supernode" --bind 'tcp://127.0.0.1:*' --keys "$hosts" \
    --cert head1 > /dev/null 2>"$work/err"
rc=$?
[ $rc -ne 0 ] && [ $rc -ne 124 ] &&
    grep -F "$hosts/head1.cert_secret" "$work/err" | grep -q "open to other users"
ok $? "jace-supernode refuses a secret certificate of mode 644, naming the file"
exit $((failed > 0))
