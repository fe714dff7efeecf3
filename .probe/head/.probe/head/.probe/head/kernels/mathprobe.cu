// Evaluates CUDA's single-precision math functions elementwise, so a build with and without
// --use_fast_math shows which of them fast-math changes (experiments/gpu_validation.py).
extern "C" __global__ void mathprobe(const float* __restrict__ x, float* __restrict__ out, long long n) {
    const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= n) return;
    const float v = x[i];
    out[0 * n + i] = erff(v);
    out[1 * n + i] = tanhf(v);
    out[2 * n + i] = expf(v);
    out[3 * n + i] = 1.0f / v;
    out[4 * n + i] = 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
    out[5 * n + i] = 0.5f * v * (1.0f + tanhf(0.79788456080286536f * (v + 0.044715f * v * v * v)));
}
