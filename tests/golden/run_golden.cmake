# Script mode: halomd eval (CPU backend; tests/gpu runs the GPU) on the model and structure a
# golden names, then compare_eval.py.
# Variables: EXE (halomd), PYTHON, GOLDEN (json path), DATA (tests/data), WORKDIR, MODE (build:
# the golden's model, tabulated by halomd when the golden has a "compression" block; file: the
# block's compressed_model, DeePMD-kit's own tables). When the golden records DeePMD-kit's
# parameter count (provenance.nparams), `halomd info` must print the same.
file(READ ${GOLDEN} text)
string(JSON model GET "${text}" model)
string(JSON structure GET "${text}" structure)
set(args)
string(JSON compression ERROR_VARIABLE uncompressed GET "${text}" compression)
if(MODE STREQUAL "file")
  string(JSON model GET "${text}" compression compressed_model)
elseif(NOT uncompressed)
  string(JSON stride GET "${text}" compression stride0)
  string(JSON extrapolate GET "${text}" compression extrapolate)
  set(args -set model-compress=yes -set compress-stride=${stride}
           -set compress-extrapolate=${extrapolate})
endif()
file(MAKE_DIRECTORY ${WORKDIR})
get_filename_component(name ${GOLDEN} NAME_WE)
set(out ${WORKDIR}/${name}.${MODE}.eval.json)
file(REMOVE ${out})
execute_process(COMMAND ${EXE} eval -backend cpu -m ${DATA}/${model} -c ${DATA}/${structure}
                        -o ${out} ${args}
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

string(JSON nparams ERROR_VARIABLE no_count GET "${text}" provenance nparams)
if(NOT no_count AND MODE STREQUAL "build")
  execute_process(COMMAND ${EXE} info -m ${DATA}/${model} RESULT_VARIABLE rc OUTPUT_VARIABLE info)
  if(NOT info MATCHES "parameters +${nparams}\n")
    message(FATAL_ERROR "halomd info does not report DeePMD-kit's ${nparams} parameters:\n${info}")
  endif()
endif()
