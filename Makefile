# autotune: a code-generating autotuner for GPU softmax kernels.
#   make            build build/autotune
#   make deps       install missing Debian packages, check the CUDA toolkit
#   make deps-ci    also what browser-test and the fuzz targets need (chromium, clang)
#   make test       check the room graph, build and run the Criterion tests, the
#                   Python package's and the README's examples (no GPU needed)
#   make python-gpu-test  the Python package's tests on a GPU (PyTorch needed)
#   make browser-test  render the example report and check it in headless Chromium
#   make sanitize   the tests under AddressSanitizer and UndefinedBehaviorSanitizer
#   make fuzz       libFuzzer runs of the config, manifest, expression and database readers
#   make sweep      run the default sweep into the default database
#   make bench      tune and report the benchmark shapes (configs/bench.yaml, GPU)
#   make selftest   every variant at edge cases on the GPU (selftest-sanitize: under compute-sanitizer)
# Everything built goes under build/. V=1 shows the commands.

CUDA_HOME ?= /usr/local/cuda
PREFIX    ?= /usr/local
DESTDIR   ?=
bindir     ?= $(PREFIX)/bin
libdir     ?= $(PREFIX)/lib
includedir ?= $(PREFIX)/include
datadir    ?= $(PREFIX)/share
pkgconfigdir ?= $(libdir)/pkgconfig
BUILD     ?= build
NVCC      ?= $(CUDA_HOME)/bin/nvcc

CC      ?= cc
CFLAGS  ?= -O2 -g
WARN    := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wpointer-arith -Wmissing-prototypes -Wno-unused-parameter
CPPFLAGS += -D_GNU_SOURCE -I. -Iinclude -I$(CUDA_HOME)/include -DAT_SOURCE_TEMPLATES_DIR=\"$(abspath templates)\"
ALL_CFLAGS = -std=c11 $(WARN) $(CFLAGS) $(CPPFLAGS) -MMD -MP

# SQLite and libyaml are linked statically so that the binary runs on GPU
# machines that lack them; libcuda is loaded at run time (dlopen).
STATIC_LIBS := -Wl,-Bstatic -lyaml -lsqlite3 -Wl,-Bdynamic
SYS_LIBS    := -ldl -lpthread -lm

ifeq ($(V),1)
Q :=
else
Q := @
endif

COMMON_SRC  := $(wildcard common/*.c)
CUDA_SRC    := $(wildcard cuda/*.c)
GEN_SRC     := $(filter-out gen/%_main.c,$(wildcard gen/*.c))
DB_SRC      := $(wildcard db/*.c)
DISPATCH_SRC := $(wildcard dispatch/*.c dispatch/*/*.c)
TUNER_SRC   := $(filter-out tuner/cli/main.c,$(wildcard tuner/*.c tuner/*/*.c))
REPORT_SRC  := $(wildcard reports/*.c)
TEST_SRC    := $(wildcard tests/*.c)

LIB_SRC := $(COMMON_SRC) $(CUDA_SRC) $(GEN_SRC) $(DB_SRC) $(DISPATCH_SRC) $(TUNER_SRC) $(REPORT_SRC)
LIB_OBJ := $(patsubst %.c,$(BUILD)/obj/%.o,$(LIB_SRC)) $(BUILD)/obj/schema_sql.o \
	$(BUILD)/obj/builtin_kernels.o $(BUILD)/obj/template_rules.o $(BUILD)/obj/seed_models.o
TEST_OBJ := $(patsubst %.c,$(BUILD)/obj/%.o,$(TEST_SRC))

.PHONY: all deps deps-ci test sweep clean lib install uninstall examples browser-test \
	bench-dispatch python-test python-gpu-test
all: $(BUILD)/autotune lib

# Installs missing Debian packages (needs root or sudo) and checks CUDA;
# deps-ci adds what browser-test and the fuzz targets need.
deps:
	CUDA_HOME=$(CUDA_HOME) scripts/install-deps.sh

deps-ci:
	CUDA_HOME=$(CUDA_HOME) scripts/install-deps.sh ci

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

# The schema lives in db/schema.sql (one source of truth) and is embedded.
$(BUILD)/obj/schema_sql.c: db/schema.sql
	@mkdir -p $(dir $@)
	$(Q){ echo '/* Generated from db/schema.sql by the Makefile. Do not edit. */'; \
	  echo 'const char db_schema_sql[] ='; \
	  sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' $<; \
	  echo ';'; } > $@

