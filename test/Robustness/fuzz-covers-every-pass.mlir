// RUN: ftpipe-fuzz --print-pipelines > %t.fuzzed
// RUN: ftpipe-opt --help | sed -n 's/^ *--\(ftpipe-[a-z-]*\) .*/\1/p' > %t.registered
// RUN: %python -c "import re, sys; registered = set(open(sys.argv[1]).read().split()); fuzzed = set(re.findall(r'ftpipe-[a-z-]+', open(sys.argv[2]).read())); print('registered:', len(registered)); print('not fuzzed:', ' '.join(sorted(registered - fuzzed)) or 'none')" %t.registered %t.fuzzed | FileCheck %s

// Every pass and named pipeline that ftpipe-opt registers is in a pipeline
// of the fuzz target (tools/ftpipe-fuzz/FuzzTarget.cpp), so a new pass
// cannot stay out of the fuzz runs unnoticed.

// CHECK: registered: {{[1-9][0-9]}}
// CHECK-NEXT: not fuzzed: none
