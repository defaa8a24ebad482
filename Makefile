# fnworker: one entry point.
#   make            install the build packages if missing, build build/fnworker and the example plugins (build/plugins/)
#   make demo       install what is missing (Debian packages, the PyFlink 2.3 virtualenv), build,
#                   run examples/pyflink/enrich_job.py on a local Flink through the worker
#   make demo-harness  the older demo: 100,000 rows through the worker from the JVM runner harness
#   make check      install what is missing, build, run every unit and integration test,
#                   and the smoke subset of the real-Flink end-to-end suite
#   make e2e        the whole end-to-end suite (real PyFlink jobs, tests/e2e/README.md)
#                   on every pinned PyFlink line
#   make sanitize   the same tests under ASan+UBSan (build tree build/asan)
#   make allocfail  every allocation of 13 scenarios failed in turn, under ASan (tests/alloc/README.md)
#   make valgrind   the integration tests with the worker under valgrind memcheck
#   make bench      the benchmark (docs/performance.md; bench/README.md)
#   make soak       10M records through the worker with random chunking and faults (docs/reliability.md)
#   make fuzz       every fuzz target under libFuzzer for FUZZ_S seconds (tests/fuzz/README.md)
#   make image      the sidecar image with podman; make image-test tests it (docs/sidecar.md, "The sidecar image")
#   make lint       cppcheck over the product code (scripts/lint.sh; in make check)
#   make format     lay the C sources out as .clang-format says (scripts/format.sh);
#                   make format-check lists the files that differ and exits 1
#   make compdb     compile_commands.json for clangd/clang-tidy, from make -n (scripts/compdb.py)
#
# Every target installs the Debian packages it needs (scripts/install-deps.sh,
# by group: build, test, valgrind, bench, fuzz, lint; one stamp per group in
# $(BUILD)/.deps-<group>) when run as root on Debian, and otherwise prints the
# apt-get line to run and stops.
#
# Sources are found by wildcard: a new .c file under base/, codecs/, runtime/,
# ops/ (any depth), worker/ or pool/ is part of libfnw.a; a new
# tests/unit/<folder>/test_x.c is a new Check binary, build/tests/<folder>/test_x.
# The floors, lowest first: base, codecs, runtime, ops, worker and pool, main.c
# (docs/architecture.md, CONTRIBUTING.md); a folder includes only folders below it.

BUILD    ?= build
CC       ?= cc
OPT      ?= -O2 -g
SANITIZE ?=

# The release, in one place: the VERSION file (the worker's --version, the
# Python package's __version__ and the image's label follow it;
# tests/shell/test_version.sh checks they agree).
VERSION  := $(shell cat VERSION)
WARN     := -Wall -Wextra -Werror -Wno-unused-parameter -Wshadow -Wstrict-prototypes
CPPFLAGS := -Iinclude -I. -I$(BUILD)/gen -D_GNU_SOURCE -DFNW_VERSION='"$(VERSION)"'
CFLAGS   := -std=c11 $(OPT) $(WARN) -fno-strict-aliasing
# hiredis and libcurl (the service clients, ops/clients/redis.c and
# ops/clients/http.c) through pkg-config when it knows them.
SVC_LIBS := $(shell pkg-config --libs hiredis libcurl 2>/dev/null || echo -lhiredis -lcurl)
# libmicrohttpd: the worker pool's /metrics endpoint (pool/pool_http.c).
LDLIBS   := -lgrpc -lgpr -lprotobuf-c -lev -lavro -ljansson $(SVC_LIBS) -lmicrohttpd -lpthread -lm -ldl
# The functions of include/fnworker.h are exported to plugins: listed in
# include/fnworker.sym, each linked in from libfnw.a even when nothing in the
# worker calls it (tests/check_exports.sh checks the list against the header).
comma := ,
API_SYMS := $(shell sed -n 's/^ *\(fnw_[a-z0-9_]*\);$$/\1/p' include/fnworker.sym)
EXPORT_LDFLAGS := -Wl,--dynamic-list=include/fnworker.sym $(addprefix -Wl$(comma)--undefined=,$(API_SYMS))
ifneq ($(SANITIZE),)
CFLAGS   += -O1 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LDFLAGS  += -fsanitize=address,undefined
endif

