# Thin wrapper: install what is missing, configure, build, run.
#   make demo   - set-up, build, run the bundled water example (examples/water)
#   make test   - set-up, build, run every test (ctest)
# Variables: BUILD (build folder), CMAKE_ARGS (extra configure flags), JOBS.

BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_ARGS ?=
DEBIAN_PACKAGES = cmake make gcc pkg-config git libhdf5-dev libjansson-dev librandom123-dev \
	libnetcdf-dev libxxhash-dev libcmocka-dev libopenmpi-dev openmpi-bin python3 python3-pytest \
	clang-format python3-pip python3-ase python3-mdanalysis python3-h5py clang libclang-rt-14-dev \
	python3-numpy python3-venv python3-setuptools python3-wheel gromacs-data
# From PyPI into .pydeps (pip --target): chemfiles's libchemfiles.so writes XTC (io/traj_xtc.h)
PYPI_PACKAGES = chemfiles==0.10.4
# Where nvcc is: NVSHMEM's headers and libraries (the GPU nodes' version) for src/nvshmem
NVCC := $(shell command -v nvcc 2>/dev/null || ls /usr/local/cuda/bin/nvcc 2>/dev/null)
PYPI_PACKAGES += $(if $(NVCC),nvidia-nvshmem-cu13==3.4.5)

.PHONY: all deps configure build demo test clean

all: build

deps:
	@./scripts/install_deps.sh $(DEBIAN_PACKAGES)
	@./scripts/install_deps.sh --pypi .pydeps $(PYPI_PACKAGES)

configure: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_ARGS)

build: configure
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	cd examples/water && ../../$(BUILD)/halomd run -f demo.mdp -c water_1536.gro -m water_trained.dp -deffnm demo

test: build
	@if nvidia-smi -L >/dev/null 2>&1; then gpu=""; else gpu="-LE gpu"; \
	  echo "halomd: no GPU on this machine: the GPU tests (label gpu) are excluded"; fi; \
	  cd $(BUILD) && ctest --output-on-failure -j $(JOBS) $$gpu $(CTEST_ARGS)

clean:
	rm -rf $(BUILD)
