# wsc: the two commands a fresh Debian 12 machine needs are `make demo` and
# `make test`. Each installs missing packages, configures, builds and runs.

BUILD  ?= build
PYTHON ?= /usr/bin/python3
JOBS   ?= 2
OUT    ?= $(BUILD)/demo
export PYTHONPATH := $(CURDIR)/python

.PHONY: all deps configure build demo test test-lit test-unit test-python test-docs test-coverage test-layering test-install test-package package bench docs clean \
	build-sanitize test-sanitize fuzz fuzz-corpus

all: build

deps:
	@scripts/install-deps.sh

$(BUILD)/build.ninja:
	cmake -G Ninja -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DPython3_EXECUTABLE=$(PYTHON)

configure: deps $(BUILD)/build.ninja

build: configure
	ninja -C $(BUILD) -j$(JOBS)

# Export the bundled MLP, compile it, and train it on the emulator: on four
# systems (weight streaming), then on one wafer (layer pipelined, with its
# floorplan in $(OUT)/floorplan.svg).
demo: build
	@mkdir -p $(OUT)
	$(PYTHON) -m wsc.export examples/mlp.py -o $(OUT)/mlp.mlir \
	    --weights $(OUT)/mlp.safetensors --data $(OUT)/batches.safetensors --batches 4
	$(BUILD)/bin/wsc-opt $(OUT)/mlp.mlir --wsc-pipeline="mode=auto systems=4" -o $(OUT)/mlp.wsc.mlir
	$(BUILD)/bin/wsc-translate --wsc-to-schedule $(OUT)/mlp.wsc.mlir -o $(OUT)/mlp.schedule.json
	$(BUILD)/bin/wsc-run $(OUT)/mlp.schedule.json --weights $(OUT)/mlp.safetensors \
	    --data $(OUT)/batches.safetensors --steps 20 --trace $(OUT)/trace.json
	$(BUILD)/bin/wsc-opt $(OUT)/mlp.mlir --wsc-pipeline="mode=auto systems=1" -o $(OUT)/mlp.lp.mlir
	$(BUILD)/bin/wsc-translate --wsc-to-schedule $(OUT)/mlp.lp.mlir -o $(OUT)/mlp.lp.schedule.json
	$(BUILD)/bin/wsc-translate --wsc-to-svg $(OUT)/mlp.lp.mlir -o $(OUT)/floorplan.svg
	$(BUILD)/bin/wsc-run $(OUT)/mlp.lp.schedule.json --weights $(OUT)/mlp.safetensors \
	    --data $(OUT)/batches.safetensors --steps 20 --trace $(OUT)/lp.trace.json
	@echo "demo files in $(OUT):"
	@echo "  mlp.schedule.json, mlp.lp.schedule.json  the schedules (JSON, docs/ScheduleFormat.md)"
	@echo "  trace.json, lp.trace.json                modeled timelines: open in https://ui.perfetto.dev or chrome://tracing"
	@echo "  floorplan.svg                            the layer-pipelined wafer floorplan: open in a browser"

test: build
	$(MAKE) --no-print-directory test-layering test-unit test-lit test-python test-docs test-coverage \
	    test-install test-package test-sanitize
	$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=60

test-unit:
	cd $(BUILD) && ctest --output-on-failure -j$(JOBS)

test-lit:
	/usr/lib/llvm-22/bin/lit -sv $(BUILD)/test

# Libraries depend one way: a forbidden include or link fails (docs/Architecture.md).
test-layering:
	$(PYTHON) scripts/check-layering.py

# The committed reference docs must match what TableGen generates now.
test-docs:
	ninja -C $(BUILD) mlir-doc
	diff -u docs/generated/WSCDialect.md $(BUILD)/docs/wsc/WSCDialect.md
	diff -u docs/generated/WSCPasses.md $(BUILD)/docs/wsc/WSCPasses.md
	@echo "docs/generated is up to date"

# docs/Coverage.md must match what the exporter's tables generate now.
test-coverage:
	$(PYTHON) -m wsc._export.coverage --check docs/Coverage.md

# Installed as MLIR is: an out-of-tree project builds against `cmake --install`'s
# tree with find_package(WSC) (examples/standalone-consumer), and the Debian
# package's tools run from a dpkg -x root.
test-install: build
	scripts/test-install.sh install $(BUILD)

test-package: package
	scripts/test-install.sh package $(BUILD)

# A Debian package (CPack, cmake/WSCPackage.cmake) in $(BUILD)/package.
package: build
	cd $(BUILD) && cpack --config CPackConfig.cmake

test-python:
	WSC_BUILD_DIR=$(CURDIR)/$(BUILD) $(PYTHON) -m pytest -q python/tests

# The sanitizer tree (docs/Fuzzing.md): our code under clang-22 with ASan and
# UBSan, libFuzzer's coverage, and the fuzz targets. libMLIR is uninstrumented:
# inline LLVM and libstdc++ code in our objects annotates memory that
# libMLIR's copies do not, so ASan's container-overflow and user-poisoning
# checks give false reports. LSan reads fuzz/lsan.supp (no entry needed so far).
SANITIZE_BUILD ?= build-sanitize
FUZZ_SECONDS   ?= 300
FUZZ_TARGETS   := schedule safetensors kgraph wsc-opt interpreter
SANITIZE_ENV   := ASAN_OPTIONS=detect_container_overflow=0:allow_user_poisoning=0 \
	LSAN_OPTIONS=suppressions=$(CURDIR)/fuzz/lsan.supp UBSAN_OPTIONS=print_stacktrace=1
