import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 2
seq_length = 32
n_heads = 2
d_head = 8
d_state = 4
block_len = 8


class ModelNew(nn.Module):
    def __init__(self, batch_size, seq_length, n_heads, d_head, d_state, block_len=64):
        super().__init__()
        assert seq_length % block_len == 0
        self.batch_size, self.seq_length = batch_size, seq_length
        self.n_heads, self.d_head, self.d_state, self.block_len = n_heads, d_head, d_state, block_len
        self.A = nn.Parameter(torch.randn(batch_size, seq_length, n_heads))
        self.B = nn.Parameter(torch.randn(batch_size, seq_length, n_heads, d_state))
        self.C = nn.Parameter(torch.randn(batch_size, seq_length, n_heads, d_state))

    def segsum(self, x):
        T = x.size(-1)
        x_cumsum = torch.cumsum(x, dim=-1)
        x_segsum = x_cumsum[..., :, None] - x_cumsum[..., None, :]
        mask = torch.tril(torch.ones(T, T, device=x.device, dtype=bool), diagonal=0)
        x_segsum = x_segsum.masked_fill(~mask, -torch.inf)
        return x_segsum

    def blocks(self, t):
        b, L = t.shape[0], t.shape[1]
        return t.reshape(b, L // self.block_len, self.block_len, *t.shape[2:])

    def forward(self, X, initial_states=None):
        X_blocks, A_blocks, B_blocks, C_blocks = [self.blocks(t) for t in (X, self.A, self.B, self.C)]
        A_blocks = A_blocks.permute(0, 3, 1, 2)  # b h c l
        A_cumsum = torch.cumsum(A_blocks, dim=-1)

        # 1. diagonal blocks
        L = torch.exp(self.segsum(A_blocks))
        Y_diag = torch.einsum("bclhn,bcshn,bhcls,bcshp->bclhp", C_blocks, B_blocks, L, X_blocks)

        # 2. intra-chunk states
        decay_states = torch.exp(A_cumsum[:, :, :, -1:] - (A_cumsum - A_blocks))
        states = torch.einsum("bclhn,bhcl,bclhp->bchpn", B_blocks, decay_states, X_blocks)

        # 3. inter-chunk recurrence
        if initial_states is None:
            initial_states = torch.zeros_like(states[:, :1])
        states = torch.cat([initial_states, states], dim=1)
        decay_chunk = torch.exp(self.segsum(F.pad(A_cumsum[:, :, :, -1], (1, 0))))
        new_states = torch.einsum("bhzc,bchpn->bzhpn", decay_chunk, states)
        states = new_states[:, :-1]

        # 4. state -> output
        state_decay_out = torch.exp(A_cumsum)
        Y_off = torch.einsum("bclhn,bchpn,bhcl->bclhp", C_blocks, states, state_decay_out)
        Y = Y_diag + Y_off
        b, c, l, h, p = Y.shape
        return Y.reshape(b, c * l, h, p)


def get_inputs():
    return [torch.randn(batch_size, seq_length, n_heads, d_head)]


def get_init_inputs():
    return [batch_size, seq_length, n_heads, d_head, d_state, block_len]
