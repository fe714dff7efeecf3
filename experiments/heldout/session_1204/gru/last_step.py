import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, input_size, hidden_size, num_layers):
        super().__init__()
        self.gru = nn.GRU(input_size, hidden_size, num_layers, batch_first=False)
        self.L = num_layers

    def forward(self, x, h0):
        inp = x
        for layer_ in range(self.L):
            wih = getattr(self.gru, f"weight_ih_l{layer_}")
            whh = getattr(self.gru, f"weight_hh_l{layer_}")
            bih = getattr(self.gru, f"bias_ih_l{layer_}")
            bhh = getattr(self.gru, f"bias_hh_l{layer_}")
            h = h0[layer_]
            outs = []
            for t in range(inp.shape[0]):
                gi = inp[t] @ wih.t() + bih
                gh = h @ whh.t() + bhh
                ir, iz, inn = gi.chunk(3, 1)
                hr, hz, hn = gh.chunk(3, 1)
                r = torch.sigmoid(ir + hr)
                z = torch.sigmoid(iz + hz)
                # bug: reset gate applied outside the bias (r*(W h) + b_hn), as in the "v1" GRU, only at the last step
                if t == inp.shape[0] - 1:
                    n = torch.tanh(inn + r * (hn - bhh.chunk(3)[2]) + bhh.chunk(3)[2])
                else:
                    n = torch.tanh(inn + r * hn)
                h = (1 - z) * n + z * h
                outs.append(h)
            inp = torch.stack(outs)
        return inp
