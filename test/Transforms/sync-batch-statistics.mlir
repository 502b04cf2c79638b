// RUN: wsc-opt %s --wsc-sync-batch-statistics -split-input-file -verify-diagnostics | FileCheck %s
// RUN: wsc-opt %s --wsc-sync-batch-statistics=micro-batches=true -split-input-file -verify-diagnostics | FileCheck %s --check-prefix=MICRO

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#v = affine_map<(d0) -> (d0)>

// Centring by the batch mean: the sum over the batch is partial, and so is
// the mean (sum / 4, linear in it). The centring meets per-sample values, so
// it reads the mean all-reduced, once, right after the mean is computed.
// CHECK-LABEL: func.func @centre
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}}iterator_types = ["reduction", "parallel"]
// CHECK: %[[MEAN:.*]] = linalg.generic {{.*}}ins(%[[SUM]] : tensor<2xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.divf
// CHECK-NEXT: linalg.yield
// CHECK-NEXT: }
// CHECK-NEXT: %[[TOTAL:.*]] = wsc.swarmx.all_reduce %[[MEAN]] : tensor<2xf32>
// CHECK-NOT: wsc.swarmx.all_reduce
// CHECK: ins(%arg0, %[[TOTAL]] : tensor<4x2xf32>, tensor<2xf32>)
module attributes {wsc.target = #wsc.target<systems = 2>} {
func.func @centre(%x: tensor<4x2xf32> {wsc.input = 0 : i64}) -> (tensor<4x2xf32> {wsc.output = 0 : i64}) {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 4.0 : f32
  %e = tensor.empty() : tensor<2xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2xf32>) -> tensor<2xf32>
  %sum = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]} ins(%x : tensor<4x2xf32>) outs(%f : tensor<2xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %in, %acc : f32
    linalg.yield %r : f32
  } -> tensor<2xf32>
  %mean = linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]} ins(%sum : tensor<2xf32>) outs(%e : tensor<2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.divf %in, %n : f32
    linalg.yield %r : f32
  } -> tensor<2xf32>
  %o = tensor.empty() : tensor<4x2xf32>
  %c = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %mean : tensor<4x2xf32>, tensor<2xf32>) outs(%o : tensor<4x2xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %r = arith.subf %in, %m : f32
    linalg.yield %r : f32
  } -> tensor<4x2xf32>
  return %c : tensor<4x2xf32>
}
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#v = affine_map<(d0) -> (d0)>