# pytest files whose work is in the tools: with WSC_BUILD_DIR=build-sanitize,
# wsc.compile runs its wsc-opt and wsc-translate and the tests its wsc-run,
# while the Python module (not built there) comes from $(BUILD).
SANITIZE_PYTESTS := test_checkpoint_errors.py test_wsc_run_sparsity.py test_compile_errors.py \
	test_torch_mlir_input.py test_shared_samples.py test_third_party_samples.py

$(SANITIZE_BUILD)/build.ninja:
	cmake -G Ninja -S . -B $(SANITIZE_BUILD) -DCMAKE_C_COMPILER=clang-22 \
	    -DCMAKE_CXX_COMPILER=clang++-22 -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only -DNDEBUG" \
	    "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only -DNDEBUG" \
	    -DWSC_SANITIZE=ON -DWSC_FUZZ=ON -DWSC_ENABLE_PYTHON=OFF -DPython3_EXECUTABLE=$(PYTHON)

# gtest_discover_tests runs the test binaries while building: the env too.
build-sanitize: deps $(SANITIZE_BUILD)/build.ninja
	$(SANITIZE_ENV) ninja -C $(SANITIZE_BUILD) -j$(JOBS)

# Placer.StopsAtTheTimeLimit bounds wall time (limit + 0.25 s), which
# instrumented code overshoots; the normal tree checks it.
test-sanitize: build build-sanitize
	cd $(SANITIZE_BUILD) && $(SANITIZE_ENV) ctest --output-on-failure -j$(JOBS) \
	    -E '^Placer.StopsAtTheTimeLimit$$'
	$(SANITIZE_ENV) /usr/lib/llvm-22/bin/lit -sv $(SANITIZE_BUILD)/test
	$(SANITIZE_ENV) WSC_BUILD_DIR=$(CURDIR)/$(SANITIZE_BUILD) \
	    $(PYTHON) -m pytest -q $(addprefix python/tests/,$(SANITIZE_PYTESTS))

# Each target for FUZZ_SECONDS on its committed corpus; new inputs go to a
# temporary directory (the tree stays clean), kept with the crash if one is found.
fuzz: build-sanitize
	@for t in $(FUZZ_TARGETS); do \
	  out=$$(mktemp -d /tmp/wsc-fuzz-$$t.XXXXXX); \
	  if $(SANITIZE_ENV) $(SANITIZE_BUILD)/bin/fuzz-$$t $$out fuzz/corpus/$$t \
	      -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048 \
	      -print_final_stats=1 -artifact_prefix=$$out/ > $$out/fuzz.log 2>&1; then \
	    echo "fuzz-$$t: $$(grep -a 'DONE' $$out/fuzz.log | tail -1)"; rm -rf $$out; \
	  else \
	    tail -60 $$out/fuzz.log; echo "fuzz-$$t FAILED: the input and log are in $$out"; exit 1; \
	  fi; \
	done

# Regenerates the committed seed corpora from the tests (fuzz/collect_seeds.py).
fuzz-corpus: build build-sanitize
	rm -rf $(SANITIZE_BUILD)/seeds
	$(PYTHON) fuzz/collect_seeds.py $(BUILD) $(SANITIZE_BUILD)/seeds
	for t in $(FUZZ_TARGETS); do mkdir -p fuzz/corpus/$$t && \
	  $(SANITIZE_ENV) $(SANITIZE_BUILD)/bin/fuzz-$$t -merge=1 fuzz/corpus/$$t \
	      $(SANITIZE_BUILD)/seeds/$$t || exit 1; done

bench: build
	WSC_BUILD_DIR=$(CURDIR)/$(BUILD) $(PYTHON) bench/mlp_step.py --threads 1
	WSC_BUILD_DIR=$(CURDIR)/$(BUILD) $(PYTHON) bench/mlp_step.py --threads 2
	WSC_BUILD_DIR=$(CURDIR)/$(BUILD) $(PYTHON) bench/mlp_step.py --width 4096 --batch 64 --threads 1
	WSC_BUILD_DIR=$(CURDIR)/$(BUILD) $(PYTHON) bench/mlp_step.py --width 4096 --batch 64 --threads 2
	$(PYTHON) bench/sparse_spmm.py --build-dir $(BUILD) --threads 1 2
	WSC_BUILD_DIR=$(CURDIR)/$(BUILD) $(PYTHON) bench/sparsity.py
	WSC_BUILD_DIR=$(CURDIR)/$(BUILD) $(PYTHON) bench/modes.py
	WSC_BUILD_DIR=$(CURDIR)/$(BUILD) $(PYTHON) bench/cnn_step.py --threads 1 2
	WSC_BUILD_DIR=$(CURDIR)/$(BUILD) $(PYTHON) bench/encoder_step.py --threads 1 2
	WSC_BUILD_DIR=$(CURDIR)/$(BUILD) $(PYTHON) bench/gpt3_compile.py --depths 24 48 96
	WSC_BUILD_DIR=$(CURDIR)/$(BUILD) $(PYTHON) bench/mpi_step.py

docs: build
	ninja -C $(BUILD) wsc-docs

clean:
	rm -rf $(BUILD)
