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
# one rank, with one and with several pulses per direction
if(HMD_HAVE_CUDA AND TARGET test_halo_identity)
  foreach(scale 1.0 0.5 0.3)
    add_test(NAME gpu.halo_self_${scale}
      COMMAND test_halo_identity 1 1 1 ${scale} self)
    set_tests_properties(gpu.halo_self_${scale} PROPERTIES LABELS gpu SKIP_RETURN_CODE 77)
  endforeach()
endif()
