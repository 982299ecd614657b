# SPDX-License-Identifier: MIT
# A thin wrapper over CMake. The real build is CMakeLists.txt.
#
#   make / make build   configure build/ (Release: -O2 -g) and build
#   make run            build, then replay the shipped kernel trace excerpt beside the
#                       kernel's own snapshots, and draw the memory map
#   make test           format-check, build/ + ctest, an -O3 -DNDEBUG build (build-o3/),
#                       then ASan+UBSan (build-asan/) and TSan (build-tsan/)
#   make bench          build, then the allocation benchmarks
#   make figures        build, run the documented benchmarks, write docs/figures.md (+ SVG)
#   make fuzz           build the libFuzzer targets with clang (build-fuzz/) and run each
#                       for FUZZ_SECONDS (60); new inputs go to build-fuzz/corpus/, crashes
#                       to build-fuzz/artifacts/
#   make soak           the soak workload, SOAK_SECONDS each in the plain and TSan builds
#   make install        install into $(PREFIX) (default /usr/local)
#   make format         clang-format -i every .c/.h of ours
#   make clean          remove the build trees

PREFIX      ?= /usr/local
JOBS        ?= 2
CMAKE       ?= cmake
CTEST       ?= ctest
CLANG_FORMAT ?= clang-format
# Scale of the stress tests in the sanitizer builds (the plain build uses 1).
SAN_SCALE   ?= 0.1
# Length of each soak run (make soak), in seconds.
SOAK_SECONDS ?= 20
# Seconds each fuzz target runs in make fuzz, and the compiler that builds them.
FUZZ_SECONDS ?= 60
FUZZ_CC     ?= clang
# Extra arguments for every configure, e.g. CMAKE_ARGS=-DCMAKE_C_COMPILER=clang
CMAKE_ARGS  ?=

BUILD      := build
BUILD_ASAN := build-asan
BUILD_TSAN := build-tsan
BUILD_O3   := build-o3
BUILD_FUZZ := build-fuzz
FUZZ_TARGETS = $(patsubst tests/fuzz/fuzz_%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
PROGRAM    := ./$(BUILD)/pagealloc

# cmake --build runs make itself; keep this make's job server and flags out of
# it so that --parallel $(JOBS) is what counts.
SUBMAKE := env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL
CONFIGURE = $(CMAKE) -S . -B $(1) -DCMAKE_BUILD_TYPE=Release $(CMAKE_ARGS)
COMPILE   = $(SUBMAKE) $(CMAKE) --build $(1) --parallel $(JOBS)
CHECK     = cd $(1) && $(SUBMAKE) $(CTEST) --output-on-failure --parallel $(JOBS)

FORMAT_DIRS := src include tools bench tests examples

.PHONY: all build run test test-plain test-o3 test-asan test-tsan bench figures soak fuzz install \
	format format-check clean

all: build

build:
	$(call CONFIGURE,$(BUILD))
	$(call COMPILE,$(BUILD))

# A Linux 6.1 recording around a compact_memory and a THP burst (docs/replay.md).
REPLAY_SAMPLE := examples/replay/linux-6.1-compact

run: build
	$(PROGRAM) replay $(REPLAY_SAMPLE) --map $(BUILD)/replay-map.svg \
		--svg $(BUILD)/replay-fragmentation.svg

# Each step stops make on failure, so make test exits non-zero if any fails.
test: format-check test-plain test-o3 test-asan test-tsan

test-plain: build
	$(call CHECK,$(BUILD))

# Everything (library, program, tests) at -O3 -DNDEBUG with -Werror: the
# warnings a parent project's release flags would otherwise turn into errors.
test-o3:
	$(call CONFIGURE,$(BUILD_O3)) "-DCMAKE_C_FLAGS_RELEASE=-O3 -DNDEBUG"
	$(call COMPILE,$(BUILD_O3))

test-asan:
	$(call CONFIGURE,$(BUILD_ASAN)) -DPA_SANITIZE=address -DPA_TEST_SCALE=$(SAN_SCALE)
	$(call COMPILE,$(BUILD_ASAN))
	$(call CHECK,$(BUILD_ASAN))

test-tsan:
	$(call CONFIGURE,$(BUILD_TSAN)) -DPA_SANITIZE=thread -DPA_TEST_SCALE=$(SAN_SCALE)
	$(call COMPILE,$(BUILD_TSAN))
	$(call CHECK,$(BUILD_TSAN))

bench: build
	$(PROGRAM) bench alloc-free-hot
	$(PROGRAM) bench alloc-free-bulk

# Every byte moved is checked; exits non-zero on corruption, a lost frame or
# a failed pa_validate, and under TSan on any race it reports.
soak: build
	$(PROGRAM) bench soak --seconds $(SOAK_SECONDS)
	$(call CONFIGURE,$(BUILD_TSAN)) -DPA_SANITIZE=thread -DPA_TEST_SCALE=$(SAN_SCALE)
	$(call COMPILE,$(BUILD_TSAN))
	TSAN_OPTIONS=halt_on_error=1 ./$(BUILD_TSAN)/pagealloc bench soak --seconds $(SOAK_SECONDS)

# Each target in turn (the machine is shared), from the committed seeds plus
# what earlier runs found; a crash stops make with the input in artifacts/.
fuzz:
	$(CMAKE) -S . -B $(BUILD_FUZZ) -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=$(FUZZ_CC) \
		-DPA_FUZZ=ON $(CMAKE_ARGS)
	$(SUBMAKE) $(CMAKE) --build $(BUILD_FUZZ) --parallel $(JOBS) --target fuzz_targets
	@for t in $(FUZZ_TARGETS); do \
		mkdir -p $(BUILD_FUZZ)/corpus/$$t $(BUILD_FUZZ)/artifacts && \
		echo "fuzz_$$t: $(FUZZ_SECONDS) s" && \
		$(BUILD_FUZZ)/fuzz/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -timeout=30 \
			-print_final_stats=1 -artifact_prefix=$(BUILD_FUZZ)/artifacts/$$t- \
			$$(test -f tests/fuzz/$$t.dict && echo -dict=tests/fuzz/$$t.dict) \
			$(BUILD_FUZZ)/corpus/$$t tests/fuzz/corpus/$$t || exit 1; \
	done

# Every figure of docs/figures.md, with the machine, the date and the commit
# (tools/figures.py; a few minutes).
# BEFORE=PATH-TO-pagealloc (an older build): the speed figures read "before -> now".
figures: build
	python3 tools/figures.py --program $(PROGRAM) --out docs/figures.md \
		$(if $(BEFORE),--before $(abspath $(BEFORE)))

install: build
	$(CMAKE) -DCMAKE_INSTALL_PREFIX="$(PREFIX)" -P $(BUILD)/cmake_install.cmake

format:
	find $(FORMAT_DIRS) -name '*.[ch]' -print0 2>/dev/null | xargs -0 -r $(CLANG_FORMAT) -i

format-check:
	find $(FORMAT_DIRS) -name '*.[ch]' -print0 2>/dev/null | \
		xargs -0 -r $(CLANG_FORMAT) --dry-run --Werror

clean:
	rm -rf $(BUILD) $(BUILD_ASAN) $(BUILD_TSAN) $(BUILD_O3) $(BUILD_FUZZ)
