# Script mode: run EXE with ARGS (a ;-list) in a fresh WORKDIR; check the exit code is EXIT and,
# when MATCH is set, that stderr matches it. Prints both streams on failure.
file(REMOVE_RECURSE ${WORKDIR})
file(MAKE_DIRECTORY ${WORKDIR})
execute_process(COMMAND ${EXE} ${ARGS} WORKING_DIRECTORY ${WORKDIR}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc STREQUAL EXIT)
  message(FATAL_ERROR "exit code ${rc}, expected ${EXIT}\nstdout:\n${out}\nstderr:\n${err}")
endif()
if(MATCH AND NOT err MATCHES "${MATCH}")
  message(FATAL_ERROR "stderr does not match '${MATCH}'\nstderr:\n${err}")
endif()
message(STATUS "ok: exit ${rc}\n${err}")
