# The command line cprof-run stores (META command) and shows (its summary, cprof info, cprof report): each argument
# quoted as a POSIX shell needs it, only when needed, so that `sh -c 'a b'` is not shown as `sh -c a b`; bytes a
# terminal obeys or that are not UTF-8 written as $'\xHH' escapes, in the stored form too; a cut line's quotes
# still balanced. The shell reads the stored line back to the same arguments.
. "$(dirname "$0")/lib.sh"
need_sim
meta() { q "$1" "SELECT value FROM META WHERE key='$2'"; }
# bash reads a stored command line back into its arguments, one per line of od's output
reread() { bash -c 'eval "set -- $1"; printf "%s\0" "$@"' _ "$1" | od -An -c; }

hostile=$(printf 'x\033]0;t\007\nFAIL forged\\')
args=(sh -c 'exit 0' 'a b' '' "it's" "$hostile" "$(printf '\377\302\233 \303\251')" plain_ok=1,a/b.c '~' '$HOME' 'a*' 'é')
"$BIN/cprof-run" -o q.db -- "${args[@]}" > /dev/null 2> run.txt || fail "run: $(cat run.txt)"
cmd=$(meta q.db command)
want="sh -c 'exit 0' 'a b' '' 'it'\\''s' \$'x\\x1b]0;t\\x07\\nFAIL forged\\\\' \$'\\xff\\xc2\\x9b é' plain_ok=1,a/b.c '~' '\$HOME' 'a*' 'é'"
assert_eq "$cmd" "$want" "the stored command"
assert_eq "$(reread "$cmd")" "$(printf '%s\0' "${args[@]}" | od -An -c)" "the stored command, read back by a shell"
! LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' <<< "$cmd" || fail "control bytes stored: $cmd"
grep -qxF "cprof: command: $want (exit status 0)" run.txt || fail "cprof-run's summary: $(cat run.txt)"
"$BIN/cprof" report q.db > r.txt 2>&1 || fail "report: $(cat r.txt)"
grep -qxF "Command: $want" r.txt || fail "cprof report: $(grep -m1 Command r.txt)"

# the simulated GPU's line names the program escaped
"$BIN/cprof-run" -o s.db --simulated-gpu -- "$(printf './no\033[2Jsuch')" > /dev/null 2> sim.txt
assert_eq $? 127 "a command not found"
! LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' sim.txt || fail "control bytes in cprof-run's lines: $(od -c sim.txt | head -5)"
grep -qF 'cprof: ./no\x1b[2Jsuch runs on the simulated GPU' sim.txt || fail "the simulated GPU line: $(cat sim.txt)"

# over 64 KiB: cut between or inside an argument, never inside a quote; what is left out is counted exactly
set -- $(python3 -c "print(' '.join(['w%d' % i for i in range(2000)]))")
long=(sh -c 'exit 0')
for w in "$@"; do long+=("$w $(printf '%050d' 0)"); done
"$BIN/cprof-run" -q -o long.db -- "${long[@]}" > /dev/null 2> err.txt || fail "long run: $(cat err.txt)"
cmd=$(meta long.db command)
assert_match "$cmd" " \.\.\. \([0-9]+ bytes more\)$" "the cut is said"
kept=${cmd% ... (*}
more=${cmd##* ... (}; more=${more% bytes more)}
mapfile -d '' -t back < <(bash -c 'eval "set -- $1"; printf "%s\0" "$@"' _ "$kept") || fail "the cut line does not read back"
n=${#back[@]}
assert_ge "$n" 100 "arguments kept"
for ((i = 0; i < n - 1; i++)); do [ "${back[i]}" = "${long[i]}" ] || fail "argument $i: '${back[i]}'"; done
case ${long[n-1]} in "${back[n-1]}"*) ;; *) fail "the last kept argument is not a prefix: '${back[n-1]}'" ;; esac
all=$(printf '%s ' "${long[@]}"); part=$(printf '%s ' "${back[@]}")
assert_eq "$more" $(( ${#all} - ${#part} )) "bytes left out"
echo "stored: $want; long: $n of ${#long[@]} arguments kept, $more bytes more"
