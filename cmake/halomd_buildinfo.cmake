# Generates generated/hmd_buildinfo.h with version, git commit and build options at every build,
# so --version and the run records name the exact commit.
string(STRIP "${HALOMD_FEATURES}" HALOMD_FEATURES)
set(HALOMD_BUILDINFO_IN "${CMAKE_BINARY_DIR}/buildinfo.in")
file(WRITE ${HALOMD_BUILDINFO_IN}
"#define HMD_VERSION \"${PROJECT_VERSION}\"
#define HMD_GIT_COMMIT \"@GIT_COMMIT@\"
#define HMD_BUILD_TYPE \"${CMAKE_BUILD_TYPE}\"
#define HMD_BUILD_FEATURES \"${HALOMD_FEATURES}\"
#define HMD_COMPILER \"${CMAKE_C_COMPILER_ID} ${CMAKE_C_COMPILER_VERSION}\"
")
add_custom_target(halomd_buildinfo
  COMMAND ${CMAKE_COMMAND} -DSRC=${CMAKE_SOURCE_DIR} -DIN=${HALOMD_BUILDINFO_IN}
          -DOUT=${CMAKE_BINARY_DIR}/generated/hmd_buildinfo.h
          -P ${CMAKE_SOURCE_DIR}/cmake/halomd_gitinfo.cmake
  BYPRODUCTS ${CMAKE_BINARY_DIR}/generated/hmd_buildinfo.h)
