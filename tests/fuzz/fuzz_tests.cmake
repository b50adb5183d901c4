# Fuzzing (label fuzz): the libFuzzer harnesses of every reader, built with clang under ASan and
# UBSan by tests/fuzz/Makefile (fuzz.build, ~35 s), then each run for HMD_FUZZ_SECONDS (6) on a
# copy of its seeds, and once on every reproducer kept in tests/data/bad/fuzz. Longer runs:
# bench/fuzz/run_long.sh (results in bench/results/fuzz_*.json).
find_program(HMD_CLANG NAMES clang clang-14)
if(NOT HMD_CLANG)
  message(STATUS "halomd: clang not found, the fuzz tests are not registered")
  return()
endif()
set(HMD_FUZZ_SECONDS 6 CACHE STRING "seconds each fuzz harness runs in ctest")
set(FUZZ_OUT ${CMAKE_BINARY_DIR}/fuzz)
set(FUZZ_DIR ${CMAKE_CURRENT_LIST_DIR})
add_test(NAME fuzz.build COMMAND make -s -C ${FUZZ_DIR} CC=${HMD_CLANG} OUT=${FUZZ_OUT} -j2)
set_tests_properties(fuzz.build PROPERTIES LABELS fuzz FIXTURES_SETUP fuzz_bins TIMEOUT 300)
foreach(t gro pdb xyz lammps_data mdp checkpoint model_dp top)
  add_test(NAME fuzz.${t}
    COMMAND ${FUZZ_DIR}/run_fuzz.sh ${t} ${FUZZ_OUT} ${HMD_FUZZ_SECONDS} ${FUZZ_OUT}/work/${t})
  set_tests_properties(fuzz.${t} PROPERTIES LABELS fuzz FIXTURES_REQUIRED fuzz_bins TIMEOUT 120)
endforeach()
# reproducers of what fuzzing found, each through its harness (libFuzzer runs the files given)
add_test(NAME fuzz.reproducers COMMAND sh -c "\
${FUZZ_OUT}/fuzz_gro -malloc_limit_mb=256 ${HMD_TEST_DATA}/bad/fuzz/gro_huge_count.gro && \
${FUZZ_OUT}/fuzz_model_dp -malloc_limit_mb=256 ${HMD_TEST_DATA}/bad/fuzz/model_h5hg_read.dp && \
${FUZZ_OUT}/fuzz_top -malloc_limit_mb=256 ${HMD_TEST_DATA}/bad/fuzz/top_huge_molecules.top && \
HALOMD_MODEL_PROBE=0 ${FUZZ_OUT}/fuzz_model_dp ${HMD_TEST_DATA}/bad/fuzz/model_json_nan_at_end.dp && \
HALOMD_MODEL_PROBE_SECONDS=5 ${FUZZ_OUT}/fuzz_model_dp -timeout=6 ${HMD_TEST_DATA}/bad/fuzz/model_hdf5_hang.dp")
# (the last: libFuzzer's alarm interrupts the probe's wait every 4 s; a wait that restarted its
# 5 s at each signal would run past the 6 s timeout)
set_tests_properties(fuzz.reproducers PROPERTIES LABELS fuzz FIXTURES_REQUIRED fuzz_bins
  ENVIRONMENT "HMD_FUZZ_TMP=${CMAKE_CURRENT_BINARY_DIR}/tmp")
