import csv, os, re

ROOT = "/work/heldout_rare"
# (folder, solution, expected, reason)
T = []


def add(folder, sol, exp, reason):
    assert os.path.isfile(f"{ROOT}/{folder}/{sol}.py"), (folder, sol)
    T.append((folder, sol, exp, reason))


# measured bug sizes from MEASURED.txt (max over the two seeds): float64 |ModelNew - Model| and the float32 rounding of the Model
meas = {}
cur = None
for line in open(f"{ROOT}/MEASURED.txt"):
    if "params=" in line:
        cur = line.split()[0][:-3]
        meas[cur] = []
    elif "d64=" in line:
        d = dict(re.findall(r"(?<![/\w])(d64|e32|kb1e-2)=(\S+)", line))
        meas[cur].append(d)


def m(folder, sol):
    ls = meas[f"{folder}/{sol}"]
    d64 = max(float(x["d64"]) for x in ls)
    e32 = max(float(x["e32"]) for x in ls)
    kb = all(x["kb1e-2"] == "pass" for x in ls)
    return "max|diff| fp64 %.2g vs fp32 rounding of Model %.2g%s" % (
        d64,
        e32,
        "; passes KernelBench allclose(1e-2)" if kb else "",
    )


def fam(folder, legit, bugs, extra=()):
    add(folder, "copy", "E", "exact copy")
    for sol, exp, reason in legit:
        if exp.startswith("P:candidate_"):
            reason = reason + "; deliberately approximate: " + m(folder, sol)
        add(folder, sol, exp, reason)
    for sol, reason in bugs:
        add(folder, sol, "B", reason + "; " + m(folder, sol))
    for sol, exp, reason in extra:
        add(folder, sol, exp, reason)


