# Simulated GPU: CUDA 13 look-alike libraries, the seed workload and their self-test (included by the top Makefile).
# Uses BUILD, CUDA_HOME, NVCC, Q, CC, CFLAGS_BASE from the including Makefile.

SIMGPU_DIR := tests/simgpu
SIMGPU_LIB := $(BUILD)/simgpu/lib
SIMGPU_OBJ := $(BUILD)/simgpu/obj
SIMGPU_GEN := $(BUILD)/simgpu/gen
SIMGPU_TESTBIN := $(BUILD)/simgpu/test

# CUPTI headers live in include/ in the 13.0 packages, in extras/CUPTI/include in the runfile layout.
SIMGPU_CUPTI_INC := $(firstword $(wildcard $(CUDA_HOME)/extras/CUPTI/include) $(CUDA_HOME)/include)
# -isystem: the real headers decide every signature, but their own warnings are not ours to fix.
SIMGPU_CFLAGS := $(CFLAGS_BASE) -fPIC -pthread -I$(SIMGPU_DIR) -I$(SIMGPU_GEN) \
	-isystem $(CUDA_HOME)/include -isystem $(SIMGPU_CUPTI_INC)
SIMGPU_LDFLAGS := -shared -pthread -Wl,-z,defs -Wl,-Bsymbolic -Wl,-z,now
# GPU code for the workloads: H100/H200 SASS plus PTX so newer GPUs can JIT it.
SIMGPU_NVCC_ARCH ?= -gencode arch=compute_90,code=[sm_90,compute_90]
SIMGPU_NVCC_FLAGS := -O2 -cudart shared $(SIMGPU_NVCC_ARCH)

SIMGPU_PUBLIC_LIBS := libcudart.so.13 libcublas.so.13 libcublasLt.so.13 libcupti.so.13
SIMGPU_SOS := $(SIMGPU_LIB)/libsimgpu_engine.so $(addprefix $(SIMGPU_LIB)/,$(SIMGPU_PUBLIC_LIBS))
SIMGPU_LINKS := $(addprefix $(SIMGPU_LIB)/,$(SIMGPU_PUBLIC_LIBS:.so.13=.so))
SIMGPU_HDRS := $(SIMGPU_DIR)/engine.h $(SIMGPU_DIR)/engine_int.h $(SIMGPU_DIR)/cudart_pt.h $(SIMGPU_GEN)/cbid_names.h

.PHONY: simgpu simgpu-test
simgpu: $(SIMGPU_SOS) $(SIMGPU_LINKS) $(SIMGPU_LIB)/libcuda.so.1 $(SIMGPU_LIB)/libcuda.so $(BUILD)/simgpu/coverage.txt $(BUILD)/simgpu/simgpu-run \
	$(BUILD)/tests/matmul_sweep $(BUILD)/tests/driver_launch

$(SIMGPU_GEN)/cbid_names.h: $(SIMGPU_DIR)/gen_names.sh
	$(Q)mkdir -p $(@D)
	$(Q)$(SIMGPU_DIR)/gen_names.sh $(SIMGPU_CUPTI_INC) $(CUDA_HOME)/include > $@.tmp && mv $@.tmp $@

$(SIMGPU_OBJ)/%.o: $(SIMGPU_DIR)/%.c $(SIMGPU_HDRS)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(SIMGPU_CFLAGS) -c -o $@ $<

$(SIMGPU_LIB)/libsimgpu_engine.so: $(SIMGPU_OBJ)/engine.o $(SIMGPU_OBJ)/activity.o $(SIMGPU_DIR)/engine.map
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(SIMGPU_LDFLAGS) -Wl,-soname,libsimgpu_engine.so -Wl,--version-script=$(SIMGPU_DIR)/engine.map \
		-o $@ $(SIMGPU_OBJ)/engine.o $(SIMGPU_OBJ)/activity.o -ldl

# cudart.o also depends on the per-thread prototypes agreeing with the real header (compile-only check).
$(SIMGPU_OBJ)/cudart.o: $(SIMGPU_OBJ)/sigcheck_pt.o

$(BUILD)/simgpu/simgpu-run: $(SIMGPU_DIR)/simgpu-run.sh
	$(Q)mkdir -p $(@D)
	$(Q)cp $< $@ && chmod +x $@

# Every function the headers declare that the hand-written object lacks gets a generated stub.
$(SIMGPU_GEN)/%_stubs.c: $(SIMGPU_OBJ)/%.o $(SIMGPU_DIR)/gen_stubs.sh
	$(Q)mkdir -p $(@D)
	$(Q)CC="$(CC)" $(SIMGPU_DIR)/gen_stubs.sh $* $< $(CUDA_HOME)/include $(SIMGPU_CUPTI_INC) > $@.tmp && mv $@.tmp $@

$(SIMGPU_OBJ)/%_stubs.o: $(SIMGPU_GEN)/%_stubs.c $(SIMGPU_DIR)/stub.h
	$(Q)$(CC) $(SIMGPU_CFLAGS) -c -o $@ $<

# Hand-written functions and generated stubs per library (build/simgpu/coverage.txt).
$(BUILD)/simgpu/coverage.txt: $(addprefix $(SIMGPU_GEN)/,cudart_stubs.c cuda_stubs.c cublas_stubs.c cublasLt_stubs.c cupti_stubs.c)
	$(Q)head -qn1 $^ | sed -n 's|^/\* simgpu coverage \([^:]*\): \([0-9]*\) hand-written, \([0-9]*\) generated.*|\1 \2 \3|p' | \
		awk '{ h += $$2; g += $$3; printf "%-9s %4d hand-written %4d generated stubs\n", $$1, $$2, $$3 } \
		END { printf "%-9s %4d hand-written %4d generated stubs\n", "total", h, g }' > $@
	$(Q)sed 's/^/simgpu coverage: /' $@

