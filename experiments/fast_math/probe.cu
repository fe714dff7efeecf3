// CUDA's single-precision functions as a kernel author writes them, elementwise: built once plain and once with
// --use_fast_math, so experiments/fast_math/probe.py can hold what fast-math computes against fp64 and against the
// engine's emulation of it (fp_analysis.model.fast_math). One row per function.
extern "C" __global__ void fastprobe(const float* __restrict__ x, const float* __restrict__ y, float* __restrict__ out,
                                     long long n) {
    const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= n) return;
    const float v = x[i], w = y[i], a = fabsf(v) + 1e-30f;
    out[0 * n + i] = expf(v);
    out[1 * n + i] = tanhf(v);
    out[2 * n + i] = logf(a);
    out[3 * n + i] = rsqrtf(a);
    out[4 * n + i] = sqrtf(a);
    out[5 * n + i] = 1.0f / v;
    out[6 * n + i] = v / w;
    out[7 * n + i] = 1.0f / (1.0f + expf(-v));                  // sigmoid
    out[8 * n + i] = v / (1.0f + expf(-v));                     // SiLU
    out[9 * n + i] = erff(v);
    out[10 * n + i] = log1pf(expf(v));                          // softplus
    out[11 * n + i] = 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));  // GELU, erf form
    out[12 * n + i] = 0.5f * v * (1.0f + tanhf(0.79788456080286536f * (v + 0.044715f * v * v * v)));  // tanh form
    out[13 * n + i] = v * tanhf(log1pf(expf(v)));               // Mish
    out[14 * n + i] = expf(v - 4.0f) / w;                       // a softmax term, its max 4 taken off
}
