# One CTest per DeePMD-kit golden in tests/data/golden: halomd eval must reproduce it within
# the tolerance stored in the golden (label golden). A golden of a compressed model (it has a
# "compression" block) gives golden.NAME, halomd tabulating the uncompressed model itself with
# DeePMD-kit's stride and extrapolate, and, when DeePMD-kit's compressed .dp is stored too,
# golden.NAME.file, halomd reading DeePMD-kit's tables.
file(GLOB HMD_GOLDENS CONFIGURE_DEPENDS ${HMD_TEST_DATA}/golden/*.json)
foreach(golden ${HMD_GOLDENS})
  get_filename_component(name ${golden} NAME_WE)
  file(READ ${golden} text)
  string(JSON compressed_model ERROR_VARIABLE no_file GET "${text}" compression compressed_model)
  set(modes build)
  if(NOT no_file)
    list(APPEND modes file)
  endif()
  foreach(mode ${modes})
    set(test golden.${name})
    if(mode STREQUAL "file")
      set(test golden.${name}.file)
    endif()
    add_test(NAME ${test}
      COMMAND ${CMAKE_COMMAND} -DEXE=$<TARGET_FILE:halomd> -DPYTHON=${Python3_EXECUTABLE}
              -DGOLDEN=${golden} -DDATA=${HMD_TEST_DATA} -DMODE=${mode}
              -DWORKDIR=${CMAKE_CURRENT_BINARY_DIR}/golden
              -P ${CMAKE_CURRENT_SOURCE_DIR}/golden/run_golden.cmake)
    set_tests_properties(${test} PROPERTIES LABELS golden)
  endforeach()
endforeach()
