#!/usr/bin/env python3
"""What the deallocation pipeline must decide about calls, from the buffer
IR it starts from (printed after ftpipe-linalg-to-blas): upstream's alias
analysis takes each result of a call to alias each of its operands, so a
call of a function with a body that passes and returns buffers costs alias
queries in the product of the two, for every deallocation that holds its
results.

call-operands.py SHALLOW DEEP: the same model with fewer and more layers;
prints, for each, the calls of functions with a body and the most memref
operands and results of one such call, and fails unless the most operands
and results do not grow with the layers."""
import re
import sys

DEFINED = re.compile(r'^  func\.func (?:private )?@([\w$.]+)\(.*\{$')
CALL = re.compile(r'= call @([\w$.]+)\((.*?)\) : \((.*?)\) -> \(?(.*?)\)?$')


def calls(path):
    """(calls of defined functions, most memref operands, most results)."""
    lines = open(path).read().splitlines()
    defined = {m.group(1) for m in map(DEFINED.match, lines) if m}
    count = operands = results = 0
    for line in lines:
        match = CALL.search(line)
        if not match or match.group(1) not in defined:
            continue
        count += 1
        operands = max(operands, match.group(3).count('memref<'))
        results = max(results, match.group(4).count('memref<'))
    return count, operands, results


shallow, deep = (calls(path) for path in sys.argv[1:3])
for name, (count, operands, results) in (('shallow', shallow), ('deep', deep)):
    print(f'{name}: calls of defined functions {count}, most memref operands '
          f'{operands}, most memref results {results}')
if deep[1:] != shallow[1:]:
    print('calls grow with the layers')
    sys.exit(1)
print('calls flat in the layers')
