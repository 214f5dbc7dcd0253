"""PyTorch: a small classifier and its training loop."""
import torch
from torch import nn


def build_model(inputs: int, classes: int) -> nn.Module:
    return nn.Sequential(nn.Linear(inputs, 64), nn.ReLU(), nn.Linear(64, classes))


def train(model: nn.Module, x, y, epochs: int = 1, batch_size: int = 32) -> float:
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loss_fn = nn.CrossEntropyLoss()
    data = torch.utils.data.TensorDataset(torch.as_tensor(x), torch.as_tensor(y))
    loader = torch.utils.data.DataLoader(data, batch_size=batch_size, shuffle=True)
    for _ in range(epochs):
        for batch_x, batch_y in loader:
            optimizer.zero_grad()
            loss = loss_fn(model(batch_x), batch_y)
            loss.backward()
            optimizer.step()
    return loss.item()
