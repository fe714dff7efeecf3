import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """
    Bag-of-tokens encoder: embedding lookup, mean over the sequence, then a linear projection.
    """

    def __init__(self, num_embeddings, embedding_dim, out_features):
        super(ModelNew, self).__init__()
        self.embedding = nn.Embedding(num_embeddings, embedding_dim)
        self.fc = nn.Linear(embedding_dim, out_features)

    def forward(self, idx):
        e = self.embedding(idx)
        return self.fc(e.mean(dim=1))


batch_size = 128
seq_len = 50
num_embeddings = 1000
embedding_dim = 64
out_features = 48


def get_inputs():
    return [torch.randint(0, num_embeddings, (batch_size, seq_len))]


def get_init_inputs():
    return [num_embeddings, embedding_dim, out_features]
