"""etscope sample models: plain PyTorch modules used to produce reference artifacts."""

import torch


def round_to_bfloat16_precision_(model: torch.nn.Module) -> torch.nn.Module:
    """Round every parameter and buffer to bfloat16 precision, in place (kept float32).

    The weights stay the module's default random initialisation, only with the low
    16 mantissa bits cleared, so that the reference fixtures that embed them compress
    well. Used for cifar10 and mobilenet_v2.
    """
    with torch.no_grad():
        for t in list(model.parameters()) + list(model.buffers()):
            if t.is_floating_point():
                t.copy_(t.to(torch.bfloat16).to(t.dtype))
    return model
