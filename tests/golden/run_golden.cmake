# Script mode: halomd eval on the model and structure a golden names, then compare_eval.py.
# Variables: EXE (halomd), PYTHON, GOLDEN (json path), DATA (tests/data), WORKDIR.
file(READ ${GOLDEN} text)
string(JSON model GET "${text}" model)
string(JSON structure GET "${text}" structure)
file(MAKE_DIRECTORY ${WORKDIR})
get_filename_component(name ${GOLDEN} NAME_WE)
set(out ${WORKDIR}/${name}.eval.json)
file(REMOVE ${out})
execute_process(COMMAND ${EXE} eval -m ${DATA}/${model} -c ${DATA}/${structure} -o ${out}
  RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "halomd eval failed (${rc}): ${err}")
endif()
execute_process(COMMAND ${PYTHON} ${CMAKE_CURRENT_LIST_DIR}/compare_eval.py ${out} ${GOLDEN}
  RESULT_VARIABLE rc OUTPUT_VARIABLE report ERROR_VARIABLE err)
message(STATUS "${report}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${err}")
endif()
