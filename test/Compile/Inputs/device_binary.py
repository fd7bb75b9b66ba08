"""Prints the CUDA device binary embedded in each artifact given.

For each shared library: the first fatbin (magic 0xBA55ED50) in the file and
the first ELF image inside it, with its machine (EM_CUDA is 190) and the SM
architecture of its e_flags; "no fatbin" when there is none. No CUDA tool is
needed (the toolkit here has no cuobjdump).
"""

import struct
import sys

FATBIN_MAGIC = b"\x50\xed\x55\xba"
EM_CUDA = 190

for path in sys.argv[1:]:
    data = open(path, "rb").read()
    start = data.find(FATBIN_MAGIC)
    if start < 0:
        print(f"{path}: no fatbin")
        continue
    elf = data.find(b"\x7fELF", start)
    machine = struct.unpack_from("<H", data, elf + 18)[0]
    flags = struct.unpack_from("<I", data, elf + 48)[0]
    kind = "EM_CUDA" if machine == EM_CUDA else f"machine {machine}"
    print(f"{path.rsplit('/', 1)[-1]}: fatbin with a cubin, {kind}, "
          f"sm_{(flags >> 8) & 0xFF}")
