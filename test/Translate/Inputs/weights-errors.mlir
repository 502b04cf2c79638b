// Checked by weights.mlir: parameters whose weights the IR does not carry.

// expected-error @+1 {{'wsc.memx.param' op has no initial value; only models imported from torch-mlir carry their weights in the IR (an exported model's come from the exporter's --weights file, an imported function's argument weights from yours)}}
wsc.memx.param @a : tensor<2x2xf32> optimizer(<sgd, lr = 0.0>)

// -----

// Some weights carried, one an argument of the imported function: written
// without it, and a warning names it.
wsc.memx.param @const0 : tensor<2xf32> optimizer(<sgd, lr = 0.0>) initial_value(dense<1.0> : tensor<2xf32>)
// expected-warning @+1 {{parameter 'arg0' has no initial value (a weight the imported function took as an argument): add it to this file before wsc-run}}
wsc.memx.param @arg0 : tensor<2x2xf32> optimizer(<sgd, lr = 0.0>)

// -----

// expected-error @+1 {{'wsc.memx.param' op initial value dense_resource<missing> has no blob of 2 floats}}
wsc.memx.param @a : tensor<2xf32> optimizer(<sgd, lr = 0.0>) initial_value(dense_resource<missing> : tensor<2xf32>)

// -----

// expected-error @+1 {{'wsc.memx.param' op is named '__metadata__', which safetensors reserves}}
wsc.memx.param @__metadata__ : tensor<2xf32> optimizer(<sgd, lr = 0.0>) initial_value(dense<1.0> : tensor<2xf32>)

// -----

// expected-error @+1 {{'wsc.memx.param' op initial value sparse<0, 1.000000e+00> : tensor<2xf32> is not dense f32 data}}
wsc.memx.param @a : tensor<2xf32> optimizer(<sgd, lr = 0.0>) initial_value(sparse<[[0]], [1.0]> : tensor<2xf32>)
