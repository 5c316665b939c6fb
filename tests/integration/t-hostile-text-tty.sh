# Issue 32 item 4 (wrong output, cosmetic): CSV written to a terminal carried a kernel name's raw ESC
# sequences (a CSV file keeps its bytes: it is data; a terminal must not obey them), and the right-to-left
# override U+202E and the line separator U+2028 passed raw into every text output, reordering or breaking
# what followed them on screen. Text escapes them (\u202e, \u2028); CSV to a terminal is escaped as text,
# and since the s21 review a CSV file too.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/integration/rel.sh"
need_sim
sim "$BIN/cprof-run" -q -o base.db -- "$WL/scenarios" steady 20 > /dev/null 2>err.txt || fail "run: $(cat err.txt)"
cp base.db evil.db
q evil.db "UPDATE StringIds SET value = 'k' || char(27) || ']0;pwned' || char(7) || 'x' || char(8238) || 'evil' || char(8232) || 'FAIL forged'
	WHERE id IN (SELECT nameId FROM CUPTI_ACTIVITY_KIND_KERNEL UNION SELECT kernelNameId FROM CPROF_API)"
assert_ge "$(q evil.db "SELECT count(*) FROM StringIds WHERE instr(value, char(8238)) > 0")" 1 "hostile names in place"
RLO=$(printf '\342\200\256')
LS=$(printf '\342\200\250')
"$BIN/cprof" report evil.db --by kernel > r.txt 2> err.txt || fail "report: $(cat err.txt)"
grep -q "$RLO" r.txt && fail "report: a raw U+202E"
grep -q "$LS" r.txt && fail "report: a raw U+2028"
grep -qF 'x\u202eevil\u2028FAIL forged' r.txt || fail "report: the name is not shown escaped: $(grep -m1 pwned r.txt)"
# on a terminal (a pseudo-terminal here), CSV is escaped like text
cat > onpty.py <<'PYEOF'
import os, pty, sys
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[1], sys.argv[1:])
out = b""
while True:
    try:
        b = os.read(fd, 65536)
    except OSError:
        break
    if not b:
        break
    out += b
os.waitpid(pid, 0)
sys.stdout.buffer.write(out)
PYEOF
"$PY" onpty.py "$BIN/cprof" report evil.db --by kernel --format csv > tty.csv || fail "csv on a terminal"
grep -q pwned tty.csv || fail "the kernel is not in the terminal's CSV: $(head -3 tty.csv)"
LC_ALL=C grep -q $'\x1b' tty.csv && fail "CSV on a terminal: a raw ESC: $(grep -m1 pwned tty.csv | od -c | head -3)"
grep -q "$RLO" tty.csv && fail "CSV on a terminal: a raw U+202E"
grep -qF '\x1b]0;pwned\x07' tty.csv || fail "CSV on a terminal: not escaped: $(grep -m1 pwned tty.csv)"
# a CSV file is escaped the same way (s21 review: a file is read by cat, a pager or a spreadsheet next)
"$BIN/cprof" report evil.db --by kernel --format csv > file.csv 2> err.txt || fail "csv: $(cat err.txt)"
LC_ALL=C grep -q $'\x1b' file.csv && fail "a CSV file: a raw ESC: $(grep -m1 pwned file.csv | od -c | head -3)"
grep -q "$RLO" file.csv && fail "a CSV file: a raw U+202E"
grep -qF '\x1b]0;pwned\x07' file.csv || fail "a CSV file: not escaped: $(grep -m1 pwned file.csv)"
echo OK
