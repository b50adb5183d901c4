/* The halo test, one body for every transport, run as
 *   mpirun -np P test_halo_identity NX NY NZ [SCALE [TRANSPORT [ROUNDS]]]
 * (TRANSPORT: host, the default, or a device transport: self on one rank, mpi, nvshmem): on fresh
 * random atoms in a triclinic cell split NX x NY x NZ (scaled by SCALE: below 1, several pulses),
 * every ghost must be a true image of the atom it names, carry a value that encodes its origin
 * (global id and owner rank) through the forward halo, every image within the cut-off of a
 * subdomain must be present exactly once, and the reverse halo must return to each owner exactly
 * one contribution per ghost copy. With ROUNDS (device transports), forward and reverse then run
 * ROUNDS times more with no host in between, as one CUDA graph replayed where the transport can
 * be recorded (tests/gpu/halo_replay.h), every round's values checked. Also checks that
 * migration conserves the set of global ids. Exit code 0 on success on every rank, 77 (skipped)
 * for a device transport without a GPU. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm/comm.h"
#include "core/atoms.h"
#include "core/box.h"
#include "cuda/cuda_api.h"
#include "dd/borders.h"
#include "dd/collect.h"
#include "dd/domain.h"
#include "dd/migrate.h"
#include "halo/transport.h"
#include "nvshmem/nvshmem_api.h"
#if HMD_TEST_REPLAY
#include "halo_replay.h"
#endif

static int failures;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            if (failures++ < 10) {                                                                 \
                fprintf(stderr, "[rank %d] FAIL %s:%d: ", hmd_comm_rank(), __FILE__, __LINE__);    \
                fprintf(stderr, __VA_ARGS__);                                                      \
                fprintf(stderr, "\n");                                                             \
            }                                                                                      \
        }                                                                                          \
    } while (0)

static double urand(unsigned *s)
{
    *s = *s * 1664525u + 1013904223u;
    return (*s >> 8) / 16777216.0;
}

/* Is d an integer combination of the cell vectors (within tolerance)? */
static int is_lattice_vector(const struct hmd_box *box, const double d[3])
{
    double s[3];
    hmd_box_to_frac(box, d, s);
    for (int k = 0; k < 3; k++) {
        if (fabs(s[k] - round(s[k])) > 1e-9) {
            return 0;
        }
    }
    return 1;
}

/* Images of global atom g within `cutoff` (fractionally, per vector) of this subdomain: the
 * number the halo must have made (home copies excluded). */
static int expected_copies(const struct hmd_box *box, const struct hmd_domain *dd, const double *xg,
                           double cutoff, int home)
{
    double face[3], s0[3];
    hmd_box_face_distances(box, face);
    hmd_box_to_frac(box, xg, s0);
    int n = 0;
    for (int a = -9; a <= 9; a++) {
        for (int b = -9; b <= 9; b++) {
            for (int c = -9; c <= 9; c++) {
                const int img[3] = {a, b, c};
                int inside = 1, zero = a == 0 && b == 0 && c == 0;
                for (int d = 0; d < 3; d++) {
                    if (!box->periodic[d] && img[d] != 0) {
                        inside = 0;
                        break;
                    }
                    const double s = s0[d] + img[d], w = cutoff / face[d];
                    const bool split = dd->grid[d] > 1 || box->periodic[d];
                    const double lo = dd->lo[d] - (split ? w : 0), hi = dd->hi[d] + (split ? w : 0);
                    if (!(s >= lo && s < hi)) {
                        inside = 0;
                        break;
                    }
                }
                n += inside && !(zero && home);
            }
        }
    }
    return n;
}

/* The transport under test, and for a device transport the atoms on the device. */
struct under_test {
    struct hmd_halo_transport t;
    struct hmd_cuda_state *state; /* NULL: the host transport */
};

