// RUN: ftpipe-model-gen t5-tiny --quiet | ftpipe-opt --ftpipe-annotate-costs --ftpipe-auto-partition="devices=4 quiet=true" --ftpipe-report=json=%t.report.json --ftpipe-export-graph=file=%t.graph.json -o /dev/null > /dev/null
// RUN: %python %S/Inputs/check_loads.py %t.graph.json %t.report.json 12 20 | FileCheck %s
// RUN: ftpipe-model-gen gpt2-tiny --quiet | ftpipe-opt --ftpipe-annotate-costs --ftpipe-mixed-pipe="devices=3 recompute=false" --ftpipe-report="json=%t.gpt2.json recompute=false" --ftpipe-export-graph=file=%t.gpt2.graph.json -o /dev/null > /dev/null
// RUN: %python %S/Inputs/check_loads.py %t.gpt2.graph.json %t.gpt2.json 12 20 | FileCheck %s --check-prefix=GPT2

// Tests that the device loads of the report equal loads recomputed from the
// exported graph by an independent implementation of the objective
// (Inputs/check_loads.py); the default preset's links are 12 GB/s, 20 us.

// CHECK: 4 device loads agree
// GPT2: 3 device loads agree ({{.*}}), 1 forwarded
