# Script mode: fills @GIT_COMMIT@ in IN and writes OUT only when it changed. The environment's
# HALOMD_COMMIT, when set, names the build instead of git (a copy of the tree whose .git is
# absent or not its own, such as a GPU node's).
if(DEFINED ENV{HALOMD_COMMIT} AND NOT "$ENV{HALOMD_COMMIT}" STREQUAL "")
  set(GIT_COMMIT "$ENV{HALOMD_COMMIT}")
else()
  execute_process(COMMAND git -C ${SRC} describe --always --dirty --abbrev=12
    OUTPUT_VARIABLE GIT_COMMIT OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
endif()
if(NOT GIT_COMMIT)
  set(GIT_COMMIT "unknown")
endif()
configure_file(${IN} ${OUT}.tmp @ONLY)
file(COPY_FILE ${OUT}.tmp ${OUT} ONLY_IF_DIFFERENT)