// rsqrt(var + eps) is not linear in the partial variance: it takes the
// total. A weight gradient (sum of dy * x, times that whole-batch rstd) is
// linear in its partial sum and stays partial: SwarmX sums it at the end.
// A buffer update (running = 0.9 * running + 0.1 * var) is affine, so it
// takes the total too, the same all-reduce.
// CHECK-LABEL: func.func @variance
// CHECK: %[[VAR:.*]] = linalg.generic {{.*}}iterator_types = ["reduction", "parallel"]
// CHECK: %[[VT:.*]] = wsc.swarmx.all_reduce %[[VAR]] : tensor<2xf32>
// CHECK: %[[RSTD:.*]] = linalg.generic {{.*}}ins(%[[VT]] : tensor<2xf32>)
// CHECK: math.rsqrt
// CHECK: %[[G:.*]] = linalg.generic {{.*}}iterator_types = ["reduction", "parallel"]
// CHECK: %[[GRAD:.*]] = linalg.generic {{.*}}ins(%[[G]], %[[RSTD]] : tensor<2xf32>, tensor<2xf32>)
// CHECK-NOT: wsc.swarmx.all_reduce
// CHECK: %[[NEWVAR:.*]] = linalg.generic {{.*}}ins(%arg2, %[[VT]] : tensor<2xf32>, tensor<2xf32>)
// CHECK: return {{.*}}, %[[GRAD]], %[[NEWVAR]]
module attributes {wsc.target = #wsc.target<systems = 2>} {
func.func @variance(%x: tensor<4x2xf32> {wsc.input = 0 : i64}, %dy: tensor<4x2xf32> {wsc.label = 0 : i64}, %running: tensor<2xf32> {wsc.buffer = "bn.running_var"}) -> (tensor<f32> {wsc.loss}, tensor<2xf32> {wsc.grad = "bn.weight"}, tensor<2xf32> {wsc.buffer_update = "bn.running_var"}) {
  %zero = arith.constant 0.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %m = arith.constant 0.1 : f32
  %keep = arith.constant 0.9 : f32
  %e = tensor.empty() : tensor<2xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2xf32>) -> tensor<2xf32>
  %var = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]} ins(%x : tensor<4x2xf32>) outs(%f : tensor<2xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %sq = arith.mulf %in, %in : f32
    %r = arith.addf %sq, %acc : f32
    linalg.yield %r : f32
  } -> tensor<2xf32>
  %rstd = linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]} ins(%var : tensor<2xf32>) outs(%e : tensor<2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.addf %in, %eps : f32
    %r = math.rsqrt %a : f32
    linalg.yield %r : f32
  } -> tensor<2xf32>
  %g = linalg.generic {indexing_maps = [#id, #id, #col], iterator_types = ["reduction", "parallel"]} ins(%dy, %x : tensor<4x2xf32>, tensor<4x2xf32>) outs(%f : tensor<2xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %p, %acc : f32
    linalg.yield %r : f32
  } -> tensor<2xf32>
  %grad = linalg.generic {indexing_maps = [#v, #v, #v], iterator_types = ["parallel"]} ins(%g, %rstd : tensor<2xf32>, tensor<2xf32>) outs(%e : tensor<2xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %r = arith.mulf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<2xf32>
  %run = linalg.generic {indexing_maps = [#v, #v, #v], iterator_types = ["parallel"]} ins(%running, %var : tensor<2xf32>, tensor<2xf32>) outs(%e : tensor<2xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %p = arith.mulf %a, %keep : f32
    %q = arith.mulf %b, %m : f32
    %r = arith.addf %p, %q : f32
    linalg.yield %r : f32
  } -> tensor<2xf32>
  %loss = arith.constant dense<0.0> : tensor<f32>
  return %loss, %grad, %run : tensor<f32>, tensor<2xf32>, tensor<2xf32>
}
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>

// A model output that sums over the batch is gathered from one system: it
// must be the whole batch's sum.
// CHECK-LABEL: func.func @output
// CHECK: %[[S:.*]] = linalg.generic
// CHECK: %[[T:.*]] = wsc.swarmx.all_reduce %[[S]] : tensor<2xf32>
// CHECK: return %[[T]]
module attributes {wsc.target = #wsc.target<systems = 2>} {
func.func @output(%x: tensor<4x2xf32> {wsc.input = 0 : i64}) -> (tensor<2xf32> {wsc.output = 0 : i64}) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2xf32>) -> tensor<2xf32>
  %s = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]} ins(%x : tensor<4x2xf32>) outs(%f : tensor<2xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %in, %acc : f32
    linalg.yield %r : f32
  } -> tensor<2xf32>
  return %s : tensor<2xf32>
}
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>

// SwarmX adds FP32 only: a count over the batch cannot be synchronized.
module attributes {wsc.target = #wsc.target<systems = 2>} {
func.func @count(%x: tensor<4x2xi64> {wsc.input = 0 : i64}) -> (tensor<4x2xi64> {wsc.output = 0 : i64}) {
  %zero = arith.constant 0 : i64
  %e = tensor.empty() : tensor<2xi64>
  %f = linalg.fill ins(%zero : i64) outs(%e : tensor<2xi64>) -> tensor<2xi64>
  %s = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]} ins(%x : tensor<4x2xi64>) outs(%f : tensor<2xi64>) {
  ^bb0(%in: i64, %acc: i64):
    %r = arith.addi %in, %acc : i64
    linalg.yield %r : i64
  } -> tensor<2xi64>
  %o = tensor.empty() : tensor<4x2xi64>
  // expected-error @+1 {{uses a sum over the batch of type 'tensor<2xi64>'; SwarmX all-reduces f32 tensors only}}
  %c = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %s : tensor<4x2xi64>, tensor<2xi64>) outs(%o : tensor<4x2xi64>) {
  ^bb0(%in: i64, %m: i64, %out: i64):
    %r = arith.subi %in, %m : i64
    linalg.yield %r : i64
  } -> tensor<4x2xi64>
  return %c : tensor<4x2xi64>
}
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#v = affine_map<(d0) -> (d0)>

