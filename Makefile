# PRISM - top-level Makefile.
#   make            build libraries, prism-top, samples
#   make test       unit tests (cmocka) and screen tests
#   make bench      benchmarks (print figures, never fail on time)
#   make demo       run the sample training loop and show its profile
#   make install    PREFIX=/usr/local DESTDIR=
#   make SANITIZE=1 ...   ASan + UBSan build (in build-san/)
#   make WERROR=1 ...     warnings are errors (CI)

CC       ?= cc
PREFIX   ?= /usr/local
DESTDIR  ?=
OPT      ?= -O2
CFLAGS   ?= $(OPT) -g
PKGS     := libcbor-dev libxxhash-dev libncurses-dev libcmocka-dev tmux

WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
        -Wformat=2 -Wwrite-strings -Wpointer-arith -Wundef -Wvla
ifeq ($(WERROR),1)
WARN += -Werror
endif

# BUILD=dir: build elsewhere (several checkouts' builds side by side)
ifeq ($(SANITIZE),1)
B        := $(if $(BUILD),$(BUILD)-san,build-san)
# float-cast-overflow: GCC leaves it out of "undefined" (a double too large
# for the integer it is converted to, as a step total past 2^64 once was)
SAN      := -fsanitize=address,undefined,float-cast-overflow -fno-omit-frame-pointer \
            -fno-sanitize-recover=undefined,float-cast-overflow
else
B        := $(if $(BUILD),$(BUILD),build)
SAN      :=
endif

ALL_CFLAGS  := -std=c11 -D_GNU_SOURCE -fPIC -pthread -Iinclude -Iformat -Isamples/lib -Itui $(WARN) $(SAN) $(CFLAGS)
ALL_LDFLAGS := -pthread $(SAN) $(LDFLAGS)
LIBS_CORE   := -lcbor -lxxhash -ldl -lm
LIBS_TUI    := -lncursesw

