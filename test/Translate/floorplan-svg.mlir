// RUN: wsc-opt %S/../Transforms/Inputs/mlp-mse-train.mlir --wsc-pipeline="mode=layer_pipelined target=tiny" -o %t.mlir 2>/dev/null
// RUN: wsc-translate --wsc-to-svg %t.mlir | FileCheck %s
// RUN: wsc-translate --wsc-to-svg %t.mlir | %python -c "import sys, xml.dom.minidom as m; d = m.parseString(sys.stdin.read()); print(len(d.getElementsByTagName('rect')), len(d.getElementsByTagName('polyline')))" | FileCheck %s --check-prefix=XML
// RUN: not wsc-translate --wsc-to-svg %s -split-input-file 2>&1 | FileCheck %s --check-prefix=ERR

// The floorplan of the 16x16 test wafer: one numbered region per layer,
// coloured by its time against the slowest layer's and titled with its size,
// one polyline per route, and a key: the wafer's utilisation, the slowest
// time, what the colours and areas mean, and a line per region (number,
// name, kind, size in PEs, cycles per sample, share of the slowest).
// CHECK: <svg xmlns="http://www.w3.org/2000/svg" {{.*}} viewBox="0 0 {{[0-9.]+}} {{[0-9.]+}}">
// CHECK: <title>train_step</title>
// CHECK: <linearGradient id="time"
// CHECK: class="wafer"/>
// CHECK: class="region"><title>1 0: matmul, [[W1:[0-9]+]]x[[H1:[0-9]+]] PEs, {{[0-9]+}} cycles per sample ({{[0-9.]+}}% of the slowest), {{[0-9]+}} words/PE</title></rect>
// CHECK: class="region"><title>2 2: matmul, {{[0-9]+x[0-9]+}} PEs
// CHECK: class="region"><title>3 loss: eltwise, {{[0-9]+x[0-9]+}} PEs
// CHECK: class="route"><title>0 -&gt; 2</title></polyline>
// CHECK: class="route"><title>2 -&gt; loss</title></polyline>
// CHECK: class="route"><title>loss -&gt; 2</title></polyline>
// CHECK: class="route"><title>2 -&gt; 0</title></polyline>
// CHECK: class="label">1</text>
// CHECK: class="label">2</text>
// CHECK: class="label">3</text>
// CHECK: class="legend">train_step</text>
// CHECK: class="legend">wafer 16x16 PEs; regions use {{[0-9]+}} PEs ({{[0-9.]+}}%), grey is unused</text>
// CHECK: class="legend">slowest region: {{[0-9]+}} cycles per sample (it sets the throughput)</text>
// CHECK: class="legend">colour: a region's time per sample against the slowest's</text>
// CHECK: fill="url(#time)"
// CHECK: class="legend">0%</text>
// CHECK: class="legend">100%</text>
// CHECK: class="legend">area: the PEs a region holds; blue: routes between regions</text>
// CHECK: class="legend">w x h PEs</text>
// CHECK: class="legend">cycles/sample</text>
// CHECK: class="key">1</text>
// CHECK-NEXT: class="key">0</text>
// CHECK-NEXT: class="key">matmul</text>
// CHECK-NEXT: class="key">[[W1]] x [[H1]]</text>
// CHECK: class="key">loss</text>
// CHECK: </svg>

// The background, the wafer, three regions, the colour bar and three key
// swatches; six routes (two values go from the loss back to layer 2; layer
// 0's output goes to layer 2 twice, as it is and converted to the layout
// layer 2's backward kernel reads it in).
// XML: 9 6

// ERR: error: a floorplan needs a layer-pipelined module
module {
}

// -----

// ERR: error: 'wsc.kernel' op has no region on the wafer; run wsc-place-kernels
module attributes {wsc.mode = #wsc.mode<layer_pipelined>} {
  func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
    %y = wsc.kernel "k" layer("k") phase(<forward>) (%x) : (tensor<2xf32>) -> tensor<2xf32> {
    ^bb0(%a: tensor<2xf32>):
      wsc.yield %a : tensor<2xf32>
    }
    return %y : tensor<2xf32>
  }
}

// -----

// ERR: error: 'wsc.kernel' op rect #wsc.rect<x = 0, y = 0, w = 5, h = 5> is not the 3x2 region its kernel model gives, in either orientation
module attributes {wsc.mode = #wsc.mode<layer_pipelined>} {
  func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
    %y = wsc.kernel "k" layer("k") phase(<forward>) (%x) {model = #wsc.kernel_model<kind = "matmul", formal = [1, 3, 4], exec = [1, 1, 1], cycles = 5, memory = 9>, rect = #wsc.rect<x = 0, y = 0, w = 5, h = 5>} : (tensor<2xf32>) -> tensor<2xf32> {
    ^bb0(%a: tensor<2xf32>):
      wsc.yield %a : tensor<2xf32>
    }
    return %y : tensor<2xf32>
  }
}

// -----

// ERR: error: 'wsc.kernel' op has rect #wsc.rect<x = 3, y = 0, w = 3, h = 2> but its layer 'k' owns #wsc.rect<x = 0, y = 0, w = 3, h = 2>
module attributes {wsc.mode = #wsc.mode<layer_pipelined>} {
  func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
    %y = wsc.kernel "k.fwd" layer("k") phase(<forward>) (%x) {model = #wsc.kernel_model<kind = "matmul", formal = [1, 3, 4], exec = [1, 1, 1], cycles = 5, memory = 9>, rect = #wsc.rect<x = 0, y = 0, w = 3, h = 2>} : (tensor<2xf32>) -> tensor<2xf32> {
    ^bb0(%a: tensor<2xf32>):
      wsc.yield %a : tensor<2xf32>
    }
    %z = wsc.kernel "k.bwd" layer("k") phase(<backward>) (%y) {model = #wsc.kernel_model<kind = "matmul", formal = [1, 3, 4], exec = [1, 1, 1], cycles = 5, memory = 9>, rect = #wsc.rect<x = 3, y = 0, w = 3, h = 2>} : (tensor<2xf32>) -> tensor<2xf32> {
    ^bb0(%a: tensor<2xf32>):
      wsc.yield %a : tensor<2xf32>
    }
    return %z : tensor<2xf32>
  }
}
