# Command-line errors of halomd run -p (label cli): every one exits nonzero with a message naming
# the file and line or the parameter, and leaves earlier outputs alone.
set(FFW ${CMAKE_SOURCE_DIR}/examples/water)
set(FFSET -set define=-DFLEXIBLE)
halomd_cli_test(NAME ff_no_force_field EXIT 64 MATCH "no force field: give -m model.dp .* -p topol.top"
  ARGS run -c ${FFW}/water_192.gro)
halomd_cli_test(NAME ff_topology_missing EXIT 66 MATCH "nothing.top: cannot open" KEEP md.log
  ARGS run -c ${FFW}/water_192.gro -p nothing.top)
halomd_cli_test(NAME ff_atom_order EXIT 65
  MATCH "water_192_swapped.gro:3: atom 1 is HW1 in the structure but OW in the topology .*tip3p.itp:[0-9]+"
  KEEP md.log ARGS run -c ${HMD_TEST_DATA}/ff/bad/water_192_swapped.gro -p ${FFW}/water_192.top ${FFSET})
halomd_cli_test(NAME ff_atom_count EXIT 65 MATCH "water_1536.gro has 1536 atoms, the topology's .* 192"
  ARGS run -c ${FFW}/water_1536.gro -p ${FFW}/water_192.top ${FFSET})
halomd_cli_test(NAME ff_huge_molecules EXIT 65
  MATCH "water_192.gro has 192 atoms, the topology's \\[ molecules \\] 281938803"
  ARGS run -c ${FFW}/water_192.gro -p ${HMD_TEST_DATA}/bad/fuzz/top_huge_molecules.top ${FFSET})
halomd_cli_test(NAME ff_settles_refused EXIT 69 MATCH "tip3p.itp:[0-9]+: .*settles.*-DFLEXIBLE"
  ARGS run -c ${FFW}/water_192.gro -p ${FFW}/water_192.top)
halomd_cli_test(NAME ff_bad_switch EXIT 78 MATCH "rvdw-switch from -set, rvdw from -set"
  ARGS run -c ${FFW}/water_192.gro -p ${FFW}/water_192.top ${FFSET} -set vdw-modifier=force-switch
  -set rvdw=6 -set rcoulomb=6 -set rvdw-switch=7)
halomd_cli_test(NAME ff_group_needs_model EXIT 64 MATCH "nnp-group = QM needs both -m"
  ARGS run -c ${FFW}/water_192.gro -p ${FFW}/water_192.top ${FFSET} -set nnp-group=QM)
halomd_cli_test(NAME ff_group_needs_index EXIT 78 MATCH "nnp-group = QM .-set. names an index group.*-n index.ndx"
  ARGS run -c ${FFW}/water_192.gro -p ${FFW}/water_192.top -m ${FFW}/water.dp ${FFSET}
  -set nnp-group=QM)
halomd_cli_test(NAME ff_group_index_missing EXIT 66 MATCH "cannot open the index file nothing.ndx"
  ARGS run -c ${FFW}/water_192.gro -p ${FFW}/water_192.top -m ${FFW}/water.dp ${FFSET}
  -set nnp-group=QM -n nothing.ndx)
halomd_cli_test(NAME ff_group_empty EXIT 78 MATCH "nnp-group = resname NA .-set. selects no atom"
  ARGS run -c ${FFW}/water_192.gro -p ${FFW}/water_192.top -m ${FFW}/water.dp ${FFSET}
  "-set" "nnp-group=resname NA")
halomd_cli_test(NAME ff_model_and_top_need_group EXIT 64 MATCH "no nnp-group: set nnp-group"
  ARGS run -c ${FFW}/water_192.gro -p ${FFW}/water_192.top -m ${FFW}/water.dp ${FFSET})
