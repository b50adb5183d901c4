# The Python package (python/halomd: ctypes binding of libhalomd and the ASE calculator), label
# python: Debian's python3 with python3-numpy and python3-ase (make deps). The package is used
# from the source tree with the library of this build (HALOMD_LIBRARY); test_api.py also
# installs it with pip into a scratch virtual environment. python.api_gpu (label gpu) runs the
# same on the GPU: exit 77 (skipped) without a device.
set(HMD_API_ENV "HALOMD_LIBRARY=$<TARGET_FILE:halomd_lib>" "HALOMD_EXE=$<TARGET_FILE:halomd>"
    "HMD_TEST_TMP=${CMAKE_CURRENT_BINARY_DIR}/tmp")
add_test(NAME python.api COMMAND /usr/bin/python3 -m pytest -q -p no:cacheprovider
         ${CMAKE_CURRENT_SOURCE_DIR}/api/test_api.py)
set_tests_properties(python.api PROPERTIES LABELS python ENVIRONMENT "${HMD_API_ENV}")
if(HMD_HAVE_CUDA)
  add_test(NAME python.api_gpu COMMAND ${Python3_EXECUTABLE}
           ${CMAKE_CURRENT_SOURCE_DIR}/api/check_api_gpu.py)
  set_tests_properties(python.api_gpu PROPERTIES LABELS gpu SKIP_RETURN_CODE 77
                       ENVIRONMENT "${HMD_API_ENV}")
endif()
