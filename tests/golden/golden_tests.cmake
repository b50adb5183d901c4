# One CTest per DeePMD-kit golden in tests/data/golden: halomd eval must reproduce it within
# the tolerance stored in the golden (label golden).
file(GLOB HMD_GOLDENS CONFIGURE_DEPENDS ${HMD_TEST_DATA}/golden/*.json)
foreach(golden ${HMD_GOLDENS})
  get_filename_component(name ${golden} NAME_WE)
  add_test(NAME golden.${name}
    COMMAND ${CMAKE_COMMAND} -DEXE=$<TARGET_FILE:halomd> -DPYTHON=${Python3_EXECUTABLE}
            -DGOLDEN=${golden} -DDATA=${HMD_TEST_DATA}
            -DWORKDIR=${CMAKE_CURRENT_BINARY_DIR}/golden
            -P ${CMAKE_CURRENT_SOURCE_DIR}/golden/run_golden.cmake)
  set_tests_properties(golden.${name} PROPERTIES LABELS golden)
endforeach()
