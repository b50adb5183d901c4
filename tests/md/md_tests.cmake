# End-to-end MD checks (label md): energy conservation and its dt scaling, thermostats against
# the canonical ensemble, eval against step 0 of a run, seed reproducibility, continuation from
# a checkpoint.
foreach(t nve_dt nve_dt_dpa1 nve_dt_compressed compress_check vrescale langevin eval_step0 seeds
          continuation)
  add_test(NAME md.${t}
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/md/check_md.py ${t}
            $<TARGET_FILE:halomd> ${HMD_TEST_DATA} ${CMAKE_CURRENT_BINARY_DIR}/md/${t})
  set_tests_properties(md.${t} PROPERTIES LABELS md)
endforeach()

# run -m a.dp b.dp ...: the run's model_devi.out against eval -m over its trajectory, 1 rank
# (tests/mpi has 2 ranks)
add_test(NAME md.model_devi
  COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/md/check_model_devi.py 1
          $<TARGET_FILE:halomd> ${HMD_TEST_DATA} ${CMAKE_CURRENT_BINARY_DIR}/md/model_devi)
set_tests_properties(md.model_devi PROPERTIES LABELS md)

# integrator = steep and fire converge on the perturbed demo water
add_test(NAME md.minimize
  COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/md/check_em.py
          $<TARGET_FILE:halomd> ${HMD_TEST_DATA} ${CMAKE_CURRENT_BINARY_DIR}/md/minimize)
set_tests_properties(md.minimize PROPERTIES LABELS md)

# pcoupl = c-rescale: the volume responds, the conserved quantity stays finite (short)
add_test(NAME md.npt
  COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/md/check_npt.py
          $<TARGET_FILE:halomd> ${HMD_TEST_DATA} ${CMAKE_CURRENT_BINARY_DIR}/md/npt)
set_tests_properties(md.npt PROPERTIES LABELS md)
