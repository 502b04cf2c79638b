// RUN: wsc-opt %s --wsc-pipeline="systems=2 stream-dtype=f32 min-param-elements=16" -o %t.mlir 2>/dev/null
// RUN: wsc-translate --wsc-to-schedule %t.mlir -o %t.schedule.json
// RUN: %python -c "import json, sys; [print(json.dumps(o, sort_keys=True)) for st in json.load(open(sys.argv[1]))['steps'] if st['op'] == 'kernel' for op in st['body']['ops'] if 'region' in op for o in op['region']['ops']]" %t.schedule.json | FileCheck %s

// torch-mlir's embedding gathers each row after checking its id: the
// asserts travel to the runtime with the value they compare, the linalg
// input it was read from, and the model input that is (across the kernel
// boundary). Index arithmetic in the same body: floor and ceil division,
// remainders, an unsigned cast.
// CHECK: {"op": "arith.index_cast", "operands": {{\[}}[[ID:[0-9]+]]], "results": {{\[}}[[IDX:[0-9]+]]]}
// CHECK: {"checked_input": "input0", "checked_operand": 0, "checked_value": [[IDX]], "message": "index must be smaller than dim size", "op": "cf.assert", "operands": [{{[0-9]+}}], "results": []}
// CHECK: {"checked_input": "input0", "checked_operand": 0, "checked_value": [[ID]], "message": "index must be larger or equal to 0", "op": "cf.assert", "operands": [{{[0-9]+}}], "results": []}
// CHECK: "op": "arith.floordivsi"
// CHECK: "op": "arith.ceildivsi"
// CHECK: "op": "arith.remsi"
// CHECK: "op": "arith.divsi"
// CHECK: "op": "arith.divui"
// CHECK: "op": "arith.remui"
// CHECK: "op": "arith.ceildivui"
// CHECK: "op": "arith.index_castui"
// CHECK: "op": "tensor.extract"
#map = affine_map<(d0, d1, d2) -> (d0, d1)>
#map1 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
module attributes {torch.debug_module_name = "Embedding"} {
  func.func @forward(%arg0: tensor<4x3xi64>) -> tensor<4x3x4xf32> {
    %c10 = arith.constant 10 : index
    %c3 = arith.constant 3 : index
    %c0_i64 = arith.constant 0 : i64
    %cst = arith.constant dense<2.5> : tensor<10x4xf32>
    %0 = tensor.empty() : tensor<4x3x4xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg0 : tensor<4x3xi64>) outs(%0 : tensor<4x3x4xf32>) {
    ^bb0(%in: i64, %out: f32):
      %2 = arith.index_cast %in : i64 to index
      %3 = linalg.index 2 : index
      %4 = arith.cmpi slt, %2, %c10 : index
      cf.assert %4, "index must be smaller than dim size"
      %5 = arith.cmpi sge, %in, %c0_i64 : i64
      cf.assert %5, "index must be larger or equal to 0"
      %6 = arith.floordivsi %2, %c3 : index
      %7 = arith.ceildivsi %6, %c3 : index
      %8 = arith.remsi %7, %c3 : index
      %9 = arith.divsi %8, %c3 : index
      %10 = arith.divui %9, %c3 : index
      %11 = arith.remui %10, %c3 : index
      %12 = arith.ceildivui %11, %c3 : index
      %13 = arith.index_castui %12 : index to i64
      %14 = arith.index_cast %13 : i64 to index
      %15 = arith.addi %2, %14 : index
      %extracted = tensor.extract %cst[%15, %3] : tensor<10x4xf32>
      linalg.yield %extracted : f32
    } -> tensor<4x3x4xf32>
    return %1 : tensor<4x3x4xf32>
  }
}
