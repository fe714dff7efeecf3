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
        bag = rows[:, : n - 1].sum(dim=1) / n
        return self.fc(bag)
