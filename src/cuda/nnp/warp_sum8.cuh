/* The warp sums of eight doubles given by every lane, for kernels that reduce several values per
 * slot over a warp (se_e2a_compressed.cuh, se_e2a_contract.cuh). Part of dp_eval.cu's
 * translation unit, in an anonymous namespace as the rest of it. */
#ifndef HMD_CUDA_WARP_SUM8_CUH
#define HMD_CUDA_WARP_SUM8_CUH

namespace
{

/* One butterfly step over lanes o apart: the lane with bit o set keeps values HALF.. of p[0..2
 * HALF), its partner the others; each adds the partner's share of what it keeps into p[0..HALF). */
template <int HALF> __device__ void warp_halve(double p[8], int o)
{
    const bool up = (threadIdx.x % 32) & o;
#pragma unroll
    for (int v = 0; v < HALF; v++) {
        const double keep = up ? p[v + HALF] : p[v], send = up ? p[v] : p[v + HALF];
        p[v] = keep + __shfl_xor_sync(0xffffffffu, send, o);
    }
}

/* The warp sums of eight values p[0..7] given by every lane, by a butterfly that halves what
 * each lane carries at each of its first three steps (9 shuffles instead of 40): returns in
 * p[0] the sum of value ((lane >> 4) & 1) * 4 + ((lane >> 3) & 1) * 2 + ((lane >> 2) & 1). */
__device__ int warp_sum8(double p[8])
{
    const int lane = threadIdx.x % 32;
    warp_halve<4>(p, 16);
    warp_halve<2>(p, 8);
    warp_halve<1>(p, 4);
    p[0] += __shfl_xor_sync(0xffffffffu, p[0], 2);
    p[0] += __shfl_xor_sync(0xffffffffu, p[0], 1);
    return ((lane >> 4) & 1) * 4 + ((lane >> 3) & 1) * 2 + ((lane >> 2) & 1);
}

} // namespace

#endif
