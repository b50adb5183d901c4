# Production-run pieces (issue 29), label unit unless said: the checkpoint helper and its kill -9
# loop, the trajectory writers read back by MDAnalysis and ASE (label python).
add_executable(cpt_tool ${CMAKE_CURRENT_LIST_DIR}/cpt_tool.c)
target_link_libraries(cpt_tool PRIVATE halomd_lib)
add_test(NAME unit.checkpoint_kill9
  COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/kill_loop.py $<TARGET_FILE:cpt_tool>
          ${CMAKE_CURRENT_BINARY_DIR}/tmp/kill9 60 40000)
set_tests_properties(unit.checkpoint_kill9 PROPERTIES LABELS unit TIMEOUT 120)
