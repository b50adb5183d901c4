# GPU checks (label gpu), built whenever CUDA is: the CUDA backend against DeePMD-kit's goldens,
# against the CPU reference on fresh random inputs, and MD energy conservation on the GPU. They
# report "skipped" (exit 77) on a machine without a GPU; `make test` leaves them out there and
# says so.
if(HMD_HAVE_CUDA)
  foreach(t goldens twin dense nve mdtwin phases mixed reproducible)
    add_test(NAME gpu.${t}
      COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/gpu/check_gpu.py ${t}
              $<TARGET_FILE:halomd> ${HMD_TEST_DATA} ${CMAKE_CURRENT_BINARY_DIR}/gpu/${t})
    set_tests_properties(gpu.${t} PROPERTIES LABELS gpu SKIP_RETURN_CODE 77)
  endforeach()
endif()
# slots_embed_dmma and the contraction kernels against the host on shapes no model file has
if(HMD_HAVE_CUDA)
  foreach(t embed_dmma contract)
    add_executable(test_gpu_${t} ${CMAKE_CURRENT_SOURCE_DIR}/gpu/${t}.cu)
    target_link_libraries(test_gpu_${t} PRIVATE halomd_lib)
    add_test(NAME gpu.${t} COMMAND test_gpu_${t})
    set_tests_properties(gpu.${t} PROPERTIES LABELS gpu SKIP_RETURN_CODE 77)
  endforeach()
endif()
# The halo test body (tests/mpi/test_halo_identity.c) through the device's self transport, on
# one rank, with one and with several pulses per direction; then 10^4 rounds as one CUDA graph
# replayed (tests/gpu/halo_replay.h)
if(HMD_HAVE_CUDA AND TARGET test_halo_identity)
  foreach(scale 1.0 0.5 0.3)
    add_test(NAME gpu.halo_self_${scale}
      COMMAND test_halo_identity 1 1 1 ${scale} self 10000)
    set_tests_properties(gpu.halo_self_${scale} PROPERTIES LABELS gpu SKIP_RETURN_CODE 77)
  endforeach()
endif()
# ... and through the device's mpi transport on the grids of the host's test (tests/mpi), ranks
# sharing the GPU, 200 rounds after (the host stages every round: no graph)
if(HMD_HAVE_CUDA AND TARGET test_halo_identity)
  foreach(layout "1 1 1 1.0" "2 1 1 1.0" "2 2 1 1.0" "1 2 2 1.0" "2 2 2 1.0" "4 1 1 0.5"
                 "1 3 1 0.6" "2 2 2 0.7")
    hmd_halo_layout("${layout}")
    add_test(NAME gpu.halo_mpi_${halo_name}
      COMMAND ${HMD_MPIRUN} -np ${halo_np} $<TARGET_FILE:test_halo_identity> ${halo_args} mpi
              200)
    set_tests_properties(gpu.halo_mpi_${halo_name} PROPERTIES LABELS gpu SKIP_RETURN_CODE 77
      ENVIRONMENT OMP_NUM_THREADS=1)
  endforeach()
endif()
# ... and through the nvshmem transport, under an MPS server of the test's own (several PEs on
# one GPU need it; one at a time: RUN_SERIAL), with 10^4 graph replays; the `delayed` runs hold
# every signal back for a random time below 20 us (HMD_NVSHMEM_DELAY_US), so that ranks come
# late and in every order; the `bulk` runs store into mapped peers by bulk copies
# (HMD_NVSHMEM_BULK=1)
if(HMD_HAVE_NVSHMEM AND TARGET test_halo_identity)
  foreach(layout "1 1 1 1.0" "2 1 1 1.0" "2 2 1 1.0" "2 2 2 1.0" "4 1 1 0.5" "1 3 1 0.6"
                 "2 2 2 0.7" "delayed 2 1 1 1.0" "delayed 4 1 1 0.5" "delayed 2 2 2 0.7"
                 "bulk 2 1 1 1.0" "bulk 2 2 2 0.7" "bulk delayed 4 1 1 0.5")
    set(env "OMP_NUM_THREADS=1;HMD_NVSHMEM_WAIT_S=10")
    set(prefix "")
    if(layout MATCHES "^bulk ")
      string(REPLACE "bulk " "" layout "${layout}")
      set(prefix bulk_)
      list(APPEND env "HMD_NVSHMEM_BULK=1")
    endif()
    if(layout MATCHES "^delayed ")
      string(REPLACE "delayed " "" layout "${layout}")
      set(prefix ${prefix}delayed_)
      list(APPEND env "HMD_NVSHMEM_DELAY_US=20")
    endif()
    hmd_halo_layout("${layout}")
    add_test(NAME gpu.halo_nvshmem_${prefix}${halo_name}
      COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/gpu/with_mps.sh ${halo_np} ${HMD_MPIRUN} -np ${halo_np}
              $<TARGET_FILE:test_halo_identity> ${halo_args} nvshmem 10000)
    set_tests_properties(gpu.halo_nvshmem_${prefix}${halo_name} PROPERTIES LABELS gpu
      SKIP_RETURN_CODE 77 RUN_SERIAL TRUE ENVIRONMENT "${env}")
  endforeach()
endif()
# The GPU step on several ranks sharing the GPU(s) (tests/gpu/check_multi.py)
if(HMD_HAVE_CUDA AND HMD_HAVE_MPI AND MPIEXEC_EXECUTABLE)
  foreach(t invariance transports trajectory)
    add_test(NAME gpu.multi_${t}
      COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/gpu/check_multi.py ${t}
              ${MPIEXEC_EXECUTABLE} $<TARGET_FILE:halomd> ${HMD_TEST_DATA}
              ${CMAKE_CURRENT_BINARY_DIR}/gpu/multi_${t})
    set_tests_properties(gpu.multi_${t} PROPERTIES LABELS gpu SKIP_RETURN_CODE 77 RUN_SERIAL TRUE)
  endforeach()
endif()
# Checkpoints and pressure coupling on the GPU step (tests/gpu/check_gpu_cpt.py): -cpi
# continuation bit for bit (each thermostat, 1 rank and 2 ranks under with_mps.sh, at a step that
# is not a list step, from a periodic checkpoint), NPT continuation and NPT against the CPU
if(HMD_HAVE_CUDA AND HMD_HAVE_MPI AND MPIEXEC_EXECUTABLE)
  foreach(t continuation npt)
    set(name cpt_${t})
    add_test(NAME gpu.${name}
      COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/gpu/check_gpu_cpt.py ${t}
              ${MPIEXEC_EXECUTABLE} $<TARGET_FILE:halomd> ${HMD_TEST_DATA}
              ${CMAKE_CURRENT_BINARY_DIR}/gpu/${name})
    set_tests_properties(gpu.${name} PROPERTIES LABELS gpu SKIP_RETURN_CODE 77 RUN_SERIAL TRUE)
  endforeach()
endif()
