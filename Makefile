# Two entry points (README): `make demo` and `make test`. Both install missing Debian packages,
# configure and build; nothing is downloaded at build time. `make demo` installs and builds only
# what the kiln binary needs; `make test` adds the test suite, the benchmarks and their packages.
BUILD_DIR ?= build
BUILD_TYPE ?= RelWithDebInfo
JOBS ?= $(shell nproc)
CONFIGURE = cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE)

.PHONY: deps deps-demo build demo test bench ort asan clean format install deb

deps:
	bash scripts/install-deps.sh all

deps-demo:
	bash scripts/install-deps.sh demo

# A tree configured already (by make build or test) keeps its tests; a new one has none.
demo: deps-demo
	[ -f $(BUILD_DIR)/build.ninja ] || $(CONFIGURE) -DKILN_TESTS=OFF
	cmake --build $(BUILD_DIR) -j $(JOBS) --target kiln
	OMP_WAIT_POLICY=passive bash scripts/demo.sh $(BUILD_DIR)/cli/kiln

# Reconfigures each time (seconds) so that a tree the demo configured gains the tests.
build: deps
	$(CONFIGURE) -DKILN_TESTS=ON
	cmake --build $(BUILD_DIR) -j $(JOBS)

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

# The binary, man page, bash completion, configs/ and systemd units under PREFIX (cmake/install.cmake).
PREFIX ?= /usr/local
install:
	[ -f $(BUILD_DIR)/build.ninja ] || $(CONFIGURE) -DKILN_TESTS=OFF
	cmake --build $(BUILD_DIR) -j $(JOBS) --target kiln kiln_docs
	cmake --install $(BUILD_DIR) --prefix $(PREFIX)

# The same files as a .deb for /usr/local (in $(BUILD_DIR)), its Depends from dpkg-shlibdeps.
deb:
	[ -f $(BUILD_DIR)/build.ninja ] || $(CONFIGURE) -DKILN_TESTS=OFF
	cmake --build $(BUILD_DIR) -j $(JOBS) --target kiln kiln_docs
	cd $(BUILD_DIR) && cpack -G DEB

format:
	clang-format -i $$(git ls-files '*.cc' '*.h')

clean:
	rm -rf $(BUILD_DIR) build-asan
