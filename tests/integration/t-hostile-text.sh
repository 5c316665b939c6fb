# Issue 21 items 8-10: text a program controls (kernel names, argv, paths) reaches no terminal, log line,
# CSV or JSON reader raw. Kernel names and argv in a real profile are replaced with hostile ones (ESC
# sequences that set a terminal's title, BEL, CR, LF that fakes a gate line, a spreadsheet formula,
# bytes that are not UTF-8); every text output must hold no control byte but its own newlines, no
# forged line; CSV fields are escaped as text (to a file too: s21 review), neutralised and quoted; JSON
# parses as strict UTF-8.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/integration/rel.sh"
need_sim
ESC=$(printf '\033')
# no byte < 0x20 other than LF and TAB, no DEL, no lone C1 (0x80-0x9f as raw bytes outside UTF-8)
clean_text() { # FILE WHAT
	LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' "$1" && fail "$2: control bytes: $(od -c "$1" | grep -m3 -E '033|\\r|007')"
	grep -q '^FAIL forged' "$1" && fail "$2: a kernel name forged a line"
	return 0
}
sim "$BIN/cprof-run" -q -o base.db -- "$WL/scenarios" steady 20 > /dev/null 2>err.txt || fail "run: $(cat err.txt)"
cp base.db evil.db
# kernels: title-setting OSC, BEL, CR, a newline followed by a forged gate line; then a formula
q evil.db "UPDATE StringIds SET value = '=cmd|'' /C calc''!A0' || char(13) || value || char(27) || ']0;pwned' || char(7) || char(10) || 'FAIL forged' || char(13) || CAST(X'FF9B' AS TEXT)
	WHERE id IN (SELECT nameId FROM CUPTI_ACTIVITY_KIND_KERNEL UNION SELECT kernelNameId FROM CPROF_API)"
q evil.db "UPDATE PROCESSES SET argv = char(27) || ']2;title' || char(7) || CAST(X'C29B' AS TEXT) || '2J ' || argv, exe = exe || char(27) || '[31m'"
q evil.db "UPDATE META SET value = value || ' ' || char(27) || ']0;argv-title' || char(7) || char(10) || 'cprof: 0 lost events, complete' WHERE key = 'command'"
assert_ge "$(q evil.db "SELECT count(*) FROM StringIds WHERE instr(value, char(27)) > 0")" 1 "hostile kernel names in place"

"$BIN/cprof" report evil.db > r.txt 2>err.txt || fail "report: $(cat err.txt)"
clean_text r.txt "cprof report"
grep -q 'pwned\\x07\\nFAIL forged\\r' r.txt || fail "report: the kernel name is not shown escaped: $(grep -m1 pwned r.txt)"
"$BIN/cprof" report evil.db --by process > p.txt 2>err.txt || fail "report --by process: $(cat err.txt)"
clean_text p.txt "cprof report --by process"
grep -q '  \\x1b\]2;title\\x07\\u009b2J ' p.txt || fail "argv not escaped: $(cat p.txt)"
"$BIN/cprof" info evil.db > i.txt 2>&1 || fail "info: $(cat i.txt)"
clean_text i.txt "cprof info"
assert_eq "$(wc -l < i.txt)" 4 "cprof info: four lines, none forged"
"$BIN/cprof" check evil.db --baseline base.db --max-regression 0 > c.txt 2>&1
"$BIN/cprof" check base.db --baseline evil.db --max-regression 0 >> c.txt 2>&1
clean_text c.txt "cprof check"
"$BIN/cprof" diff base.db evil.db > d.txt 2>&1 || fail "diff: $(cat d.txt)"
clean_text d.txt "cprof diff"
grep -q 'pwned' d.txt || fail "diff does not show the renamed kernel"

# a path and an argv with escapes: cprof-run's own lines and its summary (cprof info) on stderr
evil=$(printf 'p\033]0;t\007.db')
sim "$BIN/cprof-run" -o "$evil" -- "$WL/scenarios" steady 2 "$(printf 'a\033]0;argv\007\nFAIL forged')" > /dev/null 2> run.txt ||
	fail "run with hostile argv: $(cat run.txt)"
