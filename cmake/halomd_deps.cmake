# Dependencies: required (HDF5, jansson, Random123) and optional (NetCDF, MPI, CUDA, NVSHMEM).
# Fills HALOMD_LIBRARIES, HALOMD_DEFINITIONS (HMD_HAVE_* = 0/1) and HALOMD_FEATURES (for --version).
find_package(PkgConfig REQUIRED)

set(HDF5_PREFER_PARALLEL FALSE)
find_package(HDF5 REQUIRED COMPONENTS C)
pkg_check_modules(JANSSON REQUIRED IMPORTED_TARGET jansson)
find_path(RANDOM123_INCLUDE_DIR Random123/philox.h REQUIRED)

set(HALOMD_LIBRARIES ${HDF5_C_LIBRARIES} PkgConfig::JANSSON)
set(HALOMD_INCLUDES ${HDF5_C_INCLUDE_DIRS} ${RANDOM123_INCLUDE_DIR})
include_directories(SYSTEM ${HALOMD_INCLUDES})
set(HALOMD_DEFINITIONS "")
set(HALOMD_FEATURES "")

# halomd_optional(NAME FOUND) : resolve AUTO/ON/OFF against FOUND, define HMD_HAVE_<NAME>.
function(halomd_optional name found)
  set(request ${HALOMD_${name}})
  if(request STREQUAL "OFF")
    set(use 0)
  elseif(found)
    set(use 1)
  elseif(request STREQUAL "ON")
    message(FATAL_ERROR "HALOMD_${name}=ON but ${name} was not found")
  else()
    set(use 0)
  endif()
  set(HMD_HAVE_${name} ${use} PARENT_SCOPE)
  set(HALOMD_DEFINITIONS ${HALOMD_DEFINITIONS} HMD_HAVE_${name}=${use} PARENT_SCOPE)
  set(HALOMD_FEATURES "${HALOMD_FEATURES} ${name}=${use}" PARENT_SCOPE)
  message(STATUS "halomd: ${name} ${request} -> ${use}")
endfunction()

# NetCDF (AMBER trajectories)
if(NOT HALOMD_NETCDF STREQUAL "OFF")
  pkg_check_modules(NETCDF IMPORTED_TARGET netcdf)
endif()
halomd_optional(NETCDF "${NETCDF_FOUND}")
if(HMD_HAVE_NETCDF)
  list(APPEND HALOMD_LIBRARIES PkgConfig::NETCDF)
endif()

# MPI (domain decomposition; detected now, used by later modules)
if(NOT HALOMD_MPI STREQUAL "OFF")
  find_package(MPI COMPONENTS C QUIET)
endif()
halomd_optional(MPI "${MPI_C_FOUND}")
if(HMD_HAVE_MPI)
  list(APPEND HALOMD_LIBRARIES MPI::MPI_C)
endif()

# CUDA: the GPU backend (src/cuda), built for Hopper (sm_90) unless CMAKE_CUDA_ARCHITECTURES
# says otherwise; it compiles wherever nvcc is, GPU or not.
if(NOT HALOMD_CUDA STREQUAL "OFF")
  include(CheckLanguage)
  check_language(CUDA)
endif()
halomd_optional(CUDA "${CMAKE_CUDA_COMPILER}")
if(HMD_HAVE_CUDA)
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 90)
  endif()
  enable_language(CUDA)
  set(CMAKE_CUDA_STANDARD 17)
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
  find_package(CUDAToolkit REQUIRED)
  list(APPEND HALOMD_LIBRARIES CUDA::cudart CUDA::cublas)
endif()
# NVSHMEM (the GPU-initiated halo transport, src/nvshmem), with CUDA only. Searched under
# NVSHMEM_HOME, then .pydeps/nvidia/nvshmem (make deps puts the wheel nvidia-nvshmem-cu13 there
# where nvcc is), then Python's nvidia.nvshmem (the GPU nodes' venv). The host library comes as
# libnvshmem_host.so.3 only: linked through a symlink in the build folder.
set(NVSHMEM_FOUND FALSE)
if(HMD_HAVE_CUDA AND NOT HALOMD_NVSHMEM STREQUAL "OFF")
  execute_process(COMMAND python3 -c "import importlib.util as u; print(list(u.find_spec('nvidia.nvshmem').submodule_search_locations)[0])"
                  OUTPUT_VARIABLE nvshmem_python OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  set(nvshmem_hints $ENV{NVSHMEM_HOME} ${CMAKE_SOURCE_DIR}/.pydeps/nvidia/nvshmem ${nvshmem_python})
  find_path(NVSHMEM_INCLUDE_DIR nvshmem.h HINTS ${nvshmem_hints} PATH_SUFFIXES include NO_DEFAULT_PATH)
  find_library(NVSHMEM_DEVICE_LIBRARY NAMES libnvshmem_device.a HINTS ${nvshmem_hints}
               PATH_SUFFIXES lib NO_DEFAULT_PATH)
  find_file(NVSHMEM_HOST_LIBRARY NAMES libnvshmem_host.so libnvshmem_host.so.3 HINTS ${nvshmem_hints}
            PATH_SUFFIXES lib NO_DEFAULT_PATH)
  if(NVSHMEM_INCLUDE_DIR AND NVSHMEM_DEVICE_LIBRARY AND NVSHMEM_HOST_LIBRARY)
    set(NVSHMEM_FOUND TRUE)
    get_filename_component(NVSHMEM_LIBRARY_DIR ${NVSHMEM_HOST_LIBRARY} DIRECTORY)
    file(MAKE_DIRECTORY ${CMAKE_BINARY_DIR}/nvshmem)
    file(CREATE_LINK ${NVSHMEM_HOST_LIBRARY} ${CMAKE_BINARY_DIR}/nvshmem/libnvshmem_host.so SYMBOLIC)
    message(STATUS "halomd: NVSHMEM in ${NVSHMEM_LIBRARY_DIR}")
  endif()
endif()
halomd_optional(NVSHMEM "${NVSHMEM_FOUND}")

if(HALOMD_OPENMP)
  find_package(OpenMP COMPONENTS C)
  if(OpenMP_C_FOUND)
    list(APPEND HALOMD_LIBRARIES OpenMP::OpenMP_C)
    set(HALOMD_FEATURES "${HALOMD_FEATURES} OPENMP=1")
  endif()
endif()
