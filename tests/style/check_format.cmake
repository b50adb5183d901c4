# Script mode: every C and CUDA source and header is formatted as .clang-format says.
# Variables: SRC (repository root), CLANG_FORMAT.
file(GLOB_RECURSE files ${SRC}/src/*.c ${SRC}/src/*.h ${SRC}/src/*.cu ${SRC}/src/*.cuh
     ${SRC}/tests/unit/*.c ${SRC}/tests/unit/*.h ${SRC}/tests/unit/*.cu
     ${SRC}/bench/*.c ${SRC}/bench/*.cu ${SRC}/bench/*.cuh)
set(bad "")
foreach(f ${files})
  execute_process(COMMAND ${CLANG_FORMAT} --dry-run --Werror ${f}
    RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
  if(NOT rc EQUAL 0)
    list(APPEND bad ${f})
  endif()
endforeach()
if(bad)
  string(REPLACE ";" "\n  " bad "${bad}")
  message(FATAL_ERROR "not formatted (run clang-format -i on them):\n  ${bad}")
endif()