// One system sums the whole batch: nothing to synchronize.
// CHECK-LABEL: func.func @one_system
// CHECK-NOT: wsc.swarmx.all_reduce
// CHECK: return
func.func @one_system(%x: tensor<4x2xf32> {wsc.input = 0 : i64}) -> (tensor<4x2xf32> {wsc.output = 0 : i64}) {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 4.0 : f32
  %e = tensor.empty() : tensor<2xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2xf32>) -> tensor<2xf32>
  %sum = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]} ins(%x : tensor<4x2xf32>) outs(%f : tensor<2xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %in, %acc : f32
    linalg.yield %r : f32
  } -> tensor<2xf32>
  %mean = linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]} ins(%sum : tensor<2xf32>) outs(%e : tensor<2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.divf %in, %n : f32
    linalg.yield %r : f32
  } -> tensor<2xf32>
  %o = tensor.empty() : tensor<4x2xf32>
  %c = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %mean : tensor<4x2xf32>, tensor<2xf32>) outs(%o : tensor<4x2xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %r = arith.subf %in, %m : f32
    linalg.yield %r : f32
  } -> tensor<4x2xf32>
  return %c : tensor<4x2xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#v = affine_map<(d0) -> (d0)>
#rows = affine_map<(d0, d1) -> (d0)>

// An embedding's gradient: a sum over the batch routed to table rows by
// select(row == id, g, 0). Selecting between a partial and zero is linear:
// the gradient stays partial, nothing is all-reduced.
// CHECK-LABEL: func.func @scatter
// CHECK-NOT: wsc.swarmx.all_reduce
// CHECK: return
module attributes {wsc.target = #wsc.target<systems = 2>} {
func.func @scatter(%g: tensor<4x2xf32> {wsc.input = 0 : i64}) -> (tensor<f32> {wsc.loss}, tensor<3x2xf32> {wsc.grad = "tok.weight"}) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2xf32>) -> tensor<2xf32>
  %s = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]} ins(%g : tensor<4x2xf32>) outs(%f : tensor<2xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %in, %acc : f32
    linalg.yield %r : f32
  } -> tensor<2xf32>
  %te = tensor.empty() : tensor<3x2xf32>
  %tf = linalg.fill ins(%zero : f32) outs(%te : tensor<3x2xf32>) -> tensor<3x2xf32>
  %pos = arith.constant dense<[0, 2]> : tensor<2xi64>
  %t = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%pos, %s : tensor<2xi64>, tensor<2xf32>) outs(%tf : tensor<3x2xf32>) {
  ^bb0(%id: i64, %v: f32, %acc: f32):
    %row = linalg.index 0 : index
    %r64 = arith.index_cast %row : index to i64
    %hit = arith.cmpi eq, %id, %r64 : i64
    %x = arith.select %hit, %v, %zero : f32
    %r = arith.addf %acc, %x : f32
    linalg.yield %r : f32
  } -> tensor<3x2xf32>
  %loss = arith.constant dense<0.0> : tensor<f32>
  return %loss, %t : tensor<f32>, tensor<3x2xf32>
}
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#v = affine_map<(d0) -> (d0)>

// A gradient that is a nonlinear function of a sum over the batch would be
// the whole value on every system, which SwarmX would then add twice.
module attributes {wsc.target = #wsc.target<systems = 2>} {
func.func @nonlinear_gradient(%x: tensor<4x2xf32> {wsc.input = 0 : i64}) -> (tensor<f32> {wsc.loss}, tensor<2xf32> {wsc.grad = "w"}) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2xf32>) -> tensor<2xf32>
  %s = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]} ins(%x : tensor<4x2xf32>) outs(%f : tensor<2xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %in, %acc : f32
    linalg.yield %r : f32
  } -> tensor<2xf32>
  // expected-error @+1 {{computes result #1 (a loss or gradient, summed over the systems and micro-batches) from whole-batch sums; every part would send the whole value}}
  %g = linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]} ins(%s : tensor<2xf32>) outs(%e : tensor<2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.rsqrt %in : f32
    linalg.yield %r : f32
  } -> tensor<2xf32>
  %loss = arith.constant dense<0.0> : tensor<f32>
  return %loss, %g : tensor<f32>, tensor<2xf32>
}
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>

