// The naive kernels whose order fp_analysis.model.reduction_orders re-creates: one thread per output, one fp32
// accumulator, the terms in index order, each rounded once (__fmaf_rn, __fadd_rn: no contraction left to nvcc).
// Terms are laid out terms-major (term t of every row together) so that a warp's loads are one transaction.

// out[z, i, j] = Σ_t a[z, t, i] · b[z, t, j], t = 0, 1, …, k−1, one fused multiply-add per term.
// a: (batch, k, m), b: (batch, k, n), out: (batch, m, n), all contiguous.
extern "C" __global__ void sequential_dot(const float* __restrict__ a, const float* __restrict__ b,
                                          float* __restrict__ out, long long batch, long long m, long long n,
                                          long long k) {
    const long long o = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (o >= batch * m * n) return;
    const long long j = o % n, i = (o / n) % m, z = o / (m * n);
    const float* ai = a + z * k * m + i;
    const float* bj = b + z * k * n + j;
    float acc = 0.0f;
    for (long long t = 0; t < k; ++t) acc = __fmaf_rn(ai[t * m], bj[t * n], acc);
    out[o] = acc;
}

// Each row's running sum (scan != 0: every prefix written, out (n, rows)) or its total (out (rows)), added from the
// first term to the last. x: (n, rows), contiguous.
extern "C" __global__ void sequential_rows(const float* __restrict__ x, float* __restrict__ out, long long rows,
                                           long long n, int scan) {
    const long long r = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (r >= rows) return;
    float acc = 0.0f;
    for (long long t = 0; t < n; ++t) {
        acc = __fadd_rn(acc, x[t * rows + r]);
        if (scan) out[t * rows + r] = acc;
    }
    if (!scan) out[r] = acc;
}
