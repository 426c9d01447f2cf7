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
PKGS     := libcbor-dev libxxhash-dev libncurses-dev libcmocka-dev tmux python3-dev
# the importer of torch.profiler traces (import/, in libprism-analysis only)
PKGS     += libyajl-dev zlib1g-dev
# `make test` also needs a C++ compiler (the header's C++ test, the README's
# example built as C++), pkg-config (linking against the installed library)
# and, for the Python tests, PyTorch, NumPy, venv (pip install . in a venv) and
# jsonschema (the speedscope export checked against speedscope's schema), and
# chromium (the HTML reports opened in a real browser).  Not python3-matplotlib:
# it pulls in OpenBLAS, which becomes the BLAS Debian's torch 1.13 calls, and
# that changes the compatibility pass's timings (prism.plot is tested in the
# venv, whose matplotlib comes from pip, and skipped in the compat pass)
TEST_PKGS := g++ pkg-config python3-torch python3-numpy python3-venv python3-jsonschema chromium
# The interpreter the Python module is built for and tested with: Debian's,
# the one that sees python3-torch (the python3 first on PATH may be another)
PYTHON   ?= $(if $(wildcard /usr/bin/python3),/usr/bin/python3,python3)

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

# -fvisibility=hidden: a library exports only what its public headers mark
# PRISM_API (include/prism/api.h)
# One spelling of the build directory: a BUILD given as an absolute path
# inside the checkout (a test's make install, pip's build) is the same
# directory, and the dependency files (-MMD) name their targets one way; two
# spellings would hide header changes from the next make and link stale
# objects.
B := $(patsubst $(CURDIR)/%,%,$(B))

# Each folder sees the public headers, its own and those of the folders it
# may use (docs/ARCHITECTURE.md): INC_<folder>, chosen by the source's folder.
INC_base        :=
INC_format      := -Ibase
INC_libcollect  := -Iformat -Ibase
INC_import      := -Ibase
INC_analysis    := -Ibase
INC_present     := -Ibase
INC_reports     := -Ipresent -Ibase
INC_tui         := -Ipresent -Ibase
INC_cli         := -Ireports -Itui -Ipresent -Ibase
INC_python/src  := -Ireports -Ipresent -Ibase
INC_tools       :=
INC_samples     := -Isamples/lib
INC_samples/lib :=
# tests and benchmarks reach inside (their ../folder/ includes are explicit)
INC_tests       := -Ibase -Iformat -Isamples/lib -Ipresent -Ireports -Itui -Icli
INC_tests/fuzz  := $(INC_tests)
INC_bench       := $(INC_tests)
folder_inc = -Iinclude $(INC_$(patsubst %/,%,$(dir $<)))
ALL_CFLAGS  := -std=c11 -D_GNU_SOURCE -fPIC -fvisibility=hidden -pthread $(WARN) $(SAN) $(CFLAGS)
ALL_LDFLAGS := -pthread $(SAN) $(LDFLAGS)
LIBS_CORE   := -lcbor -lxxhash -ldl -lm
LIBS_TUI    := -lncursesw
# import/ (yajl: streaming JSON, zlib: .gz): whatever links the analysis
LIBS_IMPORT := -lyajl -lz
# C++ (tests only): C++11, the C warnings that apply to C++
CXXFLAGS    ?= $(OPT) -g
ALL_CXXFLAGS := -std=c++11 -D_GNU_SOURCE -pthread -Iinclude \
                $(filter-out -Wstrict-prototypes -Wmissing-prototypes,$(WARN)) $(SAN) $(CXXFLAGS)

# DEPS_DIR=dir (or PRISM_DEPS_DIR in the environment): build without apt-get
# from a prepared folder of unpacked Debian packages (tests/gpu/deps.sh:
# dir/root the unpacked tree, dir/lib its libraries in one folder, dir/rt the
# run-time libraries the machine lacks; the GPU machines have no mirror).
# Its headers and libraries come after the command line's, its rt/ is the
# programs' rpath, and scripts/deps.sh installs nothing (docs/GPU.md).
DEPS_DIR ?= $(PRISM_DEPS_DIR)
ifneq ($(DEPS_DIR),)
DEPS_ARCH := $(shell $(CC) -print-multiarch 2>/dev/null)
ALL_CFLAGS  += -isystem $(DEPS_DIR)/root/usr/include \
               $(if $(DEPS_ARCH),-isystem $(DEPS_DIR)/root/usr/include/$(DEPS_ARCH))
ALL_CXXFLAGS += -isystem $(DEPS_DIR)/root/usr/include
ALL_LDFLAGS += -L$(DEPS_DIR)/lib -Wl,-rpath,$(DEPS_DIR)/rt
endif

