/* Chemical elements: symbols, standard atomic weights, and the guess of an element from an atom
 * name as GROMACS makes it for .gro and PDB files without an element column. */
#ifndef HMD_CORE_ELEMENTS_H
#define HMD_CORE_ELEMENTS_H

/* Atomic number of a symbol, case-insensitive ("CL" and "Cl" give 17); 0 when unknown. */
int hmd_element_number(const char *symbol);

/* Canonical symbol ("Cl") of atomic number z (1..118); NULL when out of range. */
const char *hmd_element_symbol(int z);

/* Standard atomic weight (g/mol) of atomic number z, as the IUPAC 2021 abridged table gives it
 * (H 1.008, O 15.999, Na 22.990; for elements without one, the mass number of the longest-lived
 * isotope); 0 when out of range. */
double hmd_element_mass(int z);

/* Element whose standard atomic weight is within `tol` g/mol of `mass` (closest wins); 0 when
 * none is. Used for LAMMPS data files whose Masses carry no element comment. */
int hmd_element_from_mass(double mass, double tol);

/* Guesses the element of an atom from its name and residue name (either may be NULL; blanks
 * around them are ignored):
 * - a name with an ion charge ("NA+", "CL-", "MG2+", "Zn2+") whose rest is an element symbol
 *   names that element;
 * - a residue named like the atom (charge ignored) is a monatomic ion: a two-letter element
 *   (NA, CL, MG, ZN, CA) or a CHARMM ion name (SOD, POT, CLA, CAL, LIT, RUB, CES, BAR, ZN2);
 * - a two-letter element written in mixed case ("Cl", "Na") is that element;
 * - otherwise leading digits are skipped and the first letter is the element ("OW" -> O,
 *   "HW1" -> H, "1HB" -> H, "CA" in a protein residue -> C).
 * Returns the atomic number, 0 when nothing fits (e.g. a TIP4P virtual site "MW"). */
int hmd_element_guess(const char *atom_name, const char *res_name);

#endif /* HMD_CORE_ELEMENTS_H */
