# Production-run pieces (issue 29), label unit unless said: the checkpoint helper and its kill -9
# loop, the trajectory writers read back by MDAnalysis and ASE (label python).
add_executable(cpt_tool ${CMAKE_CURRENT_LIST_DIR}/cpt_tool.c)
target_link_libraries(cpt_tool PRIVATE halomd_lib)
add_test(NAME unit.checkpoint_kill9
  COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/kill_loop.py $<TARGET_FILE:cpt_tool>
          ${CMAKE_CURRENT_BINARY_DIR}/tmp/kill9 60 40000)
set_tests_properties(unit.checkpoint_kill9 PROPERTIES LABELS unit TIMEOUT 120)

# -cpi refusals before any output (label cli): checkpoints made by cpt_tool in a fixture
set(CPT ${CMAKE_CURRENT_BINARY_DIR}/cpt_inputs)
set(CPT_CONF ${HMD_TEST_DATA}/structures/deeppot_case1.xyz) # 6 atoms in a 13 Å cell
set(CPT_MODEL ${HMD_TEST_DATA}/models/deeppot.dp)
set(CPT_OUTS md.log md.energy.csv md.xyz md.gro md.cpt)
add_test(NAME cli.cpi_make_inputs COMMAND ${CMAKE_COMMAND} -E chdir ${CMAKE_CURRENT_BINARY_DIR}
  sh -c "rm -rf ${CPT} && mkdir -p ${CPT} && T=$<TARGET_FILE:cpt_tool> && \
$T make ${CPT}/checkpoint_3atoms.cpt 3 5 0.0005 && \
$T make ${CPT}/checkpoint_step50.cpt 6 50 0.0005 && \
$T make ${CPT}/truncated.cpt 6 5 0.0005 2000 && \
$T make ${CPT}/damaged.cpt 6 5 0.0005 && $T make ${CPT}/damaged.cpt 6 6 0.0005 -3000")
set_tests_properties(cli.cpi_make_inputs PROPERTIES LABELS cli FIXTURES_SETUP cpt_inputs)
halomd_cli_test(NAME cpi_json EXIT 65 MATCH "checkpoint_broken.cpt is a JSON checkpoint of an earlier halomd"
  KEEP ${CPT_OUTS} ARGS run -m ${CPT_MODEL} -c ${CPT_CONF} -cpi ${HMD_TEST_DATA}/bad/checkpoint_broken.cpt)
halomd_cli_test(NAME cpi_truncated EXIT 65
  MATCH "truncated.cpt: truncated .2000 of [0-9]+ bytes.; there is no previous checkpoint .*truncated_prev.cpt"
  KEEP ${CPT_OUTS} ARGS run -m ${CPT_MODEL} -c ${CPT_CONF} -cpi ${CPT}/truncated.cpt)
halomd_cli_test(NAME cpi_damaged EXIT 65
  MATCH "damaged.cpt: damaged: the checksum of its contents does not match; the previous checkpoint .*damaged_prev.cpt is there"
  KEEP ${CPT_OUTS} ARGS run -m ${CPT_MODEL} -c ${CPT_CONF} -cpi ${CPT}/damaged.cpt)
halomd_cli_test(NAME cpi_natoms EXIT 65 MATCH "checkpoint_3atoms.cpt: 3 atoms in a cell, but .*has 6"
  KEEP ${CPT_OUTS} ARGS run -m ${CPT_MODEL} -c ${CPT_CONF} -cpi ${CPT}/checkpoint_3atoms.cpt)
halomd_cli_test(NAME cpi_dt EXIT 78 MATCH "dt = 0.001 ps, but the checkpoint .* dt = 0.0005 ps"
  KEEP ${CPT_OUTS} ARGS run -m ${CPT_MODEL} -c ${CPT_CONF} -set dt=0.001 -nsteps 60
  -cpi ${CPT}/checkpoint_step50.cpt)
halomd_cli_test(NAME cpi_nothing_to_do EXIT 78 MATCH "nsteps = 40, but the checkpoint .* at step 50"
  KEEP ${CPT_OUTS} ARGS run -m ${CPT_MODEL} -c ${CPT_CONF} -nsteps 40 -cpi ${CPT}/checkpoint_step50.cpt)
