# Script mode: fills @GIT_COMMIT@ in IN and writes OUT only when it changed.
execute_process(COMMAND git -C ${SRC} describe --always --dirty --abbrev=12
  OUTPUT_VARIABLE GIT_COMMIT OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT GIT_COMMIT)
  set(GIT_COMMIT "unknown")
endif()
configure_file(${IN} ${OUT}.tmp @ONLY)
file(COPY_FILE ${OUT}.tmp ${OUT} ONLY_IF_DIFFERENT)
