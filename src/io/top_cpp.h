/* The preprocessor of GROMACS topologies, as `gmx grompp` runs it before reading sections.
 *
 * Directives (a line whose first non-blank character is '#'): #include "file" (or <file>),
 * #define NAME [value], #undef NAME, #ifdef NAME, #ifndef NAME, #else, #endif. GROMACS's
 * preprocessor knows no others, and neither does this one (#if, #elif, ... are errors). A line
 * ending in '\' continues on the next one. In the other lines of active blocks, every whole-word
 * occurrence of a defined name that has a value is replaced by the value (one pass, no rescan).
 *
 * Include search, as grompp's: the folder of the file that has the #include, then each folder
 * of GMXLIB (colon-separated), then the installed force-field folder (Debian's
 * /usr/share/gromacs/top unless told otherwise). An absolute name is used as it is.
 *
 * Every error names the file and line (HMD_EDATA; HMD_ENOINPUT for a file that cannot be opened
 * or found, with the folders searched).
 */
#ifndef HMD_IO_TOP_CPP_H
#define HMD_IO_TOP_CPP_H

/* The installed GROMACS force fields (Debian's gromacs-data). */
#define HMD_GMX_SHARE_TOP "/usr/share/gromacs/top"

struct hmd_top_cpp;

struct hmd_top_cpp_options {
    const char *defines;   /* "-DNAME -DNAME=value ...", the mdp key `define`; NULL: none */
    const char *gmxlib;    /* colon-separated folders; NULL: the GMXLIB environment variable */
    const char *share_top; /* installed force fields; NULL: HMD_GMX_SHARE_TOP, "": none */
    /* io/topology.h hmd_topology_read only: the atoms of the structure file `structure` the
     * topology goes with, checked against [ molecules ] before the system is made (a topology
     * of a few lines can claim 10^9 atoms); 0: not known */
    long long natoms;
    const char *structure;
};

/* Opens the topology `path` (borrowed until close) with `opt` (NULL: all defaults). On success
 * *cpp is the reader; on failure *cpp is NULL and the status (HMD_ENOINPUT, HMD_EDATA for a bad
 * define, HMD_ENOMEM) has its message. */
int hmd_top_cpp_open(struct hmd_top_cpp **cpp, const char *path,
                     const struct hmd_top_cpp_options *opt);

/* The next line of active content after preprocessing, continuation lines joined and macros
 * replaced (comments are left in). Returns 1 with *line (valid until the next call; the caller
 * may modify it), *file (valid until close) and *lineno (1-based, where the line starts); 0 at
 * the end of the topology; a negative status on error (an unbalanced #ifdef at the end of a
 * file included). */
int hmd_top_cpp_next(struct hmd_top_cpp *cpp, char **line, const char **file, int *lineno);

/* Whether NAME is defined now (by -D, or by a #define read so far). */
int hmd_top_cpp_defined(const struct hmd_top_cpp *cpp, const char *name);

/* Closes every open file and frees the reader (NULL is fine). */
void hmd_top_cpp_close(struct hmd_top_cpp *cpp);

#endif /* HMD_IO_TOP_CPP_H */
