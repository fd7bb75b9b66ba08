#!/usr/bin/env python3
"""Prints the ABI descriptions that ftpipe-record-entry-abi wrote into the
IR on stdin (`memref.global ... @ftpipe_abi_F : memref<Nxi8> = dense<...>`),
decoded from their bytes: `F:` and then the text, for FileCheck."""
import re
import sys

text = sys.stdin.read()
pattern = re.compile(r'memref\.global "public" constant @ftpipe_abi_(\w+) : '
                     r'memref<(\d+)xi8> = dense<(\[[^\]]*\]|"0x[0-9A-Fa-f]*")>')
for name, size, data in pattern.findall(text):
    if data.startswith('"0x'):
        raw = bytes.fromhex(data[3:-1])
    else:
        raw = bytes(int(v) & 0xFF for v in data[1:-1].split(','))
    assert len(raw) == int(size), (name, len(raw), size)
    assert raw.endswith(b'\0') and b'\0' not in raw[:-1], name
    print(name + ':')
    sys.stdout.write(raw[:-1].decode())