PROTOS   := $(shell find proto -name '*.proto' | sort)
PB_C     := $(patsubst proto/%.proto,$(BUILD)/gen/%.pb-c.c,$(PROTOS))
PB_H     := $(PB_C:.c=.h)
LIB_SRC  := $(wildcard base/*.c codecs/*.c runtime/*.c worker/*.c pool/*.c) $(shell find ops -name '*.c' | sort)
LIB_OBJ  := $(patsubst %.c,$(BUILD)/obj/%.o,$(LIB_SRC)) $(patsubst %.c,%.o,$(PB_C))
UNIT_SRC := $(wildcard tests/unit/*/test_*.c)
UNIT_BIN := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRC))

.PHONY: all deps deps-build deps-test deps-valgrind deps-bench deps-fuzz deps-lint demo demo-harness check unit integration script-tests python-tests fuzz fuzz-replay sanitize allocfail alloc-tests valgrind bench bench-tools bench-smoke soak soak-short clean harness plugins
all: $(BUILD)/fnworker plugins

# deps-<group>: the packages of that group (see scripts/install-deps.sh).
DEPS_GROUPS := build test valgrind bench fuzz lint image flink
deps: deps-build deps-test
$(addprefix deps-,$(DEPS_GROUPS)): deps-%: $(BUILD)/.deps-%
$(BUILD)/.deps-%: scripts/install-deps.sh
	@mkdir -p $(BUILD)
	@sh scripts/install-deps.sh $*
	@touch $@
.PRECIOUS: $(BUILD)/.deps-%

# ---- generated protobuf-c code --------------------------------------------
$(BUILD)/gen/.stamp: $(PROTOS) | $(BUILD)/.deps-build
	@mkdir -p $(BUILD)/gen
	@command -v protoc-c >/dev/null || { echo "protoc-c is missing: install Debian's protobuf-c-compiler" \
	  "(as root: sh scripts/install-deps.sh build; it lists everything the build needs)" >&2; exit 1; }
	protoc-c --c_out=$(BUILD)/gen -Iproto $(PROTOS)
	@touch $@
$(PB_C) $(PB_H): $(BUILD)/gen/.stamp ;
$(BUILD)/gen/%.pb-c.o: $(BUILD)/gen/%.pb-c.c
	$(CC) $(CPPFLAGS) -std=c11 $(OPT) $(filter -fsanitize%,$(CFLAGS)) -c $< -o $@

# ---- the worker --------------------------------------------------------------
$(BUILD)/obj/%.o: %.c $(BUILD)/gen/.stamp VERSION
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@
-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)

$(BUILD)/libfnw.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/fnworker: $(BUILD)/obj/main.o $(BUILD)/libfnw.a include/fnworker.sym
	$(CC) $(LDFLAGS) $(EXPORT_LDFLAGS) -o $@ $(filter-out %.sym,$^) $(LDLIBS)

# ---- plugins: built against include/ alone, as a plugin outside the tree is ---
PLUGIN_CFLAGS := -Iinclude -std=c11 $(OPT) $(WARN) -fPIC -shared $(filter -fsanitize%,$(CFLAGS))
EXAMPLE_PLUGINS := $(BUILD)/plugins/dns.so $(BUILD)/plugins/sha256.so
plugins: $(EXAMPLE_PLUGINS)
# Every rule that runs the compiler or a tool of a package depends on its
# group's stamp (order-only), so `make -j2` on a fresh machine installs
# first: c-ares and libcrypto (build group) before these plugins.
$(BUILD)/plugins/dns.so: examples/plugins/dns.c include/fnworker.h | $(BUILD)/.deps-build
	@mkdir -p $(dir $@)
	$(CC) $(PLUGIN_CFLAGS) -o $@ $< -lcares -lev
