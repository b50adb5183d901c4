#include "core/box.h"

#include <math.h>

#include "core/error.h"

static void cross(const double a[3], const double b[3], double c[3])
{
    c[0] = a[1] * b[2] - a[2] * b[1];
    c[1] = a[2] * b[0] - a[0] * b[2];
    c[2] = a[0] * b[1] - a[1] * b[0];
}

static double dot(const double a[3], const double b[3])
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static double det3(const double h[3][3])
{
    double c[3];
    cross(h[1], h[2], c);
    return dot(h[0], c);
}

int hmd_box_init(struct hmd_box *box, const double h[3][3], const bool periodic[3])
{
    for (int a = 0; a < 3; a++) {
        for (int b = 0; b < 3; b++) {
            if (!isfinite(h[a][b])) {
                return hmd_error_set(HMD_EDATA, "cell vector %c has a non-finite component",
                                     "abc"[a]);
            }
            box->h[a][b] = h[a][b];
        }
        box->periodic[a] = periodic[a];
    }
    double det = det3(h);
    if (det < 0) {
        return hmd_error_set(HMD_EDATA, "cell vectors a, b, c are left-handed (det = %g Å^3)", det);
    }
    if (det < 1e-6) {
        return hmd_error_set(HMD_EDATA, "cell is degenerate (volume %g Å^3)", det);
    }
    double dist[3];
    hmd_box_face_distances(box, dist);
    for (int d = 0; d < 3; d++) {
        if (dist[d] < 1e-3) {
            return hmd_error_set(HMD_EDATA, "cell is degenerate (thickness %g Å along %c)", dist[d],
                                 "abc"[d]);
        }
    }
    /* hinv = adj(h)/det; with rows as cell vectors, column d of hinv is (h[d+1] x h[d+2])/det. */
    for (int d = 0; d < 3; d++) {
        double c[3];
        cross(h[(d + 1) % 3], h[(d + 2) % 3], c);
        for (int k = 0; k < 3; k++) {
            box->hinv[k][d] = c[k] / det;
        }
    }
    return HMD_OK;
}

double hmd_box_volume(const struct hmd_box *box)
{
    return fabs(det3(box->h));
}

void hmd_box_face_distances(const struct hmd_box *box, double dist[3])
{
    double vol = hmd_box_volume(box);
    for (int d = 0; d < 3; d++) {
        double c[3];
        cross(box->h[(d + 1) % 3], box->h[(d + 2) % 3], c);
        dist[d] = vol / sqrt(dot(c, c));
    }
}

bool hmd_box_is_lower_triangular(const struct hmd_box *box)
{
    return box->h[0][1] == 0 && box->h[0][2] == 0 && box->h[1][2] == 0;
}

void hmd_box_lengths_angles(const struct hmd_box *box, double len[3], double ang[3])
{
    const double rad2deg = 180.0 / acos(-1.0);
    for (int d = 0; d < 3; d++) {
        len[d] = sqrt(dot(box->h[d], box->h[d]));
    }
    ang[0] = acos(dot(box->h[1], box->h[2]) / (len[1] * len[2])) * rad2deg;
    ang[1] = acos(dot(box->h[0], box->h[2]) / (len[0] * len[2])) * rad2deg;
    ang[2] = acos(dot(box->h[0], box->h[1]) / (len[0] * len[1])) * rad2deg;
}

void hmd_box_wrap(const struct hmd_box *box, double r[3], int image[3])
{
    /* Shift by whole cell vectors only, so an atom already inside keeps its exact bits. */
    double s[3];
    hmd_box_to_frac(box, r, s);
    for (int d = 0; d < 3; d++) {
        double n = box->periodic[d] ? floor(s[d]) : 0.0;
        if (n != 0.0) {
            for (int k = 0; k < 3; k++) {
                r[k] -= n * box->h[d][k];
            }
        }
        if (image) {
            image[d] = (int)n;
        }
    }
}
