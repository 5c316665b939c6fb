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
CFLAGS_BASE := $(WARN) $(OPT) -D_GNU_SOURCE -I. -fno-omit-frame-pointer
ifeq ($(ASAN),1)
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=undefined
endif
# The preload never gets sanitizers: ASan must be the first DSO, which a preload into arbitrary targets cannot guarantee.
CFLAGS  := $(CFLAGS_BASE) $(SAN_FLAGS)
LDFLAGS_SAN := $(SAN_FLAGS)

SQLITE_CFLAGS := $(shell pkg-config --cflags sqlite3 2>/dev/null)
SQLITE_LIBS   := $(shell pkg-config --libs sqlite3 2>/dev/null || echo -lsqlite3)
CHECK_CFLAGS  := $(shell pkg-config --cflags check 2>/dev/null)
CHECK_LIBS    := $(shell pkg-config --libs check 2>/dev/null || echo -lcheck -lsubunit -lm -lrt -lpthread)
ELF_LIBS      := $(shell pkg-config --libs libelf 2>/dev/null || echo -lelf)

DEPS_STAMP := $(BUILD)/.deps-ok

.PHONY: all check demo bench fuzz install clean deps simgpu
all: $(DEPS_STAMP) binaries

$(DEPS_STAMP): scripts/install-deps
	$(Q)scripts/install-deps
	$(Q)mkdir -p $(BUILD) && touch $@

deps:
	$(Q)scripts/install-deps

-include tests/simgpu/simgpu.mk
# bench and fuzz rules live with their sources
-include tests/bench/bench.mk
-include tests/fuzz/fuzz.mk

# ---- sources ----
COMMON_SRCS    := $(wildcard common/*.c)
PRELOAD_SRCS   := $(wildcard preload/*.c)
COLLECTOR_SRCS := $(wildcard collector/*.c)
REPORT_SRCS    := $(wildcard report/*.c)
RUN_SRCS       := scripts/cprof-run.c

OBJ := $(BUILD)/obj
obj_of = $(patsubst %.c,$(OBJ)/$(1)/%.o,$(2))

PRELOAD_CFLAGS := $(CFLAGS_BASE) -fPIC -fvisibility=hidden -ftls-model=initial-exec -I$(CUDA_HOME)/include
PRELOAD_OBJS   := $(call obj_of,pic,$(COMMON_SRCS) $(PRELOAD_SRCS))
HOST_OBJS_COMMON := $(call obj_of,host,$(COMMON_SRCS))

$(OBJ)/pic/%.o: %.c $(wildcard common/*.h preload/*.h) | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC(pic) $<")
	$(Q)$(CC) $(PRELOAD_CFLAGS) -c -o $@ $<

$(OBJ)/host/%.o: %.c $(wildcard common/*.h collector/*.h report/*.h) | $(DEPS_STAMP)
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
	$(Q)$(CC) $(LDFLAGS_SAN) -o $@ $^ $(SQLITE_LIBS) -lm -lstdc++

$(BUILD)/bin/cprof-run: $(call obj_of,host,$(RUN_SRCS)) $(HOST_OBJS_COMMON)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS_SAN) -o $@ $^

# cprof-run --torch-ops puts this directory on the target's PYTHONPATH
$(BUILD)/lib/cprof/python/sitecustomize.py: preload/sitecustomize.py
	@mkdir -p $(dir $@)
	$(Q)install -m 0644 $< $@

BINARIES := $(BUILD)/lib/libcprof.so $(BUILD)/bin/cprofd $(BUILD)/bin/cprof $(BUILD)/bin/cprof-run \
	$(BUILD)/lib/cprof/python/sitecustomize.py
.PHONY: binaries
binaries: $(BINARIES) simgpu

# ---- tests ----
UNIT_SRCS := $(wildcard tests/unit/*.c)
# -rdynamic: test_symbolize needs a function of its own in .dynsym, to find it in a stripped copy
$(BUILD)/tests/unit: $(call obj_of,host,$(UNIT_SRCS)) $(call obj_of,host,collector/store.c collector/ingest.c collector/symbolize.c collector/nvtx.c) $(HOST_OBJS_COMMON)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS_SAN) -rdynamic -o $@ $^ $(SQLITE_LIBS) $(ELF_LIBS) $(CHECK_LIBS) -ldl

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
	$(BUILD)/tests/cupti_user $(BUILD)/tests/aten_chain $(BUILD)/tests/nvtx_demo \
	$(BUILD)/tests/sample_device $(BUILD)/tests/sample_streams $(BUILD)/tests/sample_graph $(BUILD)/tests/sample_blas

check: $(DEPS_STAMP) binaries $(TEST_PROGS)
	@echo "== unit tests (Check)"
	$(Q)CK_DEFAULT_TIMEOUT=60 $(BUILD)/tests/unit
	@echo "== simulated GPU self-test"
	$(Q)$(MAKE) --no-print-directory simgpu-test
	@echo "== torch test set-up (CPROF_TORCH_VENV=DIR reuses a virtualenv)"
	$(Q)tests/setup-torch-venv.sh $(abspath $(BUILD))
	@echo "== integration tests"
	$(Q)BUILD=$(abspath $(BUILD)) tests/integration/run.sh

demo: $(DEPS_STAMP) binaries
	$(Q)BUILD=$(abspath $(BUILD)) scripts/demo

install: $(DEPS_STAMP) binaries
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib
	install -m 0755 $(BUILD)/bin/cprof-run $(BUILD)/bin/cprofd $(BUILD)/bin/cprof $(DESTDIR)$(PREFIX)/bin/
	install -m 0755 $(BUILD)/lib/libcprof.so $(DESTDIR)$(PREFIX)/lib/
	install -d $(DESTDIR)$(PREFIX)/lib/cprof/python
	install -m 0644 $(BUILD)/lib/cprof/python/sitecustomize.py $(DESTDIR)$(PREFIX)/lib/cprof/python/

clean:
	rm -rf $(BUILD)
