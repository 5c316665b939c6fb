# Issue 30: text on a terminal (a pseudo-terminal from script(1), at two widths): names fit the width and are
# cut in the middle, --wide keeps them whole, COLUMNS sets the width; colour on a terminal, off with NO_COLOR,
# --color=never, or off a terminal; progress on stderr only when it is a terminal. Off a terminal the text is
# what it always was. Timings are the simulated GPU's.
. "$(dirname "$0")/lib.sh"
need_sim
command -v script > /dev/null || fail "script(1) not installed (util-linux)"
export SIMGPU_COPY_DATA=0
sim "$BIN/cprof-run" -q -o big.db -- "$WL/matmul_sweep" --sizes 64,1024 --steps 20 > /dev/null || fail "matmul_sweep"
sim "$BIN/cprof-run" -q -o small.db -- "$WL/matmul_sweep" --sizes 64 --steps 20 > /dev/null || fail "matmul_sweep"
GEMM=$(q big.db "SELECT value FROM StringIds WHERE value LIKE 'sm90_xmma_gemm%' LIMIT 1")
[ ${#GEMM} -gt 100 ] || fail "the GEMM kernel's name is not long enough for this test: $GEMM"
# tty COLS CMD...: CMD's output on a pseudo-terminal COLS wide (CR LF as a terminal gets it, made LF)
tty() { local cols=$1; shift; script -qec "stty cols $cols rows 50; $*" /dev/null < /dev/null | tr -d '\r'; }
row() { grep -a "^ *[0-9.]* *[0-9.]* *25 .*sm90_xmma" "$1"; }
C="$BIN/cprof"

# off a terminal: never cut to a width, no colour, whatever COLUMNS says
"$C" report big.db > plain.txt || fail "report"
COLUMNS=40 "$C" report big.db > plain40.txt
cmp -s plain.txt plain40.txt || fail "COLUMNS changed text off a terminal"
grep -q "$(printf '\033')" plain.txt && fail "colour off a terminal"
"$C" report big.db --color=never --wide > /dev/null || fail "--wide, --color=never accepted"
# --wide in a pipe too: the whole name instead of <...> cuts
grep -qF "  $GEMM" plain.txt && fail "the GEMM name whole without --wide (the test needs it cut)"
"$C" report big.db --by kernel --wide | grep -qF "  $GEMM" || fail "--wide in a pipe: not the whole name"

# 250 columns: the name fits whole (no <...> either); 60: the row is as short as the columns before the name
# allow, the name cut in the middle, head and tail kept
tty 250 "'$C' report big.db --by kernel --color=never" > w250.txt
row w250.txt | grep -qF "  $GEMM" || fail "250 columns: the whole name: $(row w250.txt)"
[ "$(row w250.txt | wc -L)" -le 250 ] || fail "250 columns: row wider than the terminal"
tty 60 "'$C' report big.db --by kernel --color=never" > w60.txt
r=$(row w60.txt)
[ ${#r} -le $((93 + 24)) ] || fail "60 columns: the name is not cut: $r"
case $r in *"  ${GEMM:0:8}"*...*) ;; *) fail "60 columns: not cut in the middle: $r" ;; esac
[ ${#r} -lt "$(row w250.txt | wc -L)" ] || fail "60 columns as wide as 250"
# a name with an ESC and two backslashes: cut to the columns it takes once escaped (\x1b is 4, \\ is 2), so its row
# is as wide as the plain one (until 2026-12-06 the raw bytes were counted and such a row overran the terminal)
cp big.db evil.db
q evil.db "UPDATE StringIds SET value = char(27) || '[1m\\\\' || value WHERE value = '$GEMM'"
tty 60 "'$C' report evil.db --by kernel --color=never" > e60.txt
re=$(grep -aF '\x1b[1m\\\\' e60.txt | grep -a "^ *[0-9.]* *[0-9.]* *25 ")
[ -n "$re" ] || fail "60 columns: no escaped row for the hostile name: $(grep -a ' 25 ' e60.txt)"
case $re in *"..."*) ;; *) fail "60 columns: the hostile name is not cut: $re" ;; esac
assert_eq "${#re}" "${#r}" "60 columns: the hostile name's row against the plain one's width"
# --wide: whole names on the narrow terminal; COLUMNS sets the width on a terminal
tty 60 "'$C' report big.db --by kernel --color=never --wide" | grep -qF "  $GEMM" || fail "--wide on 60 columns"
tty 60 "COLUMNS=220 '$C' report big.db --by kernel --color=never" | grep -qF "  $GEMM" || fail "COLUMNS=220 on a terminal"
# the same rows otherwise: only the name column changes
assert_eq "$(row w60.txt | cut -c1-93)" "$(row w250.txt | cut -c1-93)" "columns before the name"
# diff's names too
tty 60 "'$C' diff small.db big.db --color=never" | grep -a "^  kernel .*sm90" | grep -qF "$GEMM" && fail "diff on 60 columns: name not cut"
tty 250 "'$C' diff small.db big.db --color=never" | grep -a "^  kernel .*sm90" | grep -qF "$GEMM" || fail "diff on 250 columns: whole name"

# colour: the verdict word, severities, PASS/FAIL, on a terminal only
ESC=$(printf '\033')
tty 120 "'$C' report big.db" > c.txt
grep -a "^Verdict: " c.txt | grep -q "^Verdict: $ESC\[[0-9;]*m[a-z-]*$ESC\[0m: GPU busy" || fail "verdict not coloured: $(grep -a Verdict c.txt | cat -v)"
grep -aq "^  \[$ESC\[[0-9;]*m\(warn\|info\)$ESC\[0m\] " c.txt || fail "severities not coloured"
tty 120 "NO_COLOR=1 '$C' report big.db" | grep -aq "$ESC\[" && fail "colour despite NO_COLOR"
tty 120 "'$C' report big.db --color=never" | grep -aq "$ESC\[" && fail "colour despite --color=never"
"$C" report big.db --color=always | grep -q "^Verdict: $ESC\[" || fail "--color=always off a terminal"
tty 120 "'$C' check small.db --expect compute-bound" | grep -aq "^$ESC\[1;31mFAIL$ESC\[0m small.db: verdict" || fail "FAIL not red"
# colour never goes into a file -o names, even from a terminal
tty 120 "'$C' check small.db --expect compute-bound -o f.txt" > /dev/null
grep -q "$ESC" f.txt && fail "colour in a file"
grep -q "^FAIL small.db: verdict" f.txt || fail "check -o f.txt: $(cat f.txt)"
"$C" report big.db --color=rainbow 2> err.txt; assert_eq $? 2 "bad --color"

# progress: on stderr when it is a terminal (CPROF_PROGRESS_DELAY_MS=0: at once instead of after 2 s), erased
# before the output; never when stderr is not a terminal, nor for JSON, nor with -q
tty 120 "CPROF_PROGRESS_DELAY_MS=0 '$C' report big.db > /dev/null" > p.txt
grep -aq "cprof report: reading the profile\.\.\. [0-9]* s" p.txt || fail "no progress on a terminal: $(cat -v p.txt)"
grep -aq "$ESC\[K$" p.txt || fail "progress line not erased: $(cat -v p.txt)"
CPROF_PROGRESS_DELAY_MS=0 "$C" report big.db 2> p.txt > /dev/null
[ -s p.txt ] && fail "progress off a terminal: $(cat -v p.txt)"
[ -n "$(tty 120 "CPROF_PROGRESS_DELAY_MS=0 '$C' report big.db --format json > /dev/null")" ] && fail "progress with --format json"
tty 120 "CPROF_PROGRESS_DELAY_MS=0 '$C' html big.db -o p.html" | grep -aq "cprof html: writing the page" || fail "html progress"
[ -n "$(tty 120 "CPROF_PROGRESS_DELAY_MS=0 '$C' html big.db -q -o q.html")" ] && fail "html -q printed"
# without the knob a quick command shows nothing: 2 s first
[ -n "$(tty 120 "'$C' report big.db > /dev/null")" ] && fail "progress for a quick command"
echo ok