fam(
    "interp_bilinear",
    [
        (
            "legit_gather",
            "P:accumulation_order",
            "bilinear as two separable passes of gathered neighbours, source coordinates in fp64",
        )
    ],
    [
        ("bug_align_corners", "align_corners flipped to True"),
        (
            "bug_border",
            "negative source coordinate not clamped at 0: first output row/column reads input index -1 (wraps to the last row/column)",
        ),
    ],
)
fam(
    "interp_bicubic",
    [
        (
            "legit_gather",
            "P:accumulation_order",
            "bicubic as separable cubic convolution (A=-0.75) of four clamped taps, rows then columns",
        )
    ],
    [
        ("bug_coeff", "cubic convolution coefficient A=-0.5 instead of PyTorch's -0.75"),
        ("bug_align_corners", "align_corners flipped to False"),
    ],
)
fam(
    "interp_nearest",
    [
        (
            "legit_tf32",
            "P:candidate_tf32",
            "nearest gather first (exact) then the 1x1 conv as einsum on TF32-masked operands",
        )
    ],
    [
        ("bug_exact", "nearest-exact (half-pixel, floor((i+0.5)*in/out)) instead of legacy nearest floor(i*in/out)"),
        ("bug_scale", "source index floor(i*(in-1)/(out-1)) (align-corners style) instead of floor(i*in/out)"),
    ],
)
fam(
    "pixel_shuffle",
    [
        (
            "legit_manual",
            "P:accumulation_order",
            "pixel_unshuffle/pixel_shuffle by view+permute, 3x3 conv by im2col + matmul",
        )
    ],
    [
        (
            "bug_shuffle_order",
            "pixel_shuffle permute swaps the two sub-pixel factors (0,1,4,3,5,2 instead of 0,1,4,2,5,3)",
        ),
        (
            "bug_unshuffle_order",
            "pixel_unshuffle puts the sub-pixel factors before the channel (r*r*C order instead of C*r*r)",
        ),
    ],
)
fam(
    "embedding",
    [
        ("legit_onehot", "P:accumulation_order", "bag = one-hot counts @ table / L, then addmm"),
        (
            "legit_index_select",
            "P:accumulation_order",
            "index_select rows, sequence summed in chunks of 16, linear as multiply-and-sum",
        ),
    ],
    [
        ("bug_drop_last", "last token of each bag left out of the sum (still divided by L)"),
        ("bug_index_shift", "looks up weight[idx - 1] (1-based index conversion)"),
    ],
)
fam(
    "segment_softmax",
    [
        (
            "legit_onehot",
            "P:accumulation_order",
            "segment sums and gather-back as one-hot einsum contractions (bit-identical to the Model in fp32 on CPU)",
        )
    ],
    [
        ("bug_scatter_overwrite", "scatter (overwrite) instead of scatter_add for the segment sums"),
        ("bug_lastcol", "last element of each row left out of its segment's sum"),
    ],
)
fam(
    "topk",
    [("legit_sort", "P:accumulation_order", "linear as multiply-and-sum, top-k as descending sort sliced to k")],
    [
        ("bug_kth", "k-th value replaced by the (k+1)-th (off by one in the last kept slot)"),
        ("bug_order", "top-k values returned in ascending order instead of descending"),
    ],
)
fam(
    "adaptive_pool",
    [("legit_windows", "P:accumulation_order", "explicit windows [floor(i*H/o), ceil((i+1)*H/o)), sum/count and amax")],
    [
        (
            "bug_end_floor",
            "window end floor((i+1)*H/o) instead of ceil: windows lose their overlapping last row/column",
        ),
        ("bug_avg_count", "average divides by a constant (H//oh)*(W//ow) instead of each window's size"),
    ],
)
fam(
    "maxpool_dilation",
    [
        (
            "legit_unfold",
            "P:accumulation_order",
            "conv by im2col + matmul; dilated ceil_mode pooling by -inf padding + unfold",
        )
    ],
    [
        (
            "bug_zero_pad",
            "pooling pads with 0 instead of -inf: windows over the border whose real values are all negative give 0",
        ),
        ("bug_conv_bias", "conv bias missing on the last output channel"),
    ],
)
fam(
    "convtranspose1d",
    [
        (
            "legit_conv1d",
            "P:accumulation_order",
            "zero-insertion + padding + grouped conv1d with flipped, regrouped weights",
        ),
        ("legit_tf32", "P:candidate_tf32", "F.conv_transpose1d on TF32-masked input and weight"),
    ],
    [
        (
            "bug_output_padding",
            "output_padding dropped from the computation; the extra last position filled with the bias only (it should get input contributions)",
        ),
        ("bug_noflip", "equivalent-convolution weights not flipped along the kernel axis"),
    ],
)
fam(
    "conv1d_dilated",
    [
        ("legit_unfold", "P:accumulation_order", "pad + unfold with dilation, einsum with the weight"),
        ("legit_bf16", "P:candidate_bf16", "conv1d with input, weight and bias in bf16, output cast back"),
    ],
    [
        ("bug_pad_shift", "padding (p-1, p+1) instead of (p, p): output shifted by one input sample"),
        ("bug_bias_last", "bias missing on the last output channel"),
    ],
)
fam(
    "var_std_tuple",
    [
        ("legit_twopass", "P:accumulation_order", "two-pass variance by hand, both tuple outputs"),
        ("legit_welford", "P:formula", "Chan/Welford parallel combination of per-chunk (count, mean, M2)"),
    ],
    [
        ("bug_var_biased", "first output (variance) divides by N instead of N-1"),
        ("bug_std_unbiased", "second output (std) uses N-1 instead of N"),
    ],
)
fam(
    "norm_p3",
    [("legit_chunked", "P:accumulation_order", "|x|^3 as x*x*|x|, summed in chunks of 128, cube root by pow(1/3)")],
    [
        ("bug_root", "root exponent hard-coded 0.333 instead of 1/3 (a per-row scale error of about 0.2%)"),
        ("bug_p2", "normalises by the L2 norm (F.normalize default p) instead of L3"),
    ],
)
fam(
    "logcumsumexp",
    [
        (
            "legit_blocked",
            "P:formula",
            "blocked scan: stable local logcumsumexp per block of 64, combined with the carry by logaddexp",
        )
    ],
    [
        ("bug_carry", "carry taken from the second-to-last element of the previous block"),
        (
            "bug_maxdim",
            "stabilising max taken over dim 0 (per column) instead of per row, so the shift does not cancel",
        ),
    ],
)
fam(
    "cumsum_reverse",
    [
        ("legit_subtract", "P:formula", "suffix sum as total - prefix sum + x (cancellation at the tail)"),
        ("legit_tril", "P:accumulation_order", "suffix sum as matmul with a lower-triangular ones matrix"),
    ],
    [
        ("bug_exclusive", "total - cumsum without + x: exclusive instead of inclusive suffix sum"),
        ("bug_noflip", "final flip missing: returns cumsum of the flipped input"),
    ],
)
fam(
    "einsum_attention",
    [
        ("legit_bmm", "P:accumulation_order", "bmm ('bij,bjk->bik') on flattened heads, softmax written out"),
        ("legit_tf32", "P:candidate_tf32", "both contractions on TF32-masked operands (q, k, then p and v)"),
    ],
    [
        ("bug_scale_seq", "scale 1/sqrt(seq_len) instead of 1/sqrt(head_dim) (64 vs 32)"),
        ("bug_softmax_dim", "softmax over the query axis (dim -2) instead of the key axis"),
    ],
)
fam(
    "mha",
    [
        ("legit_byhand", "P:accumulation_order", "MultiheadAttention by hand from its parameters, softmax written out"),
        ("legit_tf32", "P:candidate_tf32", "same by hand with every matmul on TF32-masked operands"),
    ],
    [
        ("bug_scale", "scores scaled by 1/sqrt(embed_dim) instead of 1/sqrt(head_dim)"),
        ("bug_heads", "heads split with reshape(b, h, s, hd) instead of view(b, s, h, hd).transpose(1, 2)"),
    ],
)
fam(
    "sdpa_causal",
    [
        (
            "legit_online",
            "P:formula",
            "flash-style online softmax over key blocks of 16 with running max and rescaling",
        ),
        ("legit_bf16", "P:candidate_bf16", "F.scaled_dot_product_attention on bf16 q, k, v, cast back"),
    ],
    [
        ("bug_mask_future", "causal mask tril(diagonal=1): each query also sees the next (future) key"),
        ("bug_scale", "scale 1/sqrt(d+1) instead of 1/sqrt(d)"),
    ],
)
fam(
    "cdist",
    [
        ("legit_direct", "P:formula", "explicit differences, squared and summed, sqrt"),
        ("legit_mm", "P:formula", "|x|^2 + |y|^2 - 2 x.y via baddbmm, clamped at 0, sqrt"),
    ],
    [
        ("bug_lastfeat", "last feature left out of the distance (loop bound off by one)"),
        ("bug_mean", "mean of squared differences instead of sum (RMS distance)"),
    ],
)
fam(
    "cosine_baddbmm",
    [("legit_cosine", "P:formula", "a.b on raw inputs via einsum, divided by the product of clamped norms afterwards")],
    [
        ("bug_alpha_beta", "alpha and beta of baddbmm swapped"),
        ("bug_norm_dim", "b normalised along dim -1 (its columns' axis) instead of dim 1 (the feature axis)"),
    ],
)
fam(
    "where_mask",
    [("legit_keepmask", "P:formula", "leaky_relu, exponentials multiplied by the keep mask, max over all positions")],
    [
        ("bug_fill_zero", "masked positions filled with 0 instead of -inf"),
        ("bug_mask_lastcol", "mask not applied to the last column"),
    ],
)
fam(
    "layernorm2d",
    [("legit_onepass", "P:formula", "one pass: var = E[x^2] - E[x]^2 over the last two dims, rsqrt, affine")],
    [
        ("bug_lastdim", "statistics over the last dim only instead of the last two"),
        ("bug_eps", "eps 1e-4 instead of 1e-5"),
    ],
)
fam(
    "glu_prelu_softmin",
    [
        (
            "legit_byhand",
            "P:accumulation_order",
            "linear as multiply-and-sum, GLU, PReLU by where, softmin as softmax of -x written out",
        ),
        ("legit_tf32", "P:candidate_tf32", "same with the linear on TF32-masked operands"),
    ],
    [
        ("bug_glu_swap", "GLU halves swapped: sigmoid applied to the first half"),
        ("bug_prelu_shared", "PReLU uses weight[0] for every channel (weights are randomised per channel)"),
    ],
)
fam(
    "matmul4d",
    [
        ("legit_splitk", "P:accumulation_order", "split-K: four einsum partial contractions summed"),
        ("legit_tf32", "P:candidate_tf32", "flattened 2-D mm on TF32-masked operands"),
    ],
    [
        ("bug_view", "input flattened after transposing H and S, result viewed back as (B, H, S, E)"),
        ("bug_lastk", "last index of the reduced dimension left out"),
    ],
)
fam(
    "diag_embed",
    [
        (
            "legit_broadcast",
            "P:accumulation_order",
            "A diag(d) as column scaling a * d[:, None, :], one matmul (bit-identical to the Model in fp32 on CPU)",
        ),
        ("legit_bf16", "P:candidate_bf16", "both matmuls and the diagonal in bf16, cast back"),
    ],
    [
        ("bug_rows", "scales the rows (d[:, :, None]) instead of the columns"),
        ("bug_lastdiag", "last diagonal entry left out (loop bound off by one)"),
    ],
)
add(
    "dropout_train",
    "copy",
    "X",
    "Model applies F.dropout(training=True): nondeterministic; the tool should name dropout / nondeterminism",
)
add(
    "dropout_train",
    "legit_mask",
    "X",
    "Model is nondeterministic (dropout in training mode); solution draws its own bernoulli mask",
)
add(
    "dropout_train",
    "nodrop",
    "?",
    "solution omits dropout: the Model is nondeterministic so exit 2 is likely, but a grader could also call the missing dropout a bug",
)
fam(
    "argsort",
    [
        (
            "legit_sort_neg",
            "E",
            "ascending stable sort of -x: the same permutation, bit-identical int64 output (no ties in random data)",
        )
    ],
    [],
)
add(
    "argsort",
    "bug_one_based",
    "B",
    "indices + 1 (1-based): every int64 entry differs; no arithmetic in the Model could explain it",
)
add("argsort", "bug_ascending", "B", "ascending instead of descending order: every int64 entry differs")
add("argsort_scores", "copy", "E", "exact copy (int64 ranking of linear scores)")
add(
    "argsort_scores",
    "legit_tf32",
    "?",
    "TF32 scores swap near-tied items: ~800 of 32768 int64 indices differ; a discrete output of a rounded computation - exit 0 (arithmetic), 1, or 2 (cannot model an integer output) are all defensible",
)
add(
    "argsort_scores",
    "legit_byhand",
    "?",
    "scores by multiply-and-sum: identical on my two seeds, but fp32 reordering can swap a near-tied pair on other inputs (expected ~0.1 swaps per call); same ambiguity as legit_tf32",
)
add(
    "argsort_scores",
    "bug_ascending",
    "B",
    "ascending instead of descending ranking: every int64 entry differs, far beyond any near-tie swap",
)

