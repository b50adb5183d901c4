# MPI tests (label mpi): run through mpirun --oversubscribe --allow-run-as-root with one
# OpenMP thread per rank. Registered only in builds with MPI.

# hmd_halo_layout(LAYOUT): a layout of the halo test, "NX NY NZ SCALE", into the caller's
# halo_args (its four arguments), halo_np (the ranks) and halo_name (the layout, "_" for " ").
# Used here and by the device transports' runs of the test (gpu/gpu_tests.cmake).
function(hmd_halo_layout layout)
  separate_arguments(args UNIX_COMMAND "${layout}")
  list(GET args 0 nx)
  list(GET args 1 ny)
  list(GET args 2 nz)
  math(EXPR np "${nx} * ${ny} * ${nz}")
  string(REPLACE " " "_" name "${layout}")
  set(halo_args ${args} PARENT_SCOPE)
  set(halo_np ${np} PARENT_SCOPE)
  set(halo_name ${name} PARENT_SCOPE)
endfunction()

if(HMD_HAVE_MPI AND MPIEXEC_EXECUTABLE)
  add_executable(test_halo_identity ${CMAKE_CURRENT_SOURCE_DIR}/mpi/test_halo_identity.c)
  target_link_libraries(test_halo_identity PRIVATE halomd_lib)
  if(HMD_HAVE_CUDA) # the replay stage of device transports
    target_sources(test_halo_identity PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/gpu/halo_replay.cu)
    target_include_directories(test_halo_identity PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/gpu)
    target_compile_definitions(test_halo_identity PRIVATE HMD_TEST_REPLAY=1)
  endif()
  set(HMD_MPIRUN ${MPIEXEC_EXECUTABLE} --oversubscribe --allow-run-as-root)
  # grid and cell scale: 1D, 2D, 3D grids; scaled-down cells need several pulses
  foreach(layout "1 1 1 1.0" "2 1 1 1.0" "4 1 1 1.0" "2 2 1 1.0" "1 2 2 1.0" "2 2 2 1.0"
                 "4 1 1 0.5" "1 3 1 0.6" "2 2 2 0.7")
    hmd_halo_layout("${layout}")
    add_test(NAME mpi.halo_identity_${halo_name}
      COMMAND ${HMD_MPIRUN} -np ${halo_np} $<TARGET_FILE:test_halo_identity> ${halo_args})
    set_tests_properties(mpi.halo_identity_${halo_name} PROPERTIES LABELS mpi
      ENVIRONMENT OMP_NUM_THREADS=1 PROCESSORS ${halo_np})
  endforeach()
  foreach(t invariance trajectory skin replicated balance continuation)
    add_test(NAME mpi.${t}
      COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/mpi/check_decomposition.py ${t}
              ${MPIEXEC_EXECUTABLE} $<TARGET_FILE:halomd> ${HMD_TEST_DATA}
              ${CMAKE_CURRENT_BINARY_DIR}/mpi/${t})
    set_tests_properties(mpi.${t} PROPERTIES LABELS mpi PROCESSORS 8)
  endforeach()
  add_test(NAME mpi.model_devi
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/md/check_model_devi.py 2
            $<TARGET_FILE:halomd> ${HMD_TEST_DATA} ${CMAKE_CURRENT_BINARY_DIR}/mpi/model_devi
            ${MPIEXEC_EXECUTABLE})
  set_tests_properties(mpi.model_devi PROPERTIES LABELS mpi PROCESSORS 2)
else()
  message(STATUS "halomd: no MPI, the mpi tests are not registered")
endif()
