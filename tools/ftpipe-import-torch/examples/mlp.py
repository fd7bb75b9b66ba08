# mlp.py - a plain PyTorch module for ftpipe-import-torch's --module route
#
#   ftpipe-import-torch.py --module mlp:make -o mlp.mlir   (examples/ on PYTHONPATH)
#
# A factory returns the module and example keyword inputs; any nn.Module that
# torch.export can trace works the same way.

import torch


class Block(torch.nn.Module):
    def __init__(self, width):
        super().__init__()
        self.norm = torch.nn.LayerNorm(width)
        self.up = torch.nn.Linear(width, 4 * width)
        self.down = torch.nn.Linear(4 * width, width)

    def forward(self, x):
        return x + self.down(torch.nn.functional.gelu(self.up(self.norm(x))))


class MLP(torch.nn.Module):
    def __init__(self, width=32, depth=4, classes=10):
        super().__init__()
        self.blocks = torch.nn.ModuleList(Block(width) for _ in range(depth))
        self.head = torch.nn.Linear(width, classes)

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return self.head(x)


def make():
    torch.manual_seed(0)
    return MLP(), {"x": torch.randn(8, 32)}
