#!/usr/bin/env python3
# Writes float-conversion-reference.safetensors (FloatConversionTest.cpp):
# f32 values (edge cases: ties, subnormals, overflow, NaN, signed zeros; and
# random values over the whole range) and PyTorch's conversions of them to
# bf16 and f16. Run in the reference environment.
import struct

import numpy as np
import torch
from safetensors.torch import save_file


def f32(bits):
    return struct.unpack("<f", struct.pack("<I", bits))[0]


edges = [0.0, -0.0, 1.0, -1.0, 65504.0, 65519.99, 65520.0, 1e30, -1e30,
         float("inf"), float("-inf"), float("nan"), 2.0 ** -14, 2.0 ** -24,
         2.0 ** -25, 3 * 2.0 ** -26, 2.0 ** -26, 1e-45, 3.4e38,
         # f16 ties (the 13 dropped bits exactly half): to even.
         f32(0x3f801000), f32(0x3f803000), f32(0x3f801001),
         # bf16 ties (the 16 dropped bits exactly half).
         f32(0x3f808000), f32(0x3f818000), f32(0x3f808001),
         # subnormal f16 ties.
         2.0 ** -25 * 3, 2.0 ** -25 * 5]
rng = np.random.default_rng(30)
random_bits = rng.integers(0, 2 ** 32, size=1024, dtype=np.uint64)
values = torch.tensor(edges + [f32(int(b)) for b in random_bits],
                      dtype=torch.float32)
# Values near f16's range, where its rounding matters most.
values = torch.cat([values, torch.tensor(
    rng.standard_normal(512) * 10.0 ** rng.integers(-8, 5, 512),
    dtype=torch.float32)])
save_file({"f32": values, "bf16": values.to(torch.bfloat16),
           "f16": values.to(torch.float16)},
          "float-conversion-reference.safetensors",
          metadata={"torch": torch.__version__})
