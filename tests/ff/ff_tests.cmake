# The classical force field's GPU twin (label gpu, built whenever CUDA is): the device provider
# against the CPU provider on fresh random systems, and its determinism (tests/ff/ff_twin.cu).
# Exit 77 (skipped) without a device. One command: ctest -R gpu.ff_twin (or -L gpu).
if(HMD_HAVE_CUDA)
  add_executable(test_gpu_ff_twin ${CMAKE_CURRENT_SOURCE_DIR}/ff/ff_twin.cu)
  target_include_directories(test_gpu_ff_twin PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/unit)
  target_link_libraries(test_gpu_ff_twin PRIVATE halomd_lib)
  add_test(NAME gpu.ff_twin COMMAND test_gpu_ff_twin)
  set_tests_properties(gpu.ff_twin PROPERTIES LABELS gpu SKIP_RETURN_CODE 77)
endif()