with open(f"{ROOT}/EXPECTED.txt", "w") as f:
    f.write("# family solution expected # reason\n")
    f.write(
        "# E: exact copy or identical; P:cause: explained by arithmetic (exit 0) with that cause; B: bug (exit 1);\n"
    )
    f.write("# X: exit 2, tool cannot model the Model; ?: ambiguous (not in manifest.csv).\n")
    f.write(
        "# Bug sizes: max |ModelNew - Model| in float64 over two seeds, and the Model's own float32 rounding (fp32 vs fp64).\n"
    )
    for folder, sol, exp, reason in T:
        f.write(f"{folder} {sol} {exp} # {reason}\n")

with open(f"{ROOT}/manifest.csv", "w", newline="") as f:
    w = csv.writer(f, lineterminator="\n")
    w.writerow(
        [
            "pair",
            "problem",
            "solution",
            "args",
            "expect_exit",
            "must_contain",
            "must_not_contain",
            "location_contains",
            "class",
            "note",
        ]
    )
    for folder, sol, exp, reason in T:
        row = [f"{folder}/{sol}", f"{folder}/problem.py", f"{folder}/{sol}.py", ""]
        if exp == "?":
            continue
        if exp == "E":
            row += ["0", "", "bug", "", "correct", ""]
        elif exp.startswith("P:candidate_"):
            row += ["0", exp[2:], "bug", "", "correct_named", reason]
        elif exp.startswith("P:"):
            row += ["0", "", "bug", "", "correct", reason]
        elif exp == "B":
            row += ["1", "bug", "", "", "bug", reason]
        elif exp == "X":
            row += ["2", "", "", "", "out_of_scope_named", reason]
        w.writerow(row)
print(len(T), "pairs")
