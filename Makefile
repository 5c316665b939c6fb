# cprof build: everything into build/ (paths are a contract, see ../shared/DESIGN.md).
CUDA_HOME ?= /usr/local/cuda
NVCC      ?= $(CUDA_HOME)/bin/nvcc
BUILD     ?= build
PREFIX    ?= /usr/local
CC        ?= cc

ifeq ($(V),1)
Q :=
else
Q := @
endif

WARN    := -std=gnu11 -Wall -Wextra -Werror
OPT     ?= -O2 -g
CFLAGS_BASE := $(WARN) $(OPT) -D_GNU_SOURCE -I. -I$(BUILD)/gen -fno-omit-frame-pointer
ifeq ($(ASAN),1)
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=undefined
endif
# The preload never gets sanitizers: ASan must be the first DSO, which a preload into arbitrary targets cannot guarantee.
CFLAGS  := $(CFLAGS_BASE) $(SAN_FLAGS)
LDFLAGS_SAN := $(SAN_FLAGS)

SQLITE_CFLAGS := $(shell pkg-config --cflags sqlite3 2>/dev/null)
# SQLite, libelf (with zlib) and the C++ ABI demangler linked in: the binaries need only glibc (make dist, issue 22)
SQLITE_LIBS   := -Wl,-Bstatic $(shell pkg-config --libs sqlite3 2>/dev/null || echo -lsqlite3) -Wl,-Bdynamic -lm
CHECK_CFLAGS  := $(shell pkg-config --cflags check 2>/dev/null)
CHECK_LIBS    := $(shell pkg-config --libs check 2>/dev/null || echo -lcheck -lsubunit -lm -lrt -lpthread)
ELF_LIBS      := -Wl,-Bstatic $(shell pkg-config --libs libelf 2>/dev/null || echo -lelf) -lz -Wl,-Bdynamic
CXXABI_LIBS   := -Wl,-Bstatic -lstdc++ -Wl,-Bdynamic -static-libgcc

DEPS_STAMP := $(BUILD)/.deps-ok

.PHONY: all check demo bench fuzz install clean deps simgpu dist
all: $(DEPS_STAMP) binaries

$(DEPS_STAMP): scripts/install-deps
	$(Q)scripts/install-deps
	$(Q)mkdir -p $(BUILD) && touch $@

deps:
	$(Q)scripts/install-deps

# ---- generated ----
# error names come from the toolkit's own headers, so they match the CUDA the project is built against
GEN_ERRORS := $(BUILD)/gen/cuda-errors.inc
$(GEN_ERRORS): scripts/gen-cuda-errors | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(Q)scripts/gen-cuda-errors $(CUDA_HOME)/include > $@.tmp && mv $@.tmp $@
# hooks and their API ids from preload/hooks.spec and the headers (every object sees the ids through common/api.h)
GEN_HOOKS := $(BUILD)/gen/hooks-gen.c
GEN_API   := $(BUILD)/gen/api-gen.h
$(GEN_API): scripts/gen-hooks preload/hooks.spec | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  GEN     $@")
	$(Q)scripts/gen-hooks preload/hooks.spec $(CUDA_HOME)/include $(BUILD)/gen > /dev/null
$(GEN_HOOKS): $(GEN_API)

-include tests/simgpu/simgpu.mk
# bench and fuzz rules live with their sources
-include tests/bench/bench.mk
-include tests/fuzz/fuzz.mk
# make dist / make install: the relocatable bundle and the wheel
-include scripts/dist.mk

# ---- sources ----
COMMON_SRCS    := $(wildcard common/*.c)
PRELOAD_SRCS   := $(wildcard preload/*.c)
COLLECTOR_SRCS := $(wildcard collector/*.c)
REPORT_SRCS    := $(wildcard report/*.c report/*/*.c)
RUN_SRCS       := scripts/cprof-run.c

OBJ := $(BUILD)/obj
obj_of = $(patsubst %.c,$(OBJ)/$(1)/%.o,$(2))
$(OBJ)/pic/common/cuda-errors.o $(OBJ)/host/common/cuda-errors.o $(FUZZ_OUT)/obj/common/cuda-errors.o: $(GEN_ERRORS)

PRELOAD_CFLAGS := $(CFLAGS_BASE) -fPIC -fvisibility=hidden -ftls-model=initial-exec -I$(CUDA_HOME)/include
PRELOAD_OBJS   := $(call obj_of,pic,$(COMMON_SRCS) $(PRELOAD_SRCS) $(GEN_HOOKS))
HOST_OBJS_COMMON := $(call obj_of,host,$(COMMON_SRCS))

