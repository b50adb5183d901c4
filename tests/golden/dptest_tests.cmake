# halomd eval -s against dp test and halomd eval -m a b c against dp model-devi (label golden):
# one CTest per golden of tests/data/dptest and tests/data/model_devi, made by DeePMD-kit
# (python/halomd/make_dptest_golden.py --update); compare_eval_data.py needs only Python.
file(GLOB HMD_DATA_GOLDENS CONFIGURE_DEPENDS ${HMD_TEST_DATA}/dptest/*.json
     ${HMD_TEST_DATA}/model_devi/*.json)
foreach(golden ${HMD_DATA_GOLDENS})
  get_filename_component(name ${golden} NAME_WE)
  get_filename_component(dir ${golden} DIRECTORY)
  get_filename_component(kind ${dir} NAME)
  add_test(NAME golden.${kind}.${name}
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/golden/compare_eval_data.py
            $<TARGET_FILE:halomd> ${golden} ${CMAKE_CURRENT_BINARY_DIR}/golden/${kind})
  set_tests_properties(golden.${kind}.${name} PROPERTIES LABELS golden)
endforeach()
