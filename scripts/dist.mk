# make dist / make install (issue 22): the relocatable bundle, its tarball and wheel (included by the top Makefile).
# Uses BUILD, PREFIX, DESTDIR, Q and the binaries' rules from the including Makefile; scripts/mkdist does the work.

CPROF_DIST_VERSION := $(shell sed -n 's/^\#define CPROF_VERSION *"\(.*\)"/\1/p' common/version.h)
DIST_WORKLOADS := $(addprefix $(BUILD)/tests/,matmul_sweep driver_launch cupti_user aten_chain nvtx_demo)
# The simulated GPU's launcher: mkdist carries $(BUILD)/simgpu/simgpu-run, when the simgpu target (a
# prerequisite of binaries) builds one, into lib/cprof/simgpu/ beside lib/, the layout it expects.

.PHONY: dist dist-stage dist-install
dist: $(DEPS_STAMP) binaries $(DIST_WORKLOADS)
	$(Q)scripts/mkdist $(BUILD) $(CPROF_DIST_VERSION)

dist-stage: $(DEPS_STAMP) binaries $(DIST_WORKLOADS)
	$(Q)scripts/mkdist $(BUILD) $(CPROF_DIST_VERSION) --stage-only

# the bundle's tree under PREFIX: bin/, lib/, libexec/cprof/, share/man/man1/ (README, docs/ and VERSION go to
# share/doc/cprof/)
dist-install: dist-stage
	$(Q)install -d $(DESTDIR)$(PREFIX)/share/doc/cprof
	$(Q)cd $(BUILD)/dist/stage/cprof-$(CPROF_DIST_VERSION) && \
		find bin lib libexec -type d -exec install -d '$(DESTDIR)$(PREFIX)/{}' \; && \
		find bin lib libexec -type f -exec sh -c 'install -m "$$(stat -c %a "$$1")" "$$1" "$$2/$$1"' sh {} '$(DESTDIR)$(PREFIX)' \; && \
		install -m 0644 README.md VERSION '$(DESTDIR)$(PREFIX)/share/doc/cprof/' && \
		install -d '$(DESTDIR)$(PREFIX)/share/man/man1' && install -m 0644 share/man/man1/*.1 '$(DESTDIR)$(PREFIX)/share/man/man1/' && \
		install -d '$(DESTDIR)$(PREFIX)/share/doc/cprof/docs' && install -m 0644 docs/*.md '$(DESTDIR)$(PREFIX)/share/doc/cprof/docs/'
	@echo "installed cprof $(CPROF_DIST_VERSION) under $(DESTDIR)$(PREFIX)"

# make check runs the bundle's test (tests/integration/t-dist.sh)
check: dist