$(BUILD)/obj/schema_sql.o: $(BUILD)/obj/schema_sql.c
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

# ---- the dispatch library (libautotune-dispatch) ----------------------------
# Its built-in kernels are each op family's looped template specialised per op and dtype
# with the params of dispatch/policy/builtin_params.h: build/emit-builtin generates
# their sources into $(BUILD)/builtin/ (never committed), compiled here to fat
# binaries: SASS for sm_80 and sm_90, PTX for the rest.
# The one version of the CLI (tuner/version.h), the library, its .pc and the
# Python package (python/build_backend): the public header's.
ATD_VERSION := $(shell sed -n 's/^\#define ATD_VERSION_STRING "\(.*\)"/\1/p' include/autotune/dispatch.h)
ATD_SOVERSION := $(firstword $(subst ., ,$(ATD_VERSION)))
ATD_LIB := libautotune-dispatch
BUILTIN_DTYPES := f32 f16 bf16
NVCC_ARCHS := -gencode arch=compute_75,code=compute_75 -gencode arch=compute_80,code=sm_80 \
	-gencode arch=compute_90,code=sm_90
TEMPLATE_FILES := $(wildcard templates/*.yaml templates/*.cu templates/*.cuh)
GEN_TOOL_OBJ := $(patsubst %.c,$(BUILD)/obj/%.o,$(GEN_SRC) $(COMMON_SRC))

$(BUILD)/emit-builtin: $(BUILD)/obj/gen/emit_builtin_main.o $(GEN_TOOL_OBJ)
	$(Q)$(CC) -o $@ $^ $(STATIC_LIBS) $(SYS_LIBS)

# On the generator's sources rather than its binary, so that a build tree
# given the plain build's outputs (fuzz/sanitize.sh) keeps them.
BUILTIN_OPS := softmax log_softmax softmax_backward log_softmax_backward cross_entropy
BUILTIN_NAMES := $(foreach o,$(BUILTIN_OPS),$(foreach d,$(BUILTIN_DTYPES),$(o)_$(d)))
$(BUILD)/builtin/%.cu: gen/emit_builtin_main.c dispatch/policy/builtin_params.h $(GEN_SRC) $(COMMON_SRC) \
		$(foreach t,softmax_online softmax_backward_loop cross_entropy_loop,templates/$(t).yaml templates/$(t).cu) \
		$(wildcard templates/*.cuh) \
		| $(BUILD)/emit-builtin
	@mkdir -p $(dir $@)
	$(Q)$(BUILD)/emit-builtin templates $* $@

# kept after the build, for reading and for the test that regenerates them
.SECONDARY: $(foreach n,$(BUILTIN_NAMES),$(BUILD)/builtin/$(n).cu)

$(BUILD)/builtin/%.fatbin: $(BUILD)/builtin/%.cu
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  NVCC    $<")
	$(Q)$(NVCC) -fatbin $(NVCC_ARCHS) -o $@ $<

# Each fat binary becomes a C array named after its file.
$(BUILD)/obj/builtin_kernels.c: $(foreach n,$(BUILTIN_NAMES),$(BUILD)/builtin/$(n).fatbin)
	$(Q){ echo '/* Generated by the Makefile from $(BUILD)/builtin/*.fatbin. Do not edit. */'; \
	  echo '#include <stddef.h>'; \
	  for f in $^; do n=$$(basename $$f .fatbin); \
	    echo "__attribute__((aligned(64))) const unsigned char atd_builtin_$$n[] = {"; \
	    od -An -v -tx1 $$f | sed -e 's/\([0-9a-f][0-9a-f]\)/0x\1,/g'; \
	    echo '};'; \
	    echo "const size_t atd_builtin_$${n}_size = sizeof atd_builtin_$$n;"; \
	  done; } > $@

$(BUILD)/obj/builtin_kernels.o: $(BUILD)/obj/builtin_kernels.c
	$(Q)$(CC) -std=c11 -c -fPIC -fvisibility=hidden $< -o $@

