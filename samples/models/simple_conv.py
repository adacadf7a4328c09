"""simple_conv: a single 3x3 convolution followed by ReLU, input 1x3x32x32."""
import torch
from torch import nn


class SimpleConv(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 16, 3, padding=1)
        self.relu = nn.ReLU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.relu(self.conv(x))


INPUT_SHAPE = (1, 3, 32, 32)


def make(seed: int = 0) -> SimpleConv:
    torch.manual_seed(seed)
    return SimpleConv().eval()


def example_inputs(seed: int = 1):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(INPUT_SHAPE, generator=g),)
