/* Chemical elements: symbols, standard atomic weights, and the guess of an element from an atom
 * name as GROMACS makes it for .gro and PDB files without an element column. */
#ifndef HMD_CORE_ELEMENTS_H
#define HMD_CORE_ELEMENTS_H

/* Atomic number of a symbol, case-insensitive ("CL" and "Cl" give 17); 0 when unknown. */
int hmd_element_number(const char *symbol);

/* Canonical symbol ("Cl") of atomic number z (1..118); NULL when out of range. */
const char *hmd_element_symbol(int z);

/* Standard atomic weight (g/mol) of atomic number z; 0 when out of range. */
double hmd_element_mass(int z);

/* Element whose standard atomic weight is within `tol` g/mol of `mass` (closest wins); 0 when
 * none is. Used for LAMMPS data files whose Masses carry no element comment. */
int hmd_element_from_mass(double mass, double tol);

/* Guesses the element of an atom from its name and residue name (either may be NULL):
 * - a residue name equal to the atom name that is an element of two letters (NA, CL, MG, ZN,
 *   CA as a residue) names an ion;
 * - otherwise leading digits are skipped and the first letter is the element ("OW" -> O,
 *   "1HB" -> H, "CA" -> C), except for names that are exactly a two-letter element written in
 *   the GROMACS/PDB ion style ("Cl", "Na", "CL-", "NA+").
 * Returns the atomic number, 0 when nothing fits. */
int hmd_element_guess(const char *atom_name, const char *res_name);

#endif /* HMD_CORE_ELEMENTS_H */
