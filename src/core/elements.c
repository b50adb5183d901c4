#include "core/elements.h"

#include <ctype.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <strings.h>

/* IUPAC 2021 abridged standard atomic weights (five significant figures; the conventional value
 * for elements given as an interval: H, Li, B, C, N, O, Mg, Si, S, Cl, Ar, Br, Tl, Pb). Elements
 * without a standard atomic weight take the mass number of their longest-lived isotope, as the
 * IUPAC table prints it in brackets. Five to a row: row k starts at Z = 5k. */
/* clang-format off */
static const struct {
    const char *symbol;
    double mass; /* g/mol */
} elements[] = {
    {"", 0.0},         {"H", 1.008},      {"He", 4.0026},    {"Li", 6.94},      {"Be", 9.0122},
    {"B", 10.81},      {"C", 12.011},     {"N", 14.007},     {"O", 15.999},     {"F", 18.998},
    {"Ne", 20.180},    {"Na", 22.990},    {"Mg", 24.305},    {"Al", 26.982},    {"Si", 28.085},
    {"P", 30.974},     {"S", 32.06},      {"Cl", 35.45},     {"Ar", 39.95},     {"K", 39.098},
    {"Ca", 40.078},    {"Sc", 44.956},    {"Ti", 47.867},    {"V", 50.942},     {"Cr", 51.996},
    {"Mn", 54.938},    {"Fe", 55.845},    {"Co", 58.933},    {"Ni", 58.693},    {"Cu", 63.546},
    {"Zn", 65.38},     {"Ga", 69.723},    {"Ge", 72.630},    {"As", 74.922},    {"Se", 78.971},
    {"Br", 79.904},    {"Kr", 83.798},    {"Rb", 85.468},    {"Sr", 87.62},     {"Y", 88.906},
    {"Zr", 91.224},    {"Nb", 92.906},    {"Mo", 95.95},     {"Tc", 97.0},      {"Ru", 101.07},
    {"Rh", 102.91},    {"Pd", 106.42},    {"Ag", 107.87},    {"Cd", 112.41},    {"In", 114.82},
    {"Sn", 118.71},    {"Sb", 121.76},    {"Te", 127.60},    {"I", 126.90},     {"Xe", 131.29},
    {"Cs", 132.91},    {"Ba", 137.33},    {"La", 138.91},    {"Ce", 140.12},    {"Pr", 140.91},
    {"Nd", 144.24},    {"Pm", 145.0},     {"Sm", 150.36},    {"Eu", 151.96},    {"Gd", 157.25},
    {"Tb", 158.93},    {"Dy", 162.50},    {"Ho", 164.93},    {"Er", 167.26},    {"Tm", 168.93},
    {"Yb", 173.05},    {"Lu", 174.97},    {"Hf", 178.49},    {"Ta", 180.95},    {"W", 183.84},
    {"Re", 186.21},    {"Os", 190.23},    {"Ir", 192.22},    {"Pt", 195.08},    {"Au", 196.97},
    {"Hg", 200.59},    {"Tl", 204.38},    {"Pb", 207.2},     {"Bi", 208.98},    {"Po", 209.0},
    {"At", 210.0},     {"Rn", 222.0},     {"Fr", 223.0},     {"Ra", 226.0},     {"Ac", 227.0},
    {"Th", 232.04},    {"Pa", 231.04},    {"U", 238.03},     {"Np", 237.0},     {"Pu", 244.0},
    {"Am", 243.0},     {"Cm", 247.0},     {"Bk", 247.0},     {"Cf", 251.0},     {"Es", 252.0},
    {"Fm", 257.0},     {"Md", 258.0},     {"No", 259.0},     {"Lr", 262.0},     {"Rf", 267.0},
    {"Db", 268.0},     {"Sg", 269.0},     {"Bh", 270.0},     {"Hs", 269.0},     {"Mt", 278.0},
    {"Ds", 281.0},     {"Rg", 282.0},     {"Cn", 285.0},     {"Nh", 286.0},     {"Fl", 289.0},
    {"Mc", 290.0},     {"Lv", 293.0},     {"Ts", 294.0},     {"Og", 294.0},
};
/* clang-format on */

