/* GROMACS index files (.ndx, as `gmx make_ndx` writes them): groups of atoms, each a header
 * `[ name ]` followed by 1-based atom numbers, any number per line, `;` starting a comment.
 */
#ifndef HMD_IO_INDEX_NDX_H
#define HMD_IO_INDEX_NDX_H

/* Reads the group `name` (compared without regard to case, as GROMACS does) of the index
 * file `path` into mask[natoms]: 1 for the atoms it lists, 0 for the others. Errors, each naming
 * the file (and line): HMD_ENOINPUT (cannot open), HMD_EDATA (a number that is not an atom of
 * the natoms, a line outside any group, a group listed twice), HMD_ECONFIG (no group `name`: the
 * message lists the groups there are). */
int hmd_index_ndx_group(const char *path, const char *name, int natoms, unsigned char *mask);

#endif /* HMD_IO_INDEX_NDX_H */
