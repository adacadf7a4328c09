"""mobilenet_v2: torchvision's MobileNetV2 with random weights, input 1x3x96x96.

BatchNorm running statistics are calibrated on seeded random batches (see make).
"""
import torch

INPUT_SHAPE = (1, 3, 96, 96)


def make(seed: int = 0, num_classes: int = 1000):
    from torchvision.models import mobilenet_v2

    from models import round_to_bfloat16_precision_

    torch.manual_seed(seed)
    model = mobilenet_v2(weights=None, num_classes=num_classes)
    # With torchvision's init and fresh BatchNorm statistics (mean 0, var 1) the
    # activations shrink ~10x per stage and the logits end near 1e-10, useless as a
    # numeric reference. Calibrate the BatchNorm running statistics on random batches
    # (cumulative average) so that every layer sees normalised activations.
    calibrate_batch_norm_(model, seed)
    # Random init, rounded to bfloat16 precision (see models/__init__.py).
    return round_to_bfloat16_precision_(model).eval()


CALIBRATION_BATCHES = 4
CALIBRATION_BATCH_SIZE = 8


def calibrate_batch_norm_(model: torch.nn.Module, seed: int) -> None:
    g = torch.Generator().manual_seed(seed + 1000)
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.reset_running_stats()
            m.momentum = None  # cumulative moving average
    model.train()
    with torch.no_grad():
        for _ in range(CALIBRATION_BATCHES):
            model(torch.randn((CALIBRATION_BATCH_SIZE,) + INPUT_SHAPE[1:], generator=g))
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.momentum = 0.1
    model.eval()


def example_inputs(seed: int = 1):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(INPUT_SHAPE, generator=g),)