// A packed bias gradient (nn.MultiheadAttention's in_proj_bias with kdim or
// vdim): two partial sums over the batch inserted into an empty tensor, one
// padded with zeros, and concatenated with a zero tensor, stay partial:
// SwarmX sums the assembled gradient, nothing is all-reduced.
// CHECK-LABEL: func.func @assemble_partials
// CHECK-NOT: wsc.swarmx.all_reduce
// CHECK: return
module attributes {wsc.target = #wsc.target<systems = 2>} {
func.func @assemble_partials(%x: tensor<4x2xf32> {wsc.input = 0 : i64}) -> (tensor<f32> {wsc.loss}, tensor<8xf32> {wsc.grad = "b"}) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2xf32>) -> tensor<2xf32>
  %sum = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]} ins(%x : tensor<4x2xf32>) outs(%f : tensor<2xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %in, %acc : f32
    linalg.yield %r : f32
  } -> tensor<2xf32>
  %cat0 = tensor.empty() : tensor<4xf32>
  %cat1 = tensor.insert_slice %sum into %cat0[0] [2] [1] : tensor<2xf32> into tensor<4xf32>
  %padded = tensor.pad %sum low[0] high[0] {
  ^bb0(%i: index):
    tensor.yield %zero : f32
  } : tensor<2xf32> to tensor<2xf32>
  %cat2 = tensor.insert_slice %padded into %cat1[2] [2] [1] : tensor<2xf32> into tensor<4xf32>
  %z = tensor.empty() : tensor<4xf32>
  %zeros = linalg.fill ins(%zero : f32) outs(%z : tensor<4xf32>) -> tensor<4xf32>
  %grad = tensor.concat dim(0) %cat2, %zeros : (tensor<4xf32>, tensor<4xf32>) -> tensor<8xf32>
  %loss = tensor.extract_slice %sum[0] [1] [1] : tensor<2xf32> to tensor<f32>
  return %loss, %grad : tensor<f32>, tensor<8xf32>
}
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>

// Inserted into a tensor with other values (here ones), a partial is not
// each system's share of the whole: it takes the total first, and a
// gradient computed from it is an error.
module attributes {wsc.target = #wsc.target<systems = 2>} {
func.func @insert_into_values(%x: tensor<4x2xf32> {wsc.input = 0 : i64}) -> (tensor<4xf32> {wsc.grad = "b"}) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<2xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2xf32>) -> tensor<2xf32>
  %sum = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]} ins(%x : tensor<4x2xf32>) outs(%f : tensor<2xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %in, %acc : f32
    linalg.yield %r : f32
  } -> tensor<2xf32>
  %o = tensor.empty() : tensor<4xf32>
  %ones = linalg.fill ins(%one : f32) outs(%o : tensor<4xf32>) -> tensor<4xf32>
  // expected-error @+1 {{computes result #0 (a loss or gradient, summed over the systems and micro-batches) from whole-batch sums}}
  %grad = tensor.insert_slice %sum into %ones[0] [2] [1] : tensor<2xf32> into tensor<4xf32>
  return %grad : tensor<4xf32>
}
}

// -----

#v = affine_map<(d0) -> (d0)>
#all = affine_map<(d0) -> ()>
#scalar = affine_map<() -> ()>