# Each public library: its soname, one version node named after it, the engine found next to it.
define SIMGPU_PUBLIC_RULE
$(SIMGPU_LIB)/$(1).so.13: $(SIMGPU_OBJ)/$(2).o $(SIMGPU_OBJ)/$(2)_stubs.o $(SIMGPU_DIR)/$(2).map $(SIMGPU_LIB)/libsimgpu_engine.so
	$$(Q)$$(CC) $$(SIMGPU_LDFLAGS) -Wl,-soname,$(1).so.13 -Wl,--version-script=$(SIMGPU_DIR)/$(2).map \
		-Wl,-rpath,'$$$$ORIGIN' -o $$@ $(SIMGPU_OBJ)/$(2).o $(SIMGPU_OBJ)/$(2)_stubs.o -L$(SIMGPU_LIB) -lsimgpu_engine
$(SIMGPU_LIB)/$(1).so: $(SIMGPU_LIB)/$(1).so.13
	$$(Q)ln -sf $(1).so.13 $$@
endef
$(eval $(call SIMGPU_PUBLIC_RULE,libcudart,cudart))
$(eval $(call SIMGPU_PUBLIC_RULE,libcublas,cublas))
$(eval $(call SIMGPU_PUBLIC_RULE,libcublasLt,cublasLt))
$(eval $(call SIMGPU_PUBLIC_RULE,libcupti,cupti))

# The driver library is unversioned, like the real libcuda.so.1.
$(SIMGPU_LIB)/libcuda.so.1: $(SIMGPU_OBJ)/cuda.o $(SIMGPU_OBJ)/cuda_stubs.o $(SIMGPU_DIR)/cuda.map $(SIMGPU_LIB)/libsimgpu_engine.so
	$(Q)$(CC) $(SIMGPU_LDFLAGS) -Wl,-soname,libcuda.so.1 -Wl,--version-script=$(SIMGPU_DIR)/cuda.map \
		-Wl,-rpath,'$$ORIGIN' -o $@ $(SIMGPU_OBJ)/cuda.o $(SIMGPU_OBJ)/cuda_stubs.o -L$(SIMGPU_LIB) -lsimgpu_engine
$(SIMGPU_LIB)/libcuda.so: $(SIMGPU_LIB)/libcuda.so.1
	$(Q)ln -sf libcuda.so.1 $@

# The workloads link the real toolkit: the same binary runs on a GPU, or here with LD_LIBRARY_PATH.
$(BUILD)/tests/matmul_sweep: tests/workloads/matmul_sweep.cu
	$(Q)mkdir -p $(@D)
	$(Q)$(NVCC) $(SIMGPU_NVCC_FLAGS) -o $@ $< -lcublas

# Driver-API workload: PTX embedded as a string, loaded with cuModuleLoadData like Triton does.
$(SIMGPU_GEN)/driver_kernels_ptx.h: tests/workloads/driver_kernels.cu
	$(Q)mkdir -p $(@D)
	$(Q)$(NVCC) -ptx -arch=compute_90 -o $(SIMGPU_GEN)/driver_kernels.ptx $<
	$(Q)awk 'BEGIN { print "/* Generated from tests/workloads/driver_kernels.cu by nvcc -ptx. */"; \
		print "static const char driver_kernels_ptx[] =" } \
		{ gsub(/\\/, "\\\\"); gsub(/"/, "\\\""); print "\t\"" $$0 "\\n\"" } END { print ";" }' \
		$(SIMGPU_GEN)/driver_kernels.ptx > $@.tmp && mv $@.tmp $@

$(BUILD)/tests/driver_launch: tests/workloads/driver_launch.c $(SIMGPU_GEN)/driver_kernels_ptx.h
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS_BASE) -isystem $(CUDA_HOME)/include -I$(SIMGPU_GEN) -o $@ $< \
		-L$(CUDA_HOME)/lib64/stubs -lcuda

$(SIMGPU_TESTBIN)/selftest: $(SIMGPU_DIR)/selftest.cu
	$(Q)mkdir -p $(@D)
	$(Q)$(NVCC) $(SIMGPU_NVCC_FLAGS) -I$(SIMGPU_CUPTI_INC) -o $@ $< -lcublas -lcublasLt \
		-L$(dir $(SIMGPU_CUPTI_INC))lib64 -L$(CUDA_HOME)/lib64 -lcupti -ldl

$(SIMGPU_TESTBIN)/libselftest_hook.so: $(SIMGPU_DIR)/selftest_hook.c
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS_BASE) -fPIC -shared -isystem $(CUDA_HOME)/include -o $@ $< -ldl

$(SIMGPU_TESTBIN)/libselftest_inject.so: $(SIMGPU_DIR)/selftest_inject.c
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS_BASE) -fPIC -shared -pthread -isystem $(SIMGPU_CUPTI_INC) -isystem $(CUDA_HOME)/include \
		-o $@ $< -L$(dir $(SIMGPU_CUPTI_INC))lib64 -L$(CUDA_HOME)/lib64 -lcupti

simgpu-test: simgpu $(SIMGPU_TESTBIN)/selftest $(SIMGPU_TESTBIN)/libselftest_hook.so \
		$(SIMGPU_TESTBIN)/libselftest_inject.so
	$(Q)$(SIMGPU_DIR)/selftest.sh $(BUILD) $(CUDA_HOME)
