import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, num_embeddings, embedding_dim, out_features):
        super(ModelNew, self).__init__()
        self.embedding = nn.Embedding(num_embeddings, embedding_dim)
        self.fc = nn.Linear(embedding_dim, out_features)

    def forward(self, idx):
        b, n = idx.shape
        rows = torch.index_select(self.embedding.weight, 0, idx.reshape(-1)).view(b, n, -1)
        # sum the sequence in chunks of 16 tokens
        acc = torch.zeros_like(rows[:, 0])
        for s in range(0, n, 16):
            acc = acc + rows[:, s : s + 16].sum(dim=1)
        bag = acc / n
        return (bag[:, None, :] * self.fc.weight[None]).sum(dim=-1) + self.fc.bias