// A data-dependent mean (a cross entropy that ignores some labels): the sum
// of the losses divided by the count of kept labels. Only the count is
// all-reduced; the quotient stays each system's share of the whole batch's
// mean, which SwarmX sums like any loss.
// CHECK-LABEL: func.func @mean_over_kept
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}}ins(%arg0 : tensor<4xf32>)
// CHECK: %[[COUNT:.*]] = linalg.generic {{.*}}ins(%arg1 : tensor<4xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.addf
// CHECK-NEXT: linalg.yield
// CHECK-NEXT: }
// CHECK-NEXT: %[[TOTAL:.*]] = wsc.swarmx.all_reduce %[[COUNT]] : tensor<f32>
// CHECK-NOT: wsc.swarmx.all_reduce
// CHECK: ins(%[[SUM]], %[[TOTAL]] : tensor<f32>, tensor<f32>)
module attributes {wsc.target = #wsc.target<systems = 2>} {
func.func @mean_over_kept(%loss: tensor<4xf32> {wsc.input = 0 : i64}, %kept: tensor<4xf32> {wsc.input = 1 : i64}) -> (tensor<f32> {wsc.loss}) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %sum = linalg.generic {indexing_maps = [#v, #all], iterator_types = ["reduction"]} ins(%loss : tensor<4xf32>) outs(%f : tensor<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %in, %acc : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  %count = linalg.generic {indexing_maps = [#v, #all], iterator_types = ["reduction"]} ins(%kept : tensor<4xf32>) outs(%f : tensor<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %in, %acc : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  %mean = linalg.generic {indexing_maps = [#scalar, #scalar, #scalar], iterator_types = []} ins(%sum, %count : tensor<f32>, tensor<f32>) outs(%e : tensor<f32>) {
  ^bb0(%s: f32, %n: f32, %o: f32):
    %r = arith.divf %s, %n : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %mean : tensor<f32>
}
}

// -----

// On one system nothing is all-reduced, unless for micro-batches: each
// then needs the total over its own samples (wsc.swarmx.all_reduce).
// CHECK-LABEL: func.func @centre_one_system
// CHECK-NOT: wsc.swarmx.all_reduce
// CHECK: return
// MICRO-LABEL: func.func @centre_one_system
// MICRO: %[[SUM:.*]] = linalg.generic {{.*}}iterator_types = ["reduction", "parallel"]
// MICRO: %[[MEAN:.*]] = linalg.generic {{.*}}ins(%[[SUM]] : tensor<2xf32>)
// MICRO: %[[TOTAL:.*]] = wsc.swarmx.all_reduce %[[MEAN]] : tensor<2xf32>
// MICRO: ins(%arg0, %[[TOTAL]] : tensor<4x2xf32>, tensor<2xf32>)
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#v = affine_map<(d0) -> (d0)>
module {
func.func @centre_one_system(%x: tensor<4x2xf32> {wsc.input = 0 : i64}) -> (tensor<4x2xf32> {wsc.output = 0 : i64}) {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 4.0 : f32
  %e = tensor.empty() : tensor<2xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2xf32>) -> tensor<2xf32>
  %sum = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]} ins(%x : tensor<4x2xf32>) outs(%f : tensor<2xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %in, %acc : f32
    linalg.yield %r : f32
  } -> tensor<2xf32>
  %mean = linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]} ins(%sum : tensor<2xf32>) outs(%e : tensor<2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.divf %in, %n : f32
    linalg.yield %r : f32
  } -> tensor<2xf32>
  %o = tensor.empty() : tensor<4x2xf32>
  %c = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %mean : tensor<4x2xf32>, tensor<2xf32>) outs(%o : tensor<4x2xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %r = arith.subf %in, %m : f32
    linalg.yield %r : f32
  } -> tensor<4x2xf32>
  return %c : tensor<4x2xf32>
}
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#v = affine_map<(d0) -> (d0)>
#scalar = affine_map<(d0) -> ()>
#none = affine_map<() -> ()>

// A fill in generic form (what linalg.fill generalizes to, and how IREE
// and JAX print it) starts a sum at zero as linalg.fill does: the loss
// summed from the partial batch sum into it is linear in that sum and
// stays partial.
// CHECK-LABEL: func.func @generic_fill
// CHECK-NOT: wsc.swarmx.all_reduce
// CHECK: return
// MICRO-LABEL: func.func @generic_fill
// MICRO-NOT: wsc.swarmx.all_reduce
// MICRO: return
module attributes {wsc.target = #wsc.target<systems = 2>} {
func.func @generic_fill(%x: tensor<4x2xf32> {wsc.input = 0 : i64}) -> (tensor<f32> {wsc.loss}) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2xf32>) -> tensor<2xf32>
  %p = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]} ins(%x : tensor<4x2xf32>) outs(%f : tensor<2xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %in, %acc : f32
    linalg.yield %r : f32
  } -> tensor<2xf32>
  %s = tensor.empty() : tensor<f32>
  %sf = linalg.generic {indexing_maps = [#none, #none], iterator_types = []} ins(%zero : f32) outs(%s : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<f32>
  %l = linalg.generic {indexing_maps = [#v, #scalar], iterator_types = ["reduction"]} ins(%p : tensor<2xf32>) outs(%sf : tensor<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %in, %acc : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
}

// -----

// A reshape to or from rank 0 has no reassociation groups: every dim of the
// wider side is a unit dim (a PReLU's single weight, tensor<1xf32>, read as
// a scalar). BatchDims accepts it, and nothing here sums over the batch.
// CHECK-LABEL: func.func @rank_zero_reshape
// CHECK: tensor.collapse_shape %arg1 [] : tensor<1xf32> into tensor<f32>
// CHECK-NOT: wsc.swarmx.all_reduce
module attributes {wsc.target = #wsc.target<systems = 2>} {
func.func @rank_zero_reshape(%x: tensor<4x2xf32> {wsc.input = 0 : i64}, %w: tensor<1xf32> {wsc.param = "prelu.weight"}) -> (tensor<4x2xf32> {wsc.output = 0 : i64}) {
  %s = tensor.collapse_shape %w [] : tensor<1xf32> into tensor<f32>
  %e = tensor.empty() : tensor<4x2xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %s : tensor<4x2xf32>, tensor<f32>) outs(%e : tensor<4x2xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}
}
