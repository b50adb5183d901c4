# Style (label style): clang-format conformance of the C code.
find_program(CLANG_FORMAT NAMES clang-format clang-format-14)
if(CLANG_FORMAT)
  add_test(NAME style.clang_format
    COMMAND ${CMAKE_COMMAND} -DSRC=${CMAKE_SOURCE_DIR} -DCLANG_FORMAT=${CLANG_FORMAT}
            -P ${CMAKE_CURRENT_SOURCE_DIR}/style/check_format.cmake)
  set_tests_properties(style.clang_format PROPERTIES LABELS style)
else()
  message(STATUS "halomd: clang-format not found, the style test is not registered")
endif()
