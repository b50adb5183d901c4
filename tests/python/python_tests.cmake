# Python tooling tests (label python): pytest of python/halomd/make_golden.py's helpers, of the
# committed golden data in tests/data, of train_timed.py (with a fake DeePMD-kit) and of
# bench/gpu_single/mixed_errors_table.py, of bench/multi_gpu/gro2lmp.py and of
# examples/water/replicate_cell.py. Needs only
# Debian's python3 and python3-pytest.
add_test(NAME python.make_golden COMMAND /usr/bin/python3 -m pytest -q -p no:cacheprovider
         ${CMAKE_CURRENT_SOURCE_DIR}/python)
set_tests_properties(python.make_golden PROPERTIES LABELS python)
