"""cifar10: a small CNN for 3x32x32 images and 10 classes, plus a loss wrapper.

features: three blocks Conv3x3(pad 1) -> ReLU -> MaxPool2x2 with 32/64/128 channels;
classifier: Linear(2048, 512) -> ReLU -> Dropout(0.5) -> Linear(512, 10).
"""
import torch
from torch import nn


class Cifar10Net(nn.Module):
    def __init__(self, num_classes: int = 10) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 32, kernel_size=3, padding=1),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=2, stride=2),
            nn.Conv2d(32, 64, kernel_size=3, padding=1),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=2, stride=2),
            nn.Conv2d(64, 128, kernel_size=3, padding=1),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=2, stride=2),
        )
        self.classifier = nn.Sequential(
            nn.Linear(128 * 4 * 4, 512),
            nn.ReLU(inplace=True),
            nn.Dropout(0.5),
            nn.Linear(512, num_classes),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.features(x)
        x = torch.flatten(x, 1)
        return self.classifier(x)


class Cifar10TrainingNet(nn.Module):
    def __init__(self, model: Cifar10Net) -> None:
        super().__init__()
        self.model = model
        self.loss = nn.CrossEntropyLoss()

    def forward(self, x: torch.Tensor, label: torch.Tensor):
        logits = self.model(x)
        return self.loss(logits, label), logits.detach().argmax(dim=1)


BATCH = 4
INPUT_SHAPE = (BATCH, 3, 32, 32)


def make(seed: int = 0) -> Cifar10Net:
    """Default init under torch.manual_seed(seed), rounded to bfloat16 precision."""
    from models import round_to_bfloat16_precision_

    torch.manual_seed(seed)
    return round_to_bfloat16_precision_(Cifar10Net())


def make_training(seed: int = 0) -> Cifar10TrainingNet:
    return Cifar10TrainingNet(make(seed))


def example_inputs(seed: int = 1):
    g = torch.Generator().manual_seed(seed)
    return (torch.rand(INPUT_SHAPE, generator=g),)