clean_text run.txt "cprof-run summary"
grep -q 'cprof: command: .*\\x1b\]0;argv\\x07\\nFAIL forged' run.txt || fail "summary: $(cat run.txt)"
# each process's argv is stored quoted as a shell reads it back, its hostile bytes as $'\xNN' (until 2026-12-06
# joined by spaces raw: control bytes in the database, and 'a b' read as two arguments)
assert_eq "$(q "$evil" "SELECT argv FROM PROCESSES")" "$WL/scenarios steady 2 \$'a\\x1b]0;argv\\x07\\nFAIL forged'" "PROCESSES.argv"
argv=$(q "$evil" "SELECT argv FROM PROCESSES")
assert_eq "$(bash -c 'eval "set -- $1"; printf "%s\0" "$@"' _ "$argv" | od -An -c)" \
	"$(printf '%s\0' "$WL/scenarios" steady 2 "$(printf 'a\033]0;argv\007\nFAIL forged')" | od -An -c)" "PROCESSES.argv read back by a shell"
"$BIN/cprof-run" -q -o x.db -- "$(printf './no\033[2Jsuch\nFAIL forged')" 2> run2.txt
assert_eq $? 127 "a command not found"
clean_text run2.txt "cprof-run's error"
assert_eq "$(wc -l < run2.txt)" 1 "one error line"

# CSV, a file as much as a terminal: formulas neutralised (OWASP: leading '), control bytes escaped as in
# text (a record is one line), strict UTF-8, every record has the header's field count
"$BIN/cprof" report evil.db --by kernel --format csv > k.csv 2>err.txt || fail "csv: $(cat err.txt)"
clean_text k.csv "cprof report --format csv to a file"
grep -qF "\"'=cmd|' /C calc'!A0\r" k.csv || fail "formula not neutralised, CR not escaped: $(head -3 k.csv)"
grep -qF 'pwned\x07\nFAIL forged\r\xff\x9b' k.csv || fail "csv: the name is not escaped: $(grep -m1 pwned k.csv)"
python3 - k.csv <<'PY' || fail "csv does not parse to whole records of strict UTF-8"
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline='', encoding='utf-8', errors='strict')))
assert len(rows) == len(open(sys.argv[1], 'rb').read().splitlines()), "a record over more than one line"
assert len(rows) >= 2, rows
assert all(len(r) == len(rows[0]) for r in rows), [len(r) for r in rows]
for r in rows[1:]:
    for field in r:
        assert field[:1] not in ('=', '+', '-', '@'), field
PY

# JSON: strict UTF-8, parses, and the names come back (with U+FFFD for the bytes that were not UTF-8)
for by in "" kernel api process range; do
	"$BIN/cprof" report evil.db ${by:+--by $by} --format json > r.json 2>err.txt || fail "json --by $by: $(cat err.txt)"
	python3 -c 'import json, sys; json.loads(open(sys.argv[1], "rb").read().decode("utf-8", "strict"))' r.json ||
		fail "report --by $by --format json is not valid UTF-8 JSON"
done
"$BIN/cprof" report evil.db --by kernel --format json > r.json
python3 - r.json <<'PY' || fail "json names"
import json, sys
d = json.loads(open(sys.argv[1], "rb").read().decode("utf-8"))
def strings(x):
    if isinstance(x, str): yield x
    elif isinstance(x, dict): yield from (s for v in x.values() for s in strings(v))
    elif isinstance(x, list): yield from (s for v in x for s in strings(v))
assert any("\x1b]0;pwned\x07\nFAIL forged\r\ufffd\ufffd" in s for s in strings(d)), list(strings(d))[:20]
PY
"$BIN/cprof" trace evil.db -o t.json 2>err.txt || fail "trace: $(cat err.txt)"
python3 -c 'import json, sys; json.loads(open(sys.argv[1], "rb").read().decode("utf-8", "strict"))' t.json || fail "trace JSON"

# a name that spells an escape (the four characters \x1b) reads apart from one that holds the byte: the
# backslash is doubled in text and CSV (until 2026-12-06 both printed as \x1b)
cp base.db spelled.db
q spelled.db "UPDATE StringIds SET value = 'spelled\x1b' || char(27) || value
	WHERE id IN (SELECT nameId FROM CUPTI_ACTIVITY_KIND_KERNEL UNION SELECT kernelNameId FROM CPROF_API)"
"$BIN/cprof" report spelled.db > s.txt 2>err.txt || fail "report: $(cat err.txt)"
clean_text s.txt "cprof report, a spelled escape"
grep -qF 'spelled\\x1b\x1b' s.txt || fail "report: the spelled escape is not told from the byte: $(grep -m1 spelled s.txt)"
"$BIN/cprof" report spelled.db --by kernel --format csv > s.csv 2>err.txt || fail "csv: $(cat err.txt)"
grep -qF 'spelled\\x1b\x1b' s.csv || fail "csv: the spelled escape is not told from the byte: $(grep -m1 spelled s.csv)"
echo ok
