# libFuzzer targets (tests/fuzz): the collector's wire intake and cprof's profile loader, built with
# clang -fsanitize=fuzzer,address,undefined into $(BUILD)/fuzz/. `make fuzz` runs each for FUZZ_SECONDS
# on a corpus kept in $(BUILD)/fuzz/corpus-*, seeded from real runs (tests/fuzz/seeds.sh); make check
# runs a short bounded pass (tests/integration/t-rel-fuzz.sh).
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 120
FUZZ_OUT     := $(BUILD)/fuzz
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_CFLAGS  := -std=gnu11 -Wall -Wextra -Werror -g -O1 -D_GNU_SOURCE -I. -I$(BUILD)/gen -fno-omit-frame-pointer \
	$(FUZZ_SAN) -fsanitize=fuzzer-no-link $(SQLITE_CFLAGS)
FUZZ_COMMON  := $(wildcard common/*.c)
FUZZ_WIRE_SRCS    := tests/fuzz/fuzz_wire.c collector/ingest.c collector/nvtx.c collector/store.c collector/symbolize.c $(FUZZ_COMMON)
FUZZ_PROFILE_SRCS := tests/fuzz/fuzz_profile.c $(filter-out report/cmd/main.c,$(wildcard report/*.c report/*/*.c)) $(FUZZ_COMMON)
FUZZ_BINS    := $(FUZZ_OUT)/fuzz_wire $(FUZZ_OUT)/fuzz_profile
fuzz_objs = $(patsubst %.c,$(FUZZ_OUT)/obj/%.o,$(1))

.PHONY: fuzz fuzz-build
# clang with its libFuzzer runtime (Debian: clang, which brings libclang-rt-NN-dev)
FUZZ_RT := $(shell $(FUZZ_CC) -print-file-name=libclang_rt.fuzzer-x86_64.a 2>/dev/null)
ifneq ($(findstring /,$(FUZZ_RT)),)
fuzz-build: $(FUZZ_BINS)
# make check runs the short pass, so it builds the targets (t-rel-fuzz.sh says so when it cannot)
check: $(FUZZ_BINS)
else
fuzz-build:
	@echo "fuzz: $(FUZZ_CC) with libFuzzer not found; install clang to build the fuzz targets" && false
endif

$(FUZZ_OUT)/obj/%.o: %.c $(wildcard common/*.h collector/*.h report/*.h report/*/*.h) $(GEN_API) | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  FUZZCC  $<")
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -c -o $@ $<

$(FUZZ_OUT)/fuzz_wire: $(call fuzz_objs,$(FUZZ_WIRE_SRCS))
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(FUZZ_CC) $(FUZZ_SAN) -fsanitize=fuzzer -o $@ $^ $(SQLITE_LIBS) $(ELF_LIBS) -lpthread

$(FUZZ_OUT)/fuzz_profile: $(call fuzz_objs,$(FUZZ_PROFILE_SRCS))
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(FUZZ_CC) $(FUZZ_SAN) -fsanitize=fuzzer -o $@ $^ $(SQLITE_LIBS) -lm -lstdc++

# The longer run: FUZZ_SECONDS per target, the corpus growing across runs; a crash leaves its input in
# $(FUZZ_OUT)/crash-* (re-run one with: $(FUZZ_OUT)/fuzz_profile FILE).
fuzz: fuzz-build binaries $(BUILD)/tests/scenarios
	$(Q)tests/fuzz/seeds.sh $(abspath $(BUILD)) $(FUZZ_OUT)/seeds
	$(Q)mkdir -p $(FUZZ_OUT)/corpus-wire $(FUZZ_OUT)/corpus-profile
	$(Q)cd $(FUZZ_OUT) && ./fuzz_wire -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -timeout=10 \
		-print_final_stats=1 corpus-wire seeds/wire
	$(Q)cd $(FUZZ_OUT) && ./fuzz_profile -max_total_time=$(FUZZ_SECONDS) -max_len=262144 -timeout=20 \
		-rss_limit_mb=4096 -print_final_stats=1 corpus-profile seeds/profile
