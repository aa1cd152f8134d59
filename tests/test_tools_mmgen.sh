#!/bin/sh
#  test_tools_mmgen - jace-mmgen's sizes and options, as users mistype them
#
#  `jace-mmgen poisson2d -5 OUT` said "invalid option -- '5'": getopt
#  read the negative size as an option.
. "$(dirname "$0")/lib.sh"
lib_init light
plan 9

mmgen () {          #  mmgen ARGS...: status, then stderr's first line
    "$BIN/jace-mmgen" "$@" >"$RUN/out" 2>"$RUN/err"
    echo "$? $(head -n 1 "$RUN/err")"
}
said=$(mmgen poisson2d -5 "$RUN/a.mtx")
case $said in "2 jace-mmgen: N must be a positive whole number"*) true ;;
              *) false ;; esac
ok $? "a negative size is said to be one ($said)"
said=$(mmgen poisson2d 0 "$RUN/a.mtx")
case $said in "2 jace-mmgen: N must give 1 <= N^2"*) true ;; *) false ;; esac
ok $? "a zero size is refused ($said)"
said=$(mmgen -x poisson2d 5 "$RUN/a.mtx")
[ "$said" = "2 jace-mmgen: option '-x' is unknown or lacks its value" ]
ok $? "an unknown short option is named ($said)"
said=$(mmgen poisson2d 5 "$RUN/a.mtx" --rhs)
[ "$said" = "2 jace-mmgen: option '--rhs' is unknown or lacks its value" ]
ok $? "a long option without its value is named ($said)"
[ ! -e "$RUN/a.mtx" ]
ok $? "no output file is left by a refused command"
said=$(mmgen poisson2d 5 "$RUN/a.mtx" --rhs "$RUN/b.mtx")
[ "$said" = "0 " ]
ok $? "a 5 x 5 Poisson system is written ($said)"
[ "$(grep -v '^%' "$RUN/a.mtx" | head -n 1)" = "25 25 105" ]
ok $? "its matrix is 25 x 25 with 105 entries"
lib_finish