set_tests_properties(cli.cpi_truncated cli.cpi_damaged cli.cpi_natoms cli.cpi_dt
  cli.cpi_nothing_to_do PROPERTIES FIXTURES_REQUIRED cpt_inputs)

# Trajectory writers read back by other programs (label python): extended XYZ by ASE (velocities
# included), H5MD and XTC by MDAnalysis, against the formulas of traj_tool.c. XTC needs
# chemfiles (PyPI, installed into .pydeps by `make deps`).
add_executable(traj_tool ${CMAKE_CURRENT_LIST_DIR}/traj_tool.c)
target_link_libraries(traj_tool PRIVATE halomd_lib)
add_test(NAME python.traj_readback
  COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/test_traj_readback.py
          $<TARGET_FILE:traj_tool> ${CMAKE_CURRENT_BINARY_DIR}/tmp/traj ${CMAKE_SOURCE_DIR}/.pydeps)
set_tests_properties(python.traj_readback PROPERTIES LABELS python)

# Input that cannot hurt (label cli; files from python/halomd/make_test_inputs.py, the model
# crash kept from the fuzzer): each refused with its own message, exit 65, nothing written.
set(BAD ${HMD_TEST_DATA}/bad)
set(EVAL_OUT out.json)
foreach(f gro xyz data)
  halomd_cli_test(NAME input_huge_count_${f} EXIT 65
    MATCH "huge_count.${f}:[0-9]+: 1000000000 atoms declared on line [0-9]+, but the remaining [0-9]+ bytes"
    KEEP ${EVAL_OUT} ARGS eval -m ${CPT_MODEL} -c ${BAD}/huge_count.${f} -o ${EVAL_OUT})
endforeach()
halomd_cli_test(NAME input_overlap EXIT 65
  MATCH "overlap.xyz: frame 1: atoms 1 .line 3. and 4 .line 6. overlap .0.02 Å apart"
  KEEP ${EVAL_OUT} ARGS eval -m ${CPT_MODEL} -c ${BAD}/overlap.xyz -o ${EVAL_OUT})
halomd_cli_test(NAME input_absurd_coordinate EXIT 65
  MATCH "absurd.xyz: frame 1: atom 2 .line 4. has x = 1e.30 Å, beyond"
  KEEP ${EVAL_OUT} ARGS eval -m ${CPT_MODEL} -c ${BAD}/absurd.xyz -o ${EVAL_OUT})
halomd_cli_test(NAME input_truncated_pdb EXIT 65
  MATCH "truncated.pdb:3: the file ends inside a record"
  KEEP ${EVAL_OUT} ARGS eval -m ${CPT_MODEL} -c ${BAD}/truncated.pdb -o ${EVAL_OUT})
halomd_cli_test(NAME model_nan_weight EXIT 65
  MATCH "nan_weight.dp: model.fitting.nets.networks.0..layers.0.: array 'w' ./variable_0030. has a non-finite value"
  ARGS info -m ${BAD}/nan_weight.dp)
halomd_cli_test(NAME model_hdf5_crash EXIT 65
  MATCH "model_h5hg_read.dp: (the file is damaged: HDF5 crashed .signal [0-9]+. reading the root attribute 'json'|cannot read root attribute 'json')"
  ARGS info -m ${BAD}/fuzz/model_h5hg_read.dp)
# HDF5 1.10.8 loops forever on this file: the probe's bound (shortened here) ends it
halomd_cli_test(NAME model_hdf5_hang EXIT 65
  MATCH "model_hdf5_hang.dp: reading the model did not end within 2 s .HDF5 stuck in the root attribute 'json'.: the file is damaged"
  ARGS info -m ${BAD}/fuzz/model_hdf5_hang.dp)
set_tests_properties(cli.model_hdf5_hang PROPERTIES ENVIRONMENT "HALOMD_MODEL_PROBE_SECONDS=2")
# a run killed while the probe waits leaves no child stuck in HDF5 behind
add_test(NAME cli.model_probe_orphan
  COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/probe_orphan.sh $<TARGET_FILE:halomd> ${BAD}/fuzz/model_hdf5_hang.dp)
set_tests_properties(cli.model_probe_orphan PROPERTIES LABELS cli TIMEOUT 30)