static int open_transport(struct under_test *u, const char *name)
{
    if (!strcmp(name, "host")) {
        return hmd_halo_transport_open_host(&u->t);
    }
    if (!strcmp(name, "nvshmem")) { /* positions and forces on the symmetric heap */
        int rc = hmd_nvshmem_init(NULL, 0);
        const struct hmd_cuda_heap heap = hmd_nvshmem_heap();
        rc = rc ? rc : hmd_cuda_state_create(&u->state, &heap);
        return rc ? rc : hmd_nvshmem_halo_open(&u->t);
    }
    int rc = hmd_cuda_state_create(&u->state, NULL);
    if (!rc && !strcmp(name, "self")) {
        rc = hmd_cuda_halo_open_self(&u->t);
    } else if (!rc && !strcmp(name, "mpi")) {
        rc = hmd_cuda_halo_open_mpi(&u->t, hmd_comm_cuda_aware());
    } else if (!rc) {
        rc = hmd_error_set(HMD_EUSAGE, "unknown transport %s", name);
    }
    return rc;
}

static int setup_transport(struct under_test *u, const struct hmd_halo_plan *plan,
                           const struct hmd_box *box, struct hmd_atoms *a)
{
    struct hmd_halo_arrays arrays = {plan, box, hmd_atoms_nall(a), a->x, a->f, NULL};
    if (u->state) {
        int rc = hmd_cuda_state_reserve(u->state, a->nlocal, hmd_atoms_nall(a));
        if (rc) {
            return rc;
        }
        const struct hmd_cuda_atoms d = hmd_cuda_state_atoms(u->state);
        arrays.x = d.x;
        arrays.f = d.f;
        arrays.stream = d.stream;
    }
    return hmd_halo_transport_setup(&u->t, &arrays);
}

/* forward over a->x, through the device for a device transport */
static int forward(struct under_test *u, struct hmd_atoms *a, const struct hmd_box *box)
{
    if (!u->state) {
        return hmd_halo_transport_forward(&u->t, a->x, box, NULL);
    }
    const unsigned x = HMD_FIELD_BIT(HMD_FIELD_X);
    const struct hmd_cuda_atoms d = hmd_cuda_state_atoms(u->state);
    int rc = hmd_cuda_state_upload(u->state, a, x);
    /* uploaded everywhere before any rank's forward: a GPU-initiated one stores into peers'
     * ghosts (the MD step orders this by its chain of halo exchanges; the test by a barrier) */
    rc = rc ? rc : hmd_cuda_state_download(u->state, a, x);
    hmd_comm_barrier();
    rc = rc ? rc : hmd_halo_transport_forward(&u->t, d.x, box, d.stream);
    return rc ? rc : hmd_cuda_state_download_all(u->state, a, x);
}

/* reverse over a->f (3 values per atom) */
static int reverse(struct under_test *u, struct hmd_atoms *a)
{
    if (!u->state) {
        return hmd_halo_transport_reverse(&u->t, a->f, 3, NULL);
    }
    const unsigned f = HMD_FIELD_BIT(HMD_FIELD_F);
    const struct hmd_cuda_atoms d = hmd_cuda_state_atoms(u->state);
    int rc = hmd_cuda_state_upload(u->state, a, f);
    rc = rc ? rc : hmd_halo_transport_reverse(&u->t, d.f, 3, d.stream);
    return rc ? rc : hmd_cuda_state_download(u->state, a, f);
}

