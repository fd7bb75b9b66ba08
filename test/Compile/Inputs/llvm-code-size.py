#!/usr/bin/env python3
"""What LLVM's code generation will cost, from a module in the LLVM dialect:
per function whether LLVM optimises it (no `optimize_none`), its operations
and its largest basic block in operations.

llvm-code-size.py MODULE: prints one line per function with a body,
`NAME optimised|plain ops N largest-block N`, then the totals.
llvm-code-size.py SHALLOW DEEP: the same model with fewer and more layers;
prints both totals and fails unless the code LLVM optimises does not grow
with the layers (its operations and its largest block within 5 %): the
code that grows with the layers must be glue compiled as it is
(ftpipe-plain-glue), since instruction selection and post-RA scheduling
grow faster than a block's size."""
import re
import sys

FUNCTION = re.compile(r'^  llvm\.func (?:\w+ )*@([\w$.]+)\(.*\{$')
BLOCK = re.compile(r'^  \^bb\d+')


def functions(path):
    """(name, optimised, ops, largest block) of each function with a body."""
    result = []
    current = None
    for line in open(path):
        match = FUNCTION.match(line)
        if match:
            current = [match.group(1), 'optimize_none' not in line, 0, 0, 0]
            continue
        if current is None:
            continue
        if line.startswith('  }'):
            current[3] = max(current[3], current[4])
            result.append(tuple(current[:4]))
            current = None
        elif BLOCK.match(line):
            current[3] = max(current[3], current[4])
            current[4] = 0
        elif line.strip() and not line.lstrip().startswith('//'):
            current[2] += 1
            current[4] += 1
    return result


def totals(path):
    found = functions(path)
    if not found:
        sys.exit(f'{path}: no llvm.func with a body')
    optimised = [f for f in found if f[1]]
    return {
        'functions': len(found),
        'optimised ops': sum(f[2] for f in optimised),
        'optimised largest block': max((f[3] for f in optimised), default=0),
        'plain ops': sum(f[2] for f in found if not f[1]),
    }


def show(name, figures):
    print(name + ': ' + ', '.join(f'{k} {v}' for k, v in figures.items()))


if len(sys.argv) == 2:
    for name, optimised, ops, block in functions(sys.argv[1]):
        kind = 'optimised' if optimised else 'plain'
        print(f'{name} {kind} ops {ops} largest-block {block}')
    show('total', totals(sys.argv[1]))
elif len(sys.argv) == 3:
    shallow, deep = totals(sys.argv[1]), totals(sys.argv[2])
    show('shallow', shallow)
    show('deep', deep)
    grown = [key for key in ('optimised ops', 'optimised largest block')
             if deep[key] > 1.05 * shallow[key]]
    if grown:
        sys.exit('grows with the layers: ' + ', '.join(grown))
    print('optimised code flat in the layers')
else:
    sys.exit(__doc__)