# The templates' rules (what re-derives a winner for an untuned shape, and
# the sources to compile) become C tables in the library: generated by
# build/emit-rules from the manifests, so that the library links nothing of
# the generator.
$(BUILD)/emit-rules: $(BUILD)/obj/gen/emit_rules_main.o $(GEN_TOOL_OBJ)
	$(Q)$(CC) -o $@ $^ $(STATIC_LIBS) $(SYS_LIBS)

$(BUILD)/obj/template_rules.c: $(BUILD)/emit-rules $(TEMPLATE_FILES)
	$(Q)$(BUILD)/emit-rules templates $@

$(BUILD)/obj/template_rules.o: $(BUILD)/obj/template_rules.c
	$(Q)$(CC) -std=c11 -I. -c -fPIC -fvisibility=hidden $< -o $@

# The shipped seed models (templates/perf-model-seed*.txt) become C strings in
# the library, which serves their choice with no database
# (dispatch/policy/seed_models.h); perf-model-seed.txt is softmax's family's.
SEED_MODEL_FILES := $(wildcard templates/perf-model-seed*.txt)
$(BUILD)/obj/seed_models.c: $(SEED_MODEL_FILES)
	@mkdir -p $(dir $@)
	$(Q){ echo '/* Generated by the Makefile from templates/perf-model-seed*.txt. Do not edit. */'; \
	  echo '#include "dispatch/policy/seed_models.h"'; \
	  i=0; for f in $^; do \
	    echo "static const char model_$$i[] = {"; \
	    od -An -v -tx1 $$f | sed -e 's/\([0-9a-f][0-9a-f]\)/0x\1,/g'; \
	    echo '0x00 };'; i=$$((i + 1)); \
	  done; \
	  echo 'const atdi_seed_model atdi_seed_models[] = {'; \
	  i=0; for f in $^; do \
	    op=$$(basename $$f .txt | sed -e 's/^perf-model-seed-//' -e 's/^perf-model-seed$$/softmax/'); \
	    echo "	{ \"$$op\", model_$$i },"; i=$$((i + 1)); \
	  done; \
	  echo '};'; \
	  echo "const int atdi_nseed_models = $$i;"; } > $@

$(BUILD)/obj/seed_models.o: $(BUILD)/obj/seed_models.c dispatch/policy/seed_models.h
	$(Q)$(CC) -std=c11 -I. -c -fPIC -fvisibility=hidden $< -o $@

ATD_SRC := $(DISPATCH_SRC) $(CUDA_SRC) common/error.c common/dtype.c common/expr.c \
	common/kernel_source.c common/sqlite_reader.c common/sqlite_wal.c common/template_rules.c common/sha256.c \
	common/perf_model.c common/perf_features.c common/tree_ensemble.c common/strbuf.c
ATD_PIC_OBJ := $(patsubst %.c,$(BUILD)/pic/%.o,$(ATD_SRC)) $(BUILD)/obj/builtin_kernels.o \
	$(BUILD)/obj/template_rules.o $(BUILD)/obj/seed_models.o
ATD_STATIC := $(BUILD)/lib/$(ATD_LIB).a
ATD_SHARED := $(BUILD)/lib/$(ATD_LIB).so.$(ATD_VERSION)

$(BUILD)/pic/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC PIC  $<")
	$(Q)$(CC) $(ALL_CFLAGS) -fPIC -fvisibility=hidden -DATD_BUILDING -c $< -o $@

$(ATD_STATIC): $(ATD_PIC_OBJ)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^

$(ATD_SHARED): $(ATD_PIC_OBJ)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) -shared -Wl,-soname,$(ATD_LIB).so.$(ATD_SOVERSION) -Wl,--no-undefined -o $@ $^ \
	  -lsqlite3 -ldl -lpthread -lm
	$(Q)ln -sf $(ATD_LIB).so.$(ATD_VERSION) $(BUILD)/lib/$(ATD_LIB).so.$(ATD_SOVERSION)
	$(Q)ln -sf $(ATD_LIB).so.$(ATD_SOVERSION) $(BUILD)/lib/$(ATD_LIB).so

