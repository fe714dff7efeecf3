import math

import torch
import torch.nn as nn
import torch.nn.functional as F

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
        assignment = torch.matmul(x, self.clusters)
        assignment = self.batch_norm(assignment)
        assignment = F.softmax(assignment, dim=1)
        assignment = assignment[:, : self.cluster_size]
        assignment = assignment.view(-1, max_sample, self.cluster_size)
        a_sum = torch.sum(assignment, dim=1, keepdim=True)
        a = a_sum * self.clusters2
        assignment = assignment.transpose(1, 2)
        x = x.view(-1, max_sample, self.feature_size)
        vlad = torch.matmul(assignment, x)
        vlad = vlad.transpose(1, 2)
        a = torch.cat(
            [a[..., :3], torch.zeros_like(a[..., 3:4]), a[..., 4:]], dim=-1
        )  # cluster 3's centre not subtracted
        vlad = vlad - a
        vlad = F.normalize(vlad)
        vlad = vlad.reshape(-1, self.cluster_size * self.feature_size)
        vlad = F.normalize(vlad)
        return vlad


def get_inputs():
    return [torch.randn(batch_size, num_features, feature_size)]


def get_init_inputs():
    return [cluster_size, feature_size, ghost_clusters]
