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
            gi_all = torch.einsum("tbi,gi->tbg", inp, wih) + bih
            outs = []
            for t in range(inp.shape[0]):
                gi = gi_all[t]
                gh = h @ whh.t() + bhh
                ir, iz, inn = gi.chunk(3, 1)
                hr, hz, hn = gh.chunk(3, 1)
                r = torch.sigmoid(ir + hr)
                z = torch.sigmoid(iz + hz)
                n = torch.tanh(inn + r * hn)
                h = (1 - z) * n + z * h
                outs.append(h)
            inp = torch.stack(outs)
        return inp
