"""xor: 2-10-2 MLP with a sigmoid hidden layer, plus a loss wrapper for training export.

The training wrapper returns (loss, argmax) so that the loss is output 0 and the
predicted class is output 1.
"""
import torch
from torch import nn


class XorNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(2, 10)
        self.linear2 = nn.Linear(10, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear2(torch.sigmoid(self.linear(x)))


class XorTrainingNet(nn.Module):
    def __init__(self, net: XorNet) -> None:
        super().__init__()
        self.net = net
        self.loss = nn.CrossEntropyLoss()

    def forward(self, x: torch.Tensor, label: torch.Tensor):
        logits = self.net(x)
        return self.loss(logits, label), logits.detach().argmax(dim=1)


# The four XOR samples (inputs, label).
DATA = [
    ([0.0, 0.0], 0),
    ([0.0, 1.0], 1),
    ([1.0, 0.0], 1),
    ([1.0, 1.0], 0),
]


def make(seed: int = 0) -> XorTrainingNet:
    torch.manual_seed(seed)
    return XorTrainingNet(XorNet())


def example_inputs():
    return (torch.tensor([[1.0, 0.0]]), torch.tensor([1], dtype=torch.int64))
