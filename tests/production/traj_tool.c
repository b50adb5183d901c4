/* Helper of tests/production/test_traj_readback.py: writes the same three frames of a known
 * system as extended XYZ, H5MD and XTC, so that the test can read them back with ASE and
 * MDAnalysis and compare with the formulas below (repeated in the test).
 *
 *   traj_tool DIR XTC_PRECISION XTC_GROUPS H5MD_GROUPS
 *
 * System: 30 atoms, 8 water molecules (resname SOL: O H H) then 6 sodium ions (resname NA);
 * frame f has the cell rows
 * {20 + f, 0, 0}, {2, 19, 0}, {-1, 1.5, 18} (Å) and
 *   x[i][d] = fmod(1.37 i + 2.11 d + 0.5 f, 15) + 1/12   (Å)
 *   v[i][d] = (i - 0.5 d + f) / 7                         (Å/ps)
 *   F[i][d] = (i + d - f) / 3                             (eV/Å)
 * at step 10 f and time 0.005 f ps. Writes DIR/t.xyz, DIR/t.h5md, DIR/t.xtc.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/elements.h"
#include "core/error.h"
#include "io/out_groups.h"
#include "io/structure.h"
#include "io/traj_h5md.h"
#include "io/traj_xtc.h"
#include "io/traj_xyz.h"

#define N 30

static int fail(const char *what)
{
    fprintf(stderr, "traj_tool: %s: %s\n", what, hmd_error_msg());
    return 1;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: traj_tool DIR XTC_PRECISION XTC_GROUPS H5MD_GROUPS\n");
        return 2;
    }
    struct hmd_frame fr;
    if (hmd_frame_alloc(&fr, N) || !(fr.resname = calloc(N, sizeof *fr.resname))) {
        return 2;
    }
    int species[N];
    for (int i = 0; i < N; i++) {
        const bool ion = i >= 24;
        snprintf(fr.element[i], sizeof fr.element[i], "%s", ion ? "Na" : i % 3 ? "H" : "O");
        snprintf(fr.resname[i], sizeof fr.resname[i], "%s", ion ? "NA" : "SOL");
        species[i] = hmd_element_number(fr.element[i]);
    }
    int *xsel = NULL, *hsel = NULL, nx = 0, nh = 0;
    if (hmd_out_group_select(argv[3], "compressed-x-grps", &fr, &xsel, &nx) ||
        hmd_out_group_select(argv[4], "h5md-grps", &fr, &hsel, &nh)) {
        return fail("groups");
    }
    char path[3][4096];
    const char *ext[3] = {"xyz", "h5md", "xtc"};
    for (int k = 0; k < 3; k++) {
        snprintf(path[k], sizeof path[k], "%s/t.%s", argv[1], ext[k]);
    }
    const bool pbc[3] = {true, true, true};
    struct hmd_box box;
    hmd_box_init(&box, (double[3][3]){{20, 0, 0}, {2, 19, 0}, {-1, 1.5, 18}}, pbc);
    struct hmd_xyz_traj *xyz;
    struct hmd_h5md_traj *h5;
    struct hmd_xtc_traj *xtc;
    if (hmd_xyz_traj_open(path[0], &xyz, NULL, 0)) {
        return fail("xyz");
    }
    if (hmd_h5md_traj_open(path[1], &h5, N, hsel, nh, "all", species,
                           HMD_H5MD_POSITION | HMD_H5MD_VELOCITY | HMD_H5MD_FORCE, &box, "test",
                           NULL, 0)) {
        return fail("h5md");
    }
    if (hmd_xtc_traj_open(path[2], &xtc, N, xsel, nx, atof(argv[2]), NULL, 0)) {
        return fail("xtc");
    }
    double x[3 * N], v[3 * N], f[3 * N];
    for (int fi = 0; fi < 3; fi++) {
        const double h[3][3] = {{20 + fi, 0, 0}, {2, 19, 0}, {-1, 1.5, 18}};
        hmd_box_init(&box, h, pbc);
        for (int i = 0; i < N; i++) {
            for (int d = 0; d < 3; d++) {
                x[3 * i + d] = fmod(1.37 * i + 2.11 * d + 0.5 * fi, 15) + 1.0 / 12;
                v[3 * i + d] = (i - 0.5 * d + fi) / 7.0;
                f[3 * i + d] = (i + d - fi) / 3.0;
            }
        }
        const int64_t step = 10 * fi;
        const double t = 0.005 * fi;
        if (hmd_xyz_traj_write_frame(xyz, N, (const char(*)[4])fr.element, x, v, f, &box, step, t,
                                     -1.5 * fi) ||
            hmd_h5md_traj_write_frame(h5, x, v, f, &box, step, t) ||
            hmd_xtc_traj_write_frame(xtc, x, &box, step, t)) {
            return fail("frame");
        }
    }
    if (hmd_xyz_traj_close(xyz) || hmd_h5md_traj_close(h5) || hmd_xtc_traj_close(xtc)) {
        return fail("close");
    }
    free(xsel);
    free(hsel);
    hmd_frame_free(&fr);
    return 0;
}
