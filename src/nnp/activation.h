/* Activation functions of DeePMD-kit networks and their derivatives, written once for the CPU
 * reference and the CUDA kernels (HMD_HD). Definitions follow DeePMD-kit's PyTorch backend
 * (deepmd/pt/utils/utils.py::ActivationFn), which produced our goldens:
 *   tanh, relu, relu6, softplus (torch threshold 20: x above it is returned as is), sigmoid,
 *   silu, gelu and gelu_tf (both the tanh approximation), silut:T / custom_silu:T (silu below
 *   the threshold T, default 3; tanh(slope (x - T)) + silu(T) above, slope = silu'(T)),
 *   none / linear.
 *
 * For the backward pass a layer keeps one value per output: the activation's output for the
 * functions whose derivative follows from it (tanh, sigmoid, relu, relu6, softplus), its input
 * otherwise. hmd_act_keeps_output() says which.
 */
#ifndef HMD_NNP_ACTIVATION_H
#define HMD_NNP_ACTIVATION_H

#include <math.h>
#include <stdbool.h>

#ifdef __CUDACC__
#define HMD_HD __host__ __device__
#else
#define HMD_HD
#endif

enum hmd_activation {
    HMD_ACT_NONE,
    HMD_ACT_TANH,
    HMD_ACT_RELU,
    HMD_ACT_RELU6,
    HMD_ACT_SOFTPLUS,
    HMD_ACT_SIGMOID,
    HMD_ACT_SILU,
    HMD_ACT_GELU,
    HMD_ACT_SILUT,
};

/* Parameters of silut (threshold T, slope = silu'(T), shift = silu(T)); unused otherwise. */
struct hmd_act_silut {
    double threshold;
    double slope;
    double shift;
};

HMD_HD static inline double hmd_sigmoid(double x)
{
    return 1.0 / (1.0 + exp(-x));
}

/* True when the derivative is computed from the activation's output rather than its input. */
HMD_HD static inline bool hmd_act_keeps_output(enum hmd_activation act)
{
    return act == HMD_ACT_TANH || act == HMD_ACT_SIGMOID || act == HMD_ACT_RELU ||
           act == HMD_ACT_RELU6 || act == HMD_ACT_SOFTPLUS;
}

HMD_HD static inline double hmd_act(enum hmd_activation act, const struct hmd_act_silut *st,
                                    double x)
{
    const double sqrt_2_over_pi = 0.79788456080286535588;
    switch (act) {
    case HMD_ACT_NONE:
        return x;
    case HMD_ACT_TANH:
        return tanh(x);
    case HMD_ACT_RELU:
        return x > 0 ? x : 0;
    case HMD_ACT_RELU6:
        return x < 0 ? 0 : (x > 6 ? 6 : x);
    case HMD_ACT_SOFTPLUS:
        return x > 20 ? x : log1p(exp(x));
    case HMD_ACT_SIGMOID:
        return hmd_sigmoid(x);
    case HMD_ACT_SILU:
        return x * hmd_sigmoid(x);
    case HMD_ACT_GELU:
        return 0.5 * x * (1 + tanh(sqrt_2_over_pi * (x + 0.044715 * x * x * x)));
    case HMD_ACT_SILUT:
        return x >= st->threshold ? tanh(st->slope * (x - st->threshold)) + st->shift
                                  : x * hmd_sigmoid(x);
    }
    return x;
}

/* Derivative d act / d x, from `kept` = the output (hmd_act_keeps_output) or the input. */
HMD_HD static inline double hmd_act_grad(enum hmd_activation act, const struct hmd_act_silut *st,
                                         double kept)
{
    const double sqrt_2_over_pi = 0.79788456080286535588;
    switch (act) {
    case HMD_ACT_NONE:
        return 1;
    case HMD_ACT_TANH:
        return 1 - kept * kept;
    case HMD_ACT_RELU:
        return kept > 0 ? 1 : 0;
    case HMD_ACT_RELU6:
        return (kept > 0 && kept < 6) ? 1 : 0;
    case HMD_ACT_SOFTPLUS:
        return kept > 20 ? 1 : -expm1(-kept); /* sigmoid(x) = 1 - e^-y */
    case HMD_ACT_SIGMOID:
        return kept * (1 - kept);
    case HMD_ACT_SILU: {
        double s = hmd_sigmoid(kept);
        return s * (1 + kept * (1 - s));
    }
    case HMD_ACT_GELU: {
        double x = kept, u = sqrt_2_over_pi * (x + 0.044715 * x * x * x);
        double t = tanh(u);
        return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * sqrt_2_over_pi * (1 + 3 * 0.044715 * x * x);
    }
    case HMD_ACT_SILUT: {
        if (kept >= st->threshold) {
            double t = tanh(st->slope * (kept - st->threshold));
            return st->slope * (1 - t * t);
        }
        double s = hmd_sigmoid(kept);
        return s * (1 + kept * (1 - s));
    }
    }
    return 1;
}

#endif /* HMD_NNP_ACTIVATION_H */