# base/: the small machinery every reader of profiles shares (maps,
# buffers, JSON writing, escaping, errors); libcollect keeps its own.
BASE_SRC     := $(wildcard base/*.c)
FORMAT_SRC   := $(wildcard format/*.c)
COLLECT_SRC  := $(filter-out libcollect/inject.c,$(wildcard libcollect/*.c))
ANALYSIS_SRC := $(wildcard analysis/*.c)
IMPORT_SRC   := $(wildcard import/*.c)
PRESENT_SRC  := $(wildcard present/*.c)
# reports/: the report writers (no argv); cli/: the command line, main()
REPORTS_SRC  := $(wildcard reports/*.c)
TUI_SRC      := $(wildcard tui/*.c)
CLI_SRC      := $(wildcard cli/*.c)
TEST_SRC     := $(wildcard tests/*_test.c)
CXX_TEST_SRC := $(wildcard tests/*_test.cpp)
BENCH_SRC    := $(wildcard bench/*.c)
SAMPLE_SRC   := $(wildcard samples/*.c)
SAMPLE_LIB_SRC := $(wildcard samples/lib/*.c)

# One object list per library; programs, tests, the Python module and the
# fuzz targets link whole lists.
obj = $(patsubst %.c,$(B)/obj/%.o,$(1))
BASE_OBJ     := $(call obj,$(BASE_SRC))
FORMAT_OBJ   := $(call obj,$(FORMAT_SRC))
COLLECT_OBJ  := $(call obj,$(COLLECT_SRC))
IMPORT_OBJ   := $(call obj,$(IMPORT_SRC))
PRESENT_OBJ  := $(call obj,$(PRESENT_SRC))
REPORTS_OBJ  := $(call obj,$(REPORTS_SRC))
TUI_OBJ      := $(call obj,$(TUI_SRC))
CLI_OBJ      := $(call obj,$(CLI_SRC))
CLI_MAIN     := $(B)/obj/cli/main.o
# libprism: the format and the collection runtime (+ base's error value)
CORE_OBJ     := $(FORMAT_OBJ) $(COLLECT_OBJ) $(B)/obj/base/errinfo.o $(B)/obj/base/ropen.o \
                $(B)/obj/base/hseed.o
# libprism-analysis.a: the analysis with base/ and the importers
ANALYSIS_OBJ := $(BASE_OBJ) $(IMPORT_OBJ) $(call obj,$(ANALYSIS_SRC))
# the report writers and what they share with the explorer
WRITERS_OBJ  := $(PRESENT_OBJ) $(REPORTS_OBJ)
# prism-top without main(): what tests and benches link
TOP_OBJ      := $(filter-out $(CLI_MAIN),$(CLI_OBJ)) $(TUI_OBJ) $(WRITERS_OBJ)
SAMPLE_LIB   := $(call obj,$(SAMPLE_LIB_SRC))

LIB_A    := $(B)/lib/libprism.a
LIB_SO   := $(B)/lib/libprism.so
LIB_AN   := $(B)/lib/libprism-analysis.a
PRISMTOP := $(B)/bin/prism-top
TESTS    := $(patsubst tests/%.c,$(B)/tests/%,$(TEST_SRC)) \
            $(patsubst tests/%.cpp,$(B)/tests/%,$(CXX_TEST_SRC))
# programs of tests/ that the screen tests run (not tests themselves)
SCREEN_PROGS := $(B)/tests/steps_workload $(B)/tests/workers_workload
LINK_TEST := $(B)/tests/link_test $(B)/tests/boundaries_test $(B)/tests/gpu_fixtures_test
# prism-top's outputs of a trace with hostile names (tests/hostile_names_test.sh)
SHELL_TEST := $(B)/tests/hostile_names_test
# tests/gpu/run_gpu_checks.sh's logic without a GPU (tests/gpu/offline_test.sh)
GPU_OFFLINE_TEST := $(B)/tests/gpu_offline_test
BENCHES  := $(patsubst bench/%.c,$(B)/bench/%,$(BENCH_SRC))
SAMPLES  := $(patsubst samples/%.c,$(B)/bin/%,$(SAMPLE_SRC))
DEPS_OK  := $(B)/.deps-ok
TEST_DEPS_OK := $(B)/.test-deps-ok
# The Python package (the rules: "Python" at the end)
PY_INC     := $(shell $(PYTHON) -c 'import sysconfig; print(sysconfig.get_path("include"))' 2>/dev/null)
PY_H       := $(if $(PY_INC),$(wildcard $(PY_INC)/Python.h))
# no headers for $(PYTHON): the prepared folder's (the module is abi3: any 3.10+)
ifeq ($(PY_H)$(if $(DEPS_DIR),x),x)
PY_INC     := $(firstword $(wildcard $(DEPS_DIR)/root/usr/include/python3.*))
PY_H       := $(if $(PY_INC),$(wildcard $(PY_INC)/Python.h))
endif
PY_LIBPY   := $(wildcard $(shell $(PYTHON) -c 'import sysconfig as s; \
                print("%s/%s" % (s.get_config_var("LIBDIR"), s.get_config_var("LDLIBRARY")))' \
                2>/dev/null))
PY_SRC     := $(wildcard python/src/*.c)
PY_OBJ     := $(call obj,$(PY_SRC))
PY_DIR     := $(B)/python/prism
PY_EXT     := $(PY_DIR)/_prism.abi3.so
PY_FILES   := $(patsubst python/prism/%,$(PY_DIR)/%,$(wildcard python/prism/*.py))
PY_SITE    := $(B)/python/site/sitecustomize.py
PY_BENCHES := $(wildcard bench/*.py)
# the Python tests: the main pass in $(B)/venv (torch 2.13), the
# compatibility pass with $(PYTHON) (Debian's python3-torch, 1.13)
PY_TEST    := $(B)/tests/python_test $(B)/tests/python_compat_test
PY_VENV    := $(B)/venv
VENV_PYTHON ?= python3
VENV_PKGS  := torch==2.13.0 numpy wheel matplotlib

VERSION := $(shell sed -n 's/^\#define PRISM_VERSION_STRING "\(.*\)"/\1/p' include/prism/profile.h)

# The GPU parts: the CUPTI backend compiles against the CUPTI headers when
# they exist and to a CPU-only backend otherwise (CUPTI=0 forces it); libcupti
# is opened with dlopen at run time, never linked.  samples/cuda_train needs nvcc.
CUDA_HOME ?= /usr/local/cuda
ifneq ($(CUPTI),0)
CUPTI_H  := $(wildcard $(CUDA_HOME)/include/cupti.h)
endif
CUPTI_CFLAGS := $(if $(CUPTI_H),-DPRISM_HAVE_CUPTI_HEADERS -isystem $(CUDA_HOME)/include)
INJECT_SO    := $(B)/lib/libprism-inject.so
LIB_SO_MAJOR := $(B)/lib/libprism.so.$(word 1,$(subst ., ,$(VERSION)))
PRISMRUN     := $(B)/bin/prism-run
NVCC         ?= $(shell command -v nvcc 2>/dev/null || ls $(CUDA_HOME)/bin/nvcc 2>/dev/null)
ifneq ($(NVCC),)
ifneq ($(SANITIZE),1)
CUDA_TRAIN   := $(B)/bin/cuda_train
endif
endif
# the fuzz targets' replays are tests like the others (tests/fuzz/replay.c)
FUZZ_REPLAY  := $(B)/tests/fuzz/import_replay
FUZZ_REPLAYS := $(patsubst %,$(B)/tests/fuzz/%_replay,reader feed compare summary demangle export job)
TESTS += $(FUZZ_REPLAY) $(FUZZ_REPLAYS)

.PHONY: all deps test unit-test screen-test bench demo install uninstall clean
all: $(LIB_A) $(LIB_SO) $(LIB_AN) $(PRISMTOP) $(INJECT_SO) $(PRISMRUN) $(CUDA_TRAIN) $(SAMPLES) python

# Install what is missing (as root) or stop with one line naming it.
$(DEPS_OK): scripts/deps.sh
	@mkdir -p $(@D)
	@PRISM_DEPS_DIR='$(DEPS_DIR)' sh scripts/deps.sh $(PKGS)
	@touch $@
deps: $(DEPS_OK)
# after $(DEPS_OK): two apt-get runs at once (make -j) fight over dpkg's lock
$(TEST_DEPS_OK): scripts/deps.sh | $(DEPS_OK)
	@mkdir -p $(@D)
	@PRISM_DEPS_DIR='$(DEPS_DIR)' sh scripts/deps.sh $(TEST_PKGS)
	@touch $@

$(B)/obj/%.o: %.c | $(DEPS_OK)
	@mkdir -p $(@D)
	$(CC) $(folder_inc) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

$(B)/obj/%.o: %.cpp | $(DEPS_OK) $(TEST_DEPS_OK)
	@mkdir -p $(@D)
	$(CXX) $(ALL_CXXFLAGS) -MMD -MP -c $< -o $@

# The objects of samples, tests and benches are reached only through pattern
# rules: keep them (Make would delete them as intermediates, and compile
# them again the next time).
.SECONDARY: $(call obj,$(SAMPLE_SRC) $(SAMPLE_LIB_SRC) $(TEST_SRC) $(BENCH_SRC)) \
            $(patsubst $(B)/tests/%,$(B)/obj/tests/%.o,$(SCREEN_PROGS)) \
            $(patsubst %.cpp,$(B)/obj/%.o,$(CXX_TEST_SRC))

# A static library is its objects linked into one (ld -r) whose hidden
# symbols are then made local: a program linking it sees the PRISM_API names
# and nothing else, so its own clock_ns or vec_reserve never collides.  The
# tests and benches link the objects themselves (CORE_OBJ).
LD      ?= ld
OBJCOPY ?= objcopy
define static_lib
	@mkdir -p $(@D)
	rm -f $@ $@.o && $(LD) -r -o $@.o $(filter %.o,$^) && $(OBJCOPY) --localize-hidden $@.o && \
	    $(AR) rcs $@ $@.o && rm -f $@.o
endef
$(LIB_A): $(CORE_OBJ)
	$(static_lib)

# libprism.so exports prism_* alone (libcollect/libprism.map)
$(LIB_SO): $(CORE_OBJ) libcollect/libprism.map
	@mkdir -p $(@D)
	$(CC) -shared -Wl,-soname,libprism.so.$(word 1,$(subst ., ,$(VERSION))) \
	    -Wl,--version-script=libcollect/libprism.map $(ALL_LDFLAGS) -o $@ $(filter %.o,$^) $(LIBS_CORE)

# The analysis (analysis.h) for programs that read profiles; kept out of
# libprism so instrumented programs never carry it.
$(LIB_AN): $(ANALYSIS_OBJ)
	$(static_lib)

# prism-top: libprism through its public face (the static library)
$(PRISMTOP): $(CLI_OBJ) $(TUI_OBJ) $(WRITERS_OBJ) $(ANALYSIS_OBJ) $(LIB_A)
	@mkdir -p $(@D)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS_TUI) $(LIBS_IMPORT) $(LIBS_CORE)

$(B)/bin/%: $(B)/obj/samples/%.o $(SAMPLE_LIB) $(LIB_A)
	@mkdir -p $(@D)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS_CORE)

# Tests link everything except prism-top's main().
$(B)/tests/%: $(B)/obj/tests/%.o $(TOP_OBJ) $(ANALYSIS_OBJ) $(SAMPLE_LIB) $(CORE_OBJ)
	@mkdir -p $(@D)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ -lcmocka $(LIBS_TUI) $(LIBS_IMPORT) $(LIBS_CORE)

# collect.h from C++: the C++ test beside a C file giving C's layout.
$(B)/tests/collect_cxx_test: $(B)/obj/tests/collect_cxx_test.o $(B)/obj/tests/collect_cxx_layout.o $(LIB_A)
	@mkdir -p $(@D)
	$(CXX) $(ALL_LDFLAGS) -o $@ $^ -lcmocka $(LIBS_CORE)

# Building and linking programs the ways README.md and docs/C.md give (tests/link_test.sh).
# What the libraries export, the arrows between folders (tests/boundaries_test.sh).
$(LINK_TEST) $(SHELL_TEST): $(B)/tests/%: tests/%.sh tests/case_lib.sh | $(TEST_DEPS_OK)
	@mkdir -p $(@D)
	install -m 755 $< $@
$(GPU_OFFLINE_TEST): tests/gpu/offline_test.sh tests/case_lib.sh | $(TEST_DEPS_OK)
	@mkdir -p $(@D)
	install -m 755 $< $@

$(B)/bench/%: $(B)/obj/bench/%.o $(TOP_OBJ) $(ANALYSIS_OBJ) $(SAMPLE_LIB) $(CORE_OBJ)
	@mkdir -p $(@D)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS_TUI) $(LIBS_IMPORT) $(LIBS_CORE)



test: all $(TESTS) $(SCREEN_PROGS) $(LINK_TEST) $(SHELL_TEST) $(GPU_OFFLINE_TEST) $(PY_TEST)
	@B=$(B) LINK_CC='$(CC)' LINK_CXX='$(CXX)' LINK_SAN='$(SAN)' \
	    LINK_MAKEVARS='BUILD=$(BUILD) SANITIZE=$(SANITIZE)' \
	    PYTHON='$(PYTHON)' PRISM_TEST_SANITIZE='$(SANITIZE)' \
	    sh tests/run.sh $(TESTS) $(LINK_TEST) $(SHELL_TEST) $(GPU_OFFLINE_TEST) $(PY_TEST)

bench: all $(BENCHES)
	@for b in $(BENCHES); do echo "== $$b"; $$b || exit 1; done
	@echo "== bench/job_bench.sh"; B=$(B) sh bench/job_bench.sh
	@if [ -f $(PY_EXT) ]; then for b in $(PY_BENCHES); do echo "== $$b ($(PYTHON))"; \
	    PYTHONPATH=$(B)/python $(PYTHON) $$b || exit 1; done; fi
	@# and on torch 2.13 in the tests' virtual environment, when it is made
	@if [ -f $(PY_EXT) ] && [ -x $(PY_VENV)/bin/python ]; then for b in $(PY_BENCHES); do \
	    echo "== $$b ($(PY_VENV)/bin/python)"; \
	    PYTHONPATH=$(B)/python $(PY_VENV)/bin/python $$b || exit 1; done; fi

# make bench-ab AB_BASE=REV: this tree against revision REV (default
# HEAD~1), the hot path and the analysis interleaved (bench/ab.sh): medians
# and the ratio new/base from the same run.  REV is built from `git archive`
# in $(B)/ab-base (no checkout is touched), in its own build/ whatever BUILD
# or SANITIZE this tree uses (given on the command line, they reach the
# sub-make).
AB_BASE   ?= HEAD~1
AB_ROUNDS ?= 7
.PHONY: bench-ab
bench-ab: $(B)/bench/collect_bench $(B)/bench/analysis_bench
	rm -rf $(B)/ab-base && mkdir -p $(B)/ab-base
	git archive --format=tar $(AB_BASE) | tar -x -C $(B)/ab-base
	$(MAKE) --no-print-directory -C $(B)/ab-base BUILD=build SANITIZE= build/bench/collect_bench build/bench/analysis_bench >/dev/null
	sh bench/ab.sh $(B)/ab-base/build $(B) $(AB_ROUNDS)

DEMO_OUT ?= $(B)/demo.cbor
demo: all
	@sh scripts/demo.sh $(B) $(DEMO_OUT)

# After an install into the real root, as root: refresh the loader's cache
# when $(PREFIX)/lib is one of its directories (/usr/local/lib on Debian), so
# that programs linked by hand find libprism.so.N.  Any other prefix: the
# rpath in prism.pc's Libs (docs/C.md, "Building and linking").
LDCONFIG ?= ldconfig
LDCONFIG_RUN = if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ] && \
	    grep -qsx '$(PREFIX)/lib' /etc/ld.so.conf /etc/ld.so.conf.d/*.conf && \
	    command -v $(LDCONFIG) >/dev/null 2>&1; then echo $(LDCONFIG); $(LDCONFIG); fi

# `import prism` for $(PYTHON): a .pth in its site directory (PY_SITEDIR,
# default its first site-packages, /usr/local/lib/python3.X/dist-packages on
# Debian) naming $(PREFIX)/lib/prism/python.  PY_SITEDIR= (empty) or a site
# directory that cannot be written: one line says what to run instead.
PY_SITEDIR ?= $(shell $(PYTHON) -c 'import site; print(site.getsitepackages()[0])' 2>/dev/null)
PY_PTH     := prism.pth
PY_PTH_INSTALL = pth='$(DESTDIR)$(PY_SITEDIR)/$(PY_PTH)'; \
	if [ -n "$(PY_SITEDIR)" ] && mkdir -p "$(DESTDIR)$(PY_SITEDIR)" 2>/dev/null && \
	    printf '%s\n' '$(PREFIX)/lib/prism/python' >"$$pth" 2>/dev/null; then \
	    echo "import prism for $(PYTHON): $$pth"; \
	else echo "import prism: add $(PREFIX)/lib/prism/python to PYTHONPATH, or as root:" \
	    "echo $(PREFIX)/lib/prism/python > $(if $(PY_SITEDIR),$(PY_SITEDIR),SITE-PACKAGES)/$(PY_PTH)"; fi

# install builds only what it installs (no samples, no tests).
install: $(LIB_A) $(LIB_SO) $(LIB_AN) $(PRISMTOP) $(INJECT_SO) $(PRISMRUN) python
	install -d $(DESTDIR)$(PREFIX)/include/prism $(DESTDIR)$(PREFIX)/lib/pkgconfig \
	           $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 644 include/prism/*.h $(DESTDIR)$(PREFIX)/include/prism/
	install -m 644 $(LIB_A) $(LIB_AN) $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(LIB_SO) $(DESTDIR)$(PREFIX)/lib/libprism.so.$(VERSION)
	ln -sf libprism.so.$(VERSION) $(DESTDIR)$(PREFIX)/lib/libprism.so.$(word 1,$(subst ., ,$(VERSION)))
	ln -sf libprism.so.$(VERSION) $(DESTDIR)$(PREFIX)/lib/libprism.so
	install -m 755 $(PRISMTOP) $(PRISMRUN) $(DESTDIR)$(PREFIX)/bin/
	install -m 755 $(INJECT_SO) $(DESTDIR)$(PREFIX)/lib/
	install -m 644 docs/prism-top.1 docs/prism-run.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|g' prism.pc.in \
	    > $(DESTDIR)$(PREFIX)/lib/pkgconfig/prism.pc
	@if [ -f $(PY_EXT) ]; then \
	    echo "install the Python package into $(DESTDIR)$(PREFIX)/lib/prism/python"; \
	    install -d $(DESTDIR)$(PREFIX)/lib/prism/python/prism $(DESTDIR)$(PREFIX)/lib/prism/python/site && \
	    install -m 644 $(PY_DIR)/*.py $(DESTDIR)$(PREFIX)/lib/prism/python/prism/ && \
	    install -m 755 $(PY_EXT) $(DESTDIR)$(PREFIX)/lib/prism/python/prism/ && \
	    if [ -f $(PY_SITE) ]; then install -m 644 $(PY_SITE) $(DESTDIR)$(PREFIX)/lib/prism/python/site/; fi && \
	    $(PY_PTH_INSTALL); \
	fi
	@$(LDCONFIG_RUN)

uninstall:
	rm -rf $(DESTDIR)$(PREFIX)/include/prism
	rm -f $(DESTDIR)$(PREFIX)/lib/libprism.a $(DESTDIR)$(PREFIX)/lib/libprism-analysis.a \
	      $(DESTDIR)$(PREFIX)/lib/libprism.so* \
	      $(DESTDIR)$(PREFIX)/lib/libprism-inject.so \
	      $(DESTDIR)$(PREFIX)/lib/pkgconfig/prism.pc $(DESTDIR)$(PREFIX)/bin/prism-top \
	      $(DESTDIR)$(PREFIX)/bin/prism-run $(DESTDIR)$(PREFIX)/share/man/man1/prism-top.1 \
	      $(DESTDIR)$(PREFIX)/share/man/man1/prism-run.1
	rm -rf $(DESTDIR)$(PREFIX)/lib/prism/python
	if [ -n "$(PY_SITEDIR)" ] && grep -qsx '$(PREFIX)/lib/prism/python' $(DESTDIR)$(PY_SITEDIR)/$(PY_PTH); then \
	    rm -f $(DESTDIR)$(PY_SITEDIR)/$(PY_PTH); fi
	-rmdir $(DESTDIR)$(PREFIX)/lib/prism 2>/dev/null
	@$(LDCONFIG_RUN)

clean:
	rm -rf build build-san

$(call obj,$(wildcard libcollect/cupti*.c tests/cupti*_test.c bench/cupti_bench.c)): ALL_CFLAGS += $(CUPTI_CFLAGS)

# ---- GPU: CUPTI backend, injection library, prism-run, CUDA sample -------

$(LIB_SO_MAJOR): $(LIB_SO)
	ln -sf libprism.so $@

$(INJECT_SO): $(B)/obj/libcollect/inject.o $(LIB_SO) $(LIB_SO_MAJOR)
	$(CC) -shared $(ALL_LDFLAGS) -o $@ $< -L$(B)/lib -l:libprism.so -Wl,-rpath,'$$ORIGIN' $(LIBS_CORE)

$(PRISMRUN): $(B)/obj/tools/prism-run.o
	@mkdir -p $(@D)
	$(CC) $(ALL_LDFLAGS) -o $@ $^

$(B)/bin/cuda_train: samples/cuda_train.cu include/prism/collect.h $(LIB_A)
	@mkdir -p $(@D)
	$(NVCC) -O2 -std=c++17 -Iinclude -o $@ $< $(LIB_A) -Xcompiler -pthread \
	    $(if $(DEPS_DIR),-L$(DEPS_DIR)/lib -Xlinker -rpath -Xlinker $(DEPS_DIR)/rt) $(LIBS_CORE)

# cupti_where_test exports prism__cupti_attach_now as the Python module
# does, for libprism-inject.so's hand-over (issue 27, defect 4).
# (that name alone: a program exporting all would interpose libprism.so's)
$(B)/tests/cupti_where_test: ALL_LDFLAGS += -Wl,--export-dynamic-symbol=prism__cupti_attach_now
# cupti_session_test calls InitializeInjection directly.
$(B)/tests/cupti_session_test: $(B)/obj/libcollect/inject.o

# The CUPTI double (tests/cupti_double.c): a libcupti for offline tests and
# the bench, loaded through PRISM_CUPTI_PATH like a real one.
CUPTI_DOUBLE := $(if $(CUPTI_H),$(B)/tests/libcupti_double.so)
$(B)/tests/libcupti_double.so: tests/cupti_double.c tests/cupti_double.h | $(DEPS_OK)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(CUPTI_CFLAGS) -fPIC -shared -o $@ $< $(ALL_LDFLAGS)
# (the tests against it: tests/cupti_double_*_test.c)
$(patsubst tests/%.c,$(B)/tests/%,$(wildcard tests/cupti_double_*_test.c)) \
    $(B)/bench/cupti_bench: | $(CUPTI_DOUBLE)


# ---- Python: the prism package (python/) ----------------------------------
# $(B)/python/prism/ = python/prism/*.py + _prism.abi3.so, the extension
# (python/src/*.c, Py_LIMITED_API 3.10: one build serves CPython >= 3.10)
# linked from the same PIC objects as libprism.a and libprism-analysis.a and
# prism-top's report writers (no curses); it exports only PyInit__prism and
# binds its own symbols (-Bsymbolic), so its copy of libcollect never mixes
# with a libprism.so in the same process.  Built when $(PYTHON)'s headers
# exist (python3-dev); else one line says so.
.PHONY: python
ifneq ($(PY_H),)
python: $(PY_EXT) $(PY_FILES) $(if $(wildcard python/site/sitecustomize.py),$(PY_SITE))
else
# (the headers may come with the packages $(DEPS_OK) installs: look again)
python: | $(DEPS_OK)
	@if [ -n "$$($(PYTHON) -c 'import sysconfig, os; p = sysconfig.get_path("include"); \
	    print(p if os.path.exists(p + "/Python.h") else "")' 2>/dev/null)" ]; then \
	    $(MAKE) --no-print-directory python; \
	else echo "python: no Python.h for $(PYTHON) (Debian: python3-dev): the prism module is not built"; fi
endif

$(PY_OBJ): ALL_CFLAGS += -isystem $(PY_INC) -Ipython/src

# Where libpython is there, the objects are first linked against it with
# --no-undefined (then thrown away): every symbol resolves without curses
# or a missing tui object.  The extension itself is not linked to libpython.
$(PY_EXT): $(PY_OBJ) $(WRITERS_OBJ) $(ANALYSIS_OBJ) $(CORE_OBJ) python/src/prism.map
	@mkdir -p $(@D)
	if [ -n "$(PY_LIBPY)" ]; then $(CC) -shared $(ALL_LDFLAGS) -Wl,--no-undefined -o $@.check \
	    $(filter %.o,$^) $(LIBS_IMPORT) $(LIBS_CORE) $(PY_LIBPY) && rm -f $@.check; fi
	$(CC) -shared $(ALL_LDFLAGS) -Wl,--version-script=python/src/prism.map -Wl,-Bsymbolic \
	    -o $@ $(filter %.o,$^) $(LIBS_IMPORT) $(LIBS_CORE)

$(PY_DIR)/%.py: python/prism/%.py
	@mkdir -p $(@D)
	cp $< $@

$(PY_SITE): python/site/sitecustomize.py
	@mkdir -p $(@D)
	cp $< $@

# The Python tests (tests/python/test_*.py, unittest) through one runner,
# twice: python_test with the virtual environment's interpreter (torch 2.13,
# the main pass), python_compat_test with $(PYTHON) (Debian's torch 1.13).
# The environment is made once per build directory (tests/python/venv.sh:
# `$(VENV_PYTHON) -m venv`, pip install $(VENV_PKGS): wheel for the pip
# install test with setuptools < 70.1; the extension is abi3,
# the same build serves both interpreters).
$(PY_VENV)/.prism-venv-ok: tests/python/venv.sh | $(TEST_DEPS_OK)
	@sh tests/python/venv.sh $(PY_VENV) $(VENV_PYTHON) $(VENV_PKGS)

$(B)/tests/python_test: tests/python/run.sh $(PY_VENV)/.prism-venv-ok | $(TEST_DEPS_OK)
	@mkdir -p $(@D)
	printf '#!/bin/sh\nPYTHON=%s PRISM_PY_PASS=main exec sh tests/python/run.sh "$$@"\n' \
	    '$(abspath $(PY_VENV))/bin/python' >$@ && chmod 755 $@

$(B)/tests/python_compat_test: tests/python/run.sh | $(TEST_DEPS_OK)
	@mkdir -p $(@D)
	printf '#!/bin/sh\nPYTHON=%s PRISM_PY_PASS=compat exec sh tests/python/run.sh "$$@"\n' \
	    '$(PYTHON)' >$@ && chmod 755 $@

-include $(shell find $(B)/obj -name '*.d' 2>/dev/null)

# ---- Fuzzing (tests/fuzz/; issue 16) ---------------------------------------
# The libFuzzer targets built with clang, ASan + UBSan (tests/fuzz/*_fuzz.c):
#   reader   the chunk reader alone, the input a whole file image
#   feed     reader + analysis fed in fuzzer-chosen pieces, refreshed between
#            them (the live-tail path; 8 control bytes, then the file)
#   compare  reader + analysis + compare with itself + every report writer
#   import   the trace importer (JSON/gzip) through the reader
#   summary  the rank summary reader (docs/SUMMARY.md), its round trip
#            through the writer, a job merged from it (seeds: tests/corpus/summary/)
#   demangle the reader's demangling of C++ names: the bound on what the
#            demangler prints is never exceeded (seeds: tests/corpus/demangle/,
#            dictionary tests/fuzz/demangle.dict)
#   export   every output that carries names (the JSON reports, every export,
#            the rank summary, a job): no raw control, bidi or separator
#            character, JSON that parses (seeds: tests/corpus/export/, the
#            compare target's corpus and seeds)
# make fuzz: builds them, makes a seed corpus with the project's own writers
# (tests/fuzz/seeds.sh: small refprofile/trainloop runs, into
# $(B)/fuzz/seeds/), and runs each for FUZZ_SECONDS (default 60) on
# $(B)/fuzz/corpus/<target>/ (new inputs), tests/corpus/<target>/ (committed
# regression inputs and seeds; the import target: tests/fuzz/corpus/) and
# the seeds; crashes go to $(B)/fuzz/crashes/.  Allocations are capped
# (-malloc_limit_mb, -rss_limit_mb).  FUZZ_TARGETS picks targets;
# FUZZ_FLAGS: more libFuzzer options; FUZZ_EXTRA: more compiler flags.
# A finding: minimise it (-minimize_crash=1), fix it, put the input in
# tests/corpus/<target>/.
# make test: <target>_replay (tests/fuzz/replay.c, one driver for all)
# replays tests/corpus/<target>/ through the same target with the
# ordinary compiler, each file whole, cut and mutated, deterministically;
# under SANITIZE=1 with ASan + UBSan.
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= $(if $(FUZZ_TIME),$(FUZZ_TIME),60)
FUZZ_MAX_LEN ?= 65536
FUZZ_TARGETS ?= reader feed compare import summary demangle export job
FUZZ_FLAGS   ?=
FUZZ_EXTRA   ?=
FUZZ_DIR     := $(B)/fuzz
FUZZ_BIN     := $(FUZZ_DIR)/import_fuzz
FUZZ_BINS    := $(patsubst %,$(FUZZ_DIR)/%_fuzz,$(FUZZ_TARGETS))
FUZZ_LIB_SRC := $(sort $(BASE_SRC) $(FORMAT_SRC) $(IMPORT_SRC) $(ANALYSIS_SRC) $(PRESENT_SRC) \
                       $(REPORTS_SRC))
FUZZ_LIB_OBJ := $(patsubst %.c,$(FUZZ_DIR)/obj/%.o,$(FUZZ_LIB_SRC))
.SECONDARY: $(FUZZ_LIB_OBJ)
FUZZ_CFLAGS  := -std=c11 -D_GNU_SOURCE -pthread -g -O1 \
                -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address,undefined \
                -fno-sanitize-recover=undefined $(FUZZ_EXTRA)
FUZZ_RUN     := -max_len=$(FUZZ_MAX_LEN) -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=512 \
                -print_final_stats=1

.PHONY: fuzz fuzz-build fuzz-seeds

fuzz-build:
	@command -v $(FUZZ_CC) >/dev/null 2>&1 || { \
	    echo "make fuzz: needs clang with its libFuzzer runtime (Debian: clang libclang-rt-dev)"; exit 1; }
	@$(MAKE) --no-print-directory $(FUZZ_BINS)

fuzz-seeds: $(FUZZ_DIR)/seeds/.made
$(FUZZ_DIR)/seeds/.made: tests/fuzz/seeds.sh $(B)/bin/refprofile $(B)/bin/trainloop
	rm -rf $(FUZZ_DIR)/seeds
	sh tests/fuzz/seeds.sh $(B) $(FUZZ_DIR)/seeds
	@touch $@

fuzz: fuzz-build fuzz-seeds
	@mkdir -p $(FUZZ_DIR)/crashes $(addprefix $(FUZZ_DIR)/corpus/,$(FUZZ_TARGETS)) \
	    $(addprefix $(FUZZ_DIR)/seeds/,$(FUZZ_TARGETS))
	@for t in $(FUZZ_TARGETS); do \
	    if [ $$t = import ]; then extra="-dict=tests/fuzz/import.dict tests/fuzz/corpus"; \
	    elif [ $$t = demangle ]; then extra="-dict=tests/fuzz/demangle.dict tests/corpus/$$t"; \
	    elif [ $$t = export ]; then extra="-dict=tests/fuzz/import.dict tests/corpus/$$t \
	        tests/corpus/compare $(FUZZ_DIR)/seeds/compare"; \
	    else extra="tests/corpus/$$t $(FUZZ_DIR)/seeds/$$t"; fi; \
	    echo "== fuzz $$t: $(FUZZ_SECONDS) s"; \
	    $(FUZZ_DIR)/$${t}_fuzz -max_total_time=$(FUZZ_SECONDS) $(FUZZ_RUN) \
	        -artifact_prefix=$(FUZZ_DIR)/crashes/$$t- $(FUZZ_FLAGS) \
	        $(FUZZ_DIR)/corpus/$$t $$extra || exit 1; \
	done

$(FUZZ_DIR)/obj/%.o: %.c | $(DEPS_OK)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(folder_inc) $(FUZZ_CFLAGS) -MMD -MP -c $< -o $@

$(FUZZ_DIR)/%_fuzz: $(FUZZ_DIR)/obj/tests/fuzz/%_fuzz.o $(FUZZ_LIB_OBJ)
	$(FUZZ_CC) -fsanitize=fuzzer,address,undefined -pthread -o $@ $^ $(LIBS_CORE) -lyajl -lz
.SECONDARY: $(FUZZ_DIR)/obj/tests/fuzz/reader_fuzz.o $(FUZZ_DIR)/obj/tests/fuzz/feed_fuzz.o \
            $(FUZZ_DIR)/obj/tests/fuzz/compare_fuzz.o $(FUZZ_DIR)/obj/tests/fuzz/import_fuzz.o \
            $(FUZZ_DIR)/obj/tests/fuzz/summary_fuzz.o $(FUZZ_DIR)/obj/tests/fuzz/demangle_fuzz.o \
            $(FUZZ_DIR)/obj/tests/fuzz/export_fuzz.o $(FUZZ_DIR)/obj/tests/fuzz/job_fuzz.o

# The replays: tests like the others, the target linked in.
$(FUZZ_REPLAY) $(FUZZ_REPLAYS): $(B)/tests/fuzz/%_replay: $(B)/obj/tests/fuzz/replay.o $(B)/obj/tests/fuzz/%_fuzz.o \
                 $(TOP_OBJ) $(ANALYSIS_OBJ) $(SAMPLE_LIB) $(CORE_OBJ)
	@mkdir -p $(@D)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ -lcmocka $(LIBS_TUI) $(LIBS_IMPORT) $(LIBS_CORE)
.SECONDARY: $(call obj,$(wildcard tests/fuzz/*.c))

# make check-full: make test, then the whole terminal matrix (7 sizes x 5
# TERMs x 2 locales x NO_COLOR, a resize storm, a hangup; make test runs a
# subset as tests/screen/matrix.sh).  B=$(B): SANITIZE=1 runs it on the
# sanitizer build.
.PHONY: check-full
check-full: test
	B=$(B) sh tests/matrix/run.sh full

-include $(wildcard $(FUZZ_DIR)/obj/*/*.d $(FUZZ_DIR)/obj/*/*/*.d)