$(BUILD)/plugins/sha256.so: examples/plugins/sha256.c include/fnworker.h | $(BUILD)/.deps-build
	@mkdir -p $(dir $@)
	$(CC) $(PLUGIN_CFLAGS) -o $@ $< -lcrypto -lpthread
# The loader's test plugins (tests/unit/plugin_so/), one .so each.
TEST_PLUGINS := $(patsubst tests/unit/plugin_so/%.c,$(BUILD)/tests/worker/plugins/%.so,$(wildcard tests/unit/plugin_so/*.c))
$(BUILD)/tests/worker/plugins/%.so: tests/unit/plugin_so/%.c include/fnworker.h | $(BUILD)/.deps-build
	@mkdir -p $(dir $@)
	$(CC) $(PLUGIN_CFLAGS) -o $@ $<

# ---- unit tests (Check) ------------------------------------------------------
$(BUILD)/tests/%: tests/unit/%.c $(wildcard tests/unit/*.h tests/unit/*/*.h) $(BUILD)/libfnw.a | $(BUILD)/.deps-test
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(shell pkg-config --cflags check) -o $@ $< \
	  $(LDFLAGS) $(BUILD)/libfnw.a $(LDLIBS) $(shell pkg-config --libs check)

# The loader's test loads real plugins, so it exports the API as the worker does.
$(BUILD)/tests/worker/test_plugins: tests/unit/worker/test_plugins.c $(wildcard tests/unit/*.h) $(BUILD)/libfnw.a $(TEST_PLUGINS) \
                             | $(BUILD)/.deps-test
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -DFNW_TEST_PLUGINS='"$(BUILD)/tests/worker/plugins"' $(shell pkg-config --cflags check) \
	  -o $@ $< $(LDFLAGS) $(EXPORT_LDFLAGS) $(BUILD)/libfnw.a $(LDLIBS) $(shell pkg-config --libs check)

# The operation API test runs an operation (tests/unit/plugin/) compiled with
# include/ alone on the include path, as an operation built outside the tree is.
PLUGIN_OBJ := $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard tests/unit/plugin/*.c))
$(BUILD)/obj/tests/unit/plugin/%.o: tests/unit/plugin/%.c $(wildcard tests/unit/plugin/*.h) include/fnworker.h \
                                    | $(BUILD)/.deps-build
	@mkdir -p $(dir $@)
	$(CC) -Iinclude $(CFLAGS) -c $< -o $@
$(BUILD)/tests/runtime/test_operation_api: tests/unit/runtime/test_operation_api.c $(PLUGIN_OBJ) $(TEST_SUPPORT) \
                                   $(wildcard tests/unit/*.h) $(BUILD)/libfnw.a | $(BUILD)/.deps-test
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(shell pkg-config --cflags check) -o $@ $< $(PLUGIN_OBJ) $(TEST_SUPPORT) \
	  $(LDFLAGS) $(BUILD)/libfnw.a $(LDLIBS) $(shell pkg-config --libs check)

unit: $(UNIT_BIN) $(BUILD)/fnworker
	@set -e; for t in $(UNIT_BIN); do echo "== $$t"; CK_DEFAULT_TIMEOUT=30 $$t; done
	@echo "== tests/check_exports.sh"; sh tests/check_exports.sh $(BUILD)/fnworker
	@echo "== tests/check_floors.py"; $(PYTHON) tests/check_floors.py

# ---- JVM runner harness --------------------------------------------------------
harness: $(BUILD)/harness/harness.jar
$(BUILD)/harness/harness.jar: $(PROTOS) $(shell find tests/harness tests/integration -name '*.java' 2>/dev/null) tests/harness/build.sh \
                              | $(BUILD)/.deps-test
	sh tests/harness/build.sh $(BUILD)/harness

# ---- the end-to-end suite: real PyFlink jobs (tests/e2e/README.md) ------------
# Each PyFlink line has its pins in tests/e2e/requirements-<line>.txt and a
# virtualenv in $(BUILD)/flink/<line>/venv (scripts/flink-venv.sh), whose
# wheels are a complete Flink home. make check runs the smoke subset on
# FLINK_SMOKE; make e2e runs every case on every line of FLINK_LINES.
FLINK_LINES ?= 2.3 1.20
FLINK_SMOKE ?= 2.3
E2E_ARGS    ?=
.PHONY: e2e e2e-smoke flink-venvs e2e-jars
$(BUILD)/flink/%/.stamp: tests/e2e/requirements-%.txt scripts/flink-venv.sh | $(BUILD)/.deps-flink
	@sh scripts/flink-venv.sh $(BUILD) $*
flink-venvs: $(patsubst %,$(BUILD)/flink/%/.stamp,$(FLINK_LINES))
# Java jars the jobs add (flink-sql-avro), from Maven Central (scripts/e2e-jars.sh).
$(BUILD)/e2e/jars/%/.stamp: tests/e2e/jars-%.txt scripts/e2e-jars.sh
	@sh scripts/e2e-jars.sh $(BUILD) $*
e2e-jars: $(patsubst %,$(BUILD)/e2e/jars/%/.stamp,$(FLINK_LINES))
e2e-smoke: all $(BUILD)/flink/$(FLINK_SMOKE)/.stamp | $(BUILD)/.deps-test
	@echo "== e2e smoke on PyFlink $(FLINK_SMOKE) (MiniCluster)"
	@cd tests/e2e && FNW_BUILD=$(abspath $(BUILD)) $(abspath $(BUILD))/flink/$(FLINK_SMOKE)/venv/bin/python \
	  -m pytest -q -m smoke $(E2E_ARGS)
e2e: deps deps-flink all harness flink-venvs e2e-jars
	@failed=; for line in $(FLINK_LINES); do echo "== e2e on PyFlink $$line"; \
	  (cd tests/e2e && FNW_BUILD=$(abspath $(BUILD)) $(abspath $(BUILD))/flink/$$line/venv/bin/python \
	    -m pytest -q $(E2E_ARGS)) || failed="$$failed $$line"; done; \
	if [ -n "$$failed" ]; then echo "make e2e: cases failed on PyFlink$$failed"; exit 1; fi
	@echo "make e2e: every case passed on PyFlink $(FLINK_LINES)"

# ---- the two commands ----------------------------------------------------------
integration: $(BUILD)/fnworker $(BUILD)/harness/harness.jar | $(BUILD)/.deps-test
	sh tests/integration/run.sh $(BUILD)

# The Flink launcher script with a stand-in worker, and the command lines of
# $(BUILD)/fnworker and of the harness, and the worker pool (tests/shell/).
script-tests: $(BUILD)/fnworker $(BUILD)/harness/harness.jar | $(BUILD)/.deps-test
	@set -e; for t in tests/shell/test_*.sh; do echo "== $$t"; FNW_BUILD=$(BUILD) sh $$t; done

# The fnworker Python package (python/), with Debian's python3 and unittest.
PYTHON ?= /usr/bin/python3
python-tests: | $(BUILD)/.deps-test
	cd python && PYTHONDONTWRITEBYTECODE=1 $(PYTHON) -m unittest discover -s tests

check: deps deps-flink deps-lint
	@$(MAKE) --no-print-directory all lint format-check unit alloc-tests integration script-tests python-tests fuzz-replay \
	  bench-smoke soak-short deploy-tests image-check e2e-smoke
	@echo "make check: all tests passed"

# The demo: examples/pyflink/enrich_job.py on PyFlink's MiniCluster with
# 100,000 orders, a local redis-server and the test HTTP server's scoring
# model (scripts/demo-flink.py); every output row checked. DEMO_FLINK=1.20
# runs it on the LTS line, DEMO_ROWS sets the number of orders.
DEMO_FLINK ?= 2.3
DEMO_ROWS  ?= 100000
demo: deps deps-flink
	@echo "== demo: building fnworker"
	@$(MAKE) --no-print-directory all
	@echo "== demo: the PyFlink $(DEMO_FLINK) virtualenv ($(BUILD)/flink/$(DEMO_FLINK)/venv; pip's progress shows on its first run)"
	@$(MAKE) --no-print-directory $(BUILD)/flink/$(DEMO_FLINK)/.stamp
	@echo "== demo: the enrichment job on a local Flink"
	@$(BUILD)/flink/$(DEMO_FLINK)/venv/bin/python scripts/demo-flink.py $(BUILD) $(DEMO_ROWS)

demo-harness: deps
	@$(MAKE) --no-print-directory all harness
	sh scripts/demo.sh $(BUILD)

sanitize: deps
	@LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0 \
	  $(MAKE) --no-print-directory BUILD=build/asan SANITIZE=1 OPT="-O1 -g" all unit integration
	@echo "make sanitize: clean under ASan+UBSan"

# ---- allocation-failure injection (tests/alloc/) -------------------------------
# Each tests/alloc/alloc_<scenario>.c runs a scenario once to count its
# allocations (K), then K more times with allocation N = 1..K failing, each
# in a child process, and requires a clean error (or a right result) with
# nothing leaked. The library's objects are joined into one relocatable
# object whose calls to malloc & co. are redirected (ld --wrap) to
# tests/alloc/failmalloc.c; the tests' own calls and the shared libraries'
# are not counted.
#   make allocfail   every scenario, every N, under ASan + LSan (build/allocfail)
#   make alloc-tests every scenario, every N, in $(BUILD) without sanitizers: crashes,
#                    hangs, wrong results and messages, not leaks (seconds; in make check)
ALLOC_WRAP := -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=strdup,--wrap=strndup
ALLOC_DRIVER := tests/alloc/alloc_run.c tests/alloc/failmalloc.c
ALLOC_BIN := $(patsubst tests/alloc/%.c,$(BUILD)/alloc/%,$(filter-out $(ALLOC_DRIVER),$(wildcard tests/alloc/alloc_*.c)))
$(BUILD)/alloc/libfnw_wrapped.o: $(BUILD)/libfnw.a
	@mkdir -p $(dir $@)
	$(CC) -r -nostdlib -o $@ -Wl,--whole-archive $< -Wl,--no-whole-archive $(ALLOC_WRAP)
$(BUILD)/alloc/alloc_%: tests/alloc/alloc_%.c $(ALLOC_DRIVER) $(wildcard tests/alloc/*.h tests/unit/*.h) \
                        $(BUILD)/alloc/libfnw_wrapped.o | $(BUILD)/.deps-test
	$(CC) $(CPPFLAGS) $(CFLAGS) $(shell pkg-config --cflags check) -o $@ $< $(ALLOC_DRIVER) \
	  $(LDFLAGS) $(BUILD)/alloc/libfnw_wrapped.o $(LDLIBS) $(shell pkg-config --libs check)
alloc-tests: $(ALLOC_BIN)
	@set -e; for t in $(ALLOC_BIN); do echo "== $$t"; $$t; done
allocfail: deps
	@LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0 \
	  $(MAKE) --no-print-directory BUILD=build/allocfail SANITIZE=1 OPT="-O1 -g" alloc-tests
	@echo "make allocfail: every allocation failure ended cleanly"

valgrind: deps deps-valgrind
	@$(MAKE) --no-print-directory all harness
	FNW_WRAPPER="valgrind --quiet --leak-check=full --errors-for-leak-kinds=definite --error-exitcode=9 --suppressions=tests/valgrind.supp" \
	  sh tests/integration/run.sh $(BUILD)

# ---- bench (owned by bench/; see bench/README.md) -------------
# The driver (runner side), the null worker and the kserve direct client
# link the bench objects and libfnw.a (for codecs/buf, codecs/varint, the
# tensor codec and the generated .pb-c objects).
# Every other bench/*.c goes into libbench.a, the null worker's own
# parts (null_worker_*.c) too: each binary pulls in only what it calls.
BENCH_LIB_SRC := $(filter-out bench/fnbench.c bench/null_worker.c bench/kserve_direct.c bench/soak.c,$(wildcard bench/*.c))
BENCH_LIB_OBJ := $(patsubst %.c,$(BUILD)/obj/%.o,$(BENCH_LIB_SRC))
BENCH_BIN     := $(BUILD)/bench/fnbench $(BUILD)/bench/null_worker $(BUILD)/bench/kserve_direct $(BUILD)/bench/soak

$(BUILD)/bench/libbench.a: $(BENCH_LIB_OBJ)
	@mkdir -p $(dir $@)
	@rm -f $@
	ar rcs $@ $^
$(BENCH_BIN): $(BUILD)/bench/%: $(BUILD)/obj/bench/%.o $(BUILD)/bench/libbench.a $(BUILD)/libfnw.a
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

bench-tools: $(BENCH_BIN)

# A few thousand records through a few workloads, every count checked (< 20 s);
# exits non-zero when the worker misbehaves. For `make check`: its table goes
# to $(BUILD)/bench/smoke.txt (smoke figures are not measurements), the
# output says only that it ran (and shows the table when it fails).
bench-smoke: all bench-tools
	@rc=0; $(BUILD)/bench/fnbench --smoke >$(BUILD)/bench/smoke.txt 2>&1 || rc=$$?; \
	if [ $$rc -ne 0 ]; then cat $(BUILD)/bench/smoke.txt; echo "bench smoke: FAILED (exit $$rc)"; exit $$rc; fi; \
	echo "== bench smoke: the benchmark driver ran every workload briefly and every count matched;" \
	  "its figures are not measurements (table in $(BUILD)/bench/smoke.txt; measure with make bench)"

# The soak (bench/soak.c): SOAK_RECORDS records (default 10,000,000,
# minutes) through the real worker with random Data chunking, several bundles
# at once on several flaky `echo` descriptors, exact-once accounting of every
# record and the worker's RSS and fds compared between the first and the last
# minute. SOAK_SEED=S replays a run (the seed is printed).
soak: all bench-tools
	@rc=0; $(BUILD)/bench/soak >$(BUILD)/bench/soak.txt || rc=$$?; \
	cat $(BUILD)/bench/soak.txt; exit $$rc

# 100,000 records the same way (< 30 s), for `make check`: one line, the
# whole report ($(BUILD)/bench/soak-short.txt) only when it fails.
soak-short: all bench-tools
	@rc=0; $(BUILD)/bench/soak --short >$(BUILD)/bench/soak-short.txt 2>&1 || rc=$$?; \
	if [ $$rc -ne 0 ]; then cat $(BUILD)/bench/soak-short.txt; exit $$rc; fi; \
	echo "== $$(tail -n 1 $(BUILD)/bench/soak-short.txt)"

# callgrind (valgrind) counts instructions per record. After the C driver's
# rows, bench/bench.sh runs W15-W17 (real Flink jobs, bench/flink_rows.py)
# in the PyFlink $(FLINK_SMOKE) venv when it is there (BENCH_FLINK=0: skip them).
bench: deps-build deps-bench deps-valgrind
	@$(MAKE) --no-print-directory all bench-tools
	sh bench/bench.sh $(BUILD)

# W15-W17 alone: fnworker next to PyFlink's own Python worker on one real
# Flink (a standalone JobManager + TaskManager), ~10 minutes; its table goes to
# $(BUILD)/bench/flink-results.txt. bench-flink-smoke: tiny jobs, counts and
# plumbing only (~3 minutes, mostly the cluster's start).
.PHONY: bench-flink bench-flink-smoke
bench-flink: all bench-tools | $(BUILD)/flink/$(FLINK_SMOKE)/.stamp $(BUILD)/.deps-test
	$(BUILD)/flink/$(FLINK_SMOKE)/venv/bin/python bench/flink_rows.py --build $(BUILD) $(BENCH_FLINK_ARGS)
bench-flink-smoke: all bench-tools | $(BUILD)/flink/$(FLINK_SMOKE)/.stamp $(BUILD)/.deps-test
	@rc=0; $(BUILD)/flink/$(FLINK_SMOKE)/venv/bin/python bench/flink_rows.py --build $(BUILD) --smoke \
	  >/dev/null 2>&1 || rc=$$?; \
	if [ $$rc -ne 0 ]; then cat $(BUILD)/bench/flink-smoke.txt; echo "bench-flink smoke: FAILED (exit $$rc)"; exit $$rc; fi; \
	echo "== bench-flink smoke: every W15-W17 job ran on a real Flink and delivered every row;" \
	  "its figures are not measurements (table in $(BUILD)/bench/flink-smoke.txt)"
# ---- end of bench ----------------------------------------------------------------

# ---- fuzzing ------------------------------------------------------------------
# Each tests/fuzz/fuzz_<name>.c is a libFuzzer target over one parser that
# takes outside bytes; tests/fuzz/corpus/<name>/ is its committed seed corpus.
#   make fuzz-replay   every corpus once through its target (any compiler, seconds; in make check)
#   make fuzz          each target under libFuzzer + ASan/UBSan for FUZZ_S seconds (default 60);
#                      new inputs go to build/fuzz/corpus/<name>/, findings to build/fuzz/findings/
#                      (FUZZ_TARGETS=a,b: only those targets)
FUZZ_SRC     := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_NAMES   := $(patsubst tests/fuzz/fuzz_%.c,%,$(FUZZ_SRC))
FUZZ_REPLAY  := $(patsubst %,$(BUILD)/fuzz/replay_%,$(FUZZ_NAMES))
FUZZ_S       ?= 60
# FUZZ_TARGETS=a,b limits make fuzz to those targets (names as in fuzz_<name>.c).
FUZZ_TARGETS ?=
FUZZ_RUN     := $(if $(FUZZ_TARGETS),$(subst $(comma), ,$(FUZZ_TARGETS)),$(FUZZ_NAMES))

$(BUILD)/fuzz/replay_%: tests/fuzz/fuzz_%.c tests/fuzz/replay.c $(BUILD)/libfnw.a | $(BUILD)/.deps-build
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< tests/fuzz/replay.c $(LDFLAGS) $(BUILD)/libfnw.a $(LDLIBS)

# gen_seeds_<part> write the seed corpora (tests/fuzz/README.md): codecs for
# record, typeinfo and avro; worker for plan and spec. Building them here
# keeps them compiling.
FUZZ_GEN := $(BUILD)/fuzz/gen_seeds_codecs $(BUILD)/fuzz/gen_seeds_worker
$(FUZZ_GEN): $(BUILD)/fuzz/%: tests/fuzz/%.c tests/fuzz/record_shapes.h $(wildcard tests/unit/*.h) $(BUILD)/libfnw.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(LDFLAGS) $(BUILD)/libfnw.a $(LDLIBS)

fuzz-replay: $(FUZZ_REPLAY) $(FUZZ_GEN)
	@set -e; for n in $(FUZZ_NAMES); do printf '== fuzz corpus %s: ' $$n; \
	  $(BUILD)/fuzz/replay_$$n tests/fuzz/corpus/$$n; done

fuzz: deps-build deps-fuzz
	@command -v clang >/dev/null || { echo "make fuzz needs clang (apt-get install clang)"; exit 1; }
	@$(MAKE) --no-print-directory BUILD=build/fuzz CC=clang SANITIZE=1 \
	  OPT="-O1 -g -fsanitize=fuzzer-no-link" build/fuzz/libfnw.a
	@set -e; mkdir -p build/fuzz/findings; for n in $(FUZZ_RUN); do \
	  clang $(CPPFLAGS) -Ibuild/fuzz/gen -std=c11 -O1 -g -fsanitize=fuzzer,address,undefined \
	    -o build/fuzz/fuzz_$$n tests/fuzz/fuzz_$$n.c build/fuzz/libfnw.a $(LDLIBS); \
	  mkdir -p build/fuzz/corpus/$$n; cp -n tests/fuzz/corpus/$$n/* build/fuzz/corpus/$$n/ 2>/dev/null || true; \
	  echo "== fuzzing $$n for $(FUZZ_S) s"; \
	  build/fuzz/fuzz_$$n -max_total_time=$(FUZZ_S) -rss_limit_mb=2048 -timeout=10 \
	    -artifact_prefix=build/fuzz/findings/$$n- -print_final_stats=1 build/fuzz/corpus/$$n 2>&1 | \
	    grep -E "^(#[0-9]+[[:space:]]+DONE|stat::number_of_executed_units|stat::average_exec_per_sec|==[0-9]+==ERROR|SUMMARY)" ; \
	  done; if ls build/fuzz/findings/* >/dev/null 2>&1; then echo "make fuzz: findings in build/fuzz/findings/"; exit 1; fi
	@echo "make fuzz: no finding"

clean:
	rm -rf build

# ---- habits: lint, layout, the compilation database ------------------------------
# make lint: cppcheck (default checks + warning, portability, performance) over
# base codecs runtime ops worker pool main.c; a finding is fixed or suppressed
# on the line before with its reason (scripts/lint.sh). make format /
# format-check: clang-format 14 with .clang-format over the same code and
# include/ (scripts/format.sh). make compdb (or compile_commands.json): every
# compile of the worker, plugins, unit, alloc and fuzz-replay binaries and the
# bench tools, read from make -n -B, written to compile_commands.json.
.PHONY: lint format format-check compdb compile_commands.json
lint: $(BUILD)/gen/.stamp | $(BUILD)/.deps-lint
	@sh scripts/lint.sh $(BUILD)
format: | $(BUILD)/.deps-lint
	@sh scripts/format.sh
format-check: | $(BUILD)/.deps-lint
	@sh scripts/format.sh --check
compdb: compile_commands.json
compile_commands.json:
	@$(PYTHON) scripts/compdb.py compile_commands.json BUILD=$(BUILD) \
	  all $(UNIT_BIN) $(ALLOC_BIN) $(FUZZ_REPLAY) $(FUZZ_GEN) bench-tools

# ---- the sidecar image (Dockerfile, scripts/image/; docs/sidecar.md, "The sidecar image") ------------
#   make image        build it with podman (IMAGE, default localhost/fnworker:latest)
#   make image-test   install podman if needed, build the images, run tests/image/run.sh
# make check runs the image test when podman can run containers here, and
# prints one line saying why not otherwise (image-check).
IMAGE ?= localhost/fnworker:latest
.PHONY: image image-test image-check deploy-tests
image: | $(BUILD)/.deps-image
	sh scripts/image/build.sh $(BUILD) $(IMAGE)
image-test: harness
	@sh scripts/install-deps.sh image
	sh tests/image/run.sh $(BUILD) $(IMAGE)
image-check: harness
	@FNW_IMAGE_TEST_OPTIONAL=1 sh tests/image/run.sh $(BUILD) $(IMAGE)

# The Kubernetes pod template (deploy/kubernetes/) against itself and the image.
deploy-tests: | $(BUILD)/.deps-test
	PYTHONDONTWRITEBYTECODE=1 $(PYTHON) -m unittest discover -s tests/deploy
