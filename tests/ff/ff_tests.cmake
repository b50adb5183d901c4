# The classical force field's GPU twin (label gpu, built whenever CUDA is): the device provider
# against the CPU provider on fresh random systems, and its determinism (tests/ff/ff_twin.cu).
# Exit 77 (skipped) without a device. One command: ctest -R gpu.ff_twin (or -L gpu).
if(HMD_HAVE_CUDA)
  add_executable(test_gpu_ff_twin ${CMAKE_CURRENT_SOURCE_DIR}/ff/ff_twin.cu)
  target_include_directories(test_gpu_ff_twin PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/unit)
  target_link_libraries(test_gpu_ff_twin PRIVATE halomd_lib)
  add_test(NAME gpu.ff_twin COMMAND test_gpu_ff_twin)
  set_tests_properties(gpu.ff_twin PROPERTIES LABELS gpu SKIP_RETURN_CODE 77)
  # the device pair list against the host's, as sets (same executable)
  add_test(NAME gpu.ff_pairs COMMAND test_gpu_ff_twin pairs)
  set_tests_properties(gpu.ff_pairs PROPERTIES LABELS gpu SKIP_RETURN_CODE 77)
endif()

# halomd run -p end to end (label md): step-0 terms against the gmx_d goldens, NVE drift, MPI
# domain decomposition, hybrid ML/MM (tests/ff/check_classical.py). CLI errors (label cli).
foreach(t water_nve protein_step0 hybrid_water)
  add_test(NAME md.ff_${t}
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/ff/check_classical.py ${t}
            $<TARGET_FILE:halomd> ${CMAKE_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/ff/${t})
  set_tests_properties(md.ff_${t} PROPERTIES LABELS md)
endforeach()
if(HMD_HAVE_MPI AND MPIEXEC_EXECUTABLE)
  add_test(NAME mpi.ff_water_dd
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/ff/check_classical.py water_dd
            $<TARGET_FILE:halomd> ${CMAKE_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/ff/water_dd
            ${MPIEXEC_EXECUTABLE})
  set_tests_properties(mpi.ff_water_dd PROPERTIES LABELS mpi)
endif()
if(HMD_HAVE_CUDA)
  add_test(NAME gpu.ff_run
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/ff/check_classical.py gpu_water
            $<TARGET_FILE:halomd> ${CMAKE_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/ff/gpu_water)
  set_tests_properties(gpu.ff_run PROPERTIES LABELS gpu SKIP_RETURN_CODE 77)
  add_test(NAME gpu.ff_hybrid
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/ff/check_classical.py gpu_hybrid
            $<TARGET_FILE:halomd> ${CMAKE_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/ff/gpu_hybrid)
  set_tests_properties(gpu.ff_hybrid PROPERTIES LABELS gpu SKIP_RETURN_CODE 77)
endif()
include(${CMAKE_CURRENT_SOURCE_DIR}/ff/ff_cli_tests.cmake)