enum { max_z = (int)(sizeof elements / sizeof elements[0]) - 1 };

int hmd_element_number(const char *symbol)
{
    if (!symbol || !symbol[0]) {
        return 0;
    }
    for (int z = 1; z <= max_z; z++) {
        if (strcasecmp(symbol, elements[z].symbol) == 0) {
            return z;
        }
    }
    return 0;
}

const char *hmd_element_symbol(int z)
{
    return (z >= 1 && z <= max_z) ? elements[z].symbol : NULL;
}

double hmd_element_mass(int z)
{
    return (z >= 1 && z <= max_z) ? elements[z].mass : 0.0;
}

int hmd_element_from_mass(double mass, double tol)
{
    int best = 0;
    double best_diff = INFINITY;
    for (int z = 1; z <= max_z; z++) {
        double diff = fabs(elements[z].mass - mass);
        if (diff <= tol && diff < best_diff) { /* equal masses (Cm, Bk) keep the lower Z */
            best = z;
            best_diff = diff;
        }
    }
    return best;
}

/* Copies `s` without surrounding blanks into `out` (size n); returns the length kept. */
static size_t trim_copy(const char *s, char *out, size_t n)
{
    while (*s && isspace((unsigned char)*s)) {
        s++;
    }
    size_t len = strlen(s);
    while (len > 0 && isspace((unsigned char)s[len - 1])) {
        len--;
    }
    if (len >= n) {
        len = n - 1;
    }
    memcpy(out, s, len);
    out[len] = '\0';
    return len;
}

/* Strips an ion charge suffix ("+", "-", "2+", "+2") from `s` in place; returns true when there
 * was one. */
static bool strip_charge(char *s)
{
    size_t end = strlen(s);
    while (end > 0 && isdigit((unsigned char)s[end - 1])) {
        end--;
    }
    if (end == 0 || (s[end - 1] != '+' && s[end - 1] != '-')) {
        return false;
    }
    end--;
    while (end > 0 && isdigit((unsigned char)s[end - 1])) {
        end--;
    }
    if (end == 0) {
        return false;
    }
    s[end] = '\0';
    return true;
}

/* CHARMM names its ions with three letters, the same for the residue and the atom. */
static const struct {
    const char *name;
    int z;
} charmm_ions[] = {
    {"LIT", 3},  {"SOD", 11}, {"POT", 19}, {"CLA", 17}, {"CAL", 20},
    {"RUB", 37}, {"CES", 55}, {"BAR", 56}, {"ZN2", 30},
};

int hmd_element_guess(const char *atom_name, const char *res_name)
{
    char name[16], res[16];
    if (!atom_name || trim_copy(atom_name, name, sizeof name) == 0) {
        return 0;
    }
    bool charged = strip_charge(name);
    int z = hmd_element_number(name);
    if (z != 0 && charged) {
        return z; /* "NA+", "CL-", "MG2+" */
    }
    bool ion_residue = false; /* the residue is named after the atom: a monatomic ion */
    if (res_name && trim_copy(res_name, res, sizeof res) > 0) {
        strip_charge(res);
        ion_residue = strcasecmp(res, name) == 0;
    }
    if (ion_residue) {
        for (size_t i = 0; i < sizeof charmm_ions / sizeof charmm_ions[0]; i++) {
            if (strcasecmp(name, charmm_ions[i].name) == 0) {
                return charmm_ions[i].z;
            }
        }
    }
    if (z != 0 && strlen(name) == 2) {
        if (ion_residue) {
            return z; /* residue NA / atom NA: a sodium ion, not a nitrogen */
        }
        if (isupper((unsigned char)name[0]) && islower((unsigned char)name[1])) {
            return z; /* "Cl", "Na": mixed case only makes sense as an element symbol */
        }
    }
    /* GROMACS/PDB atom names: the element letter follows optional digits ("1HB" -> H). */
    const char *p = name;
    while (*p && isdigit((unsigned char)*p)) {
        p++;
    }
    char first[2] = {(char)toupper((unsigned char)*p), '\0'};
    return isalpha((unsigned char)first[0]) ? hmd_element_number(first) : 0;
}
