import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, num_embeddings, embedding_dim, out_features):
        super(ModelNew, self).__init__()
        self.embedding = nn.Embedding(num_embeddings, embedding_dim)
        self.fc = nn.Linear(embedding_dim, out_features)

    def forward(self, idx):
        e = self.embedding.weight[idx - 1]
        return self.fc(e.mean(dim=1))