int main(int argc, char **argv)
{
    hmd_comm_init(&argc, &argv);
    const char *transport = argc > 5 ? argv[5] : "host";
    if (strcmp(transport, "host") &&
        hmd_cuda_select_device(hmd_comm_local_rank(), NULL, NULL) != HMD_OK) {
        if (hmd_comm_rank() == 0) {
            printf("skipped: transport %s needs a GPU: %s\n", transport, hmd_error_msg());
        }
        hmd_comm_finalize();
        return 77;
    }
    const int grid[3] = {atoi(argv[1]), atoi(argv[2]), atoi(argv[3])};
    const double scale = argc > 4 ? atof(argv[4]) : 1.0; /* < 1: thin subdomains, pulses */
    const double h[3][3] = {{14.0 * scale, 0, 0},
                            {3.0 * scale, 13.0 * scale, 0},
                            {-2.0 * scale, 1.5 * scale, 12.5 * scale}};
    const bool pbc[3] = {true, true, true};
    const double cutoff = 5.0;
    struct hmd_box box;
    hmd_box_init(&box, h, pbc);
    const int natoms = 300;
    struct hmd_atoms all = {0}, mine = {0};
    struct hmd_domain dd;
    unsigned seed = 12345u;
    hmd_atoms_reserve(&all, natoms);
    for (int i = 0; i < natoms; i++) {
        const double s[3] = {urand(&seed), urand(&seed), urand(&seed)};
        hmd_box_to_cart(&box, s, all.x + 3 * i);
        all.v[3 * i] = all.v[3 * i + 1] = all.v[3 * i + 2] = 0.0;
        all.mass[i] = 1.0;
        all.type[i] = i % 3;
        all.id[i] = i;
    }
    all.nlocal = natoms;
    CHECK(hmd_domain_init(&dd, &box, hmd_comm_size(), hmd_comm_rank(), grid, cutoff) == 0,
          "domain");
    CHECK(hmd_collect_scatter(&all, natoms, &box, &dd, &mine) == 0, "scatter");
    struct hmd_halo_plan plan = {0};
    CHECK(hmd_dd_borders(&plan, &mine, &box, &dd, cutoff) == 0, "borders");
    struct under_test u = {0};
    CHECK(open_transport(&u, transport) == 0, "transport %s: %s", transport, hmd_error_msg());
    CHECK(setup_transport(&u, &plan, &box, &mine) == 0, "setup: %s", hmd_error_msg());
    const int nall = hmd_atoms_nall(&mine), nghost = mine.nghost;
    /* every ghost is an image of the atom whose id it carries, present as often as expected */
    int *seen = calloc(natoms, sizeof(int));
    for (int g = mine.nlocal; g < nall; g++) {
        const int64_t id = mine.id[g];
        double d[3];
        for (int k = 0; k < 3; k++) {
            d[k] = mine.x[3 * g + k] - all.x[3 * id + k];
        }
        CHECK(is_lattice_vector(&box, d), "ghost %d (id %lld) is not an image", g, (long long)id);
        CHECK(mine.type[g] == all.type[id], "ghost type");
        seen[id]++;
    }
    for (int i = 0; i < natoms; i++) {
        double s[3], xw[3];
        memcpy(xw, all.x + 3 * i, sizeof xw);
        hmd_box_wrap(&box, xw, NULL);
        hmd_box_to_frac(&box, xw, s);
        const int home = hmd_domain_owner(&dd, s) == dd.rank;
        const int want = expected_copies(&box, &dd, xw, cutoff, home);
        CHECK(seen[i] == want, "atom %d: %d ghost copies, expected %d", i, seen[i], want);
    }
    /* forward: home positions encode (id, owner rank); a ghost must read its origin back */
    for (int k = 0; k < mine.nlocal; k++) {
        const double s[3] = {0.001 * (double)mine.id[k], 0.25 * hmd_comm_rank(), 0.0};
        hmd_box_to_cart(&box, s, mine.x + 3 * k);
    }
    CHECK(forward(&u, &mine, &box) == 0, "forward: %s", hmd_error_msg());
    for (int g = mine.nlocal; g < nall; g++) {
        double s[3];
        hmd_box_to_frac(&box, mine.x + 3 * g, s);
        const double id = (s[0] - round(s[0] - 0.001 * mine.id[g])) / 0.001;
        CHECK(fabs(id - mine.id[g]) < 1e-6, "ghost %d carries id %g, expected %lld", g, id,
              (long long)mine.id[g]);
        double s2[3];
        double xw[3];
        memcpy(xw, all.x + 3 * mine.id[g], sizeof xw);
        hmd_box_wrap(&box, xw, NULL);
        hmd_box_to_frac(&box, xw, s2);
        const int owner = hmd_domain_owner(&dd, s2);
        const double frac_rank = s[1] - floor(s[1] + 1e-9);
        CHECK(fabs(frac_rank - fmod(0.25 * owner, 1.0)) < 1e-9, "ghost %d: origin rank", g);
    }
    /* reverse: each ghost sends 1 (and its id); owners must get their copy counts */
    double *f = mine.f;
    memset(f, 0, sizeof(double) * 3 * nall);
    for (int g = mine.nlocal; g < nall; g++) {
        f[3 * g] = 1.0;
        f[3 * g + 1] = (double)mine.id[g];
    }
    CHECK(reverse(&u, &mine) == 0, "reverse: %s", hmd_error_msg());
    int64_t *copies = calloc(natoms, sizeof(int64_t));
    for (int i = 0; i < natoms; i++) {
        copies[i] = seen[i];
    }
    hmd_comm_sum_i64(copies, natoms);
    for (int k = 0; k < mine.nlocal; k++) {
        const int64_t id = mine.id[k];
        CHECK(fabs(f[3 * k] - copies[id]) < 1e-9, "atom %lld got %g contributions, %lld copies",
              (long long)id, f[3 * k], (long long)copies[id]);
        CHECK(fabs(f[3 * k + 1] - (double)copies[id] * id) < 1e-6, "reverse carried other ids");
    }
    const int rounds = argc > 6 ? atoi(argv[6]) : 0;
#if HMD_TEST_REPLAY
    if (u.state && rounds > 0) {
        double *mine_copies = malloc(sizeof(double) * (mine.nlocal > 0 ? mine.nlocal : 1));
        for (int k = 0; k < mine.nlocal; k++) {
            mine_copies[k] = (double)copies[mine.id[k]];
        }
        long long wrong = 0;
        CHECK(hmd_test_halo_replay(&u.t, u.state, &box, mine_copies, rounds, &wrong) == 0,
              "replay: %s", hmd_error_msg());
        CHECK(wrong == 0, "replay: %lld values wrong in %d rounds", wrong, rounds);
        free(mine_copies);
    }
#else
    CHECK(rounds == 0, "ROUNDS needs a build with CUDA");
#endif
    /* migration: move every atom by a random step and check the ids are all still there */
    for (int k = 0; k < mine.nlocal; k++) {
        memcpy(mine.x + 3 * k, all.x + 3 * mine.id[k], sizeof(double) * 3);
        for (int q = 0; q < 3; q++) {
            mine.x[3 * k + q] += 3.0 * (urand(&seed) - 0.5);
        }
        hmd_box_wrap(&box, mine.x + 3 * k, NULL);
    }
    mine.nghost = 0;
    CHECK(hmd_dd_migrate(&mine, &box, &dd) == 0, "migrate");
    int64_t *present = calloc(natoms, sizeof(int64_t));
    for (int k = 0; k < mine.nlocal; k++) {
        double s[3];
        hmd_box_to_frac(&box, mine.x + 3 * k, s);
        CHECK(hmd_domain_owner(&dd, s) == dd.rank, "atom %lld not on its owner after migrate",
              (long long)mine.id[k]);
        present[mine.id[k]]++;
    }
    hmd_comm_sum_i64(present, natoms);
    for (int i = 0; i < natoms; i++) {
        CHECK(present[i] == 1, "id %d present %lld times after migrate", i, (long long)present[i]);
    }
    int bad = failures;
    hmd_comm_max_int(&bad, 1);
    if (hmd_comm_rank() == 0) {
        printf("%s: transport %s, grid %d x %d x %d, cell scale %g, %d ghosts on rank 0 in %d "
               "swaps, %d rounds replayed\n",
               bad ? "FAIL" : "ok", transport, dd.grid[0], dd.grid[1], dd.grid[2], scale, nghost,
               plan.nswap, rounds);
    }
    free(seen);
    hmd_halo_transport_close(&u.t);
    hmd_cuda_state_destroy(u.state);
    if (!strcmp(transport, "nvshmem")) {
        hmd_nvshmem_finalize();
    }
    free(copies);
    free(present);
    hmd_halo_plan_free(&plan);
    hmd_domain_free(&dd);
    hmd_atoms_free(&all);
    hmd_atoms_free(&mine);
    hmd_comm_finalize();
    return bad ? 1 : 0;
}
