# halomd eval -s (dp test) and -m a.dp b.dp ... (model deviation): every class of bad input
# ends with the exit code and a message naming the file or the model, earlier output
# untouched; the good paths write model_devi.out (backing up an earlier one). Label cli.
set(D ${HMD_TEST_DATA})
set(WATER1 ${D}/models/se_e2_a_water_one_side.dp)
set(WATER2 ${D}/models/se_e2_a_water_two_side.dp)
set(CONF96 ${D}/structures/water_96_small.xyz)
halomd_cli_test(NAME eval_data_missing EXIT 66 MATCH "nothing: no such folder"
  ARGS eval -m ${WATER1} -s ${D}/nothing)
halomd_cli_test(NAME eval_data_no_system EXIT 66 MATCH "no DeePMD-kit system"
  ARGS eval -m ${WATER1} -s ${D}/params)
halomd_cli_test(NAME eval_data_truncated_npy EXIT 65 KEEP out.json
  MATCH "deepmd_truncated/set.000/coord.npy: the header says shape \\(2, 9\\)"
  ARGS eval -m ${WATER1} -s ${D}/bad/deepmd_truncated -o out.json)
halomd_cli_test(NAME eval_data_type_not_in_model EXIT 65
  MATCH "hcno_270/type.raw:[0-9]+: atom [0-9]+ '[CN]' \\(element [CN]\\) has no type in the model"
  ARGS eval -m ${WATER1} -s ${D}/deepmd_traj/hcno_270)
halomd_cli_test(NAME eval_data_and_conf EXIT 64 MATCH "either -c structure or -s data"
  ARGS eval -m ${WATER1} -s ${D}/deepmd -c ${CONF96})
halomd_cli_test(NAME eval_data_report EXIT 0 EXPECT out.json
  MATCH "# number of systems : 2\nEnergy MAE         : [0-9.e+-]+ eV\n"
  ARGS eval -backend cpu -m ${WATER1} -s ${D}/deepmd -o out.json)
halomd_cli_test(NAME devi_cutoffs_differ EXIT 65 KEEP model_devi.out
  MATCH "se_atten_v2_small_hcno.dp has rcut 5.5 Å, .*dpa1_small_hcno.dp 6 Å"
  ARGS eval -m ${D}/models/dpa1_small_hcno.dp ${D}/models/se_atten_v2_small_hcno.dp
       -c ${D}/structures/hcno_270_mixture.xyz)
halomd_cli_test(NAME devi_types_differ EXIT 65 KEEP model_devi.out
  MATCH "dpa1_small_hcno.dp has the type map \\[H, C, N, O\\], .*one_side.dp has \\[O, H\\]"
  ARGS eval -m ${WATER1} ${D}/models/dpa1_small_hcno.dp -c ${CONF96})
halomd_cli_test(NAME devi_bad_model EXIT 66 KEEP model_devi.out MATCH "nothing.dp"
  ARGS eval -m ${WATER1} ${D}/nothing.dp -c ${CONF96})
halomd_cli_test(NAME devi_bad_level EXIT 78 MATCH "model-devi-relative = -1 is out of range"
  ARGS eval -m ${WATER1} ${WATER2} -c ${CONF96} -set model-devi-relative=-1)
halomd_cli_test(NAME devi_writes_and_backs_up EXIT 0 BACKUP model_devi.out
  EXPECT model_devi.out
  ARGS eval -backend cpu -m ${WATER1} ${WATER2} -c ${CONF96})
halomd_cli_test(NAME devi_deffnm EXIT 0 EXPECT md.model_devi.out devi.json
  MATCH "model deviation of 2 models written to md.model_devi.out"
  ARGS eval -backend cpu -m ${WATER1} ${WATER2} -c ${D}/structures/water_192_ortho_3frames.xyz
       -deffnm md -o devi.json -set model-devi-atomic=yes)
halomd_cli_test(NAME run_devi_cutoffs EXIT 65
  MATCH "se_e2_a_small_3types.dp has rcut 5 .*need the same cut-off"
  ARGS run -backend cpu -m ${WATER1} ${D}/models/se_e2_a_small_3types.dp -c ${CONF96})
halomd_cli_test(NAME run_devi_missing EXIT 66 MATCH "cannot open model .*nothing.dp"
  ARGS run -backend cpu -m ${WATER1} ${D}/models/nothing.dp -c ${CONF96})
