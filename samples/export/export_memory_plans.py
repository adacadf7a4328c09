"""The same small MLP planned by ExecuTorch's naive and greedy memory planners.

    python export_memory_plans.py OUTDIR

Writes OUTDIR/mlp_naive.pte, OUTDIR/mlp_greedy.pte (ExecuTorch's to_executorch with
MemoryPlanningPass(memory_planning_algo=MemoryPlanningAlgorithmSuite(algo_list=[naive|greedy])))
and OUTDIR/memory_plans.md saying what they are and the versions used. etscope findings'
arena-over-greedy rule must fire on the naive plan (no tensor shares bytes) and stay quiet on
the greedy one (tests/findings/findings_test.cpp).
"""
import sys
from pathlib import Path

import torch
import executorch
from executorch.exir import ExecutorchBackendConfig, to_edge
from executorch.exir.memory_planning import MemoryPlanningAlgorithmSuite, greedy, naive
from executorch.exir.passes import MemoryPlanningPass


class Mlp(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a = torch.nn.Linear(64, 64)
        self.b = torch.nn.Linear(64, 64)
        self.c = torch.nn.Linear(64, 64)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.c(torch.relu(self.b(torch.relu(self.a(x)))))


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    model = Mlp().eval()
    example = (torch.randn(8, 64, generator=torch.Generator().manual_seed(1)),)
    exported = torch.export.export(model, example)
    rows = []
    for name, algo in (("naive", naive), ("greedy", greedy)):
        config = ExecutorchBackendConfig(
            memory_planning_pass=MemoryPlanningPass(memory_planning_algo=MemoryPlanningAlgorithmSuite(algo_list=[algo])))
        program = to_edge(exported).to_executorch(config)
        path = out / f"mlp_{name}.pte"
        path.write_bytes(program.buffer)
        rows.append(f"| `{path.name}` | {len(program.buffer)} | Linear(64,64)-relu-Linear-relu-Linear, input f32[8,64], "
                    f"portable kernels, memory planned by ExecuTorch's `{name}` algorithm |")
    versions = f"torch {torch.__version__}, executorch {getattr(executorch, '__version__', '1.5.1')}"
    text = ["# Memory plans of one model by two planners", "",
            "Made by `samples/export/export_memory_plans.py OUTDIR` (" + versions + ").", "",
            "| file | bytes | what |", "|---|---|---|", *rows, ""]
    (out / "memory_plans.md").write_text("\n".join(text))


if __name__ == "__main__":
    main()
