# Issue 7 scenario 14: the libFuzzer targets (tests/fuzz) for the wire intake (fuzz_wire: frame
# validation, resynchronisation, dispatch into a real store) and the profile loader (fuzz_profile: every
# report command on the file), under ASan and UBSan, from a seed corpus of real runs (tests/fuzz/seeds.sh:
# FIFO streams and frames libcprof.so wrote, profiles cprofd wrote and damaged variants). A short
# bounded pass with a fixed seed, so that it is repeatable; `make fuzz` runs the long one.
. "$(dirname "$0")/lib.sh"
need_sim
FW=$BUILD/fuzz/fuzz_wire FP=$BUILD/fuzz/fuzz_profile
if ! [ -x "$FW" ] || ! [ -x "$FP" ]; then
	case $(clang -print-file-name=libclang_rt.fuzzer-x86_64.a 2>/dev/null) in
	*/*) fail "fuzz targets not built: make fuzz-build" ;;
	esac
	skip "clang with libFuzzer is not installed, so the fuzz targets cannot be built here"
fi
"$ROOT/tests/fuzz/seeds.sh" "$BUILD" seeds || fail "seed corpus"
[ "$(ls seeds/wire | wc -l)" -ge 20 ] && [ "$(ls seeds/profile | wc -l)" -ge 10 ] || fail "too few seeds"
mkdir corpus-wire corpus-profile
# -runs: a fixed amount of work (a few seconds here), the same inputs each time for the same binaries
"$FW" -seed=1 -runs=2000 -max_total_time=30 -max_len=65536 -timeout=10 corpus-wire seeds/wire > wire.log 2>&1 ||
	{ tail -40 wire.log; fail "fuzz_wire found a problem (input saved as crash-* in the log above)"; }
"$FP" -seed=1 -runs=400 -max_total_time=30 -max_len=262144 -timeout=20 corpus-profile seeds/profile > profile.log 2>&1 ||
	{ tail -40 profile.log; fail "fuzz_profile found a problem (input saved as crash-* in the log above)"; }
grep -h "^Done" wire.log profile.log
echo ok
