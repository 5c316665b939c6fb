# make bench: the performance table (scripts/bench) and the programs it measures with (included by the top Makefile).
# Included before the top Makefile defines its object lists, so paths here are spelled out; recipes expand late.

BENCH_DIR := $(BUILD)/bench
BENCH_COMMON_OBJS = $(patsubst %.c,$(BUILD)/obj/host/%.o,$(wildcard common/*.c))
BENCH_STORE_OBJS = $(BUILD)/obj/host/tests/bench/store-bench.o $(BUILD)/obj/host/collector/ingest.o $(BUILD)/obj/host/collector/nvtx.o \
	$(BUILD)/obj/host/collector/store.o $(BUILD)/obj/host/collector/symbolize.o $(BENCH_COMMON_OBJS)

BENCH_PROGS := $(BENCH_DIR)/libfloor.so $(BENCH_DIR)/store-bench $(BENCH_DIR)/launcher $(BENCH_DIR)/read-floor

# The floor is a preload like libcprof.so: position independent, linked to libc and libdl only.
$(BENCH_DIR)/libfloor.so: tests/bench/floor.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(CFLAGS_BASE) -fPIC -shared -Wl,-z,defs -Wl,-z,now -o $@ $< -ldl

$(BENCH_DIR)/store-bench: $(BENCH_STORE_OBJS)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS_SAN) -o $@ $^ $(SQLITE_LIBS) $(ELF_LIBS) -lpthread

$(BENCH_DIR)/read-floor: tests/bench/read-floor.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(CFLAGS) $(SQLITE_CFLAGS) -o $@ $< $(SQLITE_LIBS)

$(BENCH_DIR)/launcher: tests/bench/launcher.cu | $(DEPS_STAMP)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  NVCC    $<")
	$(Q)$(WORKLOAD_NVCC) -o $@ $< -lpthread

.PHONY: bench-progs
bench-progs: $(BENCH_PROGS)

bench: $(DEPS_STAMP) binaries $(BUILD)/tests/scenarios $(BUILD)/tests/matmul_sweep $(BUILD)/tests/nvtx_demo $(BENCH_PROGS)
	$(Q)BUILD=$(abspath $(BUILD)) scripts/bench