# The .pc names PREFIX, so install writes its own rather than copying this one.
ATD_PC_SED = sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(libdir)|' \
	-e 's|@INCLUDEDIR@|$(includedir)|' -e 's|@VERSION@|$(ATD_VERSION)|'

$(BUILD)/lib/autotune-dispatch.pc: dispatch/autotune-dispatch.pc.in include/autotune/dispatch.h
	@mkdir -p $(dir $@)
	$(Q)$(ATD_PC_SED) $< > $@

lib: $(ATD_STATIC) $(ATD_SHARED) $(BUILD)/lib/autotune-dispatch.pc

install: all
	install -d $(DESTDIR)$(bindir) $(DESTDIR)$(libdir) $(DESTDIR)$(includedir)/autotune \
	  $(DESTDIR)$(pkgconfigdir) $(DESTDIR)$(datadir)/autotune/templates
	install -m 755 $(BUILD)/autotune $(DESTDIR)$(bindir)/autotune
	install -m 644 include/autotune/dispatch.h $(DESTDIR)$(includedir)/autotune/dispatch.h
	install -m 644 $(ATD_STATIC) $(DESTDIR)$(libdir)/
	install -m 755 $(ATD_SHARED) $(DESTDIR)$(libdir)/
	ln -sf $(ATD_LIB).so.$(ATD_VERSION) $(DESTDIR)$(libdir)/$(ATD_LIB).so.$(ATD_SOVERSION)
	ln -sf $(ATD_LIB).so.$(ATD_SOVERSION) $(DESTDIR)$(libdir)/$(ATD_LIB).so
	$(ATD_PC_SED) dispatch/autotune-dispatch.pc.in > $(DESTDIR)$(pkgconfigdir)/autotune-dispatch.pc
	chmod 644 $(DESTDIR)$(pkgconfigdir)/autotune-dispatch.pc
	install -m 644 templates/*.cu templates/*.cuh templates/*.yaml templates/perf-model-seed*.txt $(DESTDIR)$(datadir)/autotune/templates/
	install -d $(DESTDIR)$(datadir)/autotune/configs
	install -m 644 configs/*.yaml $(DESTDIR)$(datadir)/autotune/configs/

uninstall:
	rm -f $(DESTDIR)$(bindir)/autotune $(DESTDIR)$(includedir)/autotune/dispatch.h \
	  $(DESTDIR)$(libdir)/$(ATD_LIB).a $(DESTDIR)$(libdir)/$(ATD_LIB).so* \
	  $(DESTDIR)$(pkgconfigdir)/autotune-dispatch.pc
	rm -rf $(DESTDIR)$(datadir)/autotune
	-rmdir $(DESTDIR)$(includedir)/autotune 2>/dev/null

# The example builds against an installed copy (in $(BUILD)/stage) through
# pkg-config only, as an application would; SQLite is linked statically so
# that the binary also runs on GPU machines without it.
STAGE := $(abspath $(BUILD)/stage)
examples: $(BUILD)/examples/softmax_example

$(BUILD)/examples/softmax_example: examples/softmax_example.c lib
	$(Q)$(MAKE) --no-print-directory install DESTDIR=$(STAGE) PREFIX=/usr >/dev/null
	@mkdir -p $(dir $@)
	$(Q)PKG_CONFIG_SYSROOT_DIR=$(STAGE) PKG_CONFIG_LIBDIR=$(STAGE)/usr/lib/pkgconfig \
	  $(CC) -std=c11 -O2 -Wall -Wextra -o $@ $< \
	  $$(PKG_CONFIG_SYSROOT_DIR=$(STAGE) PKG_CONFIG_LIBDIR=$(STAGE)/usr/lib/pkgconfig pkg-config --cflags autotune-dispatch) \
	  -L$(STAGE)/usr/lib -Wl,-Bstatic -lautotune-dispatch -lsqlite3 -Wl,-Bdynamic -ldl -lpthread -lm

$(BUILD)/autotune: $(BUILD)/obj/tuner/cli/main.o $(LIB_OBJ)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) -o $@ $^ $(STATIC_LIBS) $(SYS_LIBS)

$(BUILD)/tests: $(TEST_OBJ) $(LIB_OBJ)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) -o $@ $^ -lcriterion $(STATIC_LIBS) $(SYS_LIBS)

# NVRTC's outcome per source, kept for the template tests' next run and for
# make sanitize (tests/compile_memo.h); AUTOTUNE_TEST_COMPILE_CACHE= turns it off.
AUTOTUNE_TEST_COMPILE_CACHE ?= $(abspath $(BUILD))/test-compile-cache.db
# The room graph (tools/room_graph.py) first: no room above a third of the
# lines, no include loop, the dispatch library reaching no tuner code; last
# the README's command-line examples, run as written (tests/readme_examples.sh).
test: $(BUILD)/tests $(BUILD)/autotune lib
	python3 tools/room_graph.py
	AUTOTUNE_TEST_COMPILE_CACHE=$(AUTOTUNE_TEST_COMPILE_CACHE) $(BUILD)/tests --jobs 2
	$(Q)$(MAKE) --no-print-directory python-test
	BUILD=$(BUILD) tests/readme_examples.sh

# The Python package (python/): its tests without a GPU (argument checks,
# finding the library, error mapping, pip install into a fresh virtual
# environment; the GPU tests skip), and with one (ATD_REQUIRE_GPU=1 makes a
# missing GPU or PyTorch a failure rather than a skip).
PYTHON ?= python3
python-test: lib
	PYTHONPATH=python $(PYTHON) -m unittest discover -s python/tests
python-gpu-test: lib
	ATD_REQUIRE_GPU=1 PYTHONPATH=python $(PYTHON) -m unittest discover -s python/tests -p 'test_gpu*.py' -v

# fuzz-build, fuzz, fuzz-replay and sanitize (ASan + UBSan test suite)
include fuzz/Makefile.inc

# Renders results/example/h100-default.db and checks the page in headless Chromium.
browser-test: $(BUILD)/autotune
	tests/browser/check_report.sh

# The dispatch library's speed benchmark (needs a GPU): see tools/bench_dispatch.c.
bench-dispatch: $(BUILD)/bench_dispatch
$(BUILD)/bench_dispatch: $(BUILD)/obj/tools/bench_dispatch.o $(LIB_OBJ)
	$(Q)$(CC) -o $@ $^ $(STATIC_LIBS) $(SYS_LIBS)

# The family in turn, softmax first: its results then prune log_softmax's
# sweep (the same templates); SWEEP_CONFIGS=configs/softmax.yaml for softmax alone.
SWEEP_CONFIGS ?= configs/softmax.yaml configs/log_softmax.yaml configs/softmax_backward.yaml \
	configs/cross_entropy.yaml
sweep: $(BUILD)/autotune
	set -e; for c in $(SWEEP_CONFIGS); do $(BUILD)/autotune sweep -c $$c --db autotune.db; done

# The benchmark (needs a GPU): tunes configs/bench.yaml into $(BENCH_DB)
# (resumes; tuned shapes are skipped), prints the goals table and writes
# results/bench-<gpu>.csv.
BENCH_DB ?= bench.db
.PHONY: bench
bench: $(BUILD)/autotune
	$(BUILD)/autotune bench -c configs/bench.yaml --db $(BENCH_DB)

# The selftest (needs a GPU): every variant at edge cases against the CPU
# reference; selftest-sanitize runs its small shapes under compute-sanitizer
# (memcheck, then racecheck). Compiled kernels are kept in $(SELFTEST_DB)'s
# compile cache, so a second run compiles nothing.
SELFTEST_DB ?= selftest.db
.PHONY: selftest selftest-sanitize
selftest: $(BUILD)/autotune
	$(BUILD)/autotune selftest --db $(SELFTEST_DB)
selftest-sanitize: $(BUILD)/autotune
	$(BUILD)/autotune selftest --sanitize --db $(SELFTEST_DB)

clean:
	rm -rf $(BUILD) $(BUILD)-asan

# header dependencies of both object trees (a stale PIC object once mixed two
# layouts of a dispatch struct in libautotune-dispatch: wrong winners, crashes)
-include $(shell find $(BUILD)/obj $(BUILD)/pic -name '*.d' 2>/dev/null)