FORMAT_SRC   := $(wildcard format/*.c)
COLLECT_SRC  := $(filter-out libcollect/inject.c,$(wildcard libcollect/*.c))
ANALYSIS_SRC := $(wildcard analysis/*.c)
TUI_SRC      := $(wildcard tui/*.c)
TEST_SRC     := $(wildcard tests/*_test.c)
BENCH_SRC    := $(wildcard bench/*.c)
SAMPLE_SRC   := $(wildcard samples/*.c)
SAMPLE_LIB_SRC := $(wildcard samples/lib/*.c)

obj = $(patsubst %.c,$(B)/obj/%.o,$(1))
FORMAT_OBJ   := $(call obj,$(FORMAT_SRC))
COLLECT_OBJ  := $(call obj,$(COLLECT_SRC))
ANALYSIS_OBJ := $(call obj,$(ANALYSIS_SRC))
TUI_OBJ      := $(call obj,$(TUI_SRC))
TUI_MAIN     := $(B)/obj/tui/main.o
SAMPLE_LIB   := $(call obj,$(SAMPLE_LIB_SRC))

LIB_A    := $(B)/lib/libprism.a
LIB_SO   := $(B)/lib/libprism.so
LIB_AN   := $(B)/lib/libprism-analysis.a
PRISMTOP := $(B)/bin/prism-top
TESTS    := $(patsubst tests/%.c,$(B)/tests/%,$(TEST_SRC))
BENCHES  := $(patsubst bench/%.c,$(B)/bench/%,$(BENCH_SRC))
SAMPLES  := $(patsubst samples/%.c,$(B)/bin/%,$(SAMPLE_SRC))
DEPS_OK  := $(B)/.deps-ok

.PHONY: all deps test unit-test screen-test bench demo install uninstall clean
all: $(LIB_A) $(LIB_SO) $(LIB_AN) $(PRISMTOP) $(SAMPLES)

# Install what is missing (as root) or stop with one line naming it.
$(DEPS_OK): scripts/deps.sh
	@mkdir -p $(@D)
	@sh scripts/deps.sh $(PKGS)
	@touch $@
deps: $(DEPS_OK)

$(B)/obj/%.o: %.c | $(DEPS_OK)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

$(LIB_A): $(FORMAT_OBJ) $(COLLECT_OBJ)
	@mkdir -p $(@D)
	rm -f $@ && $(AR) rcs $@ $^

$(LIB_SO): $(FORMAT_OBJ) $(COLLECT_OBJ)
	@mkdir -p $(@D)
	$(CC) -shared -Wl,-soname,libprism.so.$(word 1,$(subst ., ,$(VERSION))) $(ALL_LDFLAGS) -o $@ $^ $(LIBS_CORE)

# The analysis (analysis.h) for programs that read profiles; kept out of
# libprism so instrumented programs never carry it.
$(LIB_AN): $(ANALYSIS_OBJ)
	@mkdir -p $(@D)
	rm -f $@ && $(AR) rcs $@ $^

$(PRISMTOP): $(TUI_OBJ) $(ANALYSIS_OBJ) $(LIB_A)
	@mkdir -p $(@D)
	$(CC) $(ALL_LDFLAGS) -o $@ $(TUI_OBJ) $(ANALYSIS_OBJ) $(LIB_A) $(LIBS_TUI) $(LIBS_CORE)

$(B)/bin/%: $(B)/obj/samples/%.o $(SAMPLE_LIB) $(LIB_A)
	@mkdir -p $(@D)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS_CORE)

# Tests link everything except prism-top's main().
$(B)/tests/%: $(B)/obj/tests/%.o $(filter-out $(TUI_MAIN),$(TUI_OBJ)) $(ANALYSIS_OBJ) $(SAMPLE_LIB) $(LIB_A)
	@mkdir -p $(@D)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ -lcmocka $(LIBS_TUI) $(LIBS_CORE)

$(B)/bench/%: $(B)/obj/bench/%.o $(filter-out $(TUI_MAIN),$(TUI_OBJ)) $(ANALYSIS_OBJ) $(SAMPLE_LIB) $(LIB_A)
	@mkdir -p $(@D)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS_TUI) $(LIBS_CORE)

VERSION := $(shell sed -n 's/^\#define PRISM_VERSION_STRING "\(.*\)"/\1/p' include/prism/profile.h)

test: all $(TESTS)
	@B=$(B) sh tests/run.sh $(TESTS)

bench: all $(BENCHES)
	@for b in $(BENCHES); do echo "== $$b"; $$b || exit 1; done

DEMO_OUT ?= $(B)/demo.cbor
demo: all
	@sh scripts/demo.sh $(B) $(DEMO_OUT)

install: all
	install -d $(DESTDIR)$(PREFIX)/include/prism $(DESTDIR)$(PREFIX)/lib/pkgconfig \
	           $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 644 include/prism/*.h $(DESTDIR)$(PREFIX)/include/prism/
	install -m 644 $(LIB_A) $(LIB_AN) $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(LIB_SO) $(DESTDIR)$(PREFIX)/lib/libprism.so.$(VERSION)
	ln -sf libprism.so.$(VERSION) $(DESTDIR)$(PREFIX)/lib/libprism.so.$(word 1,$(subst ., ,$(VERSION)))
	ln -sf libprism.so.$(VERSION) $(DESTDIR)$(PREFIX)/lib/libprism.so
	install -m 755 $(PRISMTOP) $(DESTDIR)$(PREFIX)/bin/
	install -m 644 docs/prism-top.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|g' prism.pc.in \
	    > $(DESTDIR)$(PREFIX)/lib/pkgconfig/prism.pc

uninstall:
	rm -rf $(DESTDIR)$(PREFIX)/include/prism
	rm -f $(DESTDIR)$(PREFIX)/lib/libprism.a $(DESTDIR)$(PREFIX)/lib/libprism.so* \
	      $(DESTDIR)$(PREFIX)/lib/pkgconfig/prism.pc $(DESTDIR)$(PREFIX)/bin/prism-top \
	      $(DESTDIR)$(PREFIX)/share/man/man1/prism-top.1

clean:
	rm -rf build build-san

# ---- GPU: CUPTI backend, injection library, prism-run, CUDA sample -------
# The CUPTI backend compiles against the CUPTI headers when they exist and
# to a CPU-only backend otherwise (CUPTI=0 forces it); libcupti is opened with
# dlopen at run time, never linked.  samples/cuda_train needs nvcc.
CUDA_HOME ?= /usr/local/cuda
ifneq ($(CUPTI),0)
CUPTI_H  := $(wildcard $(CUDA_HOME)/include/cupti.h)
endif
CUPTI_CFLAGS := $(if $(CUPTI_H),-DPRISM_HAVE_CUPTI_HEADERS -isystem $(CUDA_HOME)/include)
$(call obj,$(wildcard libcollect/cupti*.c tests/cupti*_test.c)): ALL_CFLAGS += $(CUPTI_CFLAGS)

INJECT_SO    := $(B)/lib/libprism-inject.so
LIB_SO_MAJOR := $(B)/lib/libprism.so.$(word 1,$(subst ., ,$(VERSION)))
PRISMRUN     := $(B)/bin/prism-run
NVCC         ?= $(shell command -v nvcc 2>/dev/null || ls $(CUDA_HOME)/bin/nvcc 2>/dev/null)
ifneq ($(NVCC),)
ifneq ($(SANITIZE),1)
CUDA_TRAIN   := $(B)/bin/cuda_train
endif
endif
.PHONY: install-gpu uninstall-gpu
all: $(INJECT_SO) $(PRISMRUN) $(CUDA_TRAIN)

$(LIB_SO_MAJOR): $(LIB_SO)
	ln -sf libprism.so $@

$(INJECT_SO): $(B)/obj/libcollect/inject.o $(LIB_SO) $(LIB_SO_MAJOR)
	$(CC) -shared $(ALL_LDFLAGS) -o $@ $< -L$(B)/lib -l:libprism.so -Wl,-rpath,'$$ORIGIN' $(LIBS_CORE)

$(PRISMRUN): $(B)/obj/tools/prism-run.o
	@mkdir -p $(@D)
	$(CC) $(ALL_LDFLAGS) -o $@ $^

$(B)/bin/cuda_train: samples/cuda_train.cu $(B)/obj/samples/cuda/prism_shim.o $(LIB_A)
	@mkdir -p $(@D)
	$(NVCC) -O2 -std=c++17 -Iinclude -o $@ $< $(B)/obj/samples/cuda/prism_shim.o $(LIB_A) \
	    -Xcompiler -pthread $(LIBS_CORE)

# cupti_session_test calls InitializeInjection directly.
$(B)/tests/cupti_session_test: $(B)/obj/libcollect/inject.o

install: install-gpu
install-gpu: all
	install -d $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/bin
	install -m 755 $(INJECT_SO) $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(PRISMRUN) $(DESTDIR)$(PREFIX)/bin/
uninstall: uninstall-gpu
uninstall-gpu:
	rm -f $(DESTDIR)$(PREFIX)/lib/libprism-inject.so $(DESTDIR)$(PREFIX)/bin/prism-run

-include $(shell find $(B)/obj -name '*.d' 2>/dev/null)
