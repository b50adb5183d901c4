/* The C API of libhalomd for bindings (python/halomd uses it through ctypes): open a DeePMD-kit
 * model once, evaluate it on one configuration after another. The model, the workspace and the
 * GPU context stay between calls; each call goes through the evaluator `halomd eval` uses
 * (md/evaluator.h), so the results are those of `halomd eval`, bit for bit.
 *
 * Units: Å, eV, eV/Å. Conventions are DeePMD-kit's: the virial is sum_k F_k (x) r_k over all
 * atoms and periodic images, row-major (eV).
 *
 * Errors: every function that can fail returns 0 or a negative status (-64 .. -78, the
 * sysexits codes negated: -65 bad data, -66 missing file, -69 unsupported, -78 bad parameter)
 * and records a message, hmd_api_error_message(). The API is for one thread at a time: the
 * message is per process. A CUDA failure inside a call ends the process, as it does for
 * `halomd`. Without mpirun the library runs as one rank.
 */
#ifndef HMD_API_HALOMD_H
#define HMD_API_HALOMD_H

#ifdef __cplusplus
extern "C" {
#endif

struct hmd_api_model;

/* Opens the model file `path` on `backend` ("auto", "cpu" or "cuda"; NULL = "auto") in
 * `precision` ("double" or "mixed", the latter on the GPU only; NULL = "double"), with
 * `nsettings` further run parameters as "key=value" strings (docs/parameters.md, e.g.
 * "model-compress=yes"; settings may be NULL when nsettings is 0). *out is the caller's
 * (hmd_api_model_close); NULL on error. */
int hmd_api_model_open(struct hmd_api_model **out, const char *path, const char *backend,
                       const char *precision, const char *const *settings, int nsettings);

/* Evaluates `natoms` >= 1 atoms at `positions` ([natoms][3], Å) of model types `types`
 * ([natoms], 0 <= type < hmd_api_model_ntypes) in the cell `cell` ([3][3], cell vectors as
 * rows, Å; NULL: not periodic) periodic along cell vector d where pbc[d] != 0 (pbc NULL: all
 * three). Writes the energy (eV), forces ([natoms][3], eV/Å), the virial ([9], eV) and, unless
 * NULL, atomic energies ([natoms], eV). Errors: -65 for a type out of range, a position that is
 * not finite, a degenerate or left-handed cell, a cell too small for the cut-off. */
int hmd_api_model_eval(struct hmd_api_model *m, int natoms, const double *positions,
                       const int *types, const double *cell, const int *pbc, double *energy,
                       double *forces, double *virial, double *atom_energies);

/* Number of types and the name of type t (the model's type map; NULL when t is out of range). */
int hmd_api_model_ntypes(const struct hmd_api_model *m);
const char *hmd_api_model_type_name(const struct hmd_api_model *m, int t);

/* Cut-off radius (Å). */
double hmd_api_model_rcut(const struct hmd_api_model *m);

/* The backend in use: "cpu", "cpu (auto: <why not cuda>)" or "cuda, <device>". */
const char *hmd_api_model_backend(const struct hmd_api_model *m);

/* Neighbours within rcut the last evaluation left out of the descriptors (more than sel). */
long hmd_api_model_dropped(const struct hmd_api_model *m);

/* Frees the model (NULL is fine). */
void hmd_api_model_close(struct hmd_api_model *m);

/* The message of the last failure ("" when none). */
const char *hmd_api_error_message(void);

/* "0.1.0 (commit)" of this library. */
const char *hmd_api_version(void);

#ifdef __cplusplus
}
#endif

#endif /* HMD_API_HALOMD_H */
