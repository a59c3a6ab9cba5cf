# autotune: a code-generating autotuner for GPU softmax kernels.
#   make            build build/autotune
#   make test       build and run the Criterion tests (no GPU needed)
#   make sweep      run the default sweep into the default database
# Everything built goes under build/. V=1 shows the commands.

CUDA_HOME ?= /usr/local/cuda
PREFIX    ?= /usr/local
BUILD     ?= build

CC      ?= cc
CFLAGS  ?= -O2 -g
WARN    := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wpointer-arith -Wmissing-prototypes -Wno-unused-parameter
CPPFLAGS += -D_GNU_SOURCE -I. -I$(CUDA_HOME)/include -DAT_SOURCE_TEMPLATES_DIR=\"$(abspath templates)\"
ALL_CFLAGS = -std=c11 $(WARN) $(CFLAGS) $(CPPFLAGS) -MMD -MP

# SQLite and libyaml are linked statically so that the binary runs on GPU
# machines that lack them; libcuda is loaded at run time (dlopen).
STATIC_LIBS := -Wl,-Bstatic -lyaml -lsqlite3 -Wl,-Bdynamic
NVRTC_LIBS  := -L$(CUDA_HOME)/lib64 -lnvrtc -Wl,-rpath,$(CUDA_HOME)/lib64 -Wl,-rpath,/usr/local/cuda/lib64
SYS_LIBS    := -ldl -lpthread -lm

ifeq ($(V),1)
Q :=
else
Q := @
endif

COMMON_SRC  := $(wildcard common/*.c)
GEN_SRC     := $(wildcard gen/*.c)
DB_SRC      := $(wildcard db/*.c)
DISPATCH_SRC := $(wildcard dispatch/*.c)
TUNER_SRC   := $(filter-out tuner/main.c,$(wildcard tuner/*.c))
REPORT_SRC  := $(wildcard reports/*.c)
TEST_SRC    := $(wildcard tests/*.c)

LIB_SRC := $(COMMON_SRC) $(GEN_SRC) $(DB_SRC) $(DISPATCH_SRC) $(TUNER_SRC) $(REPORT_SRC)
LIB_OBJ := $(patsubst %.c,$(BUILD)/obj/%.o,$(LIB_SRC)) $(BUILD)/obj/schema_sql.o
TEST_OBJ := $(patsubst %.c,$(BUILD)/obj/%.o,$(TEST_SRC))

.PHONY: all test sweep clean
all: $(BUILD)/autotune

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

$(BUILD)/autotune: $(BUILD)/obj/tuner/main.o $(LIB_OBJ)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) -o $@ $^ $(STATIC_LIBS) $(NVRTC_LIBS) $(SYS_LIBS)

$(BUILD)/tests: $(TEST_OBJ) $(LIB_OBJ)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) -o $@ $^ -lcriterion $(STATIC_LIBS) $(NVRTC_LIBS) $(SYS_LIBS)

test: $(BUILD)/tests $(BUILD)/autotune
	$(BUILD)/tests --jobs 2

sweep: $(BUILD)/autotune
	$(BUILD)/autotune sweep -c configs/softmax.yaml --db autotune.db

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
