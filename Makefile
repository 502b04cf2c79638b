# wsc: the two commands a fresh Debian 12 machine needs are `make demo` and
# `make test`. Each installs missing packages, configures, builds and runs.

BUILD  ?= build
PYTHON ?= /usr/bin/python3
JOBS   ?= 2
OUT    ?= $(BUILD)/demo
export PYTHONPATH := $(CURDIR)/python

.PHONY: all deps configure build demo test test-lit test-unit test-python test-docs test-coverage test-layering test-install test-package package bench docs clean

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
	    test-install test-package

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

bench: build
	WSC_BUILD_DIR=$(CURDIR)/$(BUILD) $(PYTHON) bench/mlp_step.py --threads 1
	WSC_BUILD_DIR=$(CURDIR)/$(BUILD) $(PYTHON) bench/mlp_step.py --threads 2
	$(PYTHON) bench/sparse_spmm.py --build-dir $(BUILD) --threads 1 2
	WSC_BUILD_DIR=$(CURDIR)/$(BUILD) $(PYTHON) bench/sparsity.py
	WSC_BUILD_DIR=$(CURDIR)/$(BUILD) $(PYTHON) bench/modes.py
	WSC_BUILD_DIR=$(CURDIR)/$(BUILD) $(PYTHON) bench/cnn_step.py --threads 1 2
	WSC_BUILD_DIR=$(CURDIR)/$(BUILD) $(PYTHON) bench/mpi_step.py

docs: build
	ninja -C $(BUILD) wsc-docs

clean:
	rm -rf $(BUILD)
