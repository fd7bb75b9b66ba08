// RUN: ftpipe-opt %s --split-input-file --verify-diagnostics

// Tests that the ids of stages in one block are unique.
func.func @duplicate_stage_id() {
  ftpipe.stage 1 on 0 () -> () {
    ftpipe.yield
  }
  // expected-error @+1 {{'ftpipe.stage' op id 1 is already used by an earlier stage}}
  ftpipe.stage 1 on 1 () -> () {
    ftpipe.yield
  }
  return
}

// -----

// Tests that a stage id is non-negative.
func.func @negative_stage_id() {
  // expected-error @+1 {{'ftpipe.stage' op attribute 'id' failed to satisfy constraint: 64-bit signless integer attribute whose value is non-negative}}
  ftpipe.stage -1 on 0 () -> () {
    ftpipe.yield
  }
  return
}

// -----

// Tests that a stage device is non-negative.
func.func @negative_stage_device() {
  // expected-error @+1 {{'ftpipe.stage' op attribute 'device' failed to satisfy constraint: 64-bit signless integer attribute whose value is non-negative}}
  ftpipe.stage 0 on -2 () -> () {
    ftpipe.yield
  }
  return
}

// -----

// Tests that the body takes one argument per operand.
func.func @argument_count(%a: tensor<4xf32>) {
  // expected-error @+1 {{'ftpipe.stage' op has 1 operands but its body takes 0 arguments}}
  "ftpipe.stage"(%a) ({
    "ftpipe.yield"() : () -> ()
  }) {id = 0 : i64, device = 0 : i64} : (tensor<4xf32>) -> ()
  return
}

// -----

// Tests that body arguments have the types of their operands.
func.func @argument_type(%a: tensor<4xf32>) {
  // expected-error @+1 {{'ftpipe.stage' op body argument 0 has type 'tensor<2xf32>' but operand 0 has type 'tensor<4xf32>'}}
  "ftpipe.stage"(%a) ({
  ^bb0(%x: tensor<2xf32>):
    "ftpipe.yield"() : () -> ()
  }) {id = 0 : i64, device = 0 : i64} : (tensor<4xf32>) -> ()
  return
}

// -----

// Tests that the body ends with ftpipe.yield.
func.func @wrong_terminator() {
  // expected-error @+1 {{'ftpipe.stage' op body must end with 'ftpipe.yield'}}
  "ftpipe.stage"() ({
    llvm.unreachable
  }) {id = 0 : i64, device = 0 : i64} : () -> ()
  return
}

// -----

// Tests that the yield gives one value per stage result.
func.func @yield_count(%a: tensor<4xf32>) {
  %r = ftpipe.stage 0 on 0 (%x = %a : tensor<4xf32>) -> (tensor<4xf32>) {
    // expected-error @+1 {{'ftpipe.yield' op yields 0 values but the stage has 1 results}}
    ftpipe.yield
  }
  return
}

// -----

// Tests that yielded values have the types of the stage results.
func.func @yield_type(%a: tensor<4xf32>) {
  %r = ftpipe.stage 0 on 0 (%x = %a : tensor<4xf32>) -> (tensor<2xf32>) {
    // expected-error @+1 {{'ftpipe.yield' op value 0 has type 'tensor<4xf32>' but stage result 0 has type 'tensor<2xf32>'}}
    ftpipe.yield %x : tensor<4xf32>
  }
  return
}

// -----

// Tests that a stage is isolated: outer values come in only as operands.
func.func @not_isolated(%a: tensor<4xf32>) {
  // expected-note @+1 {{required by region isolation constraints}}
  ftpipe.stage 0 on 0 () -> () {
    // expected-error @+1 {{'tosa.abs' op using value defined outside the region}}
    %u = tosa.abs %a : (tensor<4xf32>) -> tensor<4xf32>
    ftpipe.yield
  }
  return
}

// -----

// Tests that ftpipe.yield lives only in a stage.
func.func @yield_outside_stage() {
  // expected-error @+1 {{'ftpipe.yield' op expects parent op 'ftpipe.stage'}}
  ftpipe.yield
}

// -----

// Tests that a transfer's peer is a device of the module's plan.
module attributes {ftpipe.plan = #ftpipe.plan<method = "seq-dp", stage_device = [0, 1], objective_ms = 1.0, memory_bytes = [10, 10], seconds = 0.0>} {
  func.func @send_off_plan(%t: tensor<4xf32>, %mb: index) attributes {ftpipe.device = 1 : i64} {
    // expected-error @+1 {{'ftpipe.send' op peer 2 is not a device of the plan, which has 2 devices}}
    ftpipe.send %t to 2 tag 0 microbatch %mb : tensor<4xf32>
    return
  }
}

// -----

// Tests that transfers need static shapes.
func.func @send_dynamic(%t: tensor<?xf32>, %mb: index) {
  // expected-error @+1 {{'ftpipe.send' op operand #0 must be statically shaped tensor of any type values, but got 'tensor<?xf32>'}}
  ftpipe.send %t to 1 tag 0 microbatch %mb : tensor<?xf32>
  return
}

// -----

// Tests that a received tensor has a static shape.
func.func @recv_dynamic(%mb: index) {
  // expected-error @+1 {{'ftpipe.recv' op result #0 must be statically shaped tensor of any type values, but got 'tensor<?xf32>'}}
  %t = ftpipe.recv from 1 tag 0 microbatch %mb : tensor<?xf32>
  return
}

// -----

// Tests that a tag is non-negative.
func.func @negative_tag(%t: tensor<4xf32>, %mb: index) {
  // expected-error @+1 {{'ftpipe.send' op attribute 'tag' failed to satisfy constraint: 64-bit signless integer attribute whose value is non-negative}}
  ftpipe.send %t to 1 tag -1 microbatch %mb : tensor<4xf32>
  return
}
