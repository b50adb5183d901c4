# halomd eval -s against dp test and halomd eval -m a b c against dp model-devi (label golden):
# one CTest per golden of tests/data/dptest and tests/data/model_devi, made by DeePMD-kit
# (python/halomd/make_dptest_golden.py --update); the comparison scripts need only Python.
file(GLOB HMD_DPTEST_GOLDENS CONFIGURE_DEPENDS ${HMD_TEST_DATA}/dptest/*.json)
foreach(golden ${HMD_DPTEST_GOLDENS})
  get_filename_component(name ${golden} NAME_WE)
  add_test(NAME golden.dptest.${name}
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/golden/compare_dptest.py
            $<TARGET_FILE:halomd> ${golden} ${CMAKE_CURRENT_BINARY_DIR}/golden/dptest)
  set_tests_properties(golden.dptest.${name} PROPERTIES LABELS golden)
endforeach()
file(GLOB HMD_DEVI_GOLDENS CONFIGURE_DEPENDS ${HMD_TEST_DATA}/model_devi/*.json)
foreach(golden ${HMD_DEVI_GOLDENS})
  get_filename_component(name ${golden} NAME_WE)
  add_test(NAME golden.model_devi.${name}
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/golden/compare_model_devi.py
            $<TARGET_FILE:halomd> ${golden} ${CMAKE_CURRENT_BINARY_DIR}/golden/model_devi)
  set_tests_properties(golden.model_devi.${name} PROPERTIES LABELS golden)
endforeach()
