/* Unit tests of src/core/elements: symbols, standard atomic weights, element from mass, element
 * guessed from GROMACS/PDB atom and residue names. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "core/elements.h"

static void test_symbols(void **state)
{
    assert_int_equal(hmd_element_number("H"), 1);
    assert_int_equal(hmd_element_number("Cl"), 17);
    assert_int_equal(hmd_element_number("CL"), 17);
    assert_int_equal(hmd_element_number("cl"), 17);
    assert_int_equal(hmd_element_number("Og"), 118);
    assert_int_equal(hmd_element_number("Xx"), 0);
    assert_int_equal(hmd_element_number("OW"), 0);
    assert_int_equal(hmd_element_number(""), 0);
    assert_int_equal(hmd_element_number(NULL), 0);
    assert_string_equal(hmd_element_symbol(17), "Cl");
    assert_string_equal(hmd_element_symbol(1), "H");
    assert_string_equal(hmd_element_symbol(118), "Og");
    assert_null(hmd_element_symbol(0));
    assert_null(hmd_element_symbol(119));
    for (int z = 1; z <= 118; z++) {
        assert_int_equal(hmd_element_number(hmd_element_symbol(z)), z);
    }
}

static void test_masses(void **state)
{
    const struct {
        const char *symbol;
        double mass;
    } cases[] = {{"H", 1.008},   {"C", 12.011}, {"N", 14.007},  {"O", 15.999},
                 {"Na", 22.990}, {"Cl", 35.45}, {"Mg", 24.305}, {"Fe", 55.845},
                 {"Au", 196.97}, {"U", 238.03}, {"Tc", 97.0},   {"Og", 294.0}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        assert_true(fabs(hmd_element_mass(hmd_element_number(cases[k].symbol)) - cases[k].mass) <
                    1e-12);
    }
    for (int z = 1; z <= 118; z++) {
        assert_true(hmd_element_mass(z) > 0 && hmd_element_mass(z) < 300);
    }
    assert_true(hmd_element_mass(0) == 0.0);
    assert_true(hmd_element_mass(119) == 0.0);
}

static void test_element_from_mass(void **state)
{
    /* older LAMMPS and CHARMM masses */
    assert_int_equal(hmd_element_from_mass(15.9994, 0.1), 8);
    assert_int_equal(hmd_element_from_mass(1.00794, 0.1), 1);
    assert_int_equal(hmd_element_from_mass(12.0107, 0.1), 6);
    assert_int_equal(hmd_element_from_mass(22.98977, 0.1), 11);
    assert_int_equal(hmd_element_from_mass(35.453, 0.1), 17);
    assert_int_equal(hmd_element_from_mass(39.948, 0.1), 18); /* Ar, not K (39.098) */
    assert_int_equal(hmd_element_from_mass(58.9, 0.1), 27);   /* Co 58.933, not Ni 58.693 */
    /* deuterium and united-atom CH2 match nothing */
    assert_int_equal(hmd_element_from_mass(2.014, 0.1), 0);
    assert_int_equal(hmd_element_from_mass(14.027, 0.01), 0);
    assert_int_equal(hmd_element_from_mass(16.2, 0.1), 0);
}

static void test_guess(void **state)
{
    const struct {
        const char *atom, *res, *symbol; /* symbol NULL: no element */
    } cases[] = {
        {"OW", "SOL", "O"},   {"HW1", "SOL", "H"},  {"HW2", "SOL", "H"}, {" OW ", "SOL", "O"},
        {"1HB", "ALA", "H"},  {"2HG1", "ILE", "H"}, {"HB1", "ALA", "H"}, {"CA", "ALA", "C"},
        {"CA", "CA", "Ca"},   {"NA", "NA", "Na"},   {"NA", "SOL", "N"},  {"CL", "CL", "Cl"},
        {"CL-", "CL-", "Cl"}, {"CL", "CL-", "Cl"},  {"Cl", NULL, "Cl"},  {"Cl", "ION", "Cl"},
        {"NA+", NULL, "Na"},  {"Na+", "Na+", "Na"}, {"MG", "MG", "Mg"},  {"MG2+", NULL, "Mg"},
        {"Zn2+", "ZN", "Zn"}, {"ZN", "ZN", "Zn"},   {"K", "K", "K"},     {"SOD", "SOD", "Na"},
        {"CLA", "CLA", "Cl"}, {"POT", "POT", "K"},  {"ND2", "ASN", "N"}, {"OXT", "LYS", "O"},
        {"SG", "CYS", "S"},   {"C1'", "DA", "C"},   {"O", NULL, "O"},    {"HW1", NULL, "H"},
        {"MW", "SOL", NULL},  {"LP1", "LIG", NULL}, {"", "SOL", NULL},   {NULL, NULL, NULL},
        {"123", NULL, NULL},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        int z = hmd_element_guess(cases[k].atom, cases[k].res);
        const char *got = z ? hmd_element_symbol(z) : "(none)";
        const char *want = cases[k].symbol ? cases[k].symbol : "(none)";
        if (strcmp(got, want) != 0) {
            fail_msg("atom '%s' residue '%s': guessed %s, expected %s",
                     cases[k].atom ? cases[k].atom : "NULL", cases[k].res ? cases[k].res : "NULL",
                     got, want);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_symbols),
        cmocka_unit_test(test_masses),
        cmocka_unit_test(test_element_from_mass),
        cmocka_unit_test(test_guess),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