$(OBJ)/pic/%.o: %.c $(wildcard common/*.h preload/*.h) $(GEN_API) | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC(pic) $<")
	$(Q)$(CC) $(PRELOAD_CFLAGS) -c -o $@ $<

$(OBJ)/host/%.o: %.c $(wildcard common/*.h collector/*.h report/*.h report/*/*.h preload/*.h) $(GEN_API) | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS) $(SQLITE_CFLAGS) -c -o $@ $<

$(BUILD)/lib/libcprof.so: $(PRELOAD_OBJS) preload/libcprof.map
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -shared -o $@ $(PRELOAD_OBJS) -Wl,--version-script=preload/libcprof.map \
		-Wl,-z,defs -Wl,-z,now -ldl -lpthread

$(BUILD)/bin/cprofd: $(call obj_of,host,$(COLLECTOR_SRCS)) $(HOST_OBJS_COMMON)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS_SAN) -o $@ $^ $(SQLITE_LIBS) $(ELF_LIBS) -lpthread

$(BUILD)/bin/cprof: $(call obj_of,host,$(REPORT_SRCS)) $(HOST_OBJS_COMMON)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS_SAN) -o $@ $^ $(SQLITE_LIBS) -lm $(CXXABI_LIBS)

$(BUILD)/bin/cprof-run: $(call obj_of,host,$(RUN_SRCS)) $(HOST_OBJS_COMMON)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS_SAN) -o $@ $^

# cprof-run --torch-ops puts this directory on the target's PYTHONPATH
$(BUILD)/lib/cprof/python/sitecustomize.py: preload/sitecustomize.py
	@mkdir -p $(dir $@)
	$(Q)install -m 0644 $< $@

# man pages from the programs' own --help (help2man, scripts/mkman): installed by make install, dist, the wheel
MANPAGES := $(BUILD)/man/cprof.1 $(BUILD)/man/cprof-run.1
$(BUILD)/man/cprof-run.1: $(BUILD)/man/cprof.1
$(BUILD)/man/cprof.1: $(BUILD)/bin/cprof $(BUILD)/bin/cprof-run scripts/mkman
	@$(if $(Q),echo "  MAN     $(BUILD)/man")
	$(Q)scripts/mkman $(BUILD)/bin $(BUILD)/man

BINARIES := $(BUILD)/lib/libcprof.so $(BUILD)/bin/cprofd $(BUILD)/bin/cprof $(BUILD)/bin/cprof-run \
	$(BUILD)/lib/cprof/python/sitecustomize.py
.PHONY: binaries
binaries: $(BINARIES) $(MANPAGES) simgpu

# ---- tests ----
UNIT_SRCS := $(wildcard tests/unit/*.c)
# -rdynamic: test_symbolize needs a function of its own in .dynsym, to find it in a stripped copy
$(BUILD)/tests/unit: $(call obj_of,host,$(UNIT_SRCS)) $(call obj_of,host,collector/store.c collector/ingest.c collector/spool.c collector/symbolize.c collector/nvtx.c \
	report/model/model.c report/model/cost.c report/model/host.c report/model/analysis.c report/model/steps.c report/model/findings.c report/model/tables.c report/model/windows.c \
	report/model/summary.c report/model/gates.c report/model/table-sort.c report/render/check-escape.c report/term.c \
	report/model/trace-src.c report/model/stacks.c report/model/radix.c \
	report/profile.c report/demangle.c preload/ring.c preload/tick.c preload/pressure.c) $(HOST_OBJS_COMMON)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS_SAN) -rdynamic -o $@ $^ $(SQLITE_LIBS) $(ELF_LIBS) $(CHECK_LIBS) -ldl -lm -lstdc++

# issue 28: the report's rules on arrays (tests/unit/test_report_rules.c)
$(BUILD)/tests/unit: $(call obj_of,host,report/model/memops.c report/model/report-tables.c report/model/ops-nvtx.c \
	report/model/rows.c report/model/steps-view.c report/cmd/thresholds.c report/model/ranges.c \
	report/model/ending.c)

WORKLOAD_NVCC := $(NVCC) -O2 -cudart shared -gencode arch=compute_90,code=[sm_90,compute_90]
$(BUILD)/tests/%: tests/workloads/%.cu | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  NVCC    $<")
	$(Q)$(WORKLOAD_NVCC) -o $@ $< -lcublas -lpthread

CUPTI_INC := $(firstword $(wildcard $(CUDA_HOME)/extras/CUPTI/include) $(CUDA_HOME)/include)
CUPTI_LIBDIR := $(firstword $(wildcard $(CUDA_HOME)/extras/CUPTI/lib64) $(CUDA_HOME)/lib64)
$(BUILD)/tests/cupti_user: tests/workloads/cupti_user.cu | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  NVCC    $<")
	$(Q)$(WORKLOAD_NVCC) -I$(CUPTI_INC) -o $@ $< -L$(CUPTI_LIBDIR) -lcupti

TEST_PROGS := $(BUILD)/tests/unit $(BUILD)/tests/nodriver $(BUILD)/tests/scenarios $(BUILD)/tests/streams \
	$(BUILD)/tests/cupti_user $(BUILD)/tests/aten_chain $(BUILD)/tests/nvtx_demo $(BUILD)/tests/hooks_tour $(BUILD)/tests/capture_demo \
	$(BUILD)/tests/sample_device $(BUILD)/tests/sample_streams $(BUILD)/tests/sample_graph $(BUILD)/tests/sample_blas \
	$(BUILD)/tests/shapes $(BUILD)/tests/window_loop $(BENCH_DIR)/store-bench

check: $(DEPS_STAMP) binaries $(TEST_PROGS)
	@echo "== unit tests (Check)"
	$(Q)CK_DEFAULT_TIMEOUT=60 $(BUILD)/tests/unit
	@echo "== simulated GPU self-test"
	$(Q)$(MAKE) --no-print-directory simgpu-test
	@echo "== test set-up: virtualenvs from PyPI (once; CPROF_TORCH_VENV=DIR reuses one with torch)"
	$(Q)BUILD=$(abspath $(BUILD)) tests/integration/setup-venvs
	@echo "== integration tests"
	$(Q)BUILD=$(abspath $(BUILD)) tests/integration/run.sh

demo: $(DEPS_STAMP) binaries
	$(Q)BUILD=$(abspath $(BUILD)) scripts/demo

# the bundle's layout under PREFIX (scripts/dist.mk)
install: dist-install

clean:
	rm -rf $(BUILD)
