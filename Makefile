# Two entry points (README): `make demo` and `make test`. Both install missing Debian packages,
# configure and build; nothing is downloaded at build time.
BUILD_DIR ?= build
BUILD_TYPE ?= RelWithDebInfo
JOBS ?= $(shell nproc)

.PHONY: deps build demo test bench ort asan clean format

deps:
	bash scripts/install-deps.sh

$(BUILD_DIR)/build.ninja:
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE)

build: deps $(BUILD_DIR)/build.ninja
	cmake --build $(BUILD_DIR) -j $(JOBS)

demo: build
	OMP_WAIT_POLICY=passive bash scripts/demo.sh $(BUILD_DIR)/cli/kiln

test: build
	cd $(BUILD_DIR) && OMP_WAIT_POLICY=passive ctest --output-on-failure -j $(JOBS)

bench: build
	bash scripts/bench.sh $(BUILD_DIR)

# ONNX Runtime (onnxruntime-node 1.30.0, from npm) for bench/model_bench; idempotent.
ort:
	bash scripts/install-ort.sh

# ASan + UBSan build of everything, and the test suite under it.
asan: deps
	cmake --preset asan
	cmake --build --preset asan -j $(JOBS)
	cd build-asan && OMP_WAIT_POLICY=passive ctest --output-on-failure -j $(JOBS)

format:
	clang-format -i $$(git ls-files '*.cc' '*.h')

clean:
	rm -rf $(BUILD_DIR) build-asan
