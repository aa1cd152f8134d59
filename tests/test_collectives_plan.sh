#!/bin/sh
#  test_collectives_plan.sh - the jace-plan tool, as a user runs it (TAP)
plan="$JACE_BUILDDIR/jace-plan"
data="$JACE_SRCDIR/tests/data/planning"
count=0
failed=0
check () {
    count=$((count + 1))
    if [ "$1" = 0 ]; then echo "ok $count - $2"
    else echo "not ok $count - $2"; failed=1; fi
}
echo "1..20"
"$plan" --help | grep -q "jace-plan ggp|oggp|bruteforce"
check $? "--help prints the usage"
out=$("$plan" oggp --k 3 --beta 1 "$data/e5.matrix" --json)
echo "$out" | grep -q '"cost": 7,' && echo "$out" | grep -q '"eta_o"' \
    && echo "$out" | grep -q '"lower_bound"' && echo "$out" | grep -q '"steps": \['
check $? "oggp --json on E5 gives steps, cost 7, eta_o and lower_bound"
steps=$(echo "$out" | grep -o '"length"' | wc -l)
[ "$steps" -eq 3 ]
check $? "oggp on E5 takes 3 steps"
"$plan" ggp --k 3 --beta 1 "$data/e5.matrix" | grep -q "^cost "
check $? "ggp prints its cost"
out=$("$plan" bruteforce --k 2 --beta 0 "$data/figure3.matrix" --json)
echo "$out" | grep -q '"eta_o": 2.5,' && echo "$out" | grep -q '"lower_bound": 2}'
check $? "bruteforce on Figure 3: eta_o 2.5 s, lower bound 2 s"
"$plan" oggp --k 2 --beta 0 "$data/figure3.matrix" | grep -q "scheduling pays"
check $? "with beta 0 scheduling Figure 3 pays"
err=$("$plan" ggp --k 2 --beta 1 "$data/ragged.matrix" 2>&1 >/dev/null)
status=$?
[ $status -eq 1 ] && echo "$err" | grep -q "ragged.matrix:2: 2 values"
check $? "a ragged matrix is reported with file and line"
huge=$(mktemp)
printf '1e16 1\n1 1\n' >"$huge"
err=$("$plan" ggp --k 2 --beta 0 "$huge" 2>&1 >/dev/null)
status=$?
rm -f "$huge"
[ $status -eq 1 ] && echo "$err" | grep -q ":1: '1e16' is not a number of seconds in \[0, 1e+09\]"
check $? "a transfer of 1e16 s (a 1 s one beside it would vanish) is refused with its line"
"$plan" oggp --k 2 --beta 2e9 "$data/e5.matrix" 2>/dev/null
[ $? -eq 2 ]
check $? "--beta beyond 1e9 s is a usage error"
"$plan" ggp --k 0 --beta 1 "$data/e5.matrix" 2>/dev/null
[ $? -eq 2 ]
check $? "--k 0 is a usage error"
"$plan" lg --n1 3 --n2 7 | grep -q "^M(7,2): step 0 7->8 step 2 8->2$"
check $? "lg 3 7: M(7,2) staged on 8, delivered at step 2"
out=$("$plan" lg --n1 3 --n2 7 --json)
echo "$out" | grep -q '"backbone_messages": 14'
check $? "lg --json counts 14 backbone messages"
"$plan" lg --n1 3 --n2 7 --direct | grep -q "42 backbone messages"
check $? "the direct plan needs 42 backbone messages"
out=$("$plan" scatter --procs "$data/table1.procs" --items 817101)
echo "$out" | grep -q "root dinadan" && echo "$out" | grep -q "^uniform"
check $? "scatter on Table 1 prints the root and the uniform makespan"
out=$("$plan" scatter --procs "$data/table1.procs" --items 817101 --json)
echo "$out" | grep -q '"optimal": {"distribution": \[' \
    && echo "$out" | grep -q '"makespan"'
check $? "scatter --json gives distribution and makespan"
"$plan" scatter --procs "$data/bad.procs" --items 5 2>&1 | grep -q "bad.procs:3:"
check $? "a bad processor file is reported with its line"
"$plan" lg --clusters "3 4x 2" >/dev/null 2>&1
[ $? -eq 2 ]
check $? "lg --clusters \"3 4x 2\" is a usage error, not the clusters 3 and 4"
"$plan" lg --clusters "3,4 2" | grep -q "^lg plan: 9 nodes"
check $? "lg --clusters takes sizes apart by spaces or commas"
procs=$(mktemp)
printf 'a 1 1\nb 1 2\na 1 3\n' >"$procs"
err=$("$plan" scatter --procs "$procs" --items 5 2>&1 >/dev/null)
status=$?
rm -f "$procs"
[ $status -eq 1 ] && echo "$err" | grep -q ":3: processor 'a' is already named"
check $? "a processor named twice is refused with its line"
err=$("$plan" scatter --procs /dev/zero --items 5 2>&1 >/dev/null)
status=$?
[ $status -eq 1 ] && echo "$err" | grep -q "/dev/zero: not a regular file"
check $? "a device given as a file is refused, not read without end"
exit $failed
