#include "ff/nnp_group.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "io/index_ndx.h"

/* resid A or A-B into [lo, hi]; false when malformed. */
static bool resid_range(const char *tok, long *lo, long *hi)
{
    char *end;
    errno = 0;
    *lo = strtol(tok, &end, 10);
    *hi = *lo;
    if (*end == '-') {
        *hi = strtol(end + 1, &end, 10);
    }
    return end != tok && !*end && !errno && *lo <= *hi;
}

/* The system's residue numbers into seq[natoms]: 1, 2, ... in topology order, a new residue at
 * every molecule's first atom and wherever [ atoms ]' resnr changes within a molecule (the
 * numbering of a .gro file that grompp or editconf writes). */
static void residue_sequence(const struct hmd_topology *top, int *seq)
{
    int nres = 0;
    for (int b = 0; b < top->nblocks; b++) {
        const struct hmd_top_molblock *mb = &top->block[b];
        for (int c = 0; c < mb->count; c++) {
            for (int a = 0; a < mb->natoms; a++) {
                const int g = mb->first + c * mb->natoms + a;
                nres += a == 0 || top->resnr[g] != top->resnr[g - 1];
                seq[g] = nres;
            }
        }
    }
}

/* `resname ...` or `resid ...` (words[0]) over the topology's atoms. */
static int by_residue(char *rest, bool names, const char *spec, const char *where,
                      const struct hmd_topology *top, unsigned char *group)
{
    int nwords = 0, *seq = names ? NULL : malloc(sizeof *seq * ((size_t)top->natoms + 1));
    if (!names && !seq) {
        return hmd_error_set(HMD_ENOMEM, "out of memory for the nnp-group");
    }
    if (seq) {
        residue_sequence(top, seq);
    }
    for (char *tok = strtok(rest, " \t"); tok; tok = strtok(NULL, " \t")) {
        long lo = 0, hi = 0;
        if (!names && !resid_range(tok, &lo, &hi)) {
            free(seq);
            return hmd_error_set(HMD_ECONFIG,
                                 "nnp-group = %s (%s): '%s' is not a residue number or range "
                                 "A-B",
                                 spec, where, tok);
        }
        for (int i = 0; i < top->natoms; i++) {
            const bool hit = names ? !strcmp(top->resname[i], tok) : seq[i] >= lo && seq[i] <= hi;
            group[i] |= hit;
        }
        nwords++;
    }
    free(seq);
    if (!nwords) {
        return hmd_error_set(HMD_ECONFIG, "nnp-group = %s (%s): name the residues after %s", spec,
                             where, names ? "resname" : "resid");
    }
    return HMD_OK;
}

int hmd_nnp_group_select(const char *spec, const char *where, const struct hmd_topology *top,
                         const char *ndx, unsigned char *group)
{
    char text[1024];
    snprintf(text, sizeof text, "%s", spec);
    memset(group, 0, (size_t)top->natoms);
    char *first = strtok(text, " \t");
    char *rest = first ? first + strlen(first) + 1 : NULL;
    if (rest && rest > text + strlen(spec)) {
        rest = text + strlen(spec); /* the first word was the last */
    }
    int rc;
    if (first && (!strcmp(first, "resname") || !strcmp(first, "resid"))) {
        rc = by_residue(rest, !strcmp(first, "resname"), spec, where, top, group);
    } else if (!ndx) {
        return hmd_error_set(HMD_ECONFIG,
                             "nnp-group = %s (%s) names an index group, but no index file was "
                             "given: add -n index.ndx, or select residues with `resname NAME` "
                             "or `resid A-B`",
                             spec, where);
    } else {
        rc = hmd_index_ndx_group(ndx, spec, top->natoms, group);
    }
    if (!rc && hmd_nnp_group_count(group, top->natoms) == 0) {
        rc = hmd_error_set(HMD_ECONFIG, "nnp-group = %s (%s) selects no atom of the topology", spec,
                           where);
    }
    return rc;
}

int hmd_nnp_group_count(const unsigned char *group, int natoms)
{
    int n = 0;
    for (int i = 0; i < natoms; i++) {
        n += group[i] != 0;
    }
    return n;
}
